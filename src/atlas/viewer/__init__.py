"""Reading an ALMA run folder and showing it: ``atlas view RUN_DIR`` serves a local page
(loopback only), ``atlas report`` writes Markdown. This package sits above ``atlas.alma`` (it reads
what ALMA writes); ``atlas.trace`` (the telemetry writer) sits below it.

``run_reader`` reads the folder, ``lineage`` lays out the design tree, ``report`` renders Markdown,
``server`` holds the HTTP server and JSON API; ``static/`` the page (vanilla JS, hand-written SVG
charts, no network)."""

from atlas.viewer.server import ViewerHTTPServer, ViewerThread, serve

__all__ = ["ViewerHTTPServer", "ViewerThread", "serve"]
