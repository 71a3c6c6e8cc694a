"""The Ray actor that plays work units: one per worker process, built from a ``WorkerKit``.

An async actor: with a hosted model it runs many units at once (each mostly waits on the model);
with a local model the executor gives it one unit at a time and one ``llm`` resource, so a node runs
at most as many local-model episodes as it declares ``llm``. The kit's collaborators (the model
above all) are built on the first unit and kept for the life of the process.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING, Any

from atlas.alma.cluster.ledger import LedgerBudget, RemotePacer
from atlas.alma.cluster.work import UnitResult, WorkerKit, built, play_collection, play_deployment

if TYPE_CHECKING:
    from atlas.alma.design import Design
    from atlas.core.types import Task


class EpisodeWorker:
    """Plays collection and deployment units; ``where`` names the process for the run's records."""

    def __init__(self, kit: WorkerKit, pacer: Any = None) -> None:
        """``pacer``: the cluster's request pacer (a ``Spacing`` actor) when the run has ``--max-rpm``."""
        self.kit = kit
        self.pacer = RemotePacer(pacer) if pacer is not None else None
        self.where = f"{socket.gethostname()}:{os.getpid()}"

    def ping(self) -> dict[str, Any]:
        """Where this worker runs (and builds the kit now, so the first unit does not wait for it)."""
        import ray

        built(self.kit)
        return {"worker": self.where, "pid": os.getpid(), "node": ray.get_runtime_context().get_node_id()}

    async def collect(self, design: Design, tasks: list[Task]) -> UnitResult:
        return await play_collection(self.kit, design, tasks, worker=self.where, pacer=self.pacer)

    async def deploy(
        self,
        design: Design,
        snapshot: dict[str, Any],
        tool_usage: dict[str, Any],
        task: Task,
        label: str,
        ledger: tuple[Any, str] | None = None,
    ) -> UnitResult:
        """One deployment episode; ``ledger`` (the cluster's ``BudgetLedger`` and the evaluation's key)
        counts its tool calls against the evaluation's budgets."""
        budget = LedgerBudget(ledger[0], ledger[1], label) if ledger is not None else None
        return await play_deployment(
            self.kit,
            design,
            snapshot,
            tool_usage,
            task,
            label,
            worker=self.where,
            budget=budget,
            pacer=self.pacer,
        )


__all__ = ["EpisodeWorker"]
