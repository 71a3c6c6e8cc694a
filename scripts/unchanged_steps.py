"""How often a listed action changes nothing (``atlas.agent.loops.changed_nothing``: every short field and
list of the observation as it was), under random play of each environment's listed actions, with examples.
These are the steps the task agent's loop guard will not take twice in a row; an environment where none
is found plays exactly as before the guard knew of them.

    PYTHONPATH=tests/envs python scripts/unchanged_steps.py graphworld alfworld textworld \
        --plugin crafting_env --plugin workbench_env crafting workbench
"""

from __future__ import annotations

import argparse
import importlib
import random

from atlas.agent.loops import changed_nothing
from atlas.envs.base import action_label
from atlas.envs.registry import get_env


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("envs", nargs="+")
    ap.add_argument("--plugin", action="append", default=[], help="module to import first (a plug-in)")
    ap.add_argument("--tasks", type=int, default=12)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--examples", type=int, default=3)
    args = ap.parse_args()
    for module in args.plugin:
        importlib.import_module(module)
    for name in args.envs:
        env, rng = get_env(name), random.Random(0)
        steps, unchanged, examples = 0, 0, []
        for task in env.generate_tasks(args.tasks, seed=args.seed):
            obs = env.reset(task)
            for _ in range(env.max_steps):
                actions = env.candidate_actions(obs)
                if not actions:
                    break
                action = rng.choice(actions)
                result = env.step(action)
                steps += 1
                if changed_nothing(obs, result.observation):
                    unchanged += 1
                    if len(examples) < args.examples:
                        examples.append(action_label(action.tool, action.args))
                obs = result.observation
                if result.done:
                    break
        share = unchanged / max(steps, 1)
        print(f"{name}: {unchanged} of {steps} random listed steps changed nothing ({share:.1%})", end="")
        print(f"; e.g. {', '.join(examples)}" if examples else "")


if __name__ == "__main__":
    main()
