"""Baseline memory designs, through one registry (built-ins use the same door as plug-ins).

Sandboxed designs are plain design sources shipped as files beside this module:

- ``no_memory`` — stores nothing; the score floor.
- ``trajectory_retrieval`` — advice from the most similar past episodes.
- ``spatial_graph`` — a map (graph) of rooms and object sightings; routes (GraphWorld).
- ``reasoning_bank`` — ReasoningBank-style insights from successes and failures (``analyze``).
- ``cheatsheet`` — Dynamic-Cheatsheet-style curated cheatsheet revised with ``summarize``.

Host-side designs (``origin == "host"``) are trusted adapters over the memory library that present
the same update/recall interface (see ``host.py``):

- ``memory_system`` — ``atlas.memory`` MemorySystemImpl (experiences, concepts, strategies).
- ``guideline_bank`` — ``atlas.memory.guidelines.GuidelineBank`` (strategy/recovery/optimization tips).

    design = get_baseline("spatial_graph")       # -> Design
    list_baselines()                             # -> names
    list_baselines(env="alfworld")               # -> the names that apply to ALFWorld
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from atlas.alma.design import Design
from atlas.errors import ConfigError
from atlas.protocols.embed import Embedder
from atlas.protocols.llm import LLM

_DIR = Path(__file__).parent

#: name -> one-line description, for sandboxed designs shipped as source files here.
SOURCE_BASELINES: dict[str, str] = {
    "no_memory": "stores nothing, advises nothing: the floor",
    "trajectory_retrieval": "advice from the most similar past episodes (vector store)",
    "spatial_graph": "map of rooms and object sightings, routes via graph_path (GraphWorld)",
    "reasoning_bank": "ReasoningBank-style success/failure insights via analyze",
    "cheatsheet": "Dynamic-Cheatsheet-style curated cheatsheet revised via summarize",
}

#: baselines written for some environments only (name -> those environments); the rest apply to all.
BASELINE_ENVS: dict[str, frozenset[str]] = {
    "spatial_graph": frozenset({"graphworld"}),
}

HostFactory = Callable[..., Any]
_HOST: dict[str, tuple[str, HostFactory]] = {}


def register_host_design(name: str, description: str, factory: HostFactory) -> None:
    """Register a trusted host-side design: ``factory(embedder=..., llm=...)`` returns an object with
    ``update(episode, log)``, ``recall(task, log) -> str``, ``freeze()``, ``snapshot()``,
    ``restore(data)``, ``close()`` (see ``atlas.alma.evaluate.runner.HostDesign``)."""
    _HOST[name] = (description, factory)


def _ensure_host_registered() -> None:
    from atlas.alma.baselines import host  # noqa: F401  (registers the built-in adapters on first import)


def list_baselines(env: str | None = None) -> list[str]:
    """Every baseline name: sandboxed source designs first, then host-side adapters. With ``env``,
    only the baselines that apply to that environment (see ``BASELINE_ENVS``)."""
    _ensure_host_registered()
    names = [*SOURCE_BASELINES, *sorted(_HOST)]
    if env is None:
        return names
    return [n for n in names if n not in BASELINE_ENVS or env in BASELINE_ENVS[n]]


def describe_baseline(name: str) -> str:
    _ensure_host_registered()
    if name in SOURCE_BASELINES:
        return SOURCE_BASELINES[name]
    if name in _HOST:
        return _HOST[name][0]
    raise ConfigError(f"unknown baseline {name!r}; known: {', '.join(list_baselines())}")


def baseline_source(name: str) -> str:
    if name not in SOURCE_BASELINES:
        raise ConfigError(f"{name!r} is not a source baseline; known: {', '.join(SOURCE_BASELINES)}")
    return (_DIR / f"{name}.py").read_text(encoding="utf-8")


def get_baseline(name: str) -> Design:
    """The baseline ``name`` as a Design (id ``baseline-<name>``)."""
    _ensure_host_registered()
    if name in SOURCE_BASELINES:
        return Design(
            id=f"baseline-{name}",
            name=name,
            source=baseline_source(name),
            origin="baseline",
            metadata={"description": SOURCE_BASELINES[name]},
        )
    if name in _HOST:
        description = _HOST[name][0]
        source = (
            f'"""Host-side design {name!r}: {description}.\n\nTrusted adapter in '
            f'atlas.alma.baselines.host; it runs in the host process, not in the sandbox."""\n'
        )
        return Design(
            id=f"host-{name}",
            name=name,
            source=source,
            origin="host",
            metadata={"adapter": name, "description": description},
        )
    raise ConfigError(f"unknown baseline {name!r}; known: {', '.join(list_baselines())}")


def make_host_design(design: Design, *, embedder: Embedder, llm: LLM | None) -> Any:
    """Instantiate the host adapter named by ``design.metadata['adapter']``."""
    _ensure_host_registered()
    name = design.metadata.get("adapter", design.name)
    if name not in _HOST:
        raise ConfigError(f"unknown host design adapter {name!r}; known: {', '.join(sorted(_HOST))}")
    return _HOST[name][1](embedder=embedder, llm=llm)


__all__ = [
    "BASELINE_ENVS",
    "SOURCE_BASELINES",
    "baseline_source",
    "describe_baseline",
    "get_baseline",
    "list_baselines",
    "make_host_design",
    "register_host_design",
]
