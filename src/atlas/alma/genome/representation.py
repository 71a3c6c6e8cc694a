"""Which search a run makes: genomes, code, or both (``resolve_representation``), the operators each
uses (``operators_for``), and the observation fields a genome may name once the environment lists its
actions (``genome_keys``)."""

from __future__ import annotations

from atlas.alma.genome.catalog import ObsKeys
from atlas.alma.genome.operators import env_observation_keys
from atlas.errors import ConfigError
from atlas.protocols.env import EnumeratesActions, Environment

GENOME_OPERATORS = ("mutate", "recombine", "random", "llm_edit")
CODE_OPERATORS = ("write", "edit", "crossover")


def resolve_representation(setting: str, meta_model: str | None) -> tuple[str, str]:
    """``(representation, reason)``. ``auto``: genome search with a local (or no) meta model, whose code
    was measured unusable (0/4 designs that steer the probe, ``benchmarks/bench_meta_model.py``); genomes
    and code with a hosted one; code with a scripted model (it replays code replies)."""
    if setting != "auto":
        return setting, f"--representation {setting}"
    name = meta_model or ""
    if name.startswith("scripted"):
        return "code", f"meta model {name} replays scripted code replies"
    if not name or name.startswith("local:"):
        return "genome", f"meta model {name or '(none)'} is local: genome search over the parts space"
    return "both", f"meta model {name} is hosted: genome search and code-writing operators"


def genome_keys(env: Environment, seed: int) -> ObsKeys:
    """The observation fields genome parameters may name (``env_observation_keys``), once ``env`` is
    known to list its actions: the screening's probe plays only listed actions (``ConfigError`` else)."""
    if not isinstance(env, EnumeratesActions):
        raise ConfigError(
            f"the genome search cannot run on {env.name!r}: it screens each candidate memory with a probe "
            f"that plays the environment's listed actions, and {type(env).__name__} has no "
            "candidate_actions(observation). Add that method (the valid actions for an observation; see "
            "'Add an environment' in docs/environments.md), or search with --representation code and a meta "
            "model that writes code"
        )
    return env_observation_keys(env, seed)


def operators_for(representation: str, has_meta_llm: bool) -> list[str]:
    ops: list[str] = []
    if representation in ("genome", "both"):
        ops += ["mutate", "recombine", "random"] + (["llm_edit"] if has_meta_llm else [])
    if representation in ("code", "both"):
        ops += list(CODE_OPERATORS)
    return ops


__all__ = ["CODE_OPERATORS", "GENOME_OPERATORS", "genome_keys", "operators_for", "resolve_representation"]
