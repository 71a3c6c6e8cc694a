"""Headroom as the advice probe sees it: each task played by the scripted advice-follower (no LLM) with
no advice, with the advice a perfect memory of the family could give (learnable) and with the hidden
answer (full), paired over tasks.

    python scripts/probe_headroom.py --env textworld --param challenge=fetch --tasks 24

A minute where ``atlas headroom`` (the real task agent) takes an hour: it says whether an environment's
learnable advice can steer anything at all before a search is spent on it, and how much of the full
answer the follower can use. It says nothing about the model: a follower that stops when no advice line
names a listed action is not an agent that explores. Plug-ins load from ``$ATLAS_PLUGINS``.
"""

from __future__ import annotations

import argparse
import time

from atlas.alma.author.advice_probe import follow_advice
from atlas.alma.state.stats import paired_difference
from atlas.envs.registry import env_spec, get_env
from atlas.errors import AtlasError
from atlas.infra.plugins import load_plugins

LEVELS = ("none", "learnable", "full")


def _value(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="graphworld", help="a registered environment")
    parser.add_argument("--param", action="append", default=[], help="an environment parameter, NAME=VALUE")
    parser.add_argument("--tasks", type=int, default=24, help="tasks of one family")
    parser.add_argument("--seed", type=int, default=42, help="family and first task seed")
    args = parser.parse_args()
    load_plugins()
    bad = [p for p in args.param if "=" not in p]
    if bad:
        parser.error(f"--param takes NAME=VALUE, got {bad[0]!r}")
    params = dict(p.split("=", 1) for p in args.param)
    try:
        env = get_env(args.env, **{k: _value(v) for k, v in params.items()})
    except (AtlasError, TypeError) as exc:
        parser.error(f"cannot build environment {args.env!r} with {params}: {exc}")
    spec = env_spec(args.env)
    scores: dict[str, list[float]] = {level: [] for level in LEVELS}
    solved = dict.fromkeys(LEVELS, 0)
    t0 = time.perf_counter()
    for task in env.generate_tasks(args.tasks, args.seed):
        for level in LEVELS:
            advice = "" if level == "none" else spec.oracle_advice(env, task, level)
            result = follow_advice(env, task, advice)
            scores[level].append(result.score)
            solved[level] += result.success
    took = time.perf_counter() - t0
    shown = " ".join(f"{k}={v}" for k, v in params.items())
    print(
        f"{args.env} {shown}".strip()
        + f": {args.tasks} tasks, seed {args.seed}, {took:.0f} s (advice probe, no LLM)"
    )
    for level in LEVELS:
        mean = sum(scores[level]) / len(scores[level])
        print(f"  {level:9s} solved {solved[level]:3d}/{args.tasks}  mean score {mean:.3f}")
    for level in LEVELS[1:]:
        d = paired_difference(scores[level], scores["none"])
        print(
            f"  {level} − none: {d.mean:+.3f}, 95% CI [{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}] over {d.n} tasks"
        )


if __name__ == "__main__":
    main()
