"""The guideline bank as a host-side memory design: ``update(episode)`` / ``recall(task)`` over the
dicts the ALMA harness passes (``atlas.envs.views``), so it can be measured in the same archive as
evolved designs. Nothing here imports ALMA; the ALMA side wraps this in its DesignRunner interface."""

from __future__ import annotations

from typing import Any

from atlas.memory.guidelines.bank import GuidelineBank, SaveResult
from atlas.memory.guidelines.messages import episode_to_trajectory
from atlas.memory.guidelines.render import format_guidelines


class GuidelineDesign:
    """``update`` learns tips from an episode; ``recall`` returns them formatted as advice text
    (empty string when nothing passes the retrieval threshold). ``freeze()`` makes ``update`` a no-op
    (deployment phase)."""

    def __init__(self, bank: GuidelineBank, *, k: int = 5, mode: str | None = None) -> None:
        self.bank = bank
        self.k = k
        self.mode = mode
        self.frozen = False

    async def update(self, episode: dict[str, Any]) -> SaveResult | None:
        if self.frozen:
            return None
        return await self.bank.asave(episode_to_trajectory(episode))

    async def recall(self, task: dict[str, Any]) -> str:
        goal = task.get("goal") if isinstance(task, dict) else None
        if not isinstance(goal, str) or not goal.strip():
            return ""
        found = await self.bank.aget_guidelines(goal, k=self.k, mode=self.mode)
        return format_guidelines(found)

    def freeze(self) -> None:
        self.frozen = True


__all__ = ["GuidelineDesign"]
