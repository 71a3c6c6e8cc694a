"""The screening probe learns each candidate's memory four times — from walks that never do what the
goal asks, as a small agent's collection in a world too big for it (inside a search: the no-memory
agent's own logged collection games, replayed), and, under three seeds, from walks that follow the
candidate's own advice as its memory grows, as the task agent collects — and scores the mean. Real
TextWorld fetch episodes, the real sandbox, the real advice probe."""

from __future__ import annotations

import asyncio

import pytest

import atlas.alma.genome.step as step
from atlas.alma.author.smoke import asmoke_run
from atlas.alma.genome import genome_design, parse_genome

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings(
        "ignore:.*(not fully supported|unsupported game|Unable to retrieve walkthrough)"
    ),
]

ROUTE_TO_SIGHTED = {
    "name": "route-sighted",
    "encode": [
        {"part": "transitions", "params": {"state_key": "location"}},
        {"part": "sightings", "params": {"state_key": "location", "goal_only": False}},
    ],
    # where the object was never seen, a walk over the learned map looks for it
    "retrieve": [{"part": "route", "params": {"towards": "sighted"}}, {"part": "explore"}],
}


@pytest.fixture(scope="module")
def fetch(make_env):
    env = make_env("textworld-fetch")
    tasks = env.generate_tasks(14, seed=42)
    return env, tasks[:6], tasks[6:]


def test_the_collections_are_what_they_say(fetch, pool, embedder):
    env, collection, probe_tasks = fetch
    design = genome_design(parse_genome(ROUTE_TO_SIGHTED))

    def collected(walks: str, seed: int = 0) -> tuple[list[bool], list[str]]:
        report = asyncio.run(
            asmoke_run(
                design,
                env,
                tasks=(collection, probe_tasks[:1]),
                embedder=embedder,
                pool=pool,
                explorer_episodes=0,
                walks=walks,
                seed=seed,
            )
        )
        recalls = [
            c.return_value or "" for c in report.calls if c.phase == "recall" and c.episode.startswith("C")
        ]
        return [bool(r["success"]) for r in report.episode_results], recalls

    assert step.PROBE_COLLECTIONS == (
        ("goal_averse", 0),
        ("advised", 0, 1),
        ("advised", 0, 2),
        ("advised", 0, 3),
    )
    averse, _ = collected("goal_averse")
    assert not any(averse)
    # the advised walks play with the memory as it grows: nothing to say before the first episode, a
    # walk over the learned map after it; and what they learn differs from the goal-averse walks'
    advised, recalls = collected("advised")
    assert len(recalls) == len(collection) and not recalls[0].strip()
    assert all(r.strip() for r in recalls[1:])
    assert any(advised)
    assert len({tuple(collected("advised", seed)[1]) for seed in (1, 2, 3)}) > 1  # each seed its own walks
    with pytest.raises(ValueError, match="walks"):
        asyncio.run(asmoke_run(design, env, tasks=(collection, probe_tasks), walks="greedy"))


def test_the_probe_is_the_mean_over_its_collections(fetch, pool, embedder, monkeypatch):
    env, collection, probe_tasks = fetch
    design = genome_design(parse_genome(ROUTE_TO_SIGHTED))

    def run(collections) -> dict:
        monkeypatch.setattr(step, "PROBE_COLLECTIONS", collections)
        return asyncio.run(step.probe(design, env, collection, probe_tasks, embedder=embedder, pool=pool))

    collections = step.PROBE_COLLECTIONS
    every = run(collections)
    singles = [run((c,)) for c in collections]
    assert singles[0]["solved"] > 0  # it learns its map from failed walks too
    for key in ("probe_score", "steered"):
        assert every[key] == pytest.approx(sum(r[key] for r in singles) / len(singles))
    for key in ("solved", "played"):
        assert every[key] == sum(r[key] for r in singles)


TAKE_RULES = {
    "name": "route-sighted-take",
    "encode": [*ROUTE_TO_SIGHTED["encode"], {"part": "goal_actions", "params": {"state_key": "location"}}],
    "retrieve": [{"part": "goal_rules"}, *ROUTE_TO_SIGHTED["retrieve"]],
}


