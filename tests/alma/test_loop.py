"""The whole loop with ScriptedLLMs for the task, meta and debug agents: 2 iterations on
GraphWorld (baseline → seeds → iterations), the run folder, telemetry, known outcomes."""

from __future__ import annotations

import json

import pytest
from alma_doubles import GIVE_UP_DESIGN, INVALID_DESIGN, debug_policy, fenced, meta_policy, task_policy

import atlas.alma
from atlas.alma import Archive
from atlas.alma.api import aevaluate
from atlas.alma.design import Design
from atlas.infra.llm import ScriptedLLM
from atlas.trace import read_trace

SETTINGS = dict(
    env="graphworld",
    iterations=2,
    episodes=2,
    rooms=5,
    deploy_seeds=1,
    seed=42,
    meta_turns=2,
    baselines=["trajectory_retrieval"],
    quiet=True,
)


def make_llms():
    task = ScriptedLLM(task_policy)
    meta = ScriptedLLM(
        meta_policy(
            {
                1: [fenced("bad_import", INVALID_DESIGN)],  # never validates
                2: [
                    fenced("bad_import", INVALID_DESIGN),
                    fenced("give_up", GIVE_UP_DESIGN),
                ],  # fixed on turn 2
            }
        )
    )
    debug = ScriptedLLM(debug_policy)
    return task, meta, debug


@pytest.fixture(scope="module")
def finished(tmp_path_factory, embedder):
    task, meta, debug = make_llms()
    events: list[tuple[str, dict]] = []
    run_dir = tmp_path_factory.mktemp("loop") / "run"
    archive, trace_path = atlas.alma.run(
        llm=task,
        meta_llm=meta,
        debug_llm=debug,
        embedder=embedder,
        run_dir=run_dir,
        callbacks=[lambda ev, f: events.append((ev, f))],
        **SETTINGS,
    )
    return archive, trace_path, run_dir, events, (task, meta, debug)


def test_public_api_is_pinned():
    assert sorted(atlas.alma.__all__) == sorted(
        [
            "AlmaConfig",
            "Archive",
            "ArchiveEntry",
            "DebugAgent",
            "DebugLog",
            "Harness",
            "MetaAgent",
            "Search",
            "TaskResult",
            "arun",
            "headroom",
            "paired_difference",
            "run",
        ]
    )
    assert callable(atlas.alma.run) and atlas.alma.Search.__name__ == "Search"


def test_archive_grows_with_seeds_and_iterations(finished):
    archive, _, _, _, _ = finished
    assert [(e.id, e.name, e.origin, e.generation) for e in archive] == [
        ("d-0001", "no_memory", "baseline", 0),
        ("d-0002", "graphworld_seed", "seed", 0),
        ("d-0003", "trajectory_retrieval", "baseline", 0),
        ("d-0004", "bad_import", "meta", 1),
        ("d-0005", "give_up", "meta", 2),
    ]
    assert [it["generation"] for it in archive.iterations] == [1, 2]
    assert [it["child_id"] for it in archive.iterations] == ["d-0004", "d-0005"]
    assert sum(e.times_sampled for e in archive) == 4  # 2 parents per iteration


def test_scores_and_normalization(finished):
    archive, _, _, _, _ = finished
    base = archive.baseline
    no_mem = archive.get("d-0001")
    dep = [t for t in no_mem.per_task if t.phase == "deployment"]
    assert base["score"] == pytest.approx(sum(t.score for t in dep) / len(dep))
    assert [p["score"] for p in base["per_task"]] == [t.score for t in dep]
    assert no_mem.normalized_score == 0.0
    for e in archive.scored():
        col = [t.score for t in e.per_task if t.phase == "collection"]
        dep = [t.score for t in e.per_task if t.phase == "deployment"]
        assert len(col) == 2 and len(dep) == 2
        assert e.collection_score == pytest.approx(sum(col) / 2)
        assert e.deployment_score == pytest.approx(sum(dep) / 2)
        assert e.normalized_score == pytest.approx(e.deployment_score - base["score"])
        for t in e.per_task:  # GraphWorld's score of each episode
            assert t.score == (pytest.approx(max(0.5, 1 - t.steps / 40)) if t.success else 0.0)
    give_up = archive.get("d-0005")  # known outcome: the agent only looks, every task fails
    assert give_up.deployment_score == 0.0 and give_up.normalized_score == pytest.approx(-base["score"])
    assert base["score"] > 0
    assert archive.best().id != "d-0005"


