"""The vector index of a tips folder, derived from its files and brought up to date before each
search: a new or edited file is embedded again, a deleted one leaves the index.

Each tip is indexed under two keys, its text and its trigger; a tip's relevance to a prompt is the
best cosine of the two, and tips under the embedder's calibrated floor (``relevance.py``) are not
returned. The folder is checked by a cheap fingerprint (names, sizes, modification times) first, so
an unchanged folder costs one directory listing per search. ``TipIndexes`` keeps one index per
folder for a server, and ``UseCounter`` adds to the tips' ``uses`` in batches."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from pathlib import Path
from typing import Any

import numpy as np

from atlas.errors import InvalidInputError
from atlas.memory.guidelines.tipfiles import TipFile, count_use, read_tip_file, tip_paths
from atlas.memory.relevance import relevance_floor
from atlas.protocols.embed import Embedder
from atlas.protocols.store import VectorStore

log = logging.getLogger(__name__)

KEYS = ("c", "t")  # the tip's text, its trigger


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def fingerprint(folder: Path) -> tuple[tuple[str, int, int], ...]:
    out = []
    for p in tip_paths(folder):
        try:
            st = p.stat()
        except OSError:
            continue
        out.append((p.name, st.st_size, st.st_mtime_ns))
    return tuple(out)


class TipIndex:
    """Search one tips folder by meaning; the index is rebuilt from the files when they change."""

    def __init__(
        self, folder: Path, vectors: VectorStore, embedder: Embedder, floor: float | None = None
    ) -> None:
        self.folder = Path(folder)
        self.vectors = vectors
        self.embedder = embedder
        self.floor = relevance_floor(embedder, "guidelines") if floor is None else floor
        self._seen: tuple[Any, ...] | None = None
        self._tips: dict[str, TipFile] = {}
        # file name → (size, mtime, its tip or None, why it could not be read or None)
        self._files: dict[str, tuple[int, int, TipFile | None, str | None]] = {}
        self._have: dict[str, str] | None = None  # vector id → digest of its text, as stored
        self.problems: list[str] = []
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        """Whether the index was synced with the folder at least once (in this process)."""
        return self._seen is not None

    def sync(self) -> dict[str, int]:
        """Bring the index up to date with the folder; how many tips were (re)embedded, removed, kept.
        Only files whose size or modification time changed are read again, and only texts whose
        digest changed are embedded again (a ``uses`` count going up costs no embedding)."""
        with self._lock:
            now = fingerprint(self.folder)
            if now == self._seen:
                return {"embedded": 0, "removed": 0, "kept": len(self._tips)}
            if self._have is None:  # what a previous process left in the store
                self._have = {
                    str(r["id"]): str((r.get("metadata") or {}).get("digest", ""))
                    for r in self.vectors.get_sync()
                }
            files: dict[str, tuple[int, int, TipFile | None, str | None]] = {}
            for name, size, mtime in now:
                old = self._files.get(name)
                if old is not None and old[:2] == (size, mtime):
                    files[name] = old
                    continue
                try:
                    files[name] = (size, mtime, read_tip_file(self.folder / name), None)
                except (OSError, UnicodeDecodeError, InvalidInputError) as exc:
                    files[name] = (size, mtime, None, str(exc))
            self._files = files
            tips: dict[str, TipFile] = {}
            self.problems = []
            for name, (_, _, tip, problem) in files.items():
                if problem:
                    self.problems.append(problem)
                elif tip is not None and tip.id in tips:
                    self.problems.append(
                        f"{self.folder / name}: id {tip.id} is used by another tip file; skipped"
                    )
                elif tip is not None:
                    tips[tip.id] = tip
            wanted: dict[str, tuple[TipFile, str, str]] = {}
            for tip in tips.values():
                for key, text in zip(KEYS, (tip.content, tip.trigger), strict=True):
                    if text.strip():
                        wanted[f"{tip.id}#{key}"] = (tip, text, _digest(text))
            have = self._have
            stale = [i for i in have if i not in wanted or have[i] != wanted[i][2]]
            fresh = [i for i in wanted if have.get(i) != wanted[i][2]]
            if stale:
                self.vectors.delete_sync(stale)
                for i in stale:
                    have.pop(i, None)
            if fresh:
                vecs = np.asarray(self.embedder.embed([wanted[i][1] for i in fresh]), dtype=np.float32)
                self.vectors.add_sync(
                    fresh,
                    vecs.tolist(),
                    [{"tip_id": wanted[i][0].id, "digest": wanted[i][2]} for i in fresh],
                    [wanted[i][1] for i in fresh],
                )
                have.update({i: wanted[i][2] for i in fresh})
            self._tips = tips
            self._seen = now
            removed = len([i for i in stale if i not in wanted])
            return {"embedded": len(fresh), "removed": removed, "kept": len(self._tips)}

    def search(self, prompt: str, k: int = 3) -> list[tuple[TipFile, float]]:
        """The tips relevant to ``prompt``, best first, each with its relevance (cosine)."""
        self.sync()
        if not self._tips or not prompt.strip():
            return []
        vec = np.asarray(self.embedder.embed([prompt]), dtype=np.float32)[0]
        hits = self.vectors.query_sync(vec.tolist(), k=min(4 * k + 4, 2 * len(self._tips)))
        best: dict[str, float] = {}
        for rid, score, meta in _rows(hits):
            tip_id = str((meta or {}).get("tip_id") or rid.split("#")[0])
            if tip_id in self._tips and score >= self.floor:
                best[tip_id] = max(best.get(tip_id, -1.0), float(score))
        ranked = sorted(best.items(), key=lambda kv: -kv[1])[:k]
        return [(self._tips[i], s) for i, s in ranked]

    async def asearch(self, prompt: str, k: int = 3) -> list[tuple[TipFile, float]]:
        return await asyncio.to_thread(self.search, prompt, k)


def _rows(result: Any) -> list[tuple[str, float, dict[str, Any]]]:
    """(id, score, metadata) rows of a vector store's query result."""
    ids = list(getattr(result, "ids", []) or [])
    scores = list(getattr(result, "scores", []) or [])
    metas = list(getattr(result, "metadatas", []) or [{}] * len(ids))
    return [(str(i), float(s), m or {}) for i, s, m in zip(ids, scores, metas, strict=False)]


