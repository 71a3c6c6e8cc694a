"""The embedder seam."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors of shape (len(texts), dim)."""

    @property
    def name(self) -> str: ...
    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    async def aembed(self, texts: Sequence[str]) -> np.ndarray: ...
