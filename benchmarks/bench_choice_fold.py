"""How much of its conversation does the choice agent make the model read again each turn?

The choice format keeps one append-only conversation per episode, so a local model's KV cache holds
everything but the newest turn. When the conversation outgrows ``max_chars`` it is folded (the oldest
turns dropped), and the model reads the folded conversation from its first changed message on. This
benchmark plays conversations with long turns (ScienceWorld-sized: a room's text and a 30-action menu
are about 1,300 characters) through ``atlas.agent.choice.fold`` and, in the same run, through the
reference rule (keep the last ``keep_turns`` exchanges whenever over the limit), and prints the
characters read again per turn: all of a turn's own characters when the prefix is kept, the whole
conversation after the first changed message when it is not. No model: characters, not seconds (the
seconds a ScienceWorld step takes are in ``docs/results/headroom-scienceworld/``).

    python benchmarks/bench_choice_fold.py
    python benchmarks/bench_choice_fold.py --turn-chars 400 --turns 30     # GraphWorld-sized turns
"""

from __future__ import annotations

import argparse
import statistics

from atlas.agent.choice import fold
from atlas.protocols.llm import Message


def keep_last(messages: list[Message], max_chars: int, keep_turns: int = 6) -> list[Message]:
    """The reference: over the limit, keep the head and exactly the last ``keep_turns`` exchanges."""
    turns = messages[2:]
    keep = 2 * keep_turns
    if sum(len(str(m["content"])) for m in messages) <= max_chars or len(turns) <= keep:
        return messages
    omitted = (len(turns) - keep) // 2
    rest = [dict(m) for m in turns[-keep:]]
    rest[1]["content"] = f"({omitted} earlier turns omitted.)\n{rest[1]['content']}"
    return [*messages[:2], *rest]


def reread(before: list[Message], now: list[Message]) -> int:
    """Characters of ``now`` after the longest run of leading messages it shares with ``before``."""
    same = 0
    while same < min(len(before), len(now)) and before[same] == now[same]:
        same += 1
    return sum(len(str(m["content"])) for m in now[same:])


def play(rule, turns: int, head: int, turn_chars: int, max_chars: int) -> tuple[list[int], int]:
    messages: list[Message] = [
        {"role": "system", "content": "s" * 300},
        {"role": "user", "content": "h" * head},
    ]
    read, folds, previous = [], 0, list(messages)
    for i in range(turns):
        messages = [
            *messages,
            {"role": "assistant", "content": f"act {i}"},
            {"role": "user", "content": "o" * turn_chars},
        ]
        messages = rule(messages, max_chars)
        read.append(reread(previous, messages))
        folds += len(messages) < len(previous) + 2
        previous = list(messages)
    return read, folds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument(
        "--head", type=int, default=2000, help="characters of the first message (rules, advice, goal)"
    )
    ap.add_argument("--turn-chars", type=int, default=1300)
    ap.add_argument("--max-chars", type=int, default=12000, help="the task agent's default")
    args = ap.parse_args()
    print(
        f"{args.turns} turns of {args.turn_chars} characters after a {args.head}-character head; "
        f"max_chars {args.max_chars}"
    )
    results = {}
    for name, rule in (("fold (half the limit)", fold), ("reference: keep the last 6", keep_last)):
        read, folds = play(rule, args.turns, args.head, args.turn_chars, args.max_chars)
        results[name] = statistics.fmean(read)
        print(
            f"  {name:28s} folds {folds:3d}   characters read per turn: mean {results[name]:8.0f}  max {max(read):6d}"
        )
    ours, ref = results.values()
    print(f"characters read per turn, reference / fold: {ref / ours:.2f}x")


if __name__ == "__main__":
    main()
