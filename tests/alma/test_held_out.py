"""The run's result on tasks no choice saw: after a search, the pick, the next best and the best
hand-built design are played on held-out test tasks, compared with no memory there, and reported; no
test task ever reaches the screening or the choice of the best design."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest
from alma_doubles import debug_policy, task_policy

import atlas.alma
from atlas.alma.evaluate.harness import held_out_tasks, run_tasks
from atlas.alma.search.held_out import HeldOut, estimate_s, reserve_s, to_test
from atlas.alma.state.archive import Archive
from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.run_dir import read_jsonl
from atlas.core.types import Task
from atlas.envs.graphworld.env import GraphWorldEnv
from atlas.errors import ConfigError
from atlas.infra.llm import ScriptedLLM
from atlas.protocols.env import Action, StepResult


class RecordingWorld(GraphWorldEnv):
    """GraphWorld that logs the id of every task any clone resets (the probe plays clones)."""

    def __init__(self, log: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.log = log

    def clone(self) -> RecordingWorld:
        twin = RecordingWorld(self.log, params=self.params, family_mode=self.family_mode, family=self.family)
        return twin

    def reset(self, task: Task) -> dict[str, Any]:
        self.log.append(task.id)
        return super().reset(task)


SETTINGS: dict[str, Any] = dict(episodes=2, deploy_seeds=2, seed=42, use_family=True)


@pytest.fixture(scope="module")
def searched(tmp_path_factory, embedder):
    from atlas.envs.graphworld.env import GraphWorldParams

    log: list[str] = []
    env = RecordingWorld(log, params=GraphWorldParams(rooms=5))
    marks: list[int] = []

    def mark(event: str, fields: dict[str, Any]) -> None:
        if event == "held_out.start":
            marks.append(len(log))

    run = tmp_path_factory.mktemp("held") / "run"
    archive, _ = atlas.alma.run(
        run_dir=run,
        env=env,
        llm=ScriptedLLM(task_policy),
        debug_llm=ScriptedLLM(debug_policy),
        embedder=embedder,
        iterations=2,
        trace=True,
        baseline_cache=False,
        baselines=[
            "trajectory_retrieval",
            "spatial_graph",
        ],  # the map's routes beat no memory: a gain to test
        env_seed=False,
        quiet=True,
        representation="genome",
        probe_tasks=2,
        genome_candidates=4,
        agent_checks=1,
        callbacks=[mark],
        **SETTINGS,
    )
    return archive, run, log, marks, env


def test_the_search_ends_with_its_result_on_held_out_test_tasks(searched):
    archive, run, _, _, env = searched
    held = HeldOut.model_validate(archive.held_out)
    cfg = AlmaConfig.build(env="graphworld", **SETTINGS)
    collection, deployment = run_tasks(cfg, env)
    assert len(held.tasks) == cfg.test_count == 4
    assert not set(held.tasks) & {t.id for t in collection + deployment}
    pick = held.chosen()
    assert pick is not None and held.designs[0] is pick
    best = archive.best()
    assert best is not None and (pick.id == best.id or best.name == "no_memory")
    assert {d.origin for d in held.designs} & {"baseline", "host", "seed"}, (
        "the best hand-built design is tested"
    )
    for d in held.designs:
        assert d.status == "ok" and set(d.per_task) == set(held.tasks)
        assert d.vs_no_memory is not None and d.vs_no_memory["n"] == len(held.tasks)
        diff = sum(d.per_task[t] - held.no_memory[t] for t in held.tasks) / len(held.tasks)
        assert d.vs_no_memory["mean"] == pytest.approx(diff)
    # what each played on the test tasks is kept, as for the tasks it was chosen on
    for logs in [held.no_memory_logs, *(d.logs for d in held.designs)]:
        assert logs is not None
        rows = read_jsonl(run / logs / "episodes.jsonl")
        assert sorted(r["task_id"] for r in rows if r["phase"] == "deployment") == sorted(held.tasks)
        assert (run / logs / "debug_log.txt").read_text().strip()
    # saved with the archive, read back, and in the report
    again = Archive.load(run / "archive.json")
    assert again.held_out == archive.held_out
    from atlas.viewer.report import write_report
    from atlas.viewer.run_reader import read_run

    text = write_report(run).markdown.read_text()
    assert "## Result on held-out test tasks" in text and f"`{pick.id}`" in text
    assert read_run(run).summary()["held_out"]["tasks"] == held.tasks


def test_no_test_task_reaches_the_screening_or_the_choice(searched):
    archive, _, log, marks, _ = searched
    held = HeldOut.model_validate(archive.held_out)
    assert len(marks) == 1, "the test phase ran once"
    before, after = log[: marks[0]], log[marks[0] :]
    assert before and not set(before) & set(held.tasks), "a test task was played before the test phase"
    assert set(held.tasks) <= set(after)
    for e in archive:
        assert not {t.task_id for t in e.per_task} & set(held.tasks)


def test_a_resumed_run_with_nothing_new_keeps_its_result(searched, tmp_path, embedder):
    archive, run, log, _, env = searched
    n = len(log)
    again, _ = atlas.alma.run(
        resume=run,
        env=env,
        llm=ScriptedLLM(task_policy),
        debug_llm=ScriptedLLM(debug_policy),
        embedder=embedder,
        trace=False,
        baseline_cache=False,
    )
    assert again.held_out == archive.held_out
    assert not set(log[n:]) & set(HeldOut.model_validate(archive.held_out).tasks), "measured once per archive"


def test_a_search_that_played_no_design_keeps_no_time_for_a_test_and_plays_none(tmp_path, embedder):
    log: list[str] = []
    archive, _ = atlas.alma.run(
        run_dir=tmp_path / "run",
        env=RecordingWorld(log),
        llm=ScriptedLLM(task_policy),
        embedder=embedder,
        iterations=0,
        baselines=[],
        baseline_cache=False,
        trace=False,
        quiet=True,
        max_minutes=60,
        env_seed=False,
        **SETTINGS,
    )
    cfg = AlmaConfig.build(env="graphworld", max_minutes=60, **SETTINGS)
    assert [e.name for e in archive] == ["no_memory"] and archive.held_out is None
    assert reserve_s(archive, cfg, 4) == 0.0
    held, _ = held_out_tasks(cfg, GraphWorldEnv(), [])
    assert not {t.id for t in held} & set(log), "no memory was played on the test tasks for nothing"
    tied = archive.entries[0].model_copy(update={"id": "d-0002", "name": "tied", "origin": "meta"})
    archive.add(tied)
    assert to_test(archive, 3) == [] and reserve_s(archive, cfg, 4) == 0.0, "a tie has no gain to confirm"
    ahead = tied.model_copy(update={"id": "d-0003", "name": "ahead", "normalized_score": 0.1})
    archive.add(ahead)
    assert [e.name for e in to_test(archive, 3)] == ["ahead"]
    # the pick and no memory, each at no memory's pace (designs after the pick play in what is left)
    assert reserve_s(archive, cfg, 4) == pytest.approx(2 * archive.entries[0].metadata["eval_duration_s"])
    first = archive.entries[0].metadata["eval_duration_s"]
    slower = ahead.model_copy(
        update={"id": "d-0004", "name": "slower", "metadata": {"eval_duration_s": 3 * first}}
    )
    archive.add(slower)  # the latest evaluation took three times as long (a busier machine): its pace counts
    assert estimate_s(archive, 1, 4, 4) == pytest.approx(3 * first + first), "no memory at its own pace"


def test_held_out_tasks_never_overlap_what_the_run_saw():
    env = GraphWorldEnv()
    cfg = AlmaConfig.build(env="graphworld", episodes=3, deploy_seeds=8)
    collection, deployment = run_tasks(cfg, env)
    tasks, source = held_out_tasks(cfg, env, collection + deployment)
    assert len(tasks) == 24 and "seeds" in source
    assert not {t.id for t in tasks} & {t.id for t in collection + deployment}
    with pytest.raises(ConfigError, match="overlap"):
        held_out_tasks(cfg, env, collection + tasks[:1])
    assert AlmaConfig.build(env="graphworld", test_seeds=0).test_count == 0


def test_to_test_adds_the_best_hand_built_design(searched):
    archive, *_ = searched
    picked = to_test(archive, 1)
    assert picked[0].name != "no_memory"
    assert any(e.origin in ("baseline", "host", "seed") for e in picked)


def test_a_genome_search_on_an_environment_without_listed_actions_says_what_it_needs(tmp_path, embedder):
    class NoList:
        """GraphWorld's protocol without candidate_actions."""

        def __init__(self) -> None:
            self._env = GraphWorldEnv()
            self.name = "nolist"

        def __getattr__(self, name: str) -> Any:
            if name == "candidate_actions":
                raise AttributeError(name)
            return getattr(self._env, name)

        def clone(self) -> NoList:
            return NoList()

        def step(self, action: Action) -> StepResult:
            return self._env.step(action)

    with pytest.raises(ConfigError, match="candidate_actions"):
        atlas.alma.run(
            run_dir=tmp_path / "run",
            env=NoList(),
            llm=ScriptedLLM(task_policy),
            embedder=embedder,
            iterations=1,
            trace=False,
            baseline_cache=False,
            quiet=True,
            representation="genome",
            **SETTINGS,
        )


