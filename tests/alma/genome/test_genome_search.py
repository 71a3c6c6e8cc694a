"""A genome search end to end with scripted models: the bandit tries every operator, each child is
screened by the advice probe before any episode, the meta model edits genomes under the schema (an
unusable reply falls back to mutation and says so), and a resumed run equals one that never stopped."""

from __future__ import annotations

import json
from typing import Any

import pytest
from alma_doubles import debug_policy, task_policy

import atlas.alma
from atlas.alma.genome import parse_genome
from atlas.alma.genome.representation import GENOME_OPERATORS
from atlas.alma.genome.step import entry_genome
from atlas.alma.state.search_record import LEGACY_KEYS
from atlas.infra.llm import ScriptedLLM

EDIT = {
    "encode": [
        {"part": "transitions", "params": {"state_key": "location", "neighbors_key": "adjacent_rooms"}},
        {"part": "goal_actions", "params": {"state_key": "location"}},
    ],
    "retrieve": [
        {"part": "goal_rules", "params": {}},
        {"part": "route", "params": {}},
        {"part": "explore", "params": {}},
    ],
    "render": {"part": "lines", "params": {}},
}


def meta(reply: str) -> ScriptedLLM:
    def answer(messages: list[dict[str, Any]], **kwargs: Any) -> str:
        assert "You improve memory designs" in messages[-1]["content"]
        assert kwargs.get("json_schema"), "the genome edit is asked for under the genome schema"
        return reply

    return ScriptedLLM(answer)


def search(
    tmp_path, embedder, reply: str, *, iterations: int, name: str = "run", resume: bool = False, **extra: Any
):
    kwargs: dict[str, Any] = dict(
        llm=ScriptedLLM(task_policy),
        meta_llm=meta(reply),
        debug_llm=ScriptedLLM(debug_policy),
        embedder=embedder,
        iterations=iterations,
        trace=False,
        baseline_cache=False,
    )
    if resume:
        return atlas.alma.run(resume=tmp_path / name, **kwargs)[0]
    return atlas.alma.run(
        run_dir=tmp_path / name,
        env="graphworld",
        episodes=2,
        rooms=5,
        deploy_seeds=1,
        seed=42,
        baselines=["trajectory_retrieval"],
        env_seed=False,
        quiet=True,
        representation="genome",
        probe_tasks=2,
        **kwargs,
        **{"genome_candidates": 6, **extra},
    )[0]


def evolved(archive):
    return [e for e in archive if e.origin == "meta"]


@pytest.fixture(scope="module")
def straight_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("straight")


@pytest.fixture(scope="module")
def straight(straight_dir, embedder):
    return search(straight_dir, embedder, json.dumps(EDIT), iterations=4)


def test_each_operator_is_tried_and_every_child_was_screened_first(straight):
    children = evolved(straight)
    assert [c.search.operator for c in children] == list(GENOME_OPERATORS)
    for c in children:
        rec = c.search
        assert rec.candidates and not any(k in c.metadata for k in LEGACY_KEYS), c.metadata
        assert rec.probe_kind == ("own games" if c.status == "ok" else "logged")  # genome_step
        assert all(0.0 <= cand.probe_score <= 1.0 for cand in rec.candidates)
        # every checked candidate is kept with its genome: the next generations' climb starts from the best
        checked = {parse_genome(r.genome).key: r.agent_probe for r in rec.checked}
        assert checked == {k.key: k.agent_probe for k in rec.candidates if k.agent_probe is not None}
        if c.status == "ok":  # played by the task agent only after its probe solved a task
            assert rec.probe_solved > 0 and entry_genome(c) is not None
            # ... with memory from its own collection games, played by the task agent before it was chosen
            chosen = next(k for k in rec.candidates if k.key == entry_genome(c).key)
            assert chosen.agent_probe == rec.probe_score and rec.screen_score is not None
            assert rec.beat_parent is not None and rec.operator_stats
        else:
            assert c.errors[0].startswith("screened out by the advice probe")
    assert all(it["operator"] in GENOME_OPERATORS for it in straight.iterations)


