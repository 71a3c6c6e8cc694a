"""The model provider a Ray cluster's workers use in the tests: ``cluster:task`` is the scripted task
agent of ``alma_doubles`` (``cluster:slow`` waits 50 ms per call, so a test can kill a worker while
episodes are in flight; ``cluster:kill-once:MARKER:PID`` plays the same agent, except that the first
call made in a process other than PID (the driver) creates the file MARKER and kills its own
process with SIGKILL: the worker dies in the middle of the run's first work unit, a collection). Registered through the documented plug-in hook: the cluster's processes
name this module in ``$ATLAS_PLUGINS`` and find it on ``PYTHONPATH``."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from alma_doubles import task_policy

from atlas.infra.llm import ScriptedLLM
from atlas.infra.llm.providers import register_provider


def slow_policy(messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    time.sleep(0.05)
    return task_policy(messages, **kwargs)


def kill_once_policy(marker: str, driver_pid: int) -> Any:
    def policy(messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        if os.getpid() != driver_pid:
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                os.kill(os.getpid(), signal.SIGKILL)
        return task_policy(messages, **kwargs)

    return policy


def make(rest: str) -> ScriptedLLM:
    if rest.startswith("kill-once:"):
        marker, pid = rest.removeprefix("kill-once:").rsplit(":", 1)
        return ScriptedLLM(kill_once_policy(marker, int(pid)))
    return ScriptedLLM(slow_policy if rest == "slow" else task_policy)


register_provider("cluster", make)
