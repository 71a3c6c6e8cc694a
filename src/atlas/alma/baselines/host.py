"""Trusted host-side designs: the memory library presented as ALMA designs.

These adapters run in the host process (they are our own code, not LLM-written) and give
``DesignRunner`` the same update/recall interface as a sandboxed design, so hand-built memory
systems are measured by the same harness on the same tasks. ``update`` turns the design-facing
``episode`` dict back into a ``Trajectory`` and stores it; ``recall`` queries with the task view and
formats advice. What they do is logged in the CallLog as tool records (``memory.store``,
``memory.query``), so their runtime logs read like a design's.

State is not snapshotted (the library keeps its own stores); ``snapshot()`` says so.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from atlas.alma.baselines import register_host_design
from atlas.alma.evaluate.runlog import CallLog, ToolCallRecord, truncate
from atlas.alma.evaluate.runner import HostDesign
from atlas.core.types import Step, Task, Trajectory

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient
    from atlas.protocols.embed import Embedder


def _action_text(action: dict[str, Any]) -> str:
    args = action.get("args") or {}
    inner = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(args.items()))
    return f"{action.get('tool') or '?'}({inner})"


def task_from_view(view: dict[str, Any]) -> Task:
    """A Task from a design-facing task view (goal, first observation, domain)."""
    goal = str(view.get("goal") or "").strip() or "(no goal given)"
    obs = view.get("observation") or {}
    return Task(
        description=goal,
        domain=str(view.get("domain") or "generic"),
        initial_observation=json.dumps(obs, sort_keys=True) if obs else None,
    )


def trajectory_from_episode(episode: dict[str, Any]) -> Trajectory:
    """A Trajectory from a design-facing episode dict (``atlas.envs.views.episode_view`` shape)."""
    steps = []
    for s in episode.get("steps") or []:
        action = s.get("action") or {}
        obs = s.get("observation") or {}
        steps.append(
            Step(
                action=_action_text(action),
                observation=json.dumps(obs, sort_keys=True) if obs else "",
                error=s.get("error"),
                tool=action.get("tool") or None,
                args=action.get("args") or {},
                data=obs or None,
            )
        )
    return Trajectory(
        task=task_from_view(episode.get("task") or {}),
        steps=steps,
        success=bool(episode.get("success")),
        score=float(episode.get("score") or 0.0),
        metadata={"steps_taken": episode.get("steps_taken", len(steps))},
    )


def _record(log: CallLog, name: str, args: dict[str, Any], fn: Any) -> Any:
    rec = ToolCallRecord(name=name, args=truncate(args, 200))
    t0 = time.perf_counter()
    try:
        result = fn()
    except Exception as exc:
        rec.error = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        rec.duration_ms = round((time.perf_counter() - t0) * 1000, 3)
        log.tool_calls.append(rec)
    rec.result = truncate(result if isinstance(result, str | dict | list) else repr(result))
    return result


class MemorySystemDesign:
    """``atlas.memory`` MemorySystemImpl (in memory) as a design."""

    def __init__(self, *, embedder: Embedder, llm: LLMClient | None = None, k: int = 5) -> None:
        from atlas.memory.system import build_memory_system

        self.system = build_memory_system(None, llm=llm, embedder=embedder)
        self.k = k
        self.frozen = False

    def update(self, episode: dict[str, Any], log: CallLog) -> None:
        trajectory = trajectory_from_episode(episode)
        result = _record(
            log,
            "memory.store",
            {"task": trajectory.task.description, "success": trajectory.success},
            lambda: self.system.store(trajectory),
        )
        errors = result.get("errors") if isinstance(result, dict) else None
        if errors:
            log.warnings.append(f"memory components failed to store: {errors}")

    def recall(self, task: dict[str, Any], log: CallLog) -> str:
        from atlas.memory.system import format_advice

        query = task_from_view(task)
        result = _record(
            log,
            "memory.query",
            {"task": query.description, "k": self.k},
            lambda: self.system.query_sync(query, k=self.k),
        )
        if result.errors:
            log.warnings.append(f"memory components failed to answer: {result.errors}")
        return format_advice(result)

    def freeze(self) -> None:
        self.frozen = True

    def snapshot(self) -> dict[str, Any]:
        return {
            "supported": False,
            "reason": "MemorySystemImpl keeps its own stores",
            "stats": self.system.stats(),
        }

    def restore(self, data: dict[str, Any]) -> None:
        return None

    def close(self) -> None:
        self.system.close()


class GuidelineBankDesign:
    """``atlas.memory.guidelines.GuidelineBank`` (in memory) as a design."""

    def __init__(self, *, embedder: Embedder, llm: LLMClient | None = None, k: int = 5) -> None:
        from atlas.memory.guidelines import GuidelineBank

        self.bank = GuidelineBank(llm=llm, embedder=embedder, namespace="alma")
        self.k = k
        self.frozen = False

    def update(self, episode: dict[str, Any], log: CallLog) -> None:
        trajectory = trajectory_from_episode(episode)
        _record(
            log,
            "guidelines.save_trajectory",
            {"task": trajectory.task.description, "success": trajectory.success},
            lambda: self.bank.save_trajectory(trajectory),
        )

    def recall(self, task: dict[str, Any], log: CallLog) -> str:
        from atlas.memory.guidelines import format_guidelines

        query = task_from_view(task)
        found = _record(
            log,
            "guidelines.get_guidelines",
            {"task": query.description, "k": self.k},
            lambda: self.bank.get_guidelines(query, self.k),
        )
        return format_guidelines(found) if found else ""

    def freeze(self) -> None:
        self.frozen = True

    def snapshot(self) -> dict[str, Any]:
        return {"supported": False, "reason": "GuidelineBank keeps its own stores"}

    def restore(self, data: dict[str, Any]) -> None:
        return None

    def close(self) -> None:
        return None


register_host_design(
    "memory_system", "atlas.memory MemorySystemImpl (experiences, concepts, strategies)", MemorySystemDesign
)
register_host_design(
    "guideline_bank",
    "atlas.memory.guidelines GuidelineBank (strategy/recovery/optimization tips)",
    GuidelineBankDesign,
)

__all__ = [
    "GuidelineBankDesign",
    "HostDesign",
    "MemorySystemDesign",
    "task_from_view",
    "trajectory_from_episode",
]
