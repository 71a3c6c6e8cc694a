"""Evaluating a design: the harness (collection → deployment), the ``DesignRunner`` (one design's
state, tools and runtime logs in the sandbox), the host side of the design tools, the runtime logs.

Imports ``atlas.alma.state``, ``atlas.alma.sandbox`` and ``atlas.alma.design`` only: host-side
designs reach the runner through its ``HostExecutor`` seam, never by importing the baselines."""
