"""Run telemetry: the JSONL trace writer (the viewer lives beside it)."""

from atlas.trace.writer import TraceWriter, read_trace

__all__ = ["TraceWriter", "read_trace"]
