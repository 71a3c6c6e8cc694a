"""A genome: a typed, versioned JSON description of a memory design — which parts, with which
parameters, under which store policy. It compiles to an ordinary design module (``compile.py``).

    {"version": 1, "name": "route+explore",
     "encode":   [{"part": "transitions", "params": {"state_key": "location", "neighbors_key": "adjacent_rooms"}}],
     "store":    {"recent": 0, "cap": 200, "decay": 1.0},
     "retrieve": [{"part": "route", "params": {"context": "goal_items"}}, {"part": "explore", "params": {}}],
     "render":   {"part": "lines", "params": {"style": "joined", "max_lines": 60}}}

Loading is strict: text that is not JSON, a field of the wrong type, an unknown part or parameter, or
a retrieve part whose encode part is missing is one ``InvalidInputError`` that names the field.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from atlas.alma.genome.catalog import ROLES, STORE_DEFAULTS, STORE_PARAMS, Param, Part, part
from atlas.core.fields import not_a_field
from atlas.errors import InvalidInputError

GENOME_VERSION = 1
MAX_TEXT = 300


class PartUse(BaseModel):
    """One part in a genome and its parameters (missing parameters take the part's defaults)."""

    model_config = ConfigDict(extra="forbid")

    part: str
    params: dict[str, Any] = Field(default_factory=dict)


class Store(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    recent: int = Field(STORE_DEFAULTS["recent"], ge=0, le=1000)
    cap: int = Field(STORE_DEFAULTS["cap"], ge=1, le=10_000)
    decay: float = Field(STORE_DEFAULTS["decay"], gt=0.0, le=1.0)


class Genome(BaseModel):
    """A memory design as parts (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    name: str = Field("genome", max_length=80)
    encode: list[PartUse] = Field(default_factory=list, max_length=12)
    store: Store = Field(default_factory=Store)
    retrieve: list[PartUse] = Field(default_factory=list, max_length=16)
    render: PartUse = Field(default_factory=lambda: PartUse(part="lines"))

    @model_validator(mode="after")
    def _parts_known(self) -> Genome:
        for role in ROLES:
            uses = [self.render] if role == "render" else getattr(self, role)
            names: set[str] = set()
            for i, use in enumerate(uses):
                where = "render" if role == "render" else f"{role}[{i}]"
                spec = part(role, use.part)
                if spec is None:
                    raise ValueError(f"{where}.part: unknown {role} part {use.part!r}; known: {_names(role)}")
                if use.part in names:
                    raise ValueError(f"{where}.part: {use.part!r} appears twice")
                names.add(use.part)
                for key, value in use.params.items():
                    param = spec.param(key)
                    if param is None:
                        known = ", ".join(p.name for p in spec.params) or "none"
                        raise ValueError(
                            f"{where}.params.{key}: {use.part} has no such parameter (it has: {known})"
                        )
                    problem = _check_value(param, value)
                    if problem:
                        raise ValueError(f"{where}.params.{key}: {problem}")
        encoders = {u.part for u in self.encode}
        for i, use in enumerate(self.retrieve):
            spec = self.spec("retrieve", use)
            missing = [r for r in spec.reads(use.params) if r not in encoders]
            if missing:
                because = next((f" (with {n}={v!r})" for n, v, e in spec.requires_if if e == missing[0]), "")
                raise ValueError(
                    f"retrieve[{i}].part: {use.part}{because} reads the memory of encode part {missing[0]!r}, "
                    "which the genome does not have: add it to 'encode'"
                )
        return self

    # ---- derived ---------------------------------------------------------------------------------
    def spec(self, role: str, use: PartUse) -> Part:
        found = part(role, use.part)
        assert found is not None  # validated
        return found

    def params_of(self, role: str, use: PartUse) -> dict[str, Any]:
        """The part's parameters with defaults filled in; a retrieve part also gets the parameters of the
        encode parts it reads (its own win)."""
        spec = self.spec(role, use)
        merged: dict[str, Any] = {}
        if role == "retrieve":
            for enc in self.encode:
                if enc.part in spec.requires:
                    merged.update(self.params_of("encode", enc))
        merged.update(spec.defaults())
        merged.update(use.params)
        return merged

    def canonical(self) -> dict[str, Any]:
        """The genome with every default written out (name excluded): equal designs compare equal."""
        return {
            "encode": [{"part": u.part, "params": self.params_of("encode", u)} for u in self.encode],
            "store": self.store.model_dump(),
            "retrieve": [
                {"part": u.part, "params": {**self.spec("retrieve", u).defaults(), **u.params}}
                for u in self.retrieve
            ],
            "render": {"part": self.render.part, "params": self.params_of("render", self.render)},
        }

    @property
    def key(self) -> str:
        """A short hash of ``canonical()``: the genome's identity for de-duplication."""
        blob = json.dumps(self.canonical(), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    def uses_llm(self) -> bool:
        return any(self.spec("encode", u).uses_llm for u in self.encode)

    def describe(self) -> list[str]:
        """One line per part: role, name, parameters that differ from the defaults, what it does."""
        lines = []
        for role in ROLES:
            uses = [self.render] if role == "render" else getattr(self, role)
            for use in uses:
                spec = self.spec(role, use)
                shown = ", ".join(f"{k}={v!r}" for k, v in use.params.items() if spec.defaults().get(k) != v)
                lines.append(f"{role:<8} {use.part}({shown}): {spec.summary}")
        store = self.store.model_dump()
        changed = {k: v for k, v in store.items() if STORE_DEFAULTS[k] != v}
        lines.insert(
            len(self.encode), f"store    {changed or 'defaults'}: " + "; ".join(p.doc for p in STORE_PARAMS)
        )
        return lines

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"


def _names(role: str) -> str:
    from atlas.alma.genome.catalog import PARTS

    return ", ".join(p.name for p in PARTS if p.role == role)


def _check_value(param: Param, value: Any) -> str:
    kind = param.kind
    if kind == "bool":
        return "" if isinstance(value, bool) else f"must be true or false, not {value!r}"
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be an integer, not {value!r}"
        lo, hi = (min(param.choices), max(param.choices)) if param.choices else (0, 10_000)
        return "" if lo <= value <= hi else f"must be between {lo} and {hi}, not {value}"
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"must be a number, not {value!r}"
        return "" if 0.0 <= float(value) <= 1.0 else f"must be between 0 and 1, not {value}"
    if kind == "choice":
        return "" if value in param.choices else f"must be one of {list(param.choices)}, not {value!r}"
    if not isinstance(value, str):
        return f"must be a string, not {value!r}"
    return "" if len(value) <= MAX_TEXT else f"longer than {MAX_TEXT} characters"


def _problem(err: dict[str, Any]) -> str:
    field = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in err["loc"]).lstrip(".") or "genome"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if msg.startswith(("encode[", "retrieve[", "render")):
        return msg
    if err["type"] == "extra_forbidden":
        return f"{field}: {not_a_field(Genome, tuple(err['loc']))} (docs/genome.md)"
    got = "" if err["type"] == "missing" else f" (got {err['input']!r})"
    return f"{field}: {msg}{got}"


def parse_genome(data: Any, where: str = "genome") -> Genome:
    """A Genome from a dict or JSON text; any problem is one InvalidInputError naming the field."""
    if isinstance(data, str | bytes):
        try:
            data = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InvalidInputError(f"{where}: not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise InvalidInputError(f"{where}: a genome is a JSON object, not {type(data).__name__}")
    try:
        return Genome.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(_problem(e) for e in exc.errors())  # type: ignore[arg-type]
        raise InvalidInputError(f"{where}: {problems}") from exc


def load_genome(path: str | Path) -> Genome:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read genome file {p}: {exc}") from exc
    return parse_genome(text, where=str(p))


__all__ = ["GENOME_VERSION", "Genome", "PartUse", "Store", "load_genome", "parse_genome"]
