"""ChromaStrategyBank, LLMStrategyAbstractor and the success-rate updaters."""

from __future__ import annotations

import json

import pytest

from atlas.core.types import Strategy
from atlas.errors import InvalidInputError, LLMResponseError
from atlas.infra.llm import ScriptedLLM
from atlas.memory.strategies import (
    BayesianUpdater,
    ChromaStrategyBank,
    EMASuccessUpdater,
    LLMStrategyAbstractor,
    SimpleAverageUpdater,
)

KEY_STRATEGY = {
    "abstractable": True,
    "situation": "an object must be found in an unexplored building",
    "approach": "look around, visit unexplored rooms nearest first, pick up the object when seen",
    "rationale": "systematic exploration avoids revisiting rooms",
}


def test_ema_updater():
    u = EMASuccessUpdater(alpha=0.5)
    assert u.update(0.5, 0, True) == (0.75, 1)
    assert u.update(0.75, 1, False) == (0.375, 2)


def test_simple_average_updater():
    u = SimpleAverageUpdater()
    rate, count = 0.0, 0
    for outcome in [True, False, True, True]:
        rate, count = u.update(rate, count, outcome)
    assert (rate, count) == (0.75, 4)


def test_bayesian_updater_is_exact_beta_bernoulli():
    u = BayesianUpdater(prior_alpha=2.0, prior_beta=3.0)
    rate, count = u.initial_rate, 0
    outcomes = [True, True, False, True, False, False, True]
    for o in outcomes:
        rate, count = u.update(rate, count, o)
    s = sum(outcomes)
    assert rate == pytest.approx((2.0 + s) / (2.0 + 3.0 + len(outcomes)))
    updated = u.update_strategy(Strategy(situation="s", approach="a", success_rate=0.4), True)
    assert (updated.alpha, updated.beta) == (pytest.approx(3.0), pytest.approx(3.0))
    assert updated.success_rate == pytest.approx(0.5) and updated.usage_count == 1


@pytest.fixture
def llm():
    return ScriptedLLM([json.dumps(KEY_STRATEGY)])


@pytest.fixture
def bank(embedder, chroma, records, llm):
    return ChromaStrategyBank(embedder, chroma("strategies"), LLMStrategyAbstractor(llm), records=records)


def test_only_successful_trajectories_are_abstracted(bank, llm, traj):
    assert bank.write(traj("find the key", success=False)) is None
    assert llm.history == []  # no LLM call for a failure
    strategy = bank.write(traj("find the key"))
    assert strategy.situation == KEY_STRATEGY["situation"]
    assert bank.get(strategy.id) == strategy
    assert len(llm.history) == 1


def test_read_finds_by_situation(bank, traj):
    s = bank.write(traj("find the book in the house"))
    bank.add(Strategy(situation="a recipe has to be cooked", approach="gather ingredients first"))
    found = bank.read("search the rooms for a lost wallet", k=1)
    assert [x.id for x in found] == [s.id]


def test_abstractor_may_decline(embedder, chroma, records, traj):
    bank = ChromaStrategyBank(
        embedder,
        chroma("s"),
        LLMStrategyAbstractor(ScriptedLLM(['{"abstractable": false}'])),
        records=records,
    )
    assert bank.write(traj("trivial")) is None and bank.count() == 0


def test_non_json_reply_is_retried_then_a_clear_error(embedder, chroma, records, traj):
    llm = ScriptedLLM(["no idea", "still prose", "nope"])
    bank = ChromaStrategyBank(embedder, chroma("s"), LLMStrategyAbstractor(llm), records=records)
    with pytest.raises(LLMResponseError):
        bank.write(traj("x"))
    assert bank.count() == 0 and len(llm.history) == 3


def test_non_json_then_valid_reply_recovers(embedder, chroma, records, traj):
    llm = ScriptedLLM(["let me think...", json.dumps(KEY_STRATEGY)])
    bank = ChromaStrategyBank(embedder, chroma("s"), LLMStrategyAbstractor(llm), records=records)
    assert bank.write(traj("x")) is not None


@pytest.mark.parametrize(
    ("updater", "expected"),
    [
        (EMASuccessUpdater(alpha=0.1), 0.5 * 0.9 * 0.9 + 0.1 * 0.9 + 0.0),
        (SimpleAverageUpdater(), 0.5),
        (BayesianUpdater(), 2 / 4),
    ],
)
def test_configurable_success_rate_update(embedder, chroma, records, traj, updater, expected):
    bank = ChromaStrategyBank(
        embedder,
        chroma("s"),
        LLMStrategyAbstractor(ScriptedLLM([json.dumps(KEY_STRATEGY)])),
        success_updater=updater,
        records=records,
    )
    sid = bank.write(traj("find the key")).id
    bank.update_stats(sid, True)
    bank.update_stats(sid, False)
    s = bank.get(sid)
    assert s.usage_count == 2
    assert s.success_rate == pytest.approx(expected)


def test_update_stats_unknown_id(bank):
    with pytest.raises(InvalidInputError):
        bank.update_stats("missing", True)


def test_pluggable_abstraction_strategy(embedder, chroma, records, traj):
    class Rule:
        async def abstract(self, trajectory):
            return Strategy(
                situation=f"tasks like: {trajectory.task.description}", approach="repeat what worked"
            )

    bank = ChromaStrategyBank(embedder, chroma("s"), Rule(), records=records)
    s = bank.write(traj("water the plants"))
    assert s.source_trajectory_ids and bank.read("water the flowers", k=1)[0].id == s.id
