"""The operator bandit's accounting: tries and wins come from the archive, every operator is tried once,
then the best rate plus exploration wins."""

from __future__ import annotations

from atlas.alma.genome.bandit import choose_operator, operator_stats, stats_table
from atlas.alma.genome.representation import operators_for, resolve_representation
from atlas.alma.state.search_record import SearchRecord


def _entry(op: str | None, beat: bool) -> SearchRecord | None:
    """An entry's search record (None: an entry the search did not make, a baseline)."""
    return SearchRecord(operator=op, beat_parent=beat) if op else None


def test_stats_count_tries_and_wins_per_operator_and_ignore_others():
    entries = [_entry("mutate", True), _entry("mutate", False), _entry("random", False), _entry(None, True)]
    entries.append(_entry("write", True))  # not an operator of this search
    stats = operator_stats(entries, ["mutate", "recombine", "random"])
    assert (stats["mutate"].tries, stats["mutate"].wins) == (2, 1)
    assert (stats["random"].tries, stats["random"].wins) == (1, 0)
    assert stats["recombine"].tries == 0
    assert stats_table(stats)[0] == {"operator": "mutate", "tries": 2, "wins": 1, "rate": 0.5}


def test_every_operator_is_tried_once_in_order_then_ucb():
    ops = ["mutate", "recombine", "random"]
    assert choose_operator(operator_stats([], ops)) == "mutate"
    assert choose_operator(operator_stats([_entry("mutate", False)], ops)) == "recombine"
    history = [_entry("mutate", True)] * 6 + [_entry("recombine", False)] * 6 + [_entry("random", False)] * 6
    assert choose_operator(operator_stats(history, ops)) == "mutate"
    # exploration: a rarely tried operator wins over a frequently tried one with the same rate
    history = (
        [_entry("mutate", False)] * 30 + [_entry("recombine", False)] * 2 + [_entry("random", False)] * 30
    )
    assert choose_operator(operator_stats(history, ops)) == "recombine"


def test_representation_follows_the_meta_model_unless_set():
    assert resolve_representation("auto", "local:qwen2.5-coder-1.5b")[0] == "genome"
    assert resolve_representation("auto", None)[0] == "genome"
    assert resolve_representation("auto", "openai/gpt-4.1")[0] == "both"
    assert resolve_representation("code", "local:x")[0] == "code"
    assert resolve_representation("auto", "scripted")[0] == "code"
    assert resolve_representation("genome", "scripted")[0] == "genome"
    assert operators_for("genome", True) == ["mutate", "recombine", "random", "llm_edit"]
    assert operators_for("both", False) == ["mutate", "recombine", "random", "write", "edit", "crossover"]
    assert operators_for("code", True) == ["write", "edit", "crossover"]
