"""Environment registry: one ``register_env(...)`` carries everything an environment brings.

An environment is a factory plus, optionally: an explorer (the non-LLM heuristic the smoke run and
``ExplorerPolicy`` play), its own parameters (which become ``atlas run`` options and
``AlmaConfig.env_params`` entries), a seed design, a context schema for the meta-agent and an
oracle-advice hook for the headroom measurement. Built-ins register through this same door; their
factories and explorers import lazily so optional extras (alfworld, textworld) are only needed when
asked for. A plug-in module calls ``register_env`` on import (see ``atlas.infra.plugins``).

Hooks missing from the registration fall back to the environment's method of the same name
(``env.seed_design()``, ``env.context_schema()``, ``env.oracle_advice(task, level)``), then to a
default: no seed design, a schema listing the tools, no headroom measurement. An environment
without an explorer is played by a random policy over ``env.candidate_actions(observation)``.
"""

from __future__ import annotations

import importlib
import inspect
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from atlas.core.types import Task
from atlas.errors import ConfigError
from atlas.protocols.env import Action, Environment

EnvFactory = Callable[..., Environment]

#: The environment a search, an evaluation or a smoke run uses when none is named.
DEFAULT_ENV = "graphworld"


class Planner(Protocol):
    """Chooses the next action from the latest observation; None means "nothing sensible left"."""

    def next_action(self, observation: dict[str, Any]) -> Action | None: ...


# ``explorer(env, task, rng)`` returns a fresh Planner for one episode.
PlannerFactory = Callable[[Environment, Task, random.Random], Planner]


@dataclass(frozen=True)
class EnvParam:
    """One parameter an environment takes from the command line and the run's settings.

    ``name`` is the factory's keyword (stored in ``AlmaConfig.env_params``); ``flag`` the CLI option
    (default ``--`` + name with dashes); ``setting`` the keyword ``atlas.alma.run(...)`` and older
    ``config.json`` files use for it (default ``name``). ``default=None`` means "the factory's
    default" (nothing is passed). ``before``: the value runs had before the parameter existed (or
    before its default changed); ``config.json`` files of a format older than ``since``
    (``atlas.alma.state.config.CONFIG_FORMAT``) that do not set it are read with it, so they resume on
    the tasks they played."""

    name: str
    type: type = int
    default: Any = None
    help: str = ""
    flag: str | None = None
    setting: str | None = None
    min: float | None = None
    max: float | None = None  # every parameter that sizes the world is bounded: checked before any work
    before: Any = None
    since: int = 1

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def key(self) -> str:
        return self.setting or self.name

    def check(self, value: Any) -> Any:
        """``value`` converted to the parameter's type; ValueError naming the parameter otherwise."""
        if value is None:
            return None
        if self.type in (int, float) and isinstance(value, bool):
            raise ValueError(f"{self.name} must be a number, got {value!r}")
        try:
            out = self.type(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{self.name} must be {self.type.__name__}, got {value!r}") from exc
        if self.type is int and isinstance(value, float) and value != out:
            raise ValueError(f"{self.name} must be a whole number, got {value!r}")
        if self.min is not None and out < self.min:
            raise ValueError(f"{self.name} must be at least {self.min:g}, got {value!r}")
        if self.max is not None and out > self.max:
            raise ValueError(f"{self.name} must be at most {self.max:g}, got {value!r}")
        return out


def _tools_schema(env: Environment) -> dict[str, Any]:
    """The default context schema: what the tools are; the meta-agent sees at least the action space."""
    return {
        "summary": f"the {env.name} environment",
        "tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters} for t in env.tools()
        ],
    }