def test_the_agent_checks_collection_games_are_kept_in_the_run_folder(straight, straight_dir):
    """Each checked genome's collection games with the task agent: every collection task played, with the
    advice each recall gave, readable as a played design's logs are."""
    rows = [r for c in evolved(straight) for r in c.search.checked]
    assert rows
    for r in rows:
        logs = straight_dir / "run" / r.logs
        episodes = [json.loads(line) for line in (logs / "episodes.jsonl").read_text().splitlines()]
        assert [e["phase"] for e in episodes] == ["collection"] * 2, r.logs
        reached = [e["score"] if e.get("highest") is None else e["highest"] for e in episodes]
        assert r.collection_reached == pytest.approx(sum(reached) / 2)
        calls = [json.loads(line) for line in (logs / "calls.jsonl").read_text().splitlines()]
        assert {c["phase"] for c in calls} >= {"update", "recall"}
        assert "agent check" in (logs / "debug_log.txt").read_text()
    # the games that reached furthest with a design's advice are what the screening learns from besides
    # the baseline's (``CHECKED_GAMES``)
    from atlas.alma.search.agent_check import scored_games
    from atlas.alma.state.highest import collection_reached

    scores = [(r.collection_reached, r.logs) for r in rows]
    scores += [(collection_reached(e.per_task), e.logs_dir) for e in straight if e.name != "no_memory"]
    best = max(s or 0.0 for s, d in scores if d)
    assert best > 0 and dict((d, s) for s, d in scores if d)[scored_games(straight)] == best
    assert scored_games([e for e in straight if e.name == "no_memory"]) is None


def test_the_llm_edit_is_the_first_candidate_of_its_generation(straight):
    child = next(c for c in evolved(straight) if c.search.operator == "llm_edit")
    assert child.search.candidates[0].key == parse_genome({"name": "x", **EDIT}).key
    assert child.search.operator_notes == []


def test_an_unusable_reply_falls_back_to_mutation_and_is_recorded(tmp_path, embedder):
    archive = search(tmp_path, embedder, "this is not a genome", iterations=4)
    child = next(c for c in evolved(archive) if c.search.operator == "llm_edit")
    assert child.search.operator_notes[0].startswith("llm_edit reply unusable (reply is not JSON")
    assert child.search.candidates  # mutation stood in


def test_a_resumed_search_equals_one_that_never_stopped(tmp_path, embedder, straight):
    search(tmp_path, embedder, json.dumps(EDIT), iterations=2)
    resumed = search(tmp_path, embedder, json.dumps(EDIT), iterations=4, resume=True)

    def shape(archive):
        return [
            (
                e.id,
                e.status,
                e.search and e.search.operator,
                [c.key for c in e.search.candidates] if e.search else [],
            )
            for e in archive
        ]

    assert shape(resumed) == shape(straight)


def test_without_iterations_a_genome_search_runs_its_default_generations(tmp_path, embedder):
    archive = atlas.alma.run(
        llm=ScriptedLLM(task_policy),
        meta_llm=meta(json.dumps(EDIT)),
        debug_llm=ScriptedLLM(debug_policy),
        embedder=embedder,
        trace=False,
        baseline_cache=False,
        run_dir=tmp_path / "run",
        env="graphworld",
        episodes=2,
        rooms=5,
        deploy_seeds=1,
        seed=42,
        baselines=[],
        env_seed=False,
        quiet=True,
        representation="genome",
        genome_candidates=1,
        probe_tasks=1,
    )[0]
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["iterations"] == 20 and len(archive.iterations) == 20


def test_a_found_design_is_one_that_beats_no_memory_with_its_interval_above_0():
    from atlas.alma.search.budget import found
    from atlas.alma.state.archive import ArchiveEntry

    def entry(lo: float, **kw: Any) -> ArchiveEntry:
        fields = {"id": "d-0009", "name": "m", "generation": 3, "origin": "meta", "status": "ok", **kw}
        return ArchiveEntry(**fields, vs_no_memory={"mean": lo + 0.2, "ci95": [lo, lo + 0.4], "n": 6})

    reason = found(entry(0.1))
    assert reason and "generation 3" in reason and "[+0.100, +0.500]" in reason and "6 paired" in reason
    assert found(entry(0.0)) is None  # an interval that reaches 0 does not separate
    assert found(entry(0.1, origin="baseline")) is None
    assert found(entry(0.1, status="error")) is None
    assert found(ArchiveEntry(id="d-0003", name="m")) is None  # never played