def test_a_take_the_advice_names_counts_more_than_one_the_probe_chose_itself(fetch, pool, embedder):
    """The probe takes what the goal names where the advice names nothing (``PROBE_UNADVISED``); the task
    agent does that at about 0.4 of such turns, so a task finished that way counts ``UNADVISED_CREDIT`` of
    its score, and a memory that learned the take (``goal_rules``) screens above the same walk without it."""
    env, collection, probe_tasks = fetch

    def played(genome: dict) -> list[dict]:
        report = asyncio.run(
            asmoke_run(
                genome_design(parse_genome(genome)),
                env,
                tasks=(collection, probe_tasks),
                embedder=embedder,
                pool=pool,
                explorer_episodes=1,
                unadvised=step.PROBE_UNADVISED,
            )
        )
        return [p for p in report.probes if p["success"]]

    walked, ruled = played(ROUTE_TO_SIGHTED), played(TAKE_RULES)
    assert walked and all(p["unadvised"] >= 1 for p in walked)  # nothing it learned says "take"
    assert any(p["unadvised"] == 0 for p in ruled)  # the learned rule took the object
    plain, taking = (
        asyncio.run(
            step.probe(
                genome_design(parse_genome(g)), env, collection, probe_tasks, embedder=embedder, pool=pool
            )
        )
        for g in (ROUTE_TO_SIGHTED, TAKE_RULES)
    )
    assert taking["probe_score"] > plain["probe_score"]
    assert 0 < plain["probe_score"] <= step.UNADVISED_CREDIT


def test_goal_averse_walks_pick_up_other_things_never_the_goals(fetch):
    """Every fetch goal says "find" and "take": those words are the task's form, which the goal-averse
    walks may name ("take coin" on the way, as the 0.5B agent does), never the thing the goal names."""
    from atlas.envs.base import action_label, words
    from atlas.envs.policies import GoalAversePolicy, form_words, goal_words

    env, collection, _ = fetch
    goals = [env.format_goal(t) for t in collection]
    form = form_words(goals)
    assert form == {"find", "take"}, form
    assert form_words(goals[:1]) == frozenset() and form_words([goals[0], goals[0]]) == frozenset()
    took, never = [], []
    for task in collection:
        for walk in (GoalAversePolicy(3, form=form), GoalAversePolicy(3)):
            actions = [action_label(s.tool, s.args) for s in walk.run(env.clone(), task).steps]
            thing = goal_words(env.format_goal(task)) - form
            assert not [a for a in actions if thing & set(words(a))], actions
            (took if walk.form else never).append(sum("take" in words(a) for a in actions))
    assert sum(took) > 0 and sum(never) == 0, (took, never)


def test_a_logged_collection_replays_the_games_the_agent_played(fetch, pool, embedder, monkeypatch):
    """Inside a search the probe learns from the no-memory agent's logged collection games: replayed
    step for step, they give the memory (and the probe) those games give; games the agent played with a
    design's advice (``checked``) are one more collection in the mean."""
    from atlas.envs.base import action_label
    from atlas.envs.policies import GoalAversePolicy, LoggedWalk, form_words

    env, collection, probe_tasks = fetch
    form = form_words([env.format_goal(t) for t in collection])
    logged = {
        t.id: [action_label(s.tool, s.args) for s in GoalAversePolicy(0, form=form).run(env.clone(), t).steps]
        for t in collection
    }
    first = collection[0]
    refused = {first.id: ["fly to the moon", *logged[first.id]]}  # a reply the game did not list: skipped
    again = LoggedWalk(refused).run(env.clone(), first)
    assert [action_label(s.tool, s.args) for s in again.steps] == logged[first.id]
    assert not LoggedWalk({}).run(env.clone(), first).steps  # no log: the walk ends at once
    # the logged games stand in for the goal-averse walks; the advised walks stay
    assert step.probe_collections(logged) == step.LOGGED_COLLECTIONS
    assert (("logged", 0), *step.PROBE_COLLECTIONS[1:]) == step.LOGGED_COLLECTIONS
    assert step.probe_collections({}) == step.PROBE_COLLECTIONS

    design = genome_design(parse_genome(ROUTE_TO_SIGHTED))
    monkeypatch.setattr(step, "PROBE_COLLECTIONS", (("goal_averse", 0),))
    monkeypatch.setattr(step, "LOGGED_COLLECTIONS", (("logged", 0),))
    walked = asyncio.run(step.probe(design, env, collection, probe_tasks, embedder=embedder, pool=pool))
    replayed = asyncio.run(
        step.probe(design, env, collection, probe_tasks, embedder=embedder, pool=pool, logged=logged)
    )
    assert replayed == walked and walked["solved"] > 0
    # games of the agent's under some design's advice (``checked``): one more collection, in the mean
    idle = {t.id: [] for t in collection}  # games that did nothing teach nothing
    unhelped = asyncio.run(
        step.probe(design, env, collection, probe_tasks, embedder=embedder, pool=pool, logged=idle)
    )
    both = asyncio.run(
        step.probe(
            design, env, collection, probe_tasks, embedder=embedder, pool=pool, logged=idle, checked=logged
        )
    )
    assert both["probe_score"] == pytest.approx((unhelped["probe_score"] + walked["probe_score"]) / 2)
    assert (both["solved"], both["played"]) == (walked["solved"], unhelped["played"] + walked["played"])
    assert unhelped["solved"] == 0
    with pytest.raises(ValueError, match="logged"):
        asyncio.run(asmoke_run(design, env, tasks=(collection, probe_tasks), walks="logged"))
