"""The store policy of a genome (recent / cap / decay) as the compiled module applies it, in the real
sandbox, on episodes written in the shape ``episode_view`` gives (many of them, cheaply)."""

from __future__ import annotations

import pytest

from atlas.alma.author.smoke import stub_llm
from atlas.alma.evaluate.runner import DesignRunner
from atlas.alma.genome import genome_design, parse_genome


def episode(i: int, *, success: bool = True) -> dict:
    """A successful two-step episode: 'take gem{i}' in hall, then 'go cellar' (gem{i} is a goal word)."""
    goal = f"fetch gem{i} from the cellar"
    hall = {"place": "hall", "exits": ["cellar"], "held": [], "text": f"You see gem{i}."}
    cellar = {
        "place": "cellar",
        "exits": ["hall"],
        "held": [f"gem{i}"],
        "text": f"A dark cellar, marked {i}.",
    }
    return {
        "task": {"goal": goal, "observation": hall},
        "steps": [
            {
                "action": {"tool": "act", "args": {}, "text": f"take gem{i}"},
                "observation": {**hall, "held": [f"gem{i}"]},
                "error": None,
            },
            {
                "action": {"tool": "act", "args": {}, "text": "go cellar"},
                "observation": cellar,
                "error": None,
            },
        ],
        "success": success,
        "score": round(0.5 + i / 100, 2) if success else 0.0,  # tells the episodes apart
        "steps_taken": 2,
    }


def memory_after(genome_data: dict, episodes: list[dict], pool, embedder) -> dict:
    runner = DesignRunner(
        genome_design(parse_genome(genome_data)), embedder=embedder, llm=stub_llm(), pool=pool
    )
    try:
        for i, ep in enumerate(episodes):
            log = runner.update_sync(ep, label=f"C{i}")
            assert log.ok, log.error
            assert not [p for p in log.prints if " failed:" in p], log.prints
        return runner.memory
    finally:
        runner.close()


SEQUENCES = {"encode": [{"part": "sequences"}], "retrieve": [{"part": "replay"}]}


def test_recent_keeps_the_last_sequences(pool, embedder):
    memory = memory_after(
        {**SEQUENCES, "store": {"recent": 10}}, [episode(i) for i in range(14)], pool, embedder
    )
    kept = memory["sequences"]
    assert len(kept) == 10
    assert [s["score"] for s in kept] == [round(0.5 + i / 100, 2) for i in range(4, 14)]
    # goal words as slots: fetch {0}, gem<i> {1}, cellar {2}
    assert kept[-1]["actions"] == ["take {1}", "go {2}"] and kept[-1]["kind"] == "fetch * *"


def test_successes_only_skips_failed_episodes(pool, embedder):
    eps = [episode(0), episode(1, success=False), episode(2)]
    assert len(memory_after(SEQUENCES, eps, pool, embedder)["sequences"]) == 2
    every = {"encode": [{"part": "sequences", "params": {"successes_only": False}}]}
    assert len(memory_after(every, eps, pool, embedder)["sequences"]) == 3


def test_recent_zero_keeps_every_sequence(pool, embedder):
    memory = memory_after(
        {**SEQUENCES, "store": {"recent": 0}}, [episode(i) for i in range(55)], pool, embedder
    )
    assert len(memory["sequences"]) == 55


def test_cap_bounds_the_words_tracked(pool, embedder):
    genome = {"encode": [{"part": "sightings"}], "store": {"cap": 50}}
    memory = memory_after(genome, [episode(i) for i in range(40)], pool, embedder)
    assert 0 < len(memory["sightings"]) <= 50
    assert all(len(actions) <= 3 for actions in memory["sightings"].values())


def test_decay_shrinks_old_counts(pool, embedder):
    keyed = {"encode": [{"part": "goal_actions", "params": {"state_key": "place"}}]}
    eps = [episode(1), episode(2), episode(3)]
    plain = memory_after({**keyed, "store": {"decay": 1.0}}, eps, pool, embedder)["goal_actions"]
    decayed = memory_after({**keyed, "store": {"decay": 0.7}}, eps, pool, embedder)["goal_actions"]
    assert list(plain) == list(decayed) and len(plain) == 1
    (counts,) = plain.values()
    (shrunk,) = decayed.values()
    assert list(counts.values()) == [3]
    assert list(shrunk.values()) == [pytest.approx(0.7 * (0.7 * 1 + 1) + 1)]
