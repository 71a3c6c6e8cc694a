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
    """Import the plug-ins not imported yet; returns the names imported by this call. Every plug-in
    is tried: one that cannot be imported or raises while importing (a bug in someone else's code)
    does not stop the others, and after trying them all a ``ConfigError`` names each failure (it is
    tried again on the next call). The ``atlas`` command turns that into a warning line, so a broken
    plug-in never takes down ``atlas --help`` or a command that does not need it."""
    done: list[str] = []
    failures: list[str] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        key = f"entry-point:{ep.value}"
        if key in _loaded:
            continue
        try:
            ep.load()
        except Exception as exc:  # third-party code: converted at the boundary
            failures.append(f"the entry point {ep.name} = {ep.value!r} ({type(exc).__name__}: {exc})")
            continue
        _loaded.add(key)
        done.append(ep.value)
    for name in plugin_modules(env):
        if name in _loaded:
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:
            failures.append(
                f"{ENV_VAR} names {name!r}, which cannot be imported ({type(exc).__name__}: {exc})"
            )
            continue
        _loaded.add(name)
        done.append(name)
    if failures:
        raise ConfigError(
            "plug-ins that could not be loaded: "
            + "; ".join(failures)
            + f". Fix or uninstall them, or remove them from ${ENV_VAR}"
        )
    return done


__all__ = ["ENTRY_POINT_GROUP", "ENV_VAR", "load_plugins", "plugin_modules"]
