"""Environment registry: ``get_env(name, **params)``; built-ins register through the same door
plug-ins use (``register_env``). Factories import their modules lazily so optional extras
(alfworld, textworld) are only needed when asked for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atlas.errors import ConfigError
from atlas.protocols.env import Environment

EnvFactory = Callable[..., Environment]
_REGISTRY: dict[str, EnvFactory] = {}


def register_env(name: str, factory: EnvFactory) -> None:
    """Register (or replace) an environment factory under ``name``."""
    if not name or not name.strip():
        raise ConfigError("environment name must not be empty")
    _REGISTRY[name] = factory


def list_envs() -> list[str]:
    return sorted(_REGISTRY)


def get_env(name: str, **params: Any) -> Environment:
    """A fresh environment. ``params`` go to the factory (e.g. ``rooms=6`` for GraphWorld,
    ``data_dir=...`` for ALFWorld); unknown names raise ConfigError listing the known ones."""
    key = name.strip().lower().replace("-", "_")
    key = {"graph_world": "graphworld", "alf_world": "alfworld", "text_world": "textworld"}.get(key, key)
    if key not in _REGISTRY:
        raise ConfigError(f"unknown environment {name!r}; known: {', '.join(list_envs())}")
    return _REGISTRY[key](**params)


def _graphworld(**params: Any) -> Environment:
    from atlas.envs.graphworld import GraphWorldEnv

    return GraphWorldEnv(**params)


def _alfworld(**params: Any) -> Environment:
    from atlas.envs.alfworld import AlfWorldEnv

    return AlfWorldEnv(**params)


def _textworld(**params: Any) -> Environment:
    from atlas.envs.textworld import TextWorldEnv

    return TextWorldEnv(**params)


register_env("graphworld", _graphworld)
register_env("alfworld", _alfworld)
register_env("textworld", _textworld)

__all__ = ["EnvFactory", "get_env", "list_envs", "register_env"]