def test_invalid_design_is_recorded_and_the_run_goes_on(finished):
    archive, _, run_dir, _, _ = finished
    bad = archive.get("d-0004")
    assert bad.status == "invalid" and bad.normalized_score is None and bad.deployment_score is None
    assert any("import of 'os' is not allowed" in err for err in bad.errors)
    assert (run_dir / bad.source_path).read_text().startswith("import os")
    assert bad.times_sampled == 0 and "d-0004" not in archive.iterations[1]["parent_ids"]
    assert archive.iterations[0]["status"] == "invalid" and archive.iterations[1]["status"] == "ok"
    fixed = archive.get("d-0005")
    assert fixed.metadata["meta_turns"] == 2 and fixed.critique and "MANDATORY CONSTRAINTS" in fixed.critique


def test_runtime_logs_reach_the_debug_agent(finished):
    archive, _, _, _, (_, meta, debug) = finished
    starts = [c for c in debug.history if sum(m["role"] == "assistant" for m in c.messages) == 0]
    assert len(starts) == 2  # one analysis per iteration
    for call, it in zip(starts, archive.iterations, strict=True):
        prompt = call.messages[1]["content"]
        for pid in it["parent_ids"]:
            assert f"- {pid} " in prompt  # the parents under review
        assert "--- EPISODE" in prompt and ":recall] " in prompt
    # the grep result (tagged runtime-log lines) came back to the model
    greps = [c for c in debug.history if c.prompt.startswith("grep result (log data):")]
    assert greps and all(":recall] RETURN" in c.prompt or ":update] " in c.prompt for c in greps)
    # the critique reached the MetaAgent
    assert any("recall must return non-empty advice" in c.messages[1]["content"] for c in meta.history)


def test_run_folder_trace_and_telemetry(finished):
    archive, trace_path, run_dir, events, _ = finished
    cfg = json.loads((run_dir / "config.json").read_text())
    assert cfg["env"] == "graphworld" and cfg["episodes"] == 2 and cfg["task_model"] == "scripted"
    assert not set(cfg["collection_tasks"]) & set(cfg["deployment_tasks"])
    data = json.loads((run_dir / "archive.json").read_text())
    assert data["version"] == 1 and len(data["entries"]) == 5
    for e in archive:
        assert (run_dir / "designs" / f"{e.id}.py").exists()
        if e.status == "ok":
            assert (run_dir / e.logs_dir / "debug_log.txt").read_text().startswith(f"=== DESIGN {e.id}")
            calls = [json.loads(x) for x in (run_dir / e.logs_dir / "calls.jsonl").read_text().splitlines()]
            assert {c["episode"] for c in calls} == {"C1", "C2", "D1", "D2"}
    assert trace_path == run_dir / "trace.jsonl"
    trace = read_trace(trace_path)
    names = [ev["event"] for ev in trace]
    assert names[0] == "run.start" and names[-1] == "run.stop" and "baseline.done" in names
    assert names.count("iteration.start") == 2 and names.count("design.evaluated") == 5
    stops = [ev for ev in trace if ev["event"] == "iteration.stop"]
    for key in (
        "generation",
        "duration_s",
        "collection_score",
        "deployment_score",
        "normalized_score",
        "baseline_score",
        "design_name",
        "archive_size",
        "usage",
    ):
        assert key in stops[0]
    assert stops[1]["archive_size"] == 5 and stops[1]["usage"]["total_tokens"] > 0
    assert [e for e, _ in events] == names  # callbacks saw the same events
    assert all(e.usage["calls"] > 0 for e in archive if e.origin == "meta")


async def test_evaluate_one_design(tmp_path, embedder):
    llm = ScriptedLLM(task_policy)
    design = Design(name="give_up", source=GIVE_UP_DESIGN, origin="seed")
    entry, archive = await aevaluate(
        design,
        llm=llm,
        embedder=embedder,
        run_dir=tmp_path / "ev",
        episodes=2,
        rooms=5,
        deploy_seeds=1,
        quiet=True,
    )
    assert entry.deployment_score == 0.0
    assert entry.normalized_score == pytest.approx(-archive.baseline["score"])
    assert [e.name for e in Archive.load(tmp_path / "ev")] == ["no_memory", "give_up"]


