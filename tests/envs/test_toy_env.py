"""A plug-in environment defined in one module (toy_env.py) runs a scripted search end to end:
registration carries its parameters, schema and oracle; with no explorer the smoke run plays it at
random instead of stopping the search."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import toy_env

import atlas.alma
from atlas.alma.state.config import AlmaConfig
from atlas.envs import ExplorerPolicy, get_env
from atlas.envs.registry import env_spec
from atlas.infra.llm import ScriptedLLM

DESIGN = """
def update(memory, episode, tools):
    memory["solved"] = memory.get("solved", 0) + int(episode["success"])


def recall(memory, task, tools):
    return "Move right until you reach the goal cell. Solved so far: " + str(memory.get("solved", 0))
"""

CRITIQUE = {"analysis": "recall returns advice.", "constraints": ["keep recall short"], "evidence": []}


def task_double(messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    choices = kwargs.get("choices")
    if choices:
        return "move right" if "move right" in choices else choices[0]
    return "{}" if kwargs.get("json_schema") else "summary: nothing notable"


def meta_double(messages: list[dict[str, Any]], **kwargs: Any) -> str:
    # each generation words its advice its own way: a copy of a parent would be sent back
    gen = re.search(r"Generation (\d+)\.", str(messages[1]["content"]))
    design = DESIGN.replace("Solved so far: ", f"Design {gen.group(1) if gen else 0}. Solved so far: ")
    return f"Name: count_solved\nPlan: count what was solved.\n```python\n{design.strip()}\n```\n"


def debug_double(messages: list[dict[str, Any]], **kwargs: Any) -> str:
    return json.dumps(CRITIQUE if kwargs.get("json_schema") else {"final": CRITIQUE})


def test_registration_carries_what_the_environment_brings():
    spec = env_spec("toy-line")
    env = get_env("toy_line", cells=4)
    assert env.cells == 4 and spec.explorer is None
    assert "number line" in spec.context_schema(env)["summary"] and spec.seed_design(env) is None
    task = env.generate_tasks(1, seed=3)[0]
    assert spec.oracle_advice(env, task, "full").startswith("Move right")
    config = AlmaConfig.build(env="toy_line", cells=4, rooms=6)  # a setting of another environment is dropped
    assert config.env_params == {"cells": 4} and config.env_kwargs()["cells"] == 4
    assert AlmaConfig.build(env="toy_line").env_kwargs()["cells"] == 5  # the declared default
    with pytest.raises(Exception, match="cells must be at least 2"):
        AlmaConfig.build(env="toy_line", cells=1)
    trajectory = ExplorerPolicy(0).run(env, task)  # no explorer registered: random valid actions
    assert trajectory.metadata["policy"] == "random" and trajectory.steps


def test_a_scripted_search_runs_on_the_toy_environment(tmp_path, embedder):
    archive, _ = atlas.alma.run(
        env="toy_line",
        cells=4,
        iterations=2,
        episodes=2,
        deploy_seeds=1,
        seed=5,
        meta_turns=2,
        baselines=[],
        quiet=True,
        trace=False,
        run_dir=tmp_path / "run",
        embedder=embedder,
        llm=ScriptedLLM(task_double),
        meta_llm=ScriptedLLM(meta_double),
        debug_llm=ScriptedLLM(debug_double),
    )
    by_generation = {e.generation for e in archive}
    assert by_generation == {0, 1, 2}, [(e.name, e.generation, e.status, e.errors) for e in archive]
    evolved = [e for e in archive if e.generation > 0]
    assert all(e.status == "ok" for e in evolved), [(e.name, e.status, e.errors) for e in evolved]
    assert all(e.deployment_score is not None and e.deployment_score > 0 for e in evolved)
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["env"] == toy_env.NAME and saved["env_params"] == {"cells": 4}
