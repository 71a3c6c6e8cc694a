"""Run an exported design outside the search: ``recall(task) -> str`` and ``update(episode)``.

The design runs exactly as in the search — the same sandboxed worker, the same tools, the learned
memory it ended collection with — so ``recall`` of a deployment task returns the advice the design
gave in the run (``advice.jsonl`` of the export). ``learn=False`` (default) serves the frozen
memory as deployment did: write tools refused, ``update`` refused. ``learn=True`` lets ``update``
keep learning, as collection did; ``snapshot()`` returns the memory so far.

A design that fails in ``recall`` or ``update`` raises ``DesignError`` with its error and the
design's traceback (the search records such failures as data; a user calling it directly wants to
know).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atlas.alma.deploy.export import ExportedDesign, load_export
from atlas.alma.deploy.manifest import MAX_EMBEDDING_DIM
from atlas.errors import ConfigError, DesignError, EmbeddingError, InvalidInputError
from atlas.protocols.embed import Embedder
from atlas.protocols.llm import LLM

if TYPE_CHECKING:
    from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool


def local_embedder_spec(name: str) -> str | None:
    """The ``make_embedder`` spec of a local embedder an export may name (``minilm``, ``ngram``,
    ``ngram-N``), or None: an export never makes ATLAS call a provider or a network endpoint."""
    if name == "minilm" or name == "ngram":
        return name
    m = re.fullmatch(r"ngram-(\d{1,5})", name)
    if m and 1 <= int(m.group(1)) <= MAX_EMBEDDING_DIM:
        return f"ngram:{int(m.group(1))}"
    return None


def embedder_for(exported: ExportedDesign, embedder: Embedder | None = None) -> Embedder:
    """The embedder the learned vectors were made with (or ``embedder`` after checking it matches).
    Only a local embedder is loaded from the export's name; any other must be passed in."""
    name = exported.embedder_name
    dims = exported.manifest["embedder"]["dims"]
    if embedder is None:
        if name is None:
            raise ConfigError(f"{exported.path}/design.json names no embedder; pass embedder=")
        from atlas.infra.embeddings import make_embedder

        spec = local_embedder_spec(name)
        if spec is None:
            raise ConfigError(
                f"the export's vectors were made with the embedder {name!r}, which is not a local one "
                "(minilm, ngram, ngram-N): an export never chooses a provider or a network embedder. "
                "Serve it from Python with the embedder passed in: "
                f"ServedDesign.open(DIR, embedder=make_embedder({name!r}))"
            )
        try:
            embedder = make_embedder(spec)
        except (ConfigError, EmbeddingError) as exc:
            raise ConfigError(
                f"the export needs the embedder {name!r}, which cannot be loaded here: {exc}"
            ) from exc
    got = embedder.name
    if name is not None and got is not None and got != name:
        raise ConfigError(
            f"the export's vectors were made with the embedder {name!r}, not {got!r}: "
            "recall would compare vectors of different models"
        )
    if dims:
        try:
            dim = len(embedder.embed(["dimension check"])[0])
        except EmbeddingError as exc:
            raise ConfigError(f"the export needs the embedder {name!r}, which fails here: {exc}") from exc
        if dim not in dims:
            raise ConfigError(f"the embedder gives {dim}-d vectors; the export's vectors are {dims}-d")
    return embedder


