"""Can the task agent act on advice? A teacher-forced probe of single decisions.

Each GraphWorld task is played along its optimal path with the full oracle advice; at every turn the
model's choice is compared with the optimal action, then the optimal action is taken whatever the
model chose (so every decision is scored in the situation the advice describes). Reports the share of
decisions where the agent picked the optimal action with the advice matcher (the default agent) and
without it (``advice_weight=0``: the model reading the notes alone), in the same run.

    python benchmarks/bench_advice_decisions.py                 # default model, 6 tasks
    python benchmarks/bench_advice_decisions.py --model local:qwen2.5-coder-1.5b --tasks 6
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from atlas.agent import TaskAgent
from atlas.envs.graphworld.oracle import _world, shortest_path
from atlas.envs.graphworld.world import GraphWorldParams
from atlas.envs.registry import get_env
from atlas.infra.llm import make_llm
from atlas.protocols.llm import Completion

OBS = re.compile(
    r"You are in (room_\w+)(?: \(goal room\))?\. Adjacent rooms: ([^.]*)\. Objects here: ([^.]*)\. "
    r"You carry: ([^.]*)\."
)


class TeacherForced:
    """Wraps the model: records its choice, answers with the optimal action."""

    def __init__(self, llm: Any, world: Any) -> None:
        self.llm, self.world, self.model = llm, world, llm.model
        self.right = self.total = 0

    def optimal(self, text: str) -> str:
        here, _adjacent, objects, carry = OBS.findall(text)[-1]
        w, obj = self.world, self.world.target_object
        if obj in carry:
            if here == w.destination:
                return f"put_down {obj}"
            return "move_to " + shortest_path(w.adjacency, here, w.destination)[1]
        if obj in objects:
            return f"pick_up {obj}"
        return "move_to " + shortest_path(w.adjacency, here, w.object_rooms[obj])[1]

    async def acomplete(self, messages: list[Any], **kwargs: Any) -> Completion:
        want = self.optimal(messages[-1]["content"])
        got = (await self.llm.acomplete(messages, **kwargs)).text
        self.total += 1
        self.right += got == want
        return Completion(text=want)


def accuracy(llm: Any, env: Any, tasks: list[Any], rooms: int, **agent_options: Any) -> tuple[int, int]:
    right = total = 0
    for task in tasks:
        forced = TeacherForced(llm, _world(task, GraphWorldParams(rooms=rooms)))
        agent = TaskAgent(forced, **agent_options)  # type: ignore[arg-type]
        asyncio.run(agent.run(env.clone(), task, advice=env.oracle_advice(task, "full")))
        right, total = right + forced.right, total + forced.total
    return right, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="local:qwen2.5-coder-0.5b")
    ap.add_argument("--tasks", type=int, default=6)
    ap.add_argument("--rooms", type=int, default=8)
    args = ap.parse_args()
    llm = make_llm(args.model)
    env = get_env("graphworld", rooms=args.rooms)
    tasks = env.generate_family_tasks(args.tasks, 42, 42 + 10_007)
    with_matcher = accuracy(llm, env, tasks, args.rooms)
    model_alone = accuracy(llm, env, tasks, args.rooms, advice_weight=0.0)
    a, b = with_matcher[0] / with_matcher[1], model_alone[0] / max(1, model_alone[1])
    print(f"{args.model}, {args.tasks} tasks, full advice, teacher-forced decisions:")
    print(f"  agent (advice matcher on):   {with_matcher[0]}/{with_matcher[1]} = {a:.2f}")
    print(f"  model alone (advice_weight=0): {model_alone[0]}/{model_alone[1]} = {b:.2f}")
    print(f"accuracy {a:.2f} reference {b:.2f} ratio {a / b if b else float('inf'):.2f}")


if __name__ == "__main__":
    main()
