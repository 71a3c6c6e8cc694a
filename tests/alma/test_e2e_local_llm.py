"""The whole ALMA loop with the real local model (Qwen2.5-Coder-0.5B through llama.cpp) as the
task agent, the DebugAgent and the MetaAgent: one iteration on a tiny GraphWorld.

This asserts the plumbing, not the quality: a 0.5B model may write a design that never validates,
and then its errors must be recorded; every evaluated entry has scores, the trace and the runtime
logs exist, and the run folder can be read back.
"""

from __future__ import annotations

import json

import pytest

import atlas.alma
from atlas.alma import Archive
from atlas.infra import local_models
from atlas.trace import read_trace

# A whole search on 2 cores: ~5 minutes idle, far more when the machine is shared; the timeout
# guards against a hang, not against a slow machine.
pytestmark = [pytest.mark.local_llm, pytest.mark.slow, pytest.mark.timeout(1800)]

MODEL = "qwen2.5-coder-0.5b"


@pytest.fixture(scope="module")
def finished(tmp_path_factory, embedder):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra [local])")
    if not local_models.is_verified(MODEL) and not local_models.verify(MODEL):
        pytest.skip(f"local model not assembled: run `atlas models pull {MODEL}`")
    from atlas.infra.llm import make_llm

    llm = make_llm(f"local:{MODEL}", temperature=0.0)
    run_dir = tmp_path_factory.mktemp("e2e") / "run"
    archive, trace_path = atlas.alma.run(
        llm=llm,
        embedder=embedder,
        run_dir=run_dir,
        env="graphworld",
        iterations=1,
        episodes=1,
        rooms=4,
        deploy_seeds=1,
        seed=7,
        max_turns=5,
        meta_turns=2,
        debug_turns=2,
        baselines=[],
        concurrency=1,
        quiet=True,
        baseline_cache=False,
    )
    return archive, trace_path, run_dir, llm


def test_local_model_played_and_wrote_a_design(finished):
    archive, _, _, llm = finished
    names = [(e.name, e.origin, e.generation) for e in archive]
    assert names[0] == ("no_memory", "baseline", 0)
    assert names[1] == ("graphworld_seed", "seed", 0)
    child = archive.entries[-1]
    assert child.origin == "meta" and child.generation == 1
    if child.status == "ok":  # a design was produced and evaluated
        assert child.source and "def recall" in child.source and "def update" in child.source
    else:  # or it never validated, and the reasons are recorded
        assert child.status in ("invalid", "error") and child.errors
    assert llm.usage.calls > 0 and llm.usage.completion_tokens > 0


def test_every_evaluated_entry_has_scores_and_logs(finished):
    archive, _, run_dir, _ = finished
    assert archive.baseline is not None and archive.baseline["score"] is not None
    for entry in archive:
        if entry.status != "ok":
            continue
        assert entry.collection_score is not None and entry.deployment_score is not None
        assert entry.normalized_score == pytest.approx(entry.deployment_score - archive.baseline["score"])
        phases = sorted(t.phase for t in entry.per_task)
        assert phases == ["collection", "deployment"]
        logs = run_dir / (entry.logs_dir or f"logs/{entry.id}")
        assert (logs / "debug_log.txt").read_text().strip()
        assert (run_dir / "designs" / f"{entry.id}.py").exists()


def test_trace_and_archive_read_back(finished):
    archive, trace_path, run_dir, _ = finished
    events = [e["event"] for e in read_trace(trace_path)]
    assert events[0] == "run.start" and events[-1] == "run.stop"
    assert "iteration.stop" in events
    reloaded = Archive.load(run_dir / "archive.json").hydrate()
    assert [e.id for e in reloaded] == [e.id for e in archive]
    config = json.loads((run_dir / "config.json").read_text())
    assert config["task_model"] and config["iterations"] == 1