class ServedDesign:
    """One exported design with its learned memory, ready to advise an agent."""

    def __init__(
        self,
        exported: ExportedDesign,
        *,
        embedder: Embedder | None = None,
        llm: LLM | None = None,
        learn: bool = False,
        pool: WorkerPool | None = None,
        limits: SandboxLimits | None = None,
        learned: dict[str, Any] | None = None,
    ) -> None:
        """``llm`` backs the design's summarize/analyze tools (the run used its task model, named in
        ``design.json``); without one those tools are refused, as in a run without an LLM.
        ``learned`` starts from another state of this design (a ``snapshot()`` saved earlier)
        instead of the export's memory.json."""
        from atlas.alma.evaluate.runner import DesignRunner

        self.exported = exported
        self.learn = learn
        self.embedder = embedder_for(exported, embedder)
        design = exported.design()
        if learned is not None and learned.get("design_hash") not in (None, design.source_hash):
            raise DesignError("the learned state given belongs to another design (its design_hash differs)")
        if learned is None and exported.learned.get("design_hash") not in (None, design.source_hash):
            raise DesignError(
                f"{exported.path}/design.py is not the design that learned memory.json (its design_hash "
                "differs: the file was swapped after the export): export the design again"
            )
        snapshot = {**(learned if learned is not None else exported.learned), "frozen": not learn}
        try:
            self.runner = DesignRunner.restore(
                design,
                snapshot,
                embedder=self.embedder,
                llm=llm,
                pool=pool,
                limits=limits,
            )  # no host_executor: a design from an export always runs in the sandbox
        except InvalidInputError as exc:
            raise DesignError(f"{exported.path}/memory.json cannot be restored: {exc}") from exc
        if self.runner.problems:
            raise DesignError(
                f"{exported.path}/design.py fails the static check: "
                + "; ".join(str(p) for p in self.runner.problems)
            )

    @classmethod
    def open(cls, path: str | Path, **kwargs: Any) -> ServedDesign:
        """Load an export folder (``atlas archive export ... --out DIR``) and serve it."""
        return cls(load_export(path), **kwargs)

    @property
    def name(self) -> str:
        return self.exported.manifest["design"]["name"]

    def recall(self, task: dict[str, Any] | str) -> str:
        """The design's advice for ``task`` (a task view ``{"goal", "observation", "domain"}``, or
        just the goal text)."""
        view = task_view_of(task)
        advice, log = self.runner.recall_sync(view, label="served")
        if log.error is not None:
            raise DesignError(
                f"the design's recall failed: {log.error}" + (f"\n{log.traceback}" if log.traceback else "")
            )
        return advice

    def update(self, episode: dict[str, Any]) -> None:
        """Let the design learn from a finished episode (``learn=True`` only)."""
        if not self.learn:
            raise DesignError(
                "update refused: this design is served frozen (open it with learn=True to learn)"
            )
        if not isinstance(episode, dict) or not isinstance(episode.get("task"), dict):
            raise InvalidInputError(
                "episode must be a dict with a 'task' view, 'steps', 'success' and 'score'"
            )
        log = self.runner.update_sync(episode, label="served")
        if log.error is not None:
            raise DesignError(
                f"the design's update failed: {log.error}" + (f"\n{log.traceback}" if log.traceback else "")
            )

    def snapshot(self) -> dict[str, Any]:
        """The learned memory now (the same shape as the export's memory.json)."""
        return {**self.runner.snapshot(), "embedder": self.embedder.name}

    def info(self) -> dict[str, Any]:
        """What it holds: memory keys, vector items per collection, graph size."""
        from atlas.alma.evaluate.harness import summarize_snapshot

        m = self.exported.manifest
        return {
            "design": m["design"],
            "embedder": m.get("embedder"),
            "learn": self.learn,
            "scores": m.get("scores"),
            "holds": summarize_snapshot(self.runner.snapshot()),
        }

    def close(self) -> None:
        self.runner.close()

    def __enter__(self) -> ServedDesign:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def task_view_of(task: dict[str, Any] | str) -> dict[str, Any]:
    """A task view from a view dict (checked) or a goal string (no observation)."""
    if isinstance(task, str):
        if not task.strip():
            raise InvalidInputError("task: must be a non-empty goal or a task view object")
        return {"goal": task, "observation": {}, "domain": ""}
    if not isinstance(task, dict) or not isinstance(task.get("goal"), str):
        raise InvalidInputError(
            "task: must be a goal string or an object with a string 'goal' "
            "(and optionally 'observation', 'domain')"
        )
    return task


__all__ = ["ServedDesign", "embedder_for", "local_embedder_spec", "task_view_of"]
