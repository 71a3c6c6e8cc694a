"""Edits (one function spliced into a parent with ast) and crossover (update from one parent, recall
from another) produce designs that pass the design check: the static check and the sandboxed smoke
run, the same check every MetaAgent design goes through."""

from __future__ import annotations

import pytest
from alma_doubles import GIVE_UP_DESIGN, ROUTE_DESIGN, debug_policy, fenced, meta_policy, task_policy

import atlas.alma
from atlas.alma.author.design_ops import crossover, functions, splice
from atlas.alma.author.meta_agent import MetaAgent
from atlas.alma.sandbox.pool import WorkerPool
from atlas.envs.registry import get_env
from atlas.errors import DesignError
from atlas.infra.llm import ScriptedLLM

NEW_RECALL = """
def recall(memory, task, tools):
    # a better recall: the route, or the rooms next to the start
    start = task["observation"].get("location", "")
    dest = _dest(task)
    path = tools.graph_path(start, dest)
    return ("Route: " + " -> ".join(path)) if path else "Exits: " + ", ".join(tools.graph_neighbors(start))
"""
HELPER = """
def _dest(task):
    return task["goal"].rstrip(".").split(" to ")[-1]
"""
# Two parents that both define a helper `_fmt` and a constant LIMIT, differently.
A = """
import json

LIMIT = 5


def _fmt(x):
    return json.dumps(x)


def update(memory, episode, tools):
    memory.setdefault("goals", []).append(_fmt(episode["task"]["goal"]))
    memory["goals"] = memory["goals"][-LIMIT:]


def recall(memory, task, tools):
    return ""
"""
B = """
import re

LIMIT = 2


def _fmt(items):
    return "; ".join(items[:LIMIT])


def update(memory, episode, tools):
    return None


def recall(memory, task, tools):
    seen = [re.sub(r"\\s+", " ", g) for g in memory.get("goals", [])]
    return "Earlier goals: " + _fmt(seen) if seen else ""
"""


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(max_workers=2)
    yield p
    p.close()


@pytest.fixture(scope="module")
def checker(embedder, pool):
    return MetaAgent(None, env=get_env("graphworld", rooms=5), embedder=embedder, pool=pool)


def test_splice_replaces_one_function_and_keeps_the_rest_verbatim():
    child = splice(ROUTE_DESIGN, NEW_RECALL)
    assert "# a better recall" in child and 'print("stored", len(edges), "edges")' in child
    assert child.count("def recall") == 1 and child.index("def update") < child.index("def recall")
    with_helper = splice(child, HELPER)
    assert list(functions(with_helper)) == ["update", "recall", "_dest"]
    with pytest.raises(DesignError, match="no function"):
        splice(ROUTE_DESIGN, "x = 1")
    with pytest.raises(DesignError, match="not valid Python"):
        splice(ROUTE_DESIGN, "def recall(memory, task, tools:\n    return ''")


async def test_edits_pass_the_design_check(checker):
    child = splice(splice(ROUTE_DESIGN, HELPER), NEW_RECALL)
    assert (await checker.validate(child, "edited", "d-9"))[:2] == ([], True)


async def test_crossover_takes_update_from_one_parent_and_recall_from_the_other(checker):
    child = crossover(A, B)
    fns = functions(child)
    assert "goals" in ast_text(fns["update"]) and "Earlier goals" in ast_text(fns["recall"])
    # B's conflicting helper and constant are renamed in B's part; A's are untouched.
    assert "_fmt_b" in child and "LIMIT_b = 2" in child and "LIMIT = 5" in child
    assert child.startswith("import json\nimport re\n")
    assert (await checker.validate(child, "crossed", "d-9"))[:2] == ([], True)
    assert (await checker.validate(crossover(ROUTE_DESIGN, GIVE_UP_DESIGN), "crossed", "d-9"))[:2] == (
        [],
        True,
    )
    with pytest.raises(DesignError, match="no top-level recall"):
        crossover(A, "def update(memory, episode, tools):\n    return None\n")


def ast_text(node):
    import ast

    return ast.unparse(node)


async def test_meta_agent_edit_mode_splices_the_reply_into_the_first_parent(embedder, pool):
    llm = ScriptedLLM([fenced("better_recall", NEW_RECALL + HELPER)])
    agent = MetaAgent(llm, env=get_env("graphworld", rooms=5), embedder=embedder, pool=pool)
    parents = [{"id": "d-2", "name": "route", "source": ROUTE_DESIGN}]
    result = await agent.generate(parents, None, generation=2, mode="edit", example="Task: t\nAdvice:\ngo")
    assert result.status == "ok" and result.name == "better_recall"
    assert "# a better recall" in result.source and "graph_update(edges)" in result.source
    prompt = llm.history[0].messages[1]["content"]
    assert "editing ONE function" in prompt and "The kind of advice that lets this agent succeed" in prompt


def test_search_crossover_generation_needs_no_model_and_the_meta_prompt_shows_learnable_advice(
    tmp_path, embedder
):
    meta = ScriptedLLM(meta_policy({2: [fenced("route", ROUTE_DESIGN)]}))
    archive, _ = atlas.alma.run(
        llm=ScriptedLLM(task_policy),
        meta_llm=meta,
        debug_llm=ScriptedLLM(debug_policy),
        embedder=embedder,
        run_dir=tmp_path / "run",
        env="graphworld",
        iterations=2,
        episodes=2,
        rooms=5,
        deploy_seeds=1,
        seed=42,
        meta_turns=1,
        baselines=[],
        quiet=True,
        trace=False,
        meta_operators=["crossover", "write"],
        exploit=0.0,  # the parents in the order this seed draws them (no_memory's update, the seed's recall)
    )
    crossed = archive.find(name="cross_g1")[0]
    assert crossed.status == "ok" and crossed.search.operator == "crossover"
    assert [c for c in meta.history if "Generation 1." in c.messages[1]["content"]] == []  # no model call
    prompt = next(
        c.messages[1]["content"] for c in meta.history if "Generation 2." in c.messages[1]["content"]
    )
    env = get_env("graphworld", rooms=5, family_mode=True)
    first = env.generate_family_tasks(2, 42, 42)[0]
    assert env.oracle_advice(first, "learnable") in prompt
    assert env.oracle_advice(first, "full") not in prompt  # never the hidden answer
