"""The vector index of a tips folder, derived from its files and brought up to date before each
search: a new or edited file is embedded again, a deleted one leaves the index.

Each tip is indexed under two keys, its text and its trigger; a tip's relevance to a prompt is the
best cosine of the two, and tips under the embedder's calibrated floor (``relevance.py``) are not
returned. The folder is checked by a cheap fingerprint (names, sizes, modification times) first, so
an unchanged folder costs one directory listing per search."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from pathlib import Path
from typing import Any

import numpy as np

from atlas.errors import InvalidInputError
from atlas.memory.guidelines.tipfiles import TipFile, read_tip_file, tip_paths
from atlas.memory.relevance import relevance_floor
from atlas.protocols.embed import Embedder
from atlas.protocols.store import VectorStore

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


__all__ = ["TipIndex", "fingerprint"]
