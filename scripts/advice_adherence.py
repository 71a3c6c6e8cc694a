"""How the task agent used a design's advice, read from a run folder's logged episodes (no LLM).

    python scripts/advice_adherence.py RUN_DIR [DESIGN_ID ...]      # default: every design in RUN_DIR/logs
    ATLAS_PLUGINS=depot_env PYTHONPATH=tests/envs python scripts/advice_adherence.py RUN_DIR

For each deployment episode given advice, the script replays the agent's actions on the run's own tasks
(``logged_episodes.py``) and, at each turn, asks the advice matcher (``atlas.agent.advice_match``) which
listed actions the episode's advice ranks first there, after the agent's loop guard (``--guard``: the
guard of the agent that played the episodes). It prints:

- **followed**: of the turns the advice named an action, the share at which the agent took one it
  ranked first — the adherence the screening's advised walk assumes
  (``atlas.alma.author.advice_probe.ADHERENCE``);
- **in reach**: at turns where a listed action names the goal's thing (a word of the goal that not every
  goal of the run has: `compass`, not `take`) and the advice named nothing there, how often the agent
  took one — for a design without advice (no memory) too, so the two can be set side by side;
- **held off**: in how many advised episodes the loop guard, at some turn, took every action the advice
  ranked first off the choices (the advice and the guard disagreed);
- **agent / probe / agree**: how many of the tasks the agent solved, how many the advice probe solves
  following the *same* advice text (``follow_advice``), and on how many the two agree — whether the
  probe's deployment half predicts the agent once both have the same memory.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from logged_episodes import deployment_rows, replay, run_environment

from atlas.agent.advice_match import match_advice
from atlas.agent.loops import loop_nudge
from atlas.alma.author.advice_probe import follow_advice
from atlas.envs.base import action_text, words
from atlas.envs.policies import form_words, goal_words
from atlas.protocols.env import Environment


@dataclass
class Tally:
    episodes: int = 0
    advised: int = 0  # turns at which the advice named a listed action
    followed: int = 0  # of those, the turns the agent took an action the advice ranked first
    agent: int = 0
    probe: int = 0
    agree: int = 0
    reach: int = 0  # unadvised turns at which a listed action named the goal's thing
    reached: int = 0  # of those, the turns the agent took it
    held: int = 0  # advised episodes in which the guard took the advice's first choice off the choices

    def add(self, other: Tally) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


def tally(
    env: Environment,
    task: Any,
    row: dict[str, Any],
    guard: str = "cycles",
    form: frozenset[str] = frozenset(),
) -> Tally:
    """One logged episode's counts; ``guard``: the loop guard of the agent that played it (``--guard``);
    ``form``: the words every goal of the run has (not the goal's thing)."""
    advice, goal = row.get("advice") or "", env.format_goal(task)
    things = goal_words(goal) - form
    t = Tally(episodes=1)
    for turn in replay(env, task, row):
        options = (
            turn.options
            if guard == "cycles"
            else [
                label
                for label, a in zip(turn.labels, turn.listed, strict=True)
                if loop_nudge(
                    action_text(a.tool, a.args), turn.past, first_visit=guard == "onward" and turn.first_visit
                )
                is None
            ]
            or turn.labels
        )
        matched = match_advice(advice, turn.seen, options, turn.chosen, goal, turn.advanced).actions
        named = {label: v for label, v in matched.items() if v > 0}  # avoid lines lower, never advise
        if advice and not t.held and set(options) != set(turn.labels):
            listed = match_advice(advice, turn.seen, turn.labels, turn.chosen, goal, turn.advanced).actions
            best = max(listed.values(), default=0.0)
            t.held = best > 0 and not any(listed.get(label, 0.0) >= best - 1e-9 for label in options)
        if named:
            t.advised += 1
            t.followed += named.get(turn.taken, -1.0) >= max(named.values()) - 1e-9
        elif wanted := [label for label in turn.labels if things & set(words(label))]:
            t.reach += 1
            t.reached += turn.taken in wanted
    if not advice:
        return t
    t.agent = bool(row.get("success"))
    t.probe = follow_advice(env, task, advice, unadvised="goal_words").success
    t.agree = t.agent == t.probe
    return t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run or eval folder (config.json and logs/)")
    parser.add_argument("designs", nargs="*", help="design ids under RUN/logs (default: all)")
    parser.add_argument(
        "--guard",
        choices=("cycles", "onward", "plain"),
        default="cycles",
        help="the loop guard of the agent that played the episodes: 'cycles' (the agent's, since "
        "EVALUATION_VERSION 10: a repeat never taken from the current state walks on), 'onward' "
        "(version 9: a repeat that reached a place never entered is not a loop) or 'plain' (before)",
    )
    args = parser.parse_args()
    env, tasks = run_environment(args.run)
    designs = args.designs or sorted(p.name for p in (args.run / "logs").iterdir() if p.is_dir())
    print(
        f"{'design':10s} {'episodes':>8s} {'advised':>8s} {'followed':>8s} {'agent':>6s} {'probe':>6s} {'agree':>6s}"
    )
    total, reaches, held = Tally(), [], []
    form = form_words([env.format_goal(task) for task in tasks.values()])
    for design in designs:
        t, unadvised = Tally(), Tally()
        for row in deployment_rows(args.run, design, tasks):
            counts = tally(env, tasks[row["task_id"]], row, args.guard, form)
            (t if row.get("advice") else unadvised).add(counts)
        reach = t.reach + unadvised.reach
        if reach:
            reaches.append(
                f"{design}: took an action naming the goal's thing at {t.reached + unadvised.reached} of {reach} "
                "turns where it was listed and nothing was advised"
            )
        if not t.episodes:
            print(f"{design:10s} no deployment episode was given advice")
            continue
        held.append(
            f"{design}: the guard took the action the advice ranked first off the choices in {t.held} of "
            f"{t.episodes} advised episodes"
        )
        total.add(t)
        rate = f"{t.followed / t.advised:.2f}" if t.advised else "-"
        print(
            f"{design:10s} {t.episodes:8d} {t.advised:8d} {rate:>8s} {t.agent:6d} {t.probe:6d} {t.agree:6d}"
        )
    if total.advised:
        print(
            f"all: the agent took an advised action at {total.followed} of {total.advised} advised turns "
            f"({total.followed / total.advised:.2f})"
        )
    for line in reaches:
        print("in reach, " + line)
    for line in held:
        print("held off, " + line)


if __name__ == "__main__":
    main()