def test_a_test_phase_past_the_cap_plays_the_pick_and_says_what_it_left_out(searched, tmp_path, embedder):
    _, run, _, _, env = searched
    again = tmp_path / "run"
    shutil.copytree(run, again)
    data = json.loads((again / "archive.json").read_text())
    del data["held_out"]  # measured again on resume, now past a cap of a second
    full = [e for e in data["entries"] if e["stage"] == "full" and e["name"] != "no_memory"]
    assert len(full) >= 2, "the run has a design after the pick to leave out"
    for e in full:  # each above no memory where chosen: the test phase would play them all
        e["normalized_score"] = max(e["normalized_score"] or 0.0, 0.01)
    (again / "archive.json").write_text(json.dumps(data))
    resumed, _ = atlas.alma.run(
        resume=again,
        env=env,
        llm=ScriptedLLM(task_policy),
        debug_llm=ScriptedLLM(debug_policy),
        embedder=embedder,
        max_minutes=1 / 60,
        trace=False,
        quiet=True,
        baseline_cache=False,
    )
    capped = HeldOut.model_validate(resumed.held_out)
    pick, *rest = capped.designs
    assert pick.chosen and pick.status == "ok" and pick.vs_no_memory is not None, (
        "the run's result is measured"
    )
    assert rest, "a design after the pick was due on the test tasks"
    for d in rest:
        assert d.status == "skipped" and not d.per_task and "--max-minutes" in d.errors[0]
    from atlas.cli.output import held_out_lines
    from atlas.viewer.report import write_report

    assert any("not played on the test tasks" in line for line in held_out_lines(resumed))
    assert "skipped: not played on the test tasks" in write_report(again).markdown.read_text()
