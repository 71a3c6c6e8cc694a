"""The parts a genome is made of: their roles, parameters and what each needs.

A part's code lives in ``parts/<role>.py`` as ``<role>_<name>(...)`` (design code: it runs in the
sandbox once compiled); this catalog is the host's description of it: the parameters with their
types and allowed values (what mutation draws from and what the LLM operator's grammar allows), and
the encode parts a retrieve part reads. Parameters of kind ``state_key`` / ``list_key`` name an
observation field: their values come from the environment's observations, never from this file.
The parts are listed in ``encode_parts.py`` and ``retrieve_parts.py``; what a part is, in ``part_spec.py``.
"""

from __future__ import annotations

from atlas.alma.genome.encode_parts import ENCODE_PARTS
from atlas.alma.genome.part_spec import (
    ROLES,
    STORE_DEFAULTS,
    STORE_PARAMS,
    ObsKeys,
    Param,
    ParamKind,
    Part,
    Role,
)
from atlas.alma.genome.retrieve_parts import RETRIEVE_PARTS

PARTS: tuple[Part, ...] = ENCODE_PARTS + RETRIEVE_PARTS

_BY_KEY = {(p.role, p.name): p for p in PARTS}


def part(role: str, name: str) -> Part | None:
    return _BY_KEY.get((role, name))  # type: ignore[arg-type]


def parts(role: Role, *, generic_only: bool = False) -> list[Part]:
    return [p for p in PARTS if p.role == role and (p.generic or not generic_only)]


__all__ = [
    "PARTS",
    "ROLES",
    "STORE_DEFAULTS",
    "STORE_PARAMS",
    "ObsKeys",
    "Param",
    "ParamKind",
    "Part",
    "Role",
    "part",
    "parts",
]
