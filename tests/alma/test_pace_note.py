"""What ``--max-minutes`` leaves for the search at the no-memory baseline's pace: said once the
baseline is played, when the test phase and the designs the search would play do not fit
(``budget.pace_note``), silent when they do or without a time cap; and a hand-built design whose
first stage would end past the cap is not played (``budget.no_room``)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from alma_doubles import debug_policy, task_policy

import atlas.alma
from atlas.alma.search.budget import no_room, pace_note, screening_s
from atlas.alma.state.config import AlmaConfig
from atlas.errors import SearchStopped
from atlas.infra.llm import ScriptedLLM


def _config(**kw) -> AlmaConfig:
    return AlmaConfig(env="graphworld", episodes=3, deploy_seeds=8, concurrency=2, **kw)


def test_a_slow_environment_is_told_how_many_designs_the_cap_leaves():
    cfg = _config(max_minutes=120)
    # 27 episodes in 44 minutes: about 98 s each; the test phase (24 tasks, no memory and the pick) takes
    # about 79 minutes and a staged design (3 + 8 episodes) about 18, so 120 minutes leave none
    note = pace_note(2660.0 / 27, cfg, deployment=24, elapsed_s=2660.0)
    assert note is not None
    assert "99 s per episode" in note and "--concurrency 2" in note
    assert "about 79 minutes" in note and "about 18:" in note
    assert "leaves room for 0 played designs" in note and "--executor ray" in note


def test_a_cap_with_room_for_the_search_says_nothing():
    assert pace_note(54.0 / 27, _config(max_minutes=120), deployment=24, elapsed_s=54.0) is None
    assert pace_note(2660.0 / 27, _config(max_minutes=None), deployment=24, elapsed_s=2660.0) is None
    assert pace_note(2660.0 / 27, _config(max_minutes=900), deployment=24, elapsed_s=2660.0) is None


def test_the_count_of_designs_it_leaves_grows_with_the_cap():
    counts = []
    for minutes in (125, 150):  # 120 less 44 played and 79 for the test phase: 2, then 27 minutes left
        note = pace_note(2660.0 / 27, _config(max_minutes=minutes), deployment=24, elapsed_s=2660.0)
        assert note is not None
        counts.append(int(note.split("leaves room for ")[1].split()[0]))
    assert counts == [0, 1]


def test_a_hand_built_design_is_played_only_when_its_first_stage_fits():
    cfg = _config(max_minutes=120)  # 99 s per episode: 18 minutes to its first stage, 79 for the test phase
    assert no_room(98.5, cfg, 24, elapsed_s=20 * 60) is None
    why = no_room(98.5, cfg, 24, elapsed_s=30 * 60)
    assert why is not None and "--max-minutes 120" in why and "30 minutes run" in why
    assert no_room(98.5, _config(max_minutes=None), 24, elapsed_s=10**6) is None
    assert no_room(0.0, cfg, 24, elapsed_s=10**6) is None  # no pace measured yet


def _events(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]


@pytest.mark.parametrize(
    ("minutes", "said", "representation"),
    [(1e-4, True, "code"), (600.0, False, "code"), (1e-4, True, "genome")],
)
def test_a_search_says_it_after_its_baseline_and_plays_only_what_fits(
    tmp_path: Path, embedder, minutes, said, representation
):
    """A genome search looks at the hand-built designs twice (the ones that learn with the model later):
    one left out is said once."""
    run = tmp_path / "run"
    with contextlib.suppress(SearchStopped):  # a tiny cap may stop the run after the note
        atlas.alma.run(
            run_dir=run,
            env="graphworld",
            episodes=2,
            rooms=5,
            deploy_seeds=1,
            seed=7,
            baselines=["trajectory_retrieval"],
            env_seed=False,
            quiet=True,
            trace=True,
            iterations=0,
            baseline_cache=False,
            max_minutes=minutes,
            representation=representation,
            llm=ScriptedLLM(task_policy),
            debug_llm=ScriptedLLM(debug_policy),
            embedder=embedder,
        )
    events = [e["event"] for e in _events(run)]
    assert "baseline.done" in events
    assert ("budget.pace" in events) is said
    played = {e.name for e in atlas.alma.Archive.load(run)}
    assert ("trajectory_retrieval" in played) is not said
    if said:
        assert events.index("budget.pace") > events.index("baseline.done")
        skipped = [e for e in _events(run) if e["event"] == "seed.skipped"]
        assert [e["name"] for e in skipped] == ["trajectory_retrieval"]


def test_a_generation_screens_for_a_tenth_of_the_cap_at_most_and_without_a_cap_for_its_budget():
    assert screening_s(_config()) is None
    assert screening_s(_config(max_minutes=120)) == pytest.approx(720.0)
    assert screening_s(_config(max_minutes=2)) == 60.0  # a minute at least


def _timed(archive, name: str, seconds: float, episodes: int, **metadata) -> None:
    from atlas.alma.state.archive import ArchiveEntry

    rows = [
        {"task_id": f"t{i}", "phase": "deployment", "success": False, "score": 0.0} for i in range(episodes)
    ]
    archive.add(
        ArchiveEntry(
            id=archive.next_id(),
            name=name,
            origin="baseline" if name == "no_memory" else "meta",
            per_task=rows,
            metadata={"eval_duration_s": seconds, **metadata},
        )
    )


def test_the_pace_follows_the_latest_evaluations_not_the_first():
    """A baseline played while the machine was busy (159 s an episode) would leave out hand-built
    designs that fit once it is idle again: the pace is the median of the latest evaluations."""
    from atlas.alma.search.seeds import PACE_OF, per_episode_s
    from atlas.alma.state.archive import Archive

    archive = Archive()
    assert per_episode_s(archive) == 0.0
    _timed(archive, "no_memory", 11 * 159.0, 11)
    assert per_episode_s(archive) == pytest.approx(159.0)
    _timed(archive, "a", 11 * 30.0, 11)
    _timed(archive, "b", 11 * 34.0, 11)
    assert PACE_OF == 3 and per_episode_s(archive) == pytest.approx(34.0)  # median of 159, 30, 34
    _timed(archive, "c", 11 * 31.0, 11)
    assert per_episode_s(archive) == pytest.approx(31.0)  # 159 is no longer among the latest three
    _timed(archive, "broken", 0.0, 0)  # an evaluation that played nothing has no pace
    assert per_episode_s(archive) == pytest.approx(31.0)


def test_a_cached_baseline_sets_the_pace_only_until_this_run_plays_something():
    from atlas.alma.search.seeds import per_episode_s
    from atlas.alma.state.archive import Archive

    archive = Archive()
    _timed(archive, "no_memory", 27 * 5.0, 27, baseline_cached=True)  # played elsewhere, earlier
    assert per_episode_s(archive) == pytest.approx(5.0)
    _timed(archive, "a", 11 * 40.0, 11)
    assert per_episode_s(archive) == pytest.approx(40.0)


def test_the_hand_built_designs_get_a_quarter_of_the_cap():
    """They are the comparison, not the search: once those played took a quarter of --max-minutes the next
    is left out (two that learn with the 0.5B took 28 minutes each for 8 GraphWorld tasks), and so is one
    whose first stage at the latest pace would take them past it; a baseline read from the cache and no
    memory itself do not count."""
    from atlas.alma.search.budget import SEED_SHARE, over_seed_share
    from atlas.alma.search.seeds import seeds_spent_s
    from atlas.alma.state.archive import Archive, ArchiveEntry

    archive = Archive()
    for name, seconds, meta in (
        ("no_memory", 3000.0, {}),
        ("trajectory_retrieval", 600.0, {}),
        ("cached_one", 5000.0, {"baseline_cached": True}),
        ("spatial_graph", 1150.0, {}),
    ):
        archive.add(
            ArchiveEntry(
                id=archive.next_id(),
                name=name,
                origin="baseline",
                generation=0,
                metadata={"eval_duration_s": seconds, **meta},
            )
        )
    archive.add(ArchiveEntry(id=archive.next_id(), name="found", origin="meta", generation=1,
                             metadata={"eval_duration_s": 900.0}))  # fmt: skip
    assert seeds_spent_s(archive) == pytest.approx(1750.0)
    cfg = _config(max_minutes=120)
    assert SEED_SHARE == 0.25 and over_seed_share(1750.0, cfg) is None  # 29 of 30 minutes
    why = over_seed_share(1801.0, cfg)
    assert why is not None and "30 minutes" in why and "--max-minutes 120" in why
    assert over_seed_share(10**6, _config(max_minutes=None)) is None
    # the next one counts at the latest pace: 24 minutes spent, its first stage 11 episodes of 63 s
    assert over_seed_share(1440.0, cfg, 0.0) is None
    why = over_seed_share(1440.0, cfg, 11 * 63.0)
    assert why is not None and "took 24 minutes and the next would take about 12 more" in why