class UseCounter:
    """Counts the tips a prompt was given and adds the counts to their files (``uses``) at most
    once per ``every`` seconds, in a worker thread: the prompt's answer never waits on a write."""

    def __init__(self, every: float = 1.0) -> None:
        self.every = every
        self.counts: dict[str, tuple[Any, int]] = {}
        self._task: asyncio.Task[None] | None = None

    def add(self, tips: list[Any]) -> None:
        for tip in tips:
            key = str(tip.path)
            self.counts[key] = (tip, self.counts.get(key, (tip, 0))[1] + 1)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._flush_later())

    async def _flush_later(self) -> None:
        await asyncio.sleep(self.every)
        await self.flush()

    async def flush(self) -> None:
        counts, self.counts = self.counts, {}
        for tip, n in counts.values():
            await asyncio.to_thread(_count_use_quietly, tip, n)


class TipIndexes:
    """One ``TipIndex`` per tips folder, in one Chroma store under ``path`` (in memory without one),
    and the count of their uses; what the Lite server keeps for ``/hooks/context``."""

    def __init__(self, path: Path | None, embedder: Embedder) -> None:
        self.path = Path(path) if path is not None else None
        self.embedder = embedder
        self._indexes: dict[str, TipIndex] = {}
        self.uses = UseCounter()
        self._building: dict[str, asyncio.Task[Any]] = {}

    def build(self, index: TipIndex) -> None:
        """Build a new folder's index in a worker thread (once at a time per folder)."""
        key = str(index.folder)
        task = self._building.get(key)
        if task is None or task.done():
            self._building[key] = asyncio.get_running_loop().create_task(asyncio.to_thread(index.sync))

    def get(self, folder: str) -> TipIndex:
        index = self._indexes.get(folder)
        if index is None:
            from atlas.infra.vector_index import ChromaVectorStore, InMemoryVectorStore

            name = "atlas-tips-" + hashlib.sha1(folder.encode()).hexdigest()[:16]
            vectors: Any = (
                ChromaVectorStore.persistent(self.path / "chroma", name)
                if self.path is not None
                else InMemoryVectorStore(name)
            )
            index = self._indexes[folder] = TipIndex(Path(folder), vectors, self.embedder)
        return index


def _count_use_quietly(tip: Any, n: int = 1) -> None:
    """Best effort: a tip file being edited right now (or gone) is left alone."""
    try:
        count_use(tip, n)
    except OSError as exc:
        log.info("uses of %s not counted: %s", tip.id, exc)


__all__ = ["TipIndex", "TipIndexes", "UseCounter", "fingerprint"]
