"""Domain primitives for the concept library, loaded by domain name."""

from __future__ import annotations

from atlas.errors import ConfigError
from atlas.memory.primitives.arc import ARCPrimitiveLoader
from atlas.memory.primitives.swe import SWEPrimitiveLoader
from atlas.protocols.memory import PrimitiveLoader

PRIMITIVE_LOADERS: dict[str, type] = {"arc": ARCPrimitiveLoader, "swe": SWEPrimitiveLoader}


def get_primitive_loader(domain: str) -> PrimitiveLoader:
    """The loader registered for ``domain`` ("arc", "swe")."""
    try:
        return PRIMITIVE_LOADERS[domain]()
    except KeyError as exc:
        raise ConfigError(f"no primitives for domain {domain!r}; known: {sorted(PRIMITIVE_LOADERS)}") from exc


def register_primitive_loader(domain: str, loader: type) -> None:
    """Make ``get_primitive_loader(domain)`` return ``loader()``."""
    PRIMITIVE_LOADERS[domain] = loader


__all__ = [
    "PRIMITIVE_LOADERS",
    "ARCPrimitiveLoader",
    "SWEPrimitiveLoader",
    "get_primitive_loader",
    "register_primitive_loader",
]