def test_until_found_stops_after_the_first_found_design_and_resume_goes_on(tmp_path, embedder, monkeypatch):
    """``until_found``: the search stops after the first generation whose design is found (here, with the
    scripted task agent's zero gains, any played design counts), keeps the archive, and a resumed run
    without it plays the remaining generations."""
    from atlas.alma.search import budget

    monkeypatch.setattr(budget, "found", lambda e: "found it" if e.status == "ok" else None)
    archive = search(tmp_path, embedder, json.dumps(EDIT), iterations=6, until_found=True)
    played = [e.generation for e in evolved(archive) if e.status == "ok"]
    assert played and max(e.generation for e in evolved(archive)) == played[0] < 6
    resumed = search(tmp_path, embedder, json.dumps(EDIT), iterations=6, resume=True)
    assert max(e.generation for e in evolved(resumed)) == 6


def test_without_agent_checks_the_screenings_best_is_played_unchecked(tmp_path, embedder):
    archive = search(tmp_path, embedder, json.dumps(EDIT), iterations=4, agent_checks=0)
    children = evolved(archive)
    assert all(k.agent_probe is None for c in children for k in c.search.candidates)
    played = [c for c in children if c.status == "ok"]
    assert played, [c.errors for c in children]
    for c in played:
        chosen = next(k for k in c.search.candidates if k.key == entry_genome(c).key)
        assert c.search.screen_score == chosen.probe_score > 0  # the screening's score chose it


def test_later_generations_check_what_the_climb_made_from_the_best_checked_genomes(tmp_path, embedder):
    """The climb learns from the agent check: a generation's anchored checks descend from the genomes
    earlier generations' checks rated best (``checked_anchors``), and there are some; no genome is
    checked twice in the run, near copies included (the same retrieve parts screening the same)."""
    from atlas.alma.search.agent_check import checked_anchors

    children = evolved(search(tmp_path, embedder, json.dumps(EDIT), iterations=3, genome_candidates=48))
    anchored, likeness = [], []
    for i, c in enumerate(children):
        rows = c.search.checked
        assert {r.anchor for r in rows if r.anchor} <= {g.key for g in checked_anchors(children[:i])}
        anchored += [r for r in rows if r.anchor]
        likeness += [
            (tuple(sorted({u["part"] for u in r.genome["retrieve"]})), round(r.screen_score, 3)) for r in rows
        ]
    assert anchored, [c.search.checked for c in children]
    assert len(likeness) == len(set(likeness)) > 6


def test_text_after_the_genome_object_is_ignored(tmp_path, embedder):
    """A grammar-constrained local model can run on past the object it was held to ("Extra data")."""
    archive = search(tmp_path, embedder, json.dumps(EDIT) + '\n{"encode": []}\nDone.', iterations=4)
    child = next(c for c in evolved(archive) if c.search.operator == "llm_edit")
    assert child.search.operator_notes == []
    assert child.search.candidates[0].key == parse_genome({"name": "x", **EDIT}).key


def test_once_the_agent_check_refuted_two_generations_a_refuted_candidate_is_played(
    tmp_path, embedder, monkeypatch
):
    """Where the probe with memory from the task agent's own games refutes every candidate (made to here:
    it probes 0), the first generation it refutes is screened out; the second plays a refuted candidate
    whose screening beat the bar, the one whose own collection went furthest; then the count starts
    again. Generations the screening itself screened out do not count."""
    from atlas.alma.search import genome_step

    async def refutes(self, design, own):
        return {"probe_score": 0.0, "steered": 0.0, "solved": 0}

    monkeypatch.setattr(genome_step.GenomeStep, "_own_probe", refutes)
    children = evolved(search(tmp_path, embedder, json.dumps(EDIT), iterations=7))
    refuted = [c for c in children if c.search.agent_probe is not None or c.search.played_refuted]
    assert len(refuted) >= 3, [c.errors for c in children]
    first, second, third = refuted[:3]
    assert first.status == "invalid" and "with the task agent's own collection" in first.errors[0]
    assert not first.search.played_refuted
    assert second.status != "invalid" and second.search.played_refuted, second.errors
    eligible = [r for r in second.search.checked if r.screen_score > second.search.probe_bar]
    furthest = max(r.collection_reached or 0.0 for r in eligible)
    chosen = next(r for r in eligible if parse_genome(r.genome).key == entry_genome(second).key)
    assert chosen.collection_reached == furthest
    assert chosen.screen_score == max(r.screen_score for r in eligible if r.collection_reached == furthest)
    assert third.status == "invalid" and not third.search.played_refuted
    assert all(c.search.played_refuted is None for c in children if c not in refuted)
