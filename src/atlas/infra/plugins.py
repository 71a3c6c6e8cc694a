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

A plug-in that cannot be imported is never skipped in silence, wherever it sits in the list:
``load_plugins`` raises a ``ConfigError`` naming each failure, and ``load_plugins_or_warn`` (what
the registries call) logs one warning line per failure per process and lets the working plug-ins
serve; a name that stays unknown is then an error that names the plug-ins that failed
(``failure_note``).
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points

from atlas.errors import ConfigError

ENTRY_POINT_GROUP = "atlas.plugins"
ENV_VAR = "ATLAS_PLUGINS"

_loaded: set[str] = set()
_failed: dict[str, str] = {}  # plug-in -> why it could not be loaded (tried again on the next call)
_warned: set[str] = set()
log = logging.getLogger(__name__)


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
            _failed[key] = f"the entry point {ep.name} = {ep.value!r} ({type(exc).__name__}: {exc})"
            failures.append(_failed[key])
            continue
        _loaded.add(key)
        _failed.pop(key, None)
        done.append(ep.value)
    for name in plugin_modules(env):
        if name in _loaded:
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:
            _failed[name] = (
                f"{ENV_VAR} names {name!r}, which cannot be imported ({type(exc).__name__}: {exc})"
            )
            failures.append(_failed[name])
            continue
        _loaded.add(name)
        _failed.pop(name, None)
        done.append(name)
    if failures:
        raise ConfigError(
            "plug-ins that could not be loaded: "
            + "; ".join(failures)
            + f". Fix or uninstall them, or remove them from ${ENV_VAR}"
        )
    return done


def load_plugins_or_warn(
    env: Mapping[str, str] | None = None, warn: Callable[[str], None] | None = None
) -> list[str]:
    """``load_plugins`` for a caller that can go on with the plug-ins that work (a registry asked
    for a name, the CLI at start-up): each failure is said once per process, one line naming the
    plug-in, through ``warn`` (default: a logged warning)."""
    try:
        return load_plugins(env)
    except ConfigError:
        for name, why in sorted(_failed.items()):
            if name not in _warned:
                _warned.add(name)
                line = f"plug-in not loaded: {why}; fix it, or remove it from ${ENV_VAR}"
                (warn or log.warning)(line)
        return []


def failure_note() -> str:
    """`` (plug-ins that could not be loaded: ...)`` when some failed, else empty: appended to an
    unknown-name error, since the name may be the one a broken plug-in would have registered."""
    if not _failed:
        return ""
    return (
        " (plug-ins that could not be loaded, one may have registered it: "
        + "; ".join(why for _, why in sorted(_failed.items()))
        + ")"
    )


__all__ = [
    "ENTRY_POINT_GROUP",
    "ENV_VAR",
    "failure_note",
    "load_plugins",
    "load_plugins_or_warn",
    "plugin_modules",
]
