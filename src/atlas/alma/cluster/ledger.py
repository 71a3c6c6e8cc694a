"""Limits that hold cluster-wide: the tool-budget ledger and the request pacer, one Ray actor each
per executor, that every worker asks.

A design's tool budgets (summarize/analyze calls, model tokens and cost, argument characters per
evaluation; ``ToolSettings``) are counted here for its deployment episodes, whichever worker plays
them, with the same rules and words as one process (``chars_refusal``, ``llm_refusal``). Charges
are kept per work unit: a unit lost with its worker and played again has its first charges voided,
so nothing is counted twice. The task model's request-rate limit (``--max-rpm``) is one
``atlas.infra.llm.ratelimit.Spacing`` run as an actor; ``RemotePacer`` is a worker's view of it.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from atlas.alma.evaluate.tools import ToolSettings, ToolUsage, chars_refusal, llm_refusal


def _usage(d: dict[str, Any]) -> ToolUsage:
    return ToolUsage(**{f.name: d[f.name] for f in fields(ToolUsage) if f.name in d})


class BudgetLedger:
    """Evaluation-wide tool usage, per evaluation key and work unit (runs as a Ray actor)."""

    def __init__(self, settings: ToolSettings | None = None) -> None:
        self.settings = settings or ToolSettings()
        self.totals: dict[str, ToolUsage] = {}
        self.units: dict[tuple[str, str], ToolUsage] = {}

    def open(self, key: str, start: dict[str, Any]) -> None:
        """An evaluation's deployment begins with what its collection used."""
        self.totals[key] = _usage(start)

    def charge(self, key: str, unit: str, name: str, chars: int, llm: bool) -> str | None:
        u = self.totals.setdefault(key, ToolUsage())
        why = chars_refusal(name, u, self.settings, chars) or (
            llm_refusal(name, u, self.settings) if llm else None
        )
        if why:
            return why
        mine = self.units.setdefault((key, unit), ToolUsage())
        for x in (u, mine):
            x.tool_calls += 1
            x.chars += chars
            x.llm_calls += int(llm)
        return None

    def spend(self, key: str, unit: str, tokens: int, cost_usd: float) -> None:
        for x in (self.totals.setdefault(key, ToolUsage()), self.units.setdefault((key, unit), ToolUsage())):
            x.llm_tokens += tokens
            x.llm_cost_usd += cost_usd

    def void(self, key: str, unit: str) -> None:
        """A unit is played again: forget what its lost attempt charged."""
        mine = self.units.pop((key, unit), None)
        u = self.totals.get(key)
        if mine is not None and u is not None:
            for f in ("tool_calls", "chars", "llm_calls", "llm_tokens", "llm_cost_usd"):
                setattr(u, f, getattr(u, f) - getattr(mine, f))

    def close(self, key: str) -> dict[str, Any]:
        """The evaluation is over: its totals, and the ledger forgets it."""
        for k in [k for k in self.units if k[0] == key]:
            del self.units[k]
        u = self.totals.pop(key, ToolUsage())
        return u.to_dict()


class LedgerBudget:
    """A worker's view of the ledger for one work unit (``SharedBudget``): each call asks the actor."""

    def __init__(self, ledger: Any, key: str, unit: str) -> None:
        self.ledger, self.key, self.unit = ledger, key, unit

    def charge(self, name: str, chars: int, llm: bool) -> str | None:
        import ray

        return ray.get(self.ledger.charge.remote(self.key, self.unit, name, chars, llm))

    def spend(self, tokens: int, cost_usd: float) -> None:
        self.ledger.spend.remote(self.key, self.unit, tokens, cost_usd)  # ordered after this unit's charges


class RemotePacer:
    """The cluster's request pacer as a worker's ``Pacer``: each model call reserves its slot there."""

    def __init__(self, pacer: Any) -> None:
        self.pacer = pacer

    def delay(self) -> float:
        import ray

        return float(ray.get(self.pacer.delay.remote()))

    async def adelay(self) -> float:
        return float(await self.pacer.delay.remote())


__all__ = ["BudgetLedger", "LedgerBudget", "RemotePacer"]
