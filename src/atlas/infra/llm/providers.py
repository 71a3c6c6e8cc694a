"""Model providers registered by plug-ins: ``make_llm("PREFIX:REST")`` asks the factory registered
for ``PREFIX`` when there is one.

This is the documented hook for bringing an LLM of your own (an in-house gateway, a test double)
to every ``--model`` option, in-process and in subprocesses::

    from atlas.infra.llm.providers import register_provider

    register_provider("echo", lambda rest: ScriptedLLM(lambda messages, **kw: rest))
    make_llm("echo:hello")          # -> that ScriptedLLM

A factory receives the text after ``PREFIX:`` and returns an object implementing the ``LLM``
protocol (``atlas.protocols.llm``). Put the ``register_provider`` calls in a plug-in module (see
``atlas.infra.plugins``) so the CLI and the MCP server find them too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from atlas.errors import ConfigError
from atlas.infra.plugins import failure_note, load_plugins_or_warn

ProviderFactory = Callable[[str], Any]

#: Prefixes the built-in resolution owns (``local:``) and litellm's provider/model syntax.
RESERVED = frozenset({"local"})

_PREFIX = re.compile(r"^[a-z][a-z0-9_-]*$")
_PROVIDERS: dict[str, ProviderFactory] = {}


def register_provider(prefix: str, factory: ProviderFactory) -> None:
    """Route ``make_llm("<prefix>:...")`` to ``factory`` (a later registration replaces an earlier one)."""
    if not _PREFIX.match(prefix) or prefix in RESERVED:
        raise ConfigError(
            f"provider prefix {prefix!r}: lower-case letters, digits, _ or -, and not {sorted(RESERVED)}"
        )
    _PROVIDERS[prefix] = factory


def provider_for(model: str | None) -> tuple[ProviderFactory, str] | None:
    """``(factory, rest)`` when ``model`` is ``PREFIX:REST`` for a registered (or plug-in) prefix."""
    if not model:
        return None
    prefix, sep, rest = model.partition(":")
    if not sep or not _PREFIX.match(prefix) or prefix in RESERVED:
        return None
    if prefix not in _PROVIDERS:
        load_plugins_or_warn()  # a broken plug-in is warned about; the working ones serve
        if prefix not in _PROVIDERS and failure_note():
            raise ConfigError(f"no model provider {prefix!r} is registered{failure_note()}")
    factory = _PROVIDERS.get(prefix)
    return (factory, rest) if factory is not None else None


def registered_providers() -> list[str]:
    return sorted(_PROVIDERS)


__all__ = ["ProviderFactory", "provider_for", "register_provider", "registered_providers"]
