"""Relevance floors: how similar a stored memory must be to a task to count as related to it.

A cosine score means different things under different embedders (MiniLM puts unrelated English
sentences near 0.1, the character n-gram fallback puts them near 0.3), so a floor is kept per
embedder and per retrieval path. Below it a memory is not shown at all: an unrelated task gets
nothing rather than confident advice from another domain.

The numbers are not chosen by hand: ``python benchmarks/bench_transfer.py --calibrate`` picks each
floor on labelled query/memory pairs from several domains (the middle of the widest interval that
maximizes related-recall minus unrelated-hit-rate) and checks it with leave-one-domain-out
cross-validation; paste its output here when the embedders, the keys or the data change.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from atlas.protocols.embed import Embedder

log = logging.getLogger(__name__)

Path = Literal["experience", "guidelines", "guidelines_sure"]

#: embedder name → retrieval path → minimum cosine (written by bench_transfer.py --calibrate).
#: ``guidelines_sure`` is not a floor but the relevance above which the LLM selector keeps a tip
#: without asking: 0.05 above the highest relevance any unrelated query reached.
FLOORS: dict[str, dict[str, float]] = {
    "minilm": {"experience": 0.30, "guidelines": 0.29, "guidelines_sure": 0.51},
    "ngram": {"experience": 0.55, "guidelines": 0.55, "guidelines_sure": 0.66},
}

#: Used for embedders the table does not know (provider embeddings): MiniLM's floors, with a warning.
FALLBACK = "minilm"

_warned: set[str] = set()


def embedder_name(embedder: Embedder) -> str:
    """The name an embedder reports (``CachedEmbedder`` reports its inner model's)."""
    return str(embedder.name or type(embedder).__name__)


def relevance_floor(embedder: Embedder, path: Path) -> float:
    """The calibrated floor of ``path`` for ``embedder`` (MiniLM's, with a warning, if unknown)."""
    name = embedder_name(embedder)
    table = FLOORS.get(name)
    if table is None:
        if name not in _warned:
            _warned.add(name)
            log.warning(
                "no calibrated relevance floor for embedder %r; using %r's. Calibrate with "
                "benchmarks/bench_transfer.py --calibrate",
                name,
                FALLBACK,
            )
        table = FLOORS[FALLBACK]
    return table[path]


__all__ = ["FALLBACK", "FLOORS", "embedder_name", "relevance_floor"]
