"""Strategy bank (ArcMemo-style): abstract, reusable strategies learned from successful trajectories.

A ``StrategyAbstractor`` turns a *successful* trajectory into (situation, approach, rationale); the
situation — when to apply it — is what gets embedded and searched. Each use of a strategy is fed back
through ``update_stats`` and a ``SuccessRateUpdater`` (EMA by default; simple average; Beta–Bernoulli).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from atlas.core.types import Strategy, Task, Trajectory
from atlas.errors import InvalidInputError
from atlas.infra.aio import run_sync
from atlas.memory.common import ask_json, render_trajectory, validate_k, validate_task, validate_trajectory
from atlas.memory.storage import IndexedTable
from atlas.protocols.embed import Embedder
from atlas.protocols.memory import StartsAtPrior, StrategyAbstractor, SuccessRateUpdater, UpdatesStrategies
from atlas.protocols.store import VectorStore

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient
    from atlas.infra.records import RecordStore

# --- success-rate updaters -------------------------------------------------------------------------------


class EMASuccessUpdater:
    """Exponential moving average of outcomes (recent uses weigh more)."""

    def __init__(self, alpha: float = 0.1) -> None:
        if not 0.0 < alpha <= 1.0:
            raise InvalidInputError("EMA alpha must be in (0, 1]")
        self.alpha = alpha

    def update(self, current_rate: float, current_count: int, success: bool) -> tuple[float, int]:
        new_value = 1.0 if success else 0.0
        return (self.alpha * new_value + (1 - self.alpha) * current_rate, current_count + 1)


class SimpleAverageUpdater:
    """Plain running average (baseline)."""

    def update(self, current_rate: float, current_count: int, success: bool) -> tuple[float, int]:
        new_count = current_count + 1
        return ((current_rate * current_count + (1.0 if success else 0.0)) / new_count, new_count)


class BayesianUpdater:
    """Beta–Bernoulli posterior mean with a Beta(prior_alpha, prior_beta) prior.

    The protocol passes only (rate, count); when ``rate`` is this updater's posterior mean after
    ``count`` observations, alpha = rate·(a0+b0+count) and beta = (1−rate)·(a0+b0+count) exactly, so the
    update is exact. ``update_strategy`` also keeps ``Strategy.alpha``/``beta`` for inspection.
    A fresh strategy should start at the prior mean (``initial_rate``).
    """

    def __init__(self, prior_alpha: float = 1.0, prior_beta: float = 1.0) -> None:
        if prior_alpha <= 0 or prior_beta <= 0:
            raise InvalidInputError("Beta prior parameters must be positive")
        self.prior_alpha = prior_alpha
        self.prior_beta = prior_beta

    @property
    def initial_rate(self) -> float:
        return self.prior_alpha / (self.prior_alpha + self.prior_beta)

    def posterior(self, current_rate: float, current_count: int) -> tuple[float, float]:
        total = self.prior_alpha + self.prior_beta + current_count
        return current_rate * total, (1.0 - current_rate) * total

    def update(self, current_rate: float, current_count: int, success: bool) -> tuple[float, int]:
        a, b = self.posterior(current_rate, current_count)
        a, b = (a + 1.0, b) if success else (a, b + 1.0)
        return a / (a + b), current_count + 1

    def update_strategy(self, strategy: Strategy, success: bool) -> Strategy:
        rate, count = self.update(strategy.success_rate, strategy.usage_count, success)
        a, b = self.posterior(rate, count)
        return strategy.model_copy(update={"success_rate": rate, "usage_count": count, "alpha": a, "beta": b})


# --- abstractor -------------------------------------------------------------------------------------------


class AbstractedStrategy(BaseModel):
    abstractable: bool = True
    situation: str = Field(default="", description="when to apply the strategy (task-independent)")
    approach: str = Field(default="", description="the high-level steps")
    rationale: str = Field(default="", description="why it works")


class LLMStrategyAbstractor:
    """An LLM abstracts a successful trajectory into situation / approach / rationale.

    Failed trajectories are refused without an LLM call. A reply that is not valid JSON is repaired or
    re-asked by ``LLMClient.astructured``; after that LLMResponseError propagates.
    """

    SYSTEM = (
        "You extract reusable strategies from an agent's successful run. Abstract away specific names, "
        "ids and values so the strategy applies to similar tasks. Reply with JSON only: "
        '{"abstractable": true|false, "situation": "when to apply it", "approach": "high-level steps", '
        '"rationale": "why it works"}. Use abstractable=false if the run holds no transferable strategy.'
    )

    def __init__(self, llm_client: LLMClient, *, retries: int = 2) -> None:
        self.llm = llm_client
        self.retries = retries

    async def abstract(self, trajectory: Trajectory) -> Strategy | None:
        if not trajectory.success:
            return None
        reply = await ask_json(
            self.llm, self.SYSTEM, render_trajectory(trajectory), AbstractedStrategy, retries=self.retries
        )
        if not reply.abstractable or not reply.situation.strip() or not reply.approach.strip():
            return None
        return Strategy(
            situation=reply.situation.strip(),
            approach=reply.approach.strip(),
            rationale=reply.rationale.strip(),
            domain=trajectory.task.domain,
            source_trajectory_ids=[trajectory.id],
        )


# --- the component ---------------------------------------------------------------------------------------


class ChromaStrategyBank:
    """StrategyBank backed by a VectorStore plus SQLite records; embeds the situation field."""

    def __init__(
        self,
        embedder: Embedder,
        vector_store: VectorStore,
        abstractor: StrategyAbstractor,
        success_updater: SuccessRateUpdater | None = None,
        collection_name: str = "atlas_strategies",
        *,
        records: RecordStore | None = None,
    ) -> None:
        if records is None:
            from atlas.infra.records import RecordStore

            records = RecordStore(None)
        self.embedder = embedder
        self.vector_store = vector_store
        self.abstractor = abstractor
        self.success_updater: SuccessRateUpdater = success_updater or EMASuccessUpdater()
        self.collection_name = collection_name
        self._table = IndexedTable(records, collection_name, vector_store)

    def _prepare(self, strategy: Strategy, trajectory: Trajectory) -> Strategy:
        update: dict[str, Any] = {}
        if trajectory.id not in strategy.source_trajectory_ids:
            update["source_trajectory_ids"] = [*strategy.source_trajectory_ids, trajectory.id]
        if isinstance(self.success_updater, StartsAtPrior) and strategy.usage_count == 0:
            update["success_rate"] = float(self.success_updater.initial_rate)
        return strategy.model_copy(update=update) if update else strategy

    def _write(self, strategy: Strategy, vector: Any) -> None:
        self._table.write(
            [(strategy.id, strategy.model_dump(mode="json"))],
            vector,
            [{"domain": strategy.domain, "created_ts": strategy.created_at.timestamp()}],
            [strategy.situation],
        )

    async def awrite(self, trajectory: Trajectory | dict) -> Strategy | None:
        """Abstract a successful trajectory into a stored strategy; failures return None untouched."""
        traj = validate_trajectory(trajectory)
        if not traj.success:
            return None
        strategy = await self.abstractor.abstract(traj)
        if strategy is None:
            return None
        strategy = self._prepare(strategy, traj)
        vector = await self.embedder.aembed([strategy.situation])
        await asyncio.to_thread(self._write, strategy, vector)
        return strategy

    def write(self, trajectory: Trajectory | dict) -> Strategy | None:
        return run_sync(self.awrite(trajectory))

    def add(self, strategy: Strategy) -> str:
        """Store a ready-made strategy (hand-written or imported)."""
        self._write(strategy, self.embedder.embed([strategy.situation]))
        return strategy.id

    def _read(self, vector: Any, k: int, where: dict | None) -> list[Strategy]:
        out = []
        for record, _score in self._table.query(vector, k, where):
            out.append(Strategy.model_validate(record))
        return out

    def read(self, task: Task | str, k: int = 5, where: dict | None = None) -> list[Strategy]:
        """Strategies whose situation is most similar to the task description."""
        task = validate_task(task)
        validate_k(k)
        return self._read(self.embedder.embed([task.description])[0], k, where)

    async def aread(self, task: Task | str, k: int = 5, where: dict | None = None) -> list[Strategy]:
        task = validate_task(task)
        validate_k(k)
        vector = (await self.embedder.aembed([task.description]))[0]
        return await asyncio.to_thread(self._read, vector, k, where)

    def get(self, strategy_id: str) -> Strategy | None:
        record = self._table.get(strategy_id)
        return Strategy.model_validate(record) if record is not None else None

    def all(self) -> list[Strategy]:
        return [Strategy.model_validate(r) for r in self._table.all()]

    def count(self) -> int:
        return self._table.count()

    def update_stats(self, strategy_id: str, success: bool) -> None:
        """Fold one outcome into the strategy's success rate via the configured updater (atomic)."""

        def apply(record: dict[str, Any]) -> dict[str, Any]:
            strategy = Strategy.model_validate(record)
            if isinstance(self.success_updater, UpdatesStrategies):
                strategy = self.success_updater.update_strategy(strategy, success)
            else:
                rate, count = self.success_updater.update(
                    strategy.success_rate, strategy.usage_count, success
                )
                strategy = strategy.model_copy(update={"success_rate": rate, "usage_count": count})
            return strategy.model_dump(mode="json")

        try:
            self._table.update(strategy_id, apply)
        except KeyError as exc:
            raise InvalidInputError(f"unknown strategy id {strategy_id!r}") from exc


__all__ = [
    "AbstractedStrategy",
    "BayesianUpdater",
    "ChromaStrategyBank",
    "EMASuccessUpdater",
    "LLMStrategyAbstractor",
    "SimpleAverageUpdater",
]
