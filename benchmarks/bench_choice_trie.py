"""Seconds a local model spends choosing an action: every choice scored in one decode of the
choices' token trie, against the reference that decodes each choice on its own.

A task agent plays real episodes (ScienceWorld by default: about 30 actions a turn, many sharing
their first words), and every request it sent to the model is recorded. The recorded turns are then
replayed, in order, to a fresh model that scores over the trie and to one that scores one choice at
a time (``choice_batch=0``), so both read exactly the same conversations with the same KV reuse.
Printed: turns, seconds per turn of each, their ratio, choice tokens read per turn, and how many turns
picked the same action (the two decode in other batch shapes, so a near-tie can flip).

    python benchmarks/bench_choice_trie.py                                    # ScienceWorld, 1 episode
    python benchmarks/bench_choice_trie.py --env graphworld --episodes 3      # short GraphWorld menus
"""

from __future__ import annotations

import argparse
import os
import threading
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from atlas.agent import TaskAgent
from atlas.alma.evaluate.advice_headroom import advice_for
from atlas.envs.registry import get_env
from atlas.infra import local_models
from atlas.infra.llm.backend import LLMRequest
from atlas.infra.llm.client import LLMClient
from atlas.infra.llm.llamacpp_backend import LlamaCppBackend

MODEL = "qwen2.5-coder-0.5b"


def backend(**options) -> LlamaCppBackend:
    path = local_models.resolve_local_model(MODEL)
    return LlamaCppBackend(path, model=f"local:{MODEL}", **options)


def record(env, tasks, condition: str, max_turns: int | None) -> list[LLMRequest]:
    """The requests a task agent sends while playing ``tasks``."""
    model = backend()
    requests: list[LLMRequest] = []
    play = model.complete

    async def complete(request: LLMRequest):
        requests.append(request)
        return await play(request)

    model.complete = complete  # type: ignore[method-assign]
    agent = TaskAgent(LLMClient(model), max_turns=max_turns)
    for task in tasks:
        traj = agent.run_sync(env.clone(), task, advice=advice_for(env, task, condition))
        print(f"  played {task.id}: {len(traj.steps)} steps, score {traj.score:.2f}", flush=True)
    return requests


def replay(model: LlamaCppBackend, requests: list[LLMRequest]) -> tuple[float, list[str], int]:
    model.load()
    picks, started = [], time.perf_counter()
    for request in requests:
        picks.append(model._generate(request, threading.Event()).text)
    return time.perf_counter() - started, picks, int(model.stats.get("choice_tokens_scored", 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="scienceworld")
    parser.add_argument("--task-type", default="lifespan-shortest-lived", help="ScienceWorld task type")
    parser.add_argument("--episodes", type=int, default=1)
    parser.add_argument(
        "--condition",
        default="learnable",
        choices=["none", "learnable", "full"],
        help="advice the agent gets (with advice each turn is also scored without it)",
    )
    parser.add_argument("--max-turns", type=int, default=None)
    args = parser.parse_args()
    params = {"task_type": args.task_type} if args.env == "scienceworld" else {}
    env = get_env(args.env, **params)
    tasks = (
        env.split_tasks("test", args.episodes, 42)
        if hasattr(env, "split_tasks")
        else env.generate_tasks(args.episodes, 42)
    )
    print(f"recording {args.episodes} {args.env} episode(s), advice {args.condition}", flush=True)
    requests = [r for r in record(env, tasks, args.condition, args.max_turns) if r.choices]
    turns = len(requests)
    menu = sum(len(r.choices or []) for r in requests) / max(1, turns)
    trie_s, trie_picks, trie_read = replay(backend(), requests)
    ref_s, ref_picks, ref_read = replay(backend(choice_batch=0), requests)
    same = sum(a == b for a, b in zip(trie_picks, ref_picks, strict=True))
    print(f"turns {turns}, {menu:.1f} choices a turn")
    print(f"trie        {trie_s / turns:6.2f} s/turn  {trie_read / turns:6.1f} choice tokens/turn")
    print(f"one by one  {ref_s / turns:6.2f} s/turn  {ref_read / turns:6.1f} choice tokens/turn  (reference)")
    print(f"same pick on {same} of {turns} turns")
    print(f"speedup {ref_s / trie_s:.2f}")


if __name__ == "__main__":
    main()
