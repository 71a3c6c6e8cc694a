"""Plug-in loading: the one door through which code outside ATLAS adds model providers and
environments.

A plug-in is a module that, when imported, calls the registration functions it needs:
``atlas.infra.llm.providers.register_provider`` (a ``--model PREFIX:...`` provider) and
``atlas.envs.registry.register_env`` (an environment). ``load_plugins()`` imports

- every entry point of the group ``atlas.plugins`` declared by an installed package
  (``[project.entry-points."atlas.plugins"] my_env = "my_package.atlas_plugin"``), and
- each module named in ``$ATLAS_PLUGINS`` (comma-separated; handy for subprocesses and tests),

once per name. The registries call it when a name they do not know is asked for, so a plug-in is
available to every command without further wiring.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from importlib.metadata import entry_points

from atlas.errors import ConfigError

ENTRY_POINT_GROUP = "atlas.plugins"
ENV_VAR = "ATLAS_PLUGINS"

_loaded: set[str] = set()


def plugin_modules(env: Mapping[str, str] | None = None) -> list[str]:
    """The module names ``$ATLAS_PLUGINS`` lists (in order, blanks dropped)."""
    env = os.environ if env is None else env
    return [name.strip() for name in env.get(ENV_VAR, "").split(",") if name.strip()]


def load_plugins(env: Mapping[str, str] | None = None) -> list[str]:
    """Import the plug-ins not imported yet; returns the names imported by this call. A module
    named in ``$ATLAS_PLUGINS`` that cannot be imported is a ConfigError (it was asked for)."""
    done: list[str] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        key = f"entry-point:{ep.value}"
        if key not in _loaded:
            _loaded.add(key)
            ep.load()
            done.append(ep.value)
    for name in plugin_modules(env):
        if name in _loaded:
            continue
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ConfigError(
                f"{ENV_VAR} names the plug-in module {name!r}, which cannot be imported: {exc}"
            ) from exc
        _loaded.add(name)
        done.append(name)
    return done


__all__ = ["ENTRY_POINT_GROUP", "ENV_VAR", "load_plugins", "plugin_modules"]