def test_baseline_is_cached_per_configuration(tmp_path, embedder):
    settings = {**SETTINGS, "iterations": 0, "baselines": []}
    first, _ = atlas.alma.run(
        llm=ScriptedLLM(task_policy),
        embedder=embedder,
        run_dir=tmp_path / "a",
        baseline_cache=tmp_path / "cache",
        **settings,
    )
    assert first.baseline["cached"] is False and len(list((tmp_path / "cache").glob("*.json"))) == 1
    task = ScriptedLLM(task_policy)
    second, _ = atlas.alma.run(
        llm=task, embedder=embedder, run_dir=tmp_path / "b", baseline_cache=tmp_path / "cache", **settings
    )
    assert second.baseline["cached"] is True and second.baseline["score"] == first.baseline["score"]
    assert second.get("d-0001").per_task == first.get("d-0001").per_task
    n_seed_calls = len(task.history)  # only the seed design was played: the baseline came from the cache
    third_llm = ScriptedLLM(task_policy)
    atlas.alma.run(
        llm=third_llm,
        embedder=embedder,
        run_dir=tmp_path / "c",
        baseline_cache=tmp_path / "cache",
        **{**settings, "seed": 43},
    )  # another configuration: computed again
    assert len(third_llm.history) > n_seed_calls
    assert len(list((tmp_path / "cache").glob("*.json"))) == 2


def test_the_baseline_key_covers_the_tasks_themselves_not_only_the_settings():
    from atlas.alma.state.config import AlmaConfig
    from atlas.envs.graphworld import GraphWorldEnv

    cfg = AlmaConfig.build(**{k: v for k, v in SETTINGS.items() if k not in ("quiet", "no_embed")})
    tasks = GraphWorldEnv(rooms=5).generate_tasks(3, seed=1)
    same = GraphWorldEnv(rooms=5).generate_tasks(3, seed=1)
    assert cfg.evaluation_key("m", tasks) == cfg.evaluation_key("m", same)
    # an environment whose defaults changed: same settings, same ids, other tasks
    moved = [tasks[0].model_copy(update={"metadata": {**tasks[0].metadata, "changed": 1}}), *tasks[1:]]
    assert cfg.evaluation_key("m", moved) != cfg.evaluation_key("m", tasks)
    assert cfg.evaluation_key("m", tasks) != cfg.evaluation_key("other model", tasks)


def test_trace_writer_and_torn_last_line(tmp_path):
    from atlas.trace import TraceWriter

    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as tw:
        rec = tw.emit("iteration.start", generation=1, parent_ids=["d-0001"], where=tmp_path)
    assert list(rec)[:2] == ["ts", "event"]
    with path.open("a") as fh:
        fh.write('{"ts": "x", "ev')  # a run killed mid-write
    events = read_trace(path)
    assert events == [{**rec, "where": str(tmp_path)}]


FAIL_SETTINGS = {**SETTINGS, "iterations": 3, "baselines": []}


def test_a_provider_failure_is_recorded_on_its_iteration_and_the_search_goes_on(tmp_path, embedder):
    from atlas.errors import LLMConnectionError

    good = meta_policy({2: [fenced("give_up", GIVE_UP_DESIGN)]})

    def rate_limited_once(messages, **kwargs):
        if "Generation 1." in messages[1]["content"]:
            raise LLMConnectionError("openai/gpt-4.1-mini: rate limited (429)")
        return good(messages, **kwargs)

    archive, _ = atlas.alma.run(
        llm=ScriptedLLM(task_policy),
        meta_llm=ScriptedLLM(rate_limited_once),
        debug_llm=ScriptedLLM(debug_policy),
        embedder=embedder,
        run_dir=tmp_path / "r",
        **FAIL_SETTINGS,
    )
    failed = archive.get("d-0003")
    assert failed.status == "error" and "rate limited (429)" in failed.errors[0]
    assert archive.iterations[0]["status"] == "error" and "rate limited" in archive.iterations[0]["error"]
    assert [it["status"] for it in archive.iterations] == ["error", "ok", "ok"]  # it went on


