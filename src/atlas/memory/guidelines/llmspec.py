"""Resolve the ``--model`` option of ``atlas guidelines`` and ``atlas mcp``.

``scripted:FILE`` builds a ``ScriptedLLM`` from a JSON file, so subprocess tests (the MCP stdio
round trip, the CLI) run the real pipeline without a model. FILE holds either a list of replies
(used in order) or ``{"stages": {"segmentation": [...], "tips": [...], ...}, "default": "..."}``:
replies are routed by the stage marker of the prompt (see ``prompts.stage_of``); the last reply of a
stage repeats once its list is used up; a file with no reply for the ``generalize`` stage gets the
descriptions back unchanged (the rule pass still strips entities). Anything else goes to
``atlas.infra.llm.make_llm``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from atlas.errors import ConfigError
from atlas.memory.guidelines.prompts import stage_of


def _reply_text(reply: Any) -> Any:
    return reply if isinstance(reply, str | dict) else json.dumps(reply)


def scripted_from_file(path: str | Path) -> Any:
    """A ScriptedLLM from a replies file (format in the module docstring)."""
    from atlas.infra.llm import ScriptedLLM

    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read scripted replies from {p}: {exc}") from exc
    if isinstance(data, list):
        return ScriptedLLM([r if isinstance(r, str) else json.dumps(r) for r in data])
    if not isinstance(data, dict) or not isinstance(data.get("stages", {}), dict):
        raise ConfigError(f"{p}: expected a list of replies or {{'stages': {{...}}, 'default': ...}}")
    stages = {k: list(v if isinstance(v, list) else [v]) for k, v in data.get("stages", {}).items()}
    default = data.get("default")
    used: dict[str, int] = {}

    def respond(messages: list[dict[str, Any]], **_: Any) -> str:
        stage = stage_of(messages) or "default"
        replies = stages.get(stage)
        if not replies and stage == "generalize" and default is None:
            items = re.findall(r"^\d+\. (.+)$", messages[-1]["content"], re.M)
            return json.dumps({"descriptions": items})
        if not replies:
            if default is None:
                raise ConfigError(f"{p}: no scripted reply for stage {stage!r}")
            return default if isinstance(default, str) else json.dumps(default)
        i = used.get(stage, 0)
        used[stage] = i + 1
        r = replies[min(i, len(replies) - 1)]
        return r if isinstance(r, str) else json.dumps(r)

    return ScriptedLLM(respond)


def resolve_llm(spec: str | None) -> Any:
    """``scripted:FILE`` → ScriptedLLM; anything else (None = default resolution) → make_llm."""
    if spec and spec.startswith("scripted:"):
        return scripted_from_file(spec.split(":", 1)[1])
    from atlas.infra.llm import make_llm

    return make_llm(spec)


__all__ = ["resolve_llm", "scripted_from_file"]
