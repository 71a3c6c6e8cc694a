"""Every extension point of ATLAS in one place.

A plug-in is a module that, imported, calls the registration functions it needs; name it in
``$ATLAS_PLUGINS`` (comma-separated) or declare it as an entry point of the group ``atlas.plugins``
(``[project.entry-points."atlas.plugins"] my_env = "my_package.atlas_plugin"``), and every command
and subprocess loads it (``load_plugins``)::

    from atlas.plugins import register_env, register_provider

    register_env("my_env", MyEnv)
    register_provider("gateway", lambda rest: MyLLM(rest))   # --model gateway:REST

The four registries are re-exported here from the modules that own them (the same objects: the old
import paths keep working). ``EXTENSION_POINTS`` lists them and the protocol seams a collaborator is
typed by; names load lazily, so importing this module stays cheap.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ExtensionPoint:
    """One way in: a registry (a function a plug-in calls) or a protocol (a seam an object keeps)."""

    name: str
    kind: str  # "registry" | "loading" | "protocol"
    target: str  # dotted path of the function or class: ``module:attr``
    adds: str


EXTENSION_POINTS: tuple[ExtensionPoint, ...] = (
    ExtensionPoint(
        "register_env",
        "registry",
        "atlas.envs.registry:register_env",
        "an environment: --env NAME everywhere, its own CLI options (EnvParam), explorer, seed design, "
        "oracle advice",
    ),
    ExtensionPoint(
        "register_provider",
        "registry",
        "atlas.infra.llm.providers:register_provider",
        "a model provider: --model PREFIX:REST calls factory(REST), which returns an LLM",
    ),
    ExtensionPoint(
        "register_host_design",
        "registry",
        "atlas.alma.baselines:register_host_design",
        "a trusted host-side design (baseline): factory(embedder=..., llm=...)",
    ),
    ExtensionPoint(
        "register_primitive_loader",
        "registry",
        "atlas.memory.primitives:register_primitive_loader",
        "domain primitives for the concept library (get_primitive_loader(domain))",
    ),
    ExtensionPoint(
        "load_plugins",
        "loading",
        "atlas.infra.plugins:load_plugins",
        "imports the entry points of the group atlas.plugins and the modules named in $ATLAS_PLUGINS",
    ),
    ExtensionPoint("Environment", "protocol", "atlas.protocols.env:Environment", "what an environment keeps"),
    ExtensionPoint("LLM", "protocol", "atlas.protocols.llm:LLM", "what a model client keeps (complete)"),
    ExtensionPoint("Embedder", "protocol", "atlas.protocols.embed:Embedder", "an embedding model"),
    ExtensionPoint("VectorStore", "protocol", "atlas.protocols.store:VectorStore", "a vector store"),
    ExtensionPoint(
        "memory components",
        "protocol",
        "atlas.protocols.memory:ExperienceMemory",
        "the memory library's components (atlas.protocols.memory), composed by MemorySystemImpl",
    ),
    ExtensionPoint(
        "Executor",
        "protocol",
        "atlas.alma.evaluate.executor:Executor",
        "where a search's episodes run (local threads, a Ray cluster)",
    ),
)

_REEXPORTED = {p.name: p.target for p in EXTENSION_POINTS if p.kind in ("registry", "loading")} | {
    "ENTRY_POINT_GROUP": "atlas.infra.plugins:ENTRY_POINT_GROUP",
    "ENV_VAR": "atlas.infra.plugins:ENV_VAR",
}


def resolve(target: str) -> Any:
    """The object a ``module:attr`` target names."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def __getattr__(name: str) -> Any:
    target = _REEXPORTED.get(name)
    if target is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = resolve(target)
    globals()[name] = value
    return value


__all__ = ["EXTENSION_POINTS", "ExtensionPoint", "resolve", *sorted(_REEXPORTED)]
