"""The Ray executor: a design's episodes as work units on a Ray cluster, with the local results.

Per design: its collection is one unit (the episodes in order; memory grows; the snapshot comes
back); then each deployment episode is a unit against that snapshot, frozen, at most
``concurrency`` in flight across the cluster, in the same staged batches as the local harness.
Units run on ``EpisodeWorker`` actors spread over the nodes. Results (episode records, runtime logs,
the snapshot, usage) come back to this process, which alone writes the run folder.

Faults: a unit whose worker or node dies is played again on another worker (at most
``max_retries`` times; each retry is recorded on the evaluation and reported to ``on_retry``);
only a unit's returned result is counted, so nothing counts twice. Lost more often, the evaluation
raises ``ClusterError`` (the archive holds every design finished before; ``--resume`` goes on).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from atlas.alma.cluster.actor import EpisodeWorker
from atlas.alma.cluster.connect import CONNECT_TIMEOUT_S, connect, disconnect, import_ray
from atlas.alma.cluster.ledger import BudgetLedger
from atlas.alma.cluster.work import UnitResult, WorkerKit
from atlas.alma.evaluate.harness import EpisodeRecord, Evaluation, check_disjoint
from atlas.alma.state.staging import batches
from atlas.errors import ClusterError, ConfigError
from atlas.infra.llm.ratelimit import Spacing
from atlas.protocols.llm import Usage

if TYPE_CHECKING:
    from atlas.alma.design import Design
    from atlas.alma.state.staging import Verdict
    from atlas.core.types import Task

START_TIMEOUT_S = 300.0  # workers build their kit (a local model loads) before the first unit
MAX_RETRIES = 3
HEAD = "node:__internal_head__"  # the resource Ray gives the head node


class RayExecutor:
    """Plays designs on a Ray cluster (``address``: ``auto`` or ``HOST:PORT``; see ``connect``).

    ``local_model``: each worker plays one episode at a time and holds one ``llm`` resource, so a
    node runs at most as many local-model episodes as it declares. ``workers``: how many actors
    (default: one per CPU of the cluster, or per ``llm`` slot)."""

    name = "ray"

    def __init__(
        self,
        kit: WorkerKit,
        *,
        address: str | None = "auto",
        concurrency: int = 4,
        local_model: bool = False,
        embedder_name: str | None = None,
        workers: int | None = None,
        max_retries: int = MAX_RETRIES,
        on_episode: Callable[[EpisodeRecord], None] | None = None,
        on_retry: Callable[[dict[str, Any]], None] | None = None,
        timeout_s: float = CONNECT_TIMEOUT_S,
        start_timeout_s: float = START_TIMEOUT_S,
    ) -> None:
        self.kit = kit
        self.address = address or "auto"
        self.concurrency = max(1, int(concurrency))
        self.local_model = local_model
        self.embedder_name = embedder_name
        self.max_retries = max_retries
        self.on_episode = on_episode
        self.on_retry = on_retry
        self.retries: list[dict[str, Any]] = []
        self.usage = Usage()  # what the workers' task models spent (the search's meter reads it)
        self.cache_hits = 0
        self._connected = connect(address, timeout_s=timeout_s)
        self._ray = ray = import_ray()
        try:
            from ray.exceptions import (
                ActorUnavailableError,
                NodeDiedError,
                ObjectLostError,
                OwnerDiedError,
                RayActorError,
                WorkerCrashedError,
            )

            self._lost: tuple[type[BaseException], ...] = (
                RayActorError,
                ActorUnavailableError,
                WorkerCrashedError,
                NodeDiedError,
                ObjectLostError,
                OwnerDiedError,
            )
            resources = ray.cluster_resources()
            self.nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
            if local_model:
                llm_slots = int(resources.get("llm", 0))
                if llm_slots < 1:
                    raise ConfigError(
                        "a local task model on Ray needs nodes that declare how many local-model episodes "
                        "they run at once: ray start ... --resources '{\"llm\": 1}' (docs/cluster.md)"
                    )
                n = workers or min(self.concurrency, llm_slots)
                self._per_actor = 1
                self._options: dict[str, Any] = {"num_cpus": 0, "resources": {"llm": 1}, "max_concurrency": 1}
            else:
                n = workers or max(1, min(self.concurrency, int(resources.get("CPU", 1))))
                self._per_actor = math.ceil(self.concurrency / n)
                self._options = {"num_cpus": 0, "max_concurrency": self._per_actor}
            self._remote = ray.remote(EpisodeWorker)
            # One ledger for the cluster's budgets on the head node (the cluster ends with it anyway).
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            heads = [n["NodeID"] for n in ray.nodes() if n.get("Alive") and HEAD in n.get("Resources", {})]
            here = NodeAffinitySchedulingStrategy(
                heads[0] if heads else ray.get_runtime_context().get_node_id(), soft=False
            )
            self._ledger = ray.remote(BudgetLedger).options(num_cpus=0, scheduling_strategy=here).remote()
            self._pacer = (  # the task model's request-rate limit, shared by every worker
                ray.remote(Spacing).options(num_cpus=0, scheduling_strategy=here).remote(kit.max_rpm)
                if kit.max_rpm
                else None
            )
            self._resource = "llm" if local_model else "CPU"
            slots = self._slots()
            self.worker_nodes = [slots[k % len(slots)] for k in range(n)]  # spread over the nodes
            self._actors = [self._spawn(node) for node in self.worker_nodes]
            self._inflight = [0] * n
            pings = ray.get([a.ping.remote() for a in self._actors], timeout=start_timeout_s)
            self.workers = [p["worker"] for p in pings]
            self.worker_nodes = [p["node"] for p in pings]  # where they did start
        except Exception as exc:
            self.close()
            if isinstance(exc, ray.exceptions.GetTimeoutError):
                raise ClusterError(
                    f"the Ray workers did not start within {start_timeout_s:.0f}s (not enough free "
                    "resources on the cluster, or building the task model hangs)"
                ) from exc
            raise
        self._gates: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}  # units in flight, per loop

    def _gate(self) -> asyncio.Semaphore:
        """At most ``concurrency`` units in flight (a semaphore of the running event loop)."""
        loop = asyncio.get_running_loop()
        if loop not in self._gates:
            self._gates = {loop: asyncio.Semaphore(self.concurrency)}
        return self._gates[loop]

    # ---- workers -------------------------------------------------------------------------------
    def _slots(self) -> list[str]:
        """Alive nodes, each as often as it has the workers' resource (CPUs, or ``llm`` slots with a
        local model), interleaved so that consecutive workers land on different nodes."""
        alive = [n for n in self._ray.nodes() if n.get("Alive")]
        per = [[n["NodeID"]] * int(n.get("Resources", {}).get(self._resource, 0)) for n in alive]
        slots = [node for group in itertools.zip_longest(*per) for node in group if node]
        return slots or [n["NodeID"] for n in alive]

    def _spawn(self, node: str) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        where = NodeAffinitySchedulingStrategy(node, soft=False)  # soft placement may pile them on one node
        return self._remote.options(scheduling_strategy=where, max_restarts=0, **self._options).remote(
            self.kit, self._pacer
        )

    def _pick(self, avoid: int | None) -> int:
        live = [i for i, a in enumerate(self._actors) if a is not None]
        if not live:
            raise ClusterError(
                "no Ray worker is left to play episodes (their nodes died and no other node has a free "
                "`llm` slot); the archive is saved: add a node and `atlas run --resume`"
            )
        return min(live, key=lambda i: (i == avoid, self._inflight[i], i))

    def _replace(self, i: int, lost: Any) -> None:
        """Worker ``i`` (``lost``) died: start another in its place on another node when there is one
        (its node may be gone too), the one with the fewest of our workers; with a local model only
        where an ``llm`` slot is free (else the worker is not replaced: waiting for a slot would hang).
        Once per loss: the other units that were on it find it replaced already."""
        if self._actors[i] is not lost:
            return
        with contextlib.suppress(Exception):  # already gone with its node: nothing to stop
            self._ray.kill(lost, no_restart=True)
        mine = Counter(n for k, n in enumerate(self.worker_nodes) if k != i and self._actors[k] is not None)
        free = Counter(self._slots())
        if self.local_model:  # a slot is ours until its worker is gone
            free -= mine
        nodes = [n for n in free if n != self.worker_nodes[i]] or list(free)
        if not nodes:
            self._actors[i] = None
            return
        node = min(nodes, key=lambda n: mine[n])
        self._actors[i], self.worker_nodes[i] = self._spawn(node), node

    async def _unit(
        self,
        ev: Evaluation,
        label: str,
        submit: Callable[[Any], Awaitable[UnitResult]],
        ledger_key: str | None = None,
    ) -> UnitResult:
        """Run one unit, again on another worker when its worker is lost (bounded, recorded; what
        the lost attempt charged to the ledger under ``ledger_key`` is voided)."""
        async with self._gate():
            attempt, avoid = 0, None
            while True:
                i = self._pick(avoid)
                actor = self._actors[i]
                self._inflight[i] += 1
                try:
                    result = await submit(actor)
                except self._lost as exc:
                    attempt += 1
                    reason = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ''}"
                    retry = {"design_id": ev.design_id, "unit": label, "attempt": attempt, "error": reason}
                    retry["node"] = self.worker_nodes[i][:12]  # where it was lost
                    self._replace(i, actor)
                    if ledger_key is not None:
                        self._ledger.void.remote(ledger_key, label)
                    if attempt > self.max_retries:
                        raise ClusterError(
                            f"work unit {label} of {ev.design_id} was lost {attempt} times (last: {reason}); "
                            "the archive holds every finished design: fix the cluster and `atlas run --resume`"
                        ) from exc
                    ev.retries.append(retry)
                    self.retries.append(retry)
                    if self.on_retry is not None:
                        self.on_retry(retry)
                    avoid = i
                    await asyncio.sleep(min(0.5 * attempt, 5.0))  # let the cluster notice a dead node
                    continue
                finally:
                    self._inflight[i] -= 1
                self._account(result)
                return result

    def _account(self, result: UnitResult) -> None:
        self.usage.add(
            Usage(
                prompt_tokens=int(result.usage.get("prompt_tokens", 0)),
                completion_tokens=int(result.usage.get("completion_tokens", 0)),
                cost_usd=float(result.usage.get("cost_usd", 0.0)),
                calls=int(result.usage.get("calls", 0)),
            )
        )
        self.cache_hits += result.cache_hits
        if self.on_episode is not None:
            for rec in result.episodes:
                self.on_episode(rec)

    # ---- one design ----------------------------------------------------------------------------
    async def evaluate(
        self,
        design: Design,
        collection_tasks: list[Task],
        deployment_tasks: list[Task],
        *,
        stage_tasks: int = 0,
        go_on: Callable[[list[EpisodeRecord]], Verdict] | None = None,
    ) -> Evaluation:
        """Collection then deployment, as ``Harness.evaluate`` words and scores it."""
        check_disjoint(collection_tasks, deployment_tasks)
        t0 = time.perf_counter()
        ev = Evaluation(design_id=design.id, name=design.name, deployment_total=len(deployment_tasks))
        col = await self._unit(ev, "C", lambda a: a.collect.remote(design, collection_tasks))
        if col.error is not None or col.snapshot is None:
            ev.status = "error"
            ev.errors.append(col.error or "collection returned no snapshot")
        else:
            ev.collection = col.episodes
            ev.stores = dict(col.stores)
            ev.learned = {**col.snapshot, "embedder": self.embedder_name}
            tool_usage = dict(col.tool_usage)
            snapshot = self._ray.put(col.snapshot)
            ledger = (self._ledger, f"{design.id}:{uuid.uuid4().hex[:12]}")
            await self._ledger.open.remote(ledger[1], col.tool_usage)
            stages = batches(len(deployment_tasks), stage_tasks if go_on is not None else 0)
            for k, idx in enumerate(stages):
                results = await asyncio.gather(
                    *(
                        self._unit(
                            ev,
                            f"D{i}",
                            self._deploy(design, snapshot, col.tool_usage, t, f"D{i}", ledger),
                            ledger[1],
                        )
                        for i, t in enumerate(deployment_tasks[idx.start : idx.stop], idx.start + 1)
                    )
                )
                for r in results:
                    tool_usage = _add_tools(tool_usage, r.tool_usage)
                failed = [r.error for r in results if r.error is not None]
                if failed:
                    ev.status = "error"
                    ev.errors.append(failed[0])
                    break
                ev.deployment += [r.episodes[0] for r in results]
                if go_on is not None and k < len(stages) - 1:
                    verdict = go_on(ev.deployment)
                    ev.stop_reason = verdict.reason
                    if not verdict.go_on:
                        ev.stage = "minibatch"
                        break
            self._ledger.close.remote(ledger[1])
            if ev.status == "ok":
                ev.stores["tool_usage"] = tool_usage
                ev.protections = dict(col.protections)
        ev.duration_s = round(time.perf_counter() - t0, 3)
        return ev

    @staticmethod
    def _deploy(
        design: Design, snapshot: Any, tool_usage: dict[str, Any], task: Task, label: str, ledger: Any
    ) -> Callable[[Any], Awaitable[UnitResult]]:
        return lambda a: a.deploy.remote(design, snapshot, tool_usage, task, label, ledger)

    # ---- the run -------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        return {
            "executor": "ray",
            "address": self.address,
            "nodes": self.nodes,
            "workers": len(getattr(self, "workers", [])),
            "worker_names": list(getattr(self, "workers", [])),
            "worker_nodes": len(set(getattr(self, "worker_nodes", []))),
            "concurrency": self.concurrency,
            "per_worker": self._per_actor,
            "local_model": self.local_model,
            "retries": len(self.retries),
            "max_rpm": self.kit.max_rpm,
        }

    def close(self) -> None:
        """Stop the workers; leave the cluster if this executor joined it."""
        ray = self._ray if hasattr(self, "_ray") else None
        helpers = [getattr(self, "_ledger", None), getattr(self, "_pacer", None)]
        for a in [*getattr(self, "_actors", []), *filter(None, helpers)]:
            with contextlib.suppress(Exception):  # its node is gone: nothing left to stop
                ray.kill(a, no_restart=True)  # type: ignore[union-attr]
        self._actors = []
        if self._connected:
            disconnect()
            self._connected = False


def _add_tools(total: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    """Tool usage of an evaluation plus one unit's (rounded as ``ToolUsage.to_dict`` does)."""
    out = dict(total)
    for k, v in part.items():
        out[k] = out.get(k, 0) + v
    out["llm_cost_usd"] = round(float(out.get("llm_cost_usd", 0.0)), 6)
    out["llm_s"] = round(float(out.get("llm_s", 0.0)), 3)
    return out


__all__ = ["MAX_RETRIES", "START_TIMEOUT_S", "RayExecutor"]
