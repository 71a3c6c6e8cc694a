"""The model provider a Ray cluster's workers use in the tests: ``cluster:task`` is the scripted task
agent of ``alma_doubles`` (``cluster:slow`` waits 50 ms per call, so a test can kill a worker while
episodes are in flight). Registered through the documented plug-in hook: the cluster's processes
name this module in ``$ATLAS_PLUGINS`` and find it on ``PYTHONPATH``."""

from __future__ import annotations

import time
from typing import Any

from alma_doubles import task_policy

from atlas.infra.llm import ScriptedLLM
from atlas.infra.llm.providers import register_provider


def slow_policy(messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    time.sleep(0.05)
    return task_policy(messages, **kwargs)


def make(rest: str) -> ScriptedLLM:
    return ScriptedLLM(slow_policy if rest == "slow" else task_policy)


register_provider("cluster", make)
