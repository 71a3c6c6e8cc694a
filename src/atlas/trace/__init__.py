"""Run telemetry: the JSONL trace writer, below ALMA (ALMA writes through it). Reading a run
folder, the report and the browser viewer sit above ALMA, in ``atlas.viewer``."""

from atlas.trace.writer import TraceWriter, read_trace

__all__ = ["TraceWriter", "read_trace"]
