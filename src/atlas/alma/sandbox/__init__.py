"""The sandbox that runs memory designs (untrusted, LLM-written code) outside the host.

    worker.py       the child process: restricted builtins, design execution, tool proxies
    protections.py  its OS lock-down: rlimits, Landlock (read-only stdlib), seccomp deny-list
    protocol.py     JSON-lines messages between host and worker
    process.py      host side of one worker: SandboxLimits, WorkerHandle (one process, the call
                    conversation, timeouts, SIGKILL of the process group)
    pool.py         WorkerPool: warm workers, bound per design

Most callers want ``atlas.alma.evaluate.runner.DesignRunner`` instead of these pieces.
"""

from atlas.alma.sandbox.pool import ToolRefusal, WorkerPool
from atlas.alma.sandbox.process import CallOutcome, SandboxLimits, WorkerHandle, default_read_paths

__all__ = ["CallOutcome", "SandboxLimits", "ToolRefusal", "WorkerHandle", "WorkerPool", "default_read_paths"]