def test_a_model_that_keeps_failing_stops_the_search_with_the_archive_saved(tmp_path, embedder):
    from atlas.alma.search.loop import MAX_FAILED_ITERATIONS, SearchStopped
    from atlas.errors import LLMConnectionError

    down = ScriptedLLM(default=LLMConnectionError("openai/gpt-4.1-mini: request timed out"))
    with pytest.raises(SearchStopped, match=r"(?s)2 iterations in a row.*timed out.*atlas run --resume"):
        atlas.alma.run(
            llm=ScriptedLLM(task_policy),
            meta_llm=down,
            debug_llm=ScriptedLLM(debug_policy),
            embedder=embedder,
            run_dir=tmp_path / "r",
            **FAIL_SETTINGS,
        )
    saved = Archive.load(tmp_path / "r")
    assert [it["generation"] for it in saved.iterations] == list(range(1, MAX_FAILED_ITERATIONS + 1))
    assert all(e.status == "error" and "timed out" in e.errors[0] for e in saved if e.origin == "meta")
    assert read_trace(tmp_path / "r" / "trace.jsonl")[-1]["event"] == "run.stopped"

    back = ScriptedLLM(meta_policy({3: [fenced("give_up", GIVE_UP_DESIGN)]}))
    resumed, _ = atlas.alma.run(
        resume=tmp_path / "r",
        llm=ScriptedLLM(task_policy),
        meta_llm=back,
        debug_llm=ScriptedLLM(debug_policy),
        embedder=embedder,
    )
    assert [it["generation"] for it in resumed.iterations] == [1, 2, 3]
    assert [e.id for e in resumed] == [f"d-{i:04d}" for i in range(1, len(resumed) + 1)]
    assert resumed.get("d-0005").status == "ok"


def _inflate(data):
    for e in data["episodes"]:
        e["score"] = 5.9


def _drop_one(data):
    deployment = [e for e in data["episodes"] if e["phase"] == "deployment"]
    data["episodes"].remove(deployment[0])


@pytest.mark.parametrize(
    "damage",
    [
        _inflate,
        _drop_one,
        lambda d: d.update(episodes="all of them"),
        lambda d: d["episodes"][0].update(score="high"),
        lambda d: d["episodes"][0].update(task_id=None),
        "fifo",
    ],
    ids=["scores edited", "episode removed", "episodes a string", "score a string", "no task id", "fifo"],
)
@pytest.mark.timeout(120)
def test_a_bad_baseline_cache_entry_is_played_again_never_trusted(tmp_path, embedder, damage):
    import os

    settings = {**SETTINGS, "iterations": 0, "baselines": [], "env_seed": False}
    first, _ = atlas.alma.run(
        llm=ScriptedLLM(task_policy),
        embedder=embedder,
        run_dir=tmp_path / "a",
        baseline_cache=tmp_path / "cache",
        **settings,
    )
    (entry,) = (tmp_path / "cache").glob("*.json")
    if damage == "fifo":
        entry.unlink()
        os.mkfifo(entry)
    else:  # the value edited and its hash recomputed: the checks of the value itself refuse it
        from atlas.infra.cache_seal import content_hash

        data = json.loads(entry.read_text())
        damage(data["value"])
        data["content_sha256"] = content_hash(data["value"])
        entry.write_text(json.dumps(data))
    second, _ = atlas.alma.run(
        llm=ScriptedLLM(task_policy),
        embedder=embedder,
        run_dir=tmp_path / "b",
        baseline_cache=tmp_path / "cache",
        **settings,
    )
    assert second.baseline["cached"] is False and second.baseline["score"] == first.baseline["score"]
    assert [t["score"] for t in second.baseline["per_task"]] == [
        t["score"] for t in first.baseline["per_task"]
    ]
    third, _ = atlas.alma.run(  # the entry was rewritten: valid again
        llm=ScriptedLLM(task_policy),
        embedder=embedder,
        run_dir=tmp_path / "c",
        baseline_cache=tmp_path / "cache",
        **settings,
    )
    assert third.baseline["cached"] is True


@pytest.mark.parametrize(
    "bad",
    [
        {"max_turns": 0},
        {"max_turns": -3},
        {"concurrency": 0},
        {"concurrency": 10**6},
        {"episodes": 10**9},
        {"rooms": 10**9},
        {"parents": 10**6},
    ],
    ids=lambda b: f"{next(iter(b))}={next(iter(b.values()))}",
)
def test_every_setting_is_bounded_before_any_work(tmp_path, bad):
    """From Python: a ConfigError naming the setting, and no run folder."""
    from atlas.errors import ConfigError

    with pytest.raises(ConfigError, match=next(iter(bad))):
        atlas.alma.run(llm=ScriptedLLM([]), run_dir=tmp_path / "r", **{**SETTINGS, **bad})
    assert not (tmp_path / "r").exists()