@dataclass(frozen=True)
class EnvSpec:
    """Everything registered for one environment (see ``register_env``)."""

    name: str
    factory: EnvFactory
    explorer: PlannerFactory | None = None
    params: tuple[EnvParam, ...] = ()
    seed_design_hook: Callable[[Environment], str | None] | None = None
    context_schema_hook: Callable[[Environment], dict[str, Any]] | None = None
    oracle_advice_hook: Callable[[Environment, Task, str], str] | None = None
    aliases: tuple[str, ...] = field(default=())

    def kwargs(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` checked against the declared parameters, declared defaults filled in."""
        out = dict(params)
        for p in self.params:
            if p.name in out:
                out[p.name] = p.check(out[p.name])
            elif p.default is not None:
                out[p.name] = p.default
        return out

    def takes(self, keyword: str) -> bool:
        """Whether the factory accepts ``keyword`` (a factory taking ``**kwargs`` accepts any)."""
        try:
            params = inspect.signature(self.factory).parameters
        except (TypeError, ValueError):  # a builtin or C callable: nothing to read, assume it does
            return True
        return keyword in params or any(p.kind is p.VAR_KEYWORD for p in params.values())

    def seed_design(self, env: Environment) -> str | None:
        if self.seed_design_hook is not None:
            return self.seed_design_hook(env)
        method = getattr(env, "seed_design", None)
        return method() if callable(method) else None

    def context_schema(self, env: Environment) -> dict[str, Any]:
        if self.context_schema_hook is not None:
            return self.context_schema_hook(env)
        method = getattr(env, "context_schema", None)
        return method() if callable(method) else _tools_schema(env)

    def oracle_advice(self, env: Environment, task: Task, level: str) -> str:
        """Headroom advice for ``task`` (never shown to a design); ConfigError if the environment has none."""
        if self.oracle_advice_hook is not None:
            return str(self.oracle_advice_hook(env, task, level))
        method = getattr(env, "oracle_advice", None)
        if not callable(method):
            raise ConfigError(
                f"environment {env.name!r} has no oracle_advice: headroom cannot be measured for it "
                "(register it with register_env(..., oracle_advice=...))"
            )
        return str(method(task, level))


_REGISTRY: dict[str, EnvSpec] = {}
_ALIASES: dict[str, str] = {}


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def register_env(
    name: str,
    factory: EnvFactory,
    *,
    explorer: PlannerFactory | None = None,
    params: Sequence[EnvParam] = (),
    seed_design: Callable[[Environment], str | None] | None = None,
    context_schema: Callable[[Environment], dict[str, Any]] | None = None,
    oracle_advice: Callable[[Environment, Task, str], str] | None = None,
    aliases: Sequence[str] = (),
) -> EnvSpec:
    """Register (or replace) the environment ``name``: ``factory(**params)`` builds one; the rest is
    optional (see the module docstring). Returns the registered spec."""
    if not name or not name.strip():
        raise ConfigError("environment name must not be empty")
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise ConfigError(f"environment {name!r} declares a parameter twice: {names}")
    spec = EnvSpec(
        name=name,
        factory=factory,
        explorer=explorer,
        params=tuple(params),
        seed_design_hook=seed_design,
        context_schema_hook=context_schema,
        oracle_advice_hook=oracle_advice,
        aliases=tuple(aliases),
    )
    _REGISTRY[name] = spec
    for alias in spec.aliases:
        _ALIASES[_key(alias)] = name
    return spec


def unregister_env(name: str) -> None:
    """Remove ``name`` (and its aliases); tests use this to leave the process-wide registry as it was."""
    spec = _REGISTRY.pop(name, None)
    for alias in spec.aliases if spec else ():
        _ALIASES.pop(_key(alias), None)


def list_envs() -> list[str]:
    return sorted(_REGISTRY)


def env_specs() -> list[EnvSpec]:
    """Every registered environment, in registration order (built-ins first)."""
    return list(_REGISTRY.values())


def env_spec(name: str) -> EnvSpec:
    """The registration of ``name`` (aliases and case accepted); ConfigError listing the known ones."""
    key = _key(name)
    key = _ALIASES.get(key, key)
    if key not in _REGISTRY:
        from atlas.infra.plugins import ENTRY_POINT_GROUP, ENV_VAR, failure_note, load_plugins_or_warn

        load_plugins_or_warn()  # a plug-in may register it (a broken one is warned about)
        key = _ALIASES.get(_key(name), key)
        if key not in _REGISTRY:
            raise ConfigError(
                f"unknown environment {name!r}; known: {', '.join(list_envs())}{failure_note()}. An "
                f"environment written elsewhere registers itself when its module is imported: name the "
                f"module in ${ENV_VAR} ({ENV_VAR}=my_env, with its folder on PYTHONPATH) or declare it as "
                f"an '{ENTRY_POINT_GROUP}' entry point of an installed package"
            )
    return _REGISTRY[key]


def spec_of(env: Environment) -> EnvSpec:
    """The registration of an environment instance (by its ``name``); an unregistered instance gets an
    ad-hoc spec whose hooks read the instance's own methods."""
    try:
        return env_spec(env.name)
    except ConfigError:
        return EnvSpec(name=env.name, factory=lambda **_: env)


def get_env(name: str, **params: Any) -> Environment:
    """A fresh environment. ``params`` go to the factory (e.g. ``rooms=6`` for GraphWorld,
    ``data_dir=...`` for ALFWorld); unknown names raise ConfigError listing the known ones."""
    return env_spec(name).factory(**params)


def lazy(target: str) -> Callable[..., Any]:
    """``"package.module:attr"`` as a callable that imports the module on first call (built-ins use
    it so an optional extra is imported only when its environment is used)."""
    module, _, attr = target.partition(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), attr)(*args, **kwargs)

    call.__qualname__ = call.__name__ = f"lazy[{target}]"
    return call


register_env(
    "graphworld",
    lazy("atlas.envs.graphworld:GraphWorldEnv"),
    explorer=lazy("atlas.envs.graphworld.explorer:make_planner"),
    params=[EnvParam("rooms", int, 8, "Rooms per GraphWorld (2-200).", min=2, max=200)],
    aliases=["graph_world"],
)
register_env(
    "alfworld",
    lazy("atlas.envs.alfworld:AlfWorldEnv"),
    explorer=lazy("atlas.envs.alfworld.explorer:make_planner"),
    params=[
        EnvParam(
            "data_dir",
            str,
            None,
            "ALFWorld data directory (default: generated ALFWorld-style games).",
            flag="--alfworld-data",
            setting="alfworld_data",
        )
    ],
    aliases=["alf_world"],
)
register_env(
    "textworld",
    lazy("atlas.envs.textworld:TextWorldEnv"),
    explorer=lazy("atlas.envs.textworld.explorer:make_planner"),
    params=[
        EnvParam(
            "challenge",
            str,
            None,
            "TextWorld challenge: fetch (a house whose rooms and habits a memory can learn) | "
            "treasure_hunter (default) | coin_collector | cooking.",
            flag="--tw-challenge",
        ),
        EnvParam(
            "level",
            int,
            None,
            "TextWorld level (fetch: rooms, 3-16, default 12).",
            flag="--tw-level",
            min=1,
            max=300,
        ),
        EnvParam(
            "things",
            int,
            None,
            "fetch: how many things a household owns, 1-10 (default 4; a saved config without it means 10).",
            flag="--tw-things",
            min=1,
            max=10,
            before=10,
        ),
        EnvParam(
            "habit",
            float,
            None,
            "fetch: how often a thing lies in its usual room, 0-1 (default 1: every thing has its place; "
            "a saved config without it means 0.75).",
            flag="--tw-habit",
            min=0,
            max=1,
            before=0.75,
            since=2,
        ),
    ],
    aliases=["text_world"],
)
register_env(
    "scienceworld",
    lazy("atlas.envs.scienceworld:ScienceWorldEnv"),
    explorer=lazy("atlas.envs.scienceworld.explorer:make_planner"),
    params=[
        EnvParam(
            "task_type",
            str,
            None,
            "ScienceWorld task type(s), one name or a comma list (default find-living-thing; "
            "e.g. use-thermometer, lifespan-longest-lived, find-plant). Each type is a family.",
            flag="--task-type",
        ),
    ],
    aliases=["science_world", "sciworld"],
)

__all__ = [
    "DEFAULT_ENV",
    "EnvFactory",
    "EnvParam",
    "EnvSpec",
    "Planner",
    "PlannerFactory",
    "env_spec",
    "env_specs",
    "get_env",
    "lazy",
    "list_envs",
    "register_env",
    "spec_of",
    "unregister_env",
]
