"""What a memory part is to the host: its role, its parameters (kinds, defaults, allowed values), the
encode parts it reads; and the store settings and observation fields a genome is drawn with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["encode", "retrieve", "render"]
ParamKind = Literal["choice", "int", "float", "bool", "state_key", "list_key", "text"]
ROLES: tuple[Role, ...] = ("encode", "retrieve", "render")


@dataclass(frozen=True)
class Param:
    """One parameter: its kind, default and allowed values (``choices`` for choice/int/float)."""

    name: str
    kind: ParamKind
    default: Any
    choices: tuple[Any, ...] = ()
    doc: str = ""

    def allowed(self, obs_keys: dict[str, list[str]] | None = None) -> list[Any] | None:
        """The values this parameter may take (None: any of its type)."""
        if self.kind == "bool":
            return [False, True]
        if self.kind in ("state_key", "list_key"):
            keys = (obs_keys or {}).get("scalar" if self.kind == "state_key" else "list")
            return ["", *keys] if keys is not None else None
        return list(self.choices) or None


@dataclass(frozen=True)
class Part:
    """A memory part: ``role`` and ``name`` name its function ``<role>_<name>`` in ``parts/<role>.py``."""

    name: str
    role: Role
    summary: str
    params: tuple[Param, ...] = ()
    # encode parts whose memory this part reads (their parameters reach this part too, e.g. state_key)
    requires: tuple[str, ...] = ()
    # (parameter, value, encode part): a memory read only when the parameter has that value
    requires_if: tuple[tuple[str, Any, str], ...] = ()
    uses_llm: bool = False  # calls summarize/analyze (costs model calls during collection)
    generic: bool = True  # False: a port of one hand-built design, kept for the baselines, not sampled

    @property
    def function(self) -> str:
        return f"{self.role}_{self.name}"

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def reads(self, params: dict[str, Any]) -> tuple[str, ...]:
        """The encode parts this part reads with ``params`` (defaults fill what is unset)."""
        values = {**self.defaults(), **params}
        extra = tuple(enc for name, value, enc in self.requires_if if values.get(name) == value)
        return self.requires + tuple(e for e in extra if e not in self.requires)


STATE = Param("state_key", "state_key", "", doc="observation field naming where the agent is")
SUCCESSES_ONLY = Param(
    "successes_only",
    "bool",
    True,
    doc="learn from successful episodes only (else also what failures' actions left)",
)


@dataclass
class StoreParam:
    name: str
    choices: tuple[Any, ...]
    doc: str


STORE_PARAMS: tuple[StoreParam, ...] = (
    StoreParam("recent", (0, 10, 30), "keep the last N sequences (0: all)"),
    StoreParam("cap", (50, 200, 1000), "at most this many keys per counter"),
    StoreParam("decay", (1.0, 0.9, 0.7), "counts are multiplied by this before each episode adds its own"),
)
STORE_DEFAULTS: dict[str, Any] = {"recent": 0, "cap": 200, "decay": 1.0}


@dataclass
class ObsKeys:
    """The observation fields of an environment, by shape, read from real observations."""

    scalar: list[str] = field(default_factory=list)
    lists: list[str] = field(default_factory=list)
    # How much each field looks like a state (scalar: values recur across observations) or a list of
    # states nearby (list: its items are values of scalar fields); draws favour the likelier ones.
    weights: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, list[str]]:
        return {"scalar": list(self.scalar), "list": list(self.lists)}
