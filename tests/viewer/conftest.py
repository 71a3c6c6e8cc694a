"""Fixtures of the viewer's genome tests: a run folder from a tiny real genome search with scripted
models (the approach of tests/alma/genome/test_genome_search.py), run once per session, and a copy
of it whose best design is a genome design."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parents[1]
# The ALMA doubles live beside the ALMA tests (their folder is on sys.path only when they are collected).
if str(TESTS / "alma") not in sys.path:
    sys.path.insert(0, str(TESTS / "alma"))

from viewer_helpers import EDIT, edit_archive  # noqa: E402


def _meta(reply: str) -> Any:
    from atlas.infra.llm import ScriptedLLM

    def answer(messages: list[dict[str, Any]], **kwargs: Any) -> str:
        assert kwargs.get("json_schema"), "the genome edit is asked for under the genome schema"
        return reply

    return ScriptedLLM(answer)


@pytest.fixture(scope="session")
def genome_run(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """A finished genome search: no memory, the trajectory_retrieval and spatial_graph baselines, then one
    child per operator (mutate, recombine, random, llm_edit), each screened by the advice probe; the map
    beats no memory, so the run ends with its test phase."""
    from alma_doubles import debug_policy, task_policy

    import atlas.alma
    from atlas.infra.llm import ScriptedLLM

    run_dir = tmp_path_factory.mktemp("genome-search") / "run"
    atlas.alma.run(
        llm=ScriptedLLM(task_policy),
        meta_llm=_meta(json.dumps(EDIT)),
        debug_llm=ScriptedLLM(debug_policy),
        embedder=embedder,
        iterations=4,
        trace=True,  # the viewer reads the run's state and the bandit's operators from the trace
        baseline_cache=False,
        run_dir=run_dir,
        env="graphworld",
        episodes=2,
        rooms=5,
        deploy_seeds=1,
        seed=42,
        baselines=["trajectory_retrieval", "spatial_graph"],
        env_seed=False,
        quiet=True,
        representation="genome",
        genome_candidates=6,
        probe_tasks=2,
    )
    return run_dir


@pytest.fixture
def genome_best_run(genome_run: Path, tmp_path: Path) -> Path:
    """A copy of the genome run whose llm_edit child (a genome design) has the top deployment score."""
    dst = tmp_path / "run"
    shutil.copytree(genome_run, dst)

    def promote(data: dict[str, Any]) -> None:
        child = next(e for e in data["entries"] if (e.get("search") or {}).get("operator") == "llm_edit")
        child["deployment_score"] = 0.99
        child["stage"] = "full"

    edit_archive(dst, promote)
    return dst
