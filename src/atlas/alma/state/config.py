"""The settings of one ALMA search (what `atlas run` flags map to), validated at construction.

``config.json`` in the run folder is this model dumped; ``--resume`` loads it back, so a resumed
run uses exactly the settings it started with.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from atlas.agent.advice_match import ADVICE_WEIGHT, ADVICE_WEIGHT_BEFORE
from atlas.core import jsonsafe
from atlas.core.fields import not_a_field
from atlas.envs.registry import DEFAULT_ENV
from atlas.errors import ConfigError, InvalidInputError
from atlas.infra.safe_read import read_limited

if TYPE_CHECKING:
    from atlas.core.types import Task

# Deployment task seeds are offset by multiples of this from the run seed, far from the collection
# seeds (collection uses seed, seed+1, ...); the harness also asserts that the two sets never meet.
DEPLOY_SEED_STRIDE = 10_007
TEST_SEED_START = 1_001  # held-out test seeds start past the largest deploy_seeds (1,000)

# Part of the no-memory baseline cache key: bump it whenever how an episode is played or scored
# changes (task agent, prompts, environment rules), so no run compares against a stale baseline.
# 14: the loop guard compares an action that emptied the agent's own record with the record kept (a
# night after a feed is no repeat of a night after watering);
# 13: an action that did not work is held futile only while the record of what was done is unchanged;
# 12: a "Not tried yet" list is read as tries however long its steps, and "…, each then <action>:" takes
# that action after each try;
# 11: the loop guard's state leaves aside a list of the agent's own commands (a record of what was done)
# and empty lists;
# 10: the loop guard lets a repeat never taken from this state walk on and, where every choice would
# loop, leaves those least taken from this state (Visits, Guard);
# 9: the loop guard lets a repeat that reached a place never entered in the episode go on (Visits);
# 8: a "Not tried yet" list is never read as a rule (its untaken steps are no situation);
# 7: the loop guard holds an action that did not work against it while the state is unchanged (Futile);
# 6: designs see the observation text (observation_text); 5: ALFWorld location, inventory.
EVALUATION_VERSION = 14
# What a run's config.json records, so parameters whose default changed are read as they were played
# (``EnvParam.since``): 0 before ``task_digest``, 1 with it, 2 TextWorld fetch's ``habit`` 1.0.
CONFIG_FORMAT = 2

MetaOperator = Literal["write", "edit", "crossover"]


MAX_CONFIG_BYTES = 1_000_000  # a run's settings; more is not a config.json


class AlmaConfig(BaseModel):
    """Settings of one search. ``family=None`` with ``use_family=True`` means "family = seed"."""

    model_config = ConfigDict(extra="forbid")

    env: str = DEFAULT_ENV
    # Generations (None: 5 when the MetaAgent writes code, 20 for genome search, whose generations mostly
    # cost seconds of probe; `--max-minutes` bounds either).
    iterations: int | None = Field(None, ge=0, le=10_000)
    episodes: int = Field(3, ge=1, le=1000)
    seed: int = 42
    family: int | None = None
    use_family: bool = True
    # Deployment tasks = episodes × deploy_seeds: 3 × 8 = 24 by default, enough to see a +0.15 mean
    # difference with a paired 95% interval; smaller runs (`make demo`) pass fewer.
    deploy_seeds: int = Field(8, ge=1, le=1000)
    model: str | None = None
    meta_model: str | None = None
    embed_model: str | None = None  # None → the local MiniLM embedder
    no_embed: bool = False  # n-gram embedder, no model at all
    trace: bool = True
    quiet: bool = False
    concurrency: int = Field(4, ge=1, le=1024)
    # Where episodes run: "local" (this process, --concurrency threads) or "ray" (work units on a Ray
    # cluster at ray_address: "auto" joins this machine's cluster or starts one, else HOST:PORT).
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    parents: int = Field(2, ge=1, le=16)  # parents sampled per iteration
    # Probability that an iteration's first parent (the one an edit rewrites) is the best design so
    # far rather than a quality-diversity draw.
    exploit: float = Field(0.7, ge=0.0, le=1.0)  # OpenEvolve's exploitation ratio
    meta_turns: int = Field(3, ge=1, le=50)  # MetaAgent write → check → smoke → fix rounds
    debug_turns: int = Field(6, ge=1, le=50)  # DebugAgent grep turns
    max_turns: int | None = Field(None, ge=1, le=1000)  # task agent turns (None: the agent's default)
    # nats the task agent adds to the listed actions the advice names (a model's habits it can outweigh)
    advice_weight: float = Field(ADVICE_WEIGHT, ge=0.0, le=100.0)
    smoke_episodes: int = Field(2, ge=1, le=100)
    baselines: list[str] | None = None  # library baselines seeded into the archive (None: all)
    # The environment's hand-written seed design joins the archive; False tests discovery: the search
    # starts from the library baselines alone.
    env_seed: bool = True
    env_params: dict[str, Any] = Field(default_factory=dict)  # the environment's own parameters (EnvParam)
    max_cost_usd: float | None = Field(None, gt=0)  # stop the search cleanly once the run has cost this much
    # The provider's request-rate limit: task-model requests per minute, across every worker of a cluster.
    max_rpm: float | None = Field(None, gt=0)
    max_minutes: float | None = Field(
        None, gt=0
    )  # stop cleanly before the first generation past this much of the run's own time (resumes included)
    # Stop after the first generation whose design beats no memory with its paired 95% interval above 0
    # (the demo's use: show a discovery, then stop).
    until_found: bool = False
    # Staged evaluation of new designs: deployment tasks played in batches of stage_tasks; after each
    # batch the design goes on only while it can still beat the best so far (0: always play them all).
    stage_tasks: int = Field(8, ge=0, le=100_000)
    stage_rule: Literal["bound", "ci"] = "ci"
    # How the MetaAgent makes each generation's design, cycled by generation: "write" a new module,
    # "edit" one function of a parent, "crossover" two parents' update/recall (from code, no model).
    meta_operators: list[MetaOperator] = Field(
        default_factory=lambda: list(get_args(MetaOperator)), min_length=1
    )
    # A written design that passes the smoke run but whose advice steers the advice probe to no
    # success gets one more MetaAgent turn with the probe's report (atlas.alma.author.advice_probe).
    probe_retry: bool = True
    # Replay identical greedy (temperature 0) task-model prompts from an on-disk cache (local models).
    replay_cache: bool = True
    # What the search varies: "genome" (designs composed from environment-blind parts: mutation,
    # crossover, random draws and the meta model as a grammar-constrained genome editor), "code" (the
    # MetaAgent writes modules), "both", or "auto": genome with a local meta model, both with a hosted one.
    representation: Literal["auto", "genome", "code", "both"] = "auto"
    # Genome search: candidates screened by the advice probe per generation (the best is played when its
    # probe beats the best played design's), and the deployment tasks each probe plays.
    genome_candidates: int = Field(256, ge=1, le=1000)
    probe_tasks: int = Field(8, ge=1, le=64)
    # Genome search: the screening's best few whose collection games the task agent plays, probed again
    # with memory from those games, before one is played (0: none, the screening's best is played).
    agent_checks: int = Field(6, ge=0, le=64)
    # The run's result on tasks no choice saw: after the search, the design chosen on the deployment
    # (validation) tasks, the next best (test_designs in all) and the best hand-built design are played,
    # with no memory beside them, on episodes × test_seeds held-out test tasks (None: as many seeds as
    # deploy_seeds; 0: no test phase). See atlas.alma.search.held_out.
    test_seeds: int | None = Field(None, ge=0, le=1000)
    test_designs: int = Field(3, ge=1, le=20)

    @model_validator(mode="before")
    @classmethod
    def _env_settings(cls, data: Any) -> Any:
        """Environment parameters given as settings (``rooms=5``, ``alfworld_data=...``: what the CLI
        options and older config.json files use) move into ``env_params``; the chosen environment's
        are kept (an explicit ``env_params`` entry wins), other environments' are dropped."""
        if not isinstance(data, dict):
            return data
        from atlas.envs.registry import env_specs

        data = dict(data)
        params = dict(data.get("env_params") or {})
        chosen = _chosen_spec(data.get("env") or DEFAULT_ENV)
        for p in chosen.params if chosen else ():
            value = data.pop(p.key, None) if p.key not in cls.model_fields else None
            if value is not None:
                params.setdefault(p.name, value)
        for spec in env_specs():  # other environments' settings (the CLI offers every option)
            for p in spec.params:
                if p.key not in cls.model_fields:
                    data.pop(p.key, None)
        if params or "env_params" in data:
            data["env_params"] = params
        return data

    @model_validator(mode="after")
    def _check(self) -> AlmaConfig:
        if self.no_embed and self.embed_model:
            raise ValueError("--no-embed and --embed-model are mutually exclusive")
        self.env_kwargs()  # the environment's parameters have the declared types
        return self

    # ---- derived values ---------------------------------------------------------------------

    @property
    def family_seed(self) -> int | None:
        """The family seed tasks share (None when family mode is off)."""
        if not self.use_family:
            return None
        return self.seed if self.family is None else self.family

    @property
    def embedder_name(self) -> str | None:
        """What ``make_embedder`` is given."""
        return "ngram" if self.no_embed else self.embed_model

    def env_kwargs(self) -> dict[str, Any]:
        """Parameters for ``get_env(self.env, **kwargs)``."""
        from atlas.envs.registry import env_spec

        try:
            spec = env_spec(self.env)
        except ConfigError:  # an environment instance that is not registered: its parameters as given
            return {"family_mode": self.use_family, **self.env_params}
        kwargs = spec.kwargs(self.env_params)
        if spec.takes("family_mode"):
            kwargs.setdefault("family_mode", self.use_family)
        elif not self.use_family:
            raise ValueError(
                f"environment {spec.name!r} takes no family_mode, so --no-family cannot apply to it: "
                "give its constructor `family_mode: bool = True` (off: each task is its own family)"
            )
        return kwargs

    def collection_seed(self) -> int:
        return self.seed

    def deployment_seeds(self) -> list[int]:
        return [self.seed + DEPLOY_SEED_STRIDE * k for k in range(1, self.deploy_seeds + 1)]

    @property
    def test_count(self) -> int:
        """Held-out test tasks of the run (``test_seeds`` × ``episodes``; 0: no test phase)."""
        return self.episodes * (self.deploy_seeds if self.test_seeds is None else self.test_seeds)

    def held_out_seeds(self) -> list[int]:
        """The seeds of the held-out test tasks: past every deployment seed a run can have."""
        n = self.test_count // self.episodes
        return [self.seed + DEPLOY_SEED_STRIDE * (TEST_SEED_START + k) for k in range(n)]

    def evaluation_key(self, task_model: str, tasks: Sequence[Task] = ()) -> str:
        """Hash of everything that decides a design's tasks and how they are played: the key of
        the no-memory baseline cache. ``tasks`` (the run's, in full) are part of it: the same
        settings give other tasks when an environment's defaults change, and an id need not say so."""
        payload = {
            "tasks": task_digest(tasks) if tasks else None,
            "env": self.env,
            "env_kwargs": self.env_kwargs(),
            "episodes": self.episodes,
            "seed": self.seed,
            "family": self.family_seed,
            "deploy_seeds": self.deploy_seeds,
            "max_turns": self.max_turns,
            "model": task_model,
            "evaluation_version": EVALUATION_VERSION,
        }
        blob = json.dumps(payload, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @classmethod
    def build(cls, where: str = "", /, **settings: Any) -> AlmaConfig:
        """Validate ``settings``; a bad value is a ConfigError naming each field, never a traceback."""
        try:
            return cls.model_validate(settings)
        except ValidationError as exc:
            problems = "; ".join(_problem(e) for e in exc.errors())
            raise ConfigError(f"{where + ': ' if where else ''}invalid settings: {problems}") from exc

    # ---- persistence ------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> AlmaConfig:
        p = Path(path)
        fix = (
            "it holds the run's settings: restore it from a backup, or start a new run with `atlas run` "
            "(the run's archive.json stays readable with `atlas archive show`)"
        )
        if not p.exists():
            raise ConfigError(f"no config file at {p}; {fix}")
        try:
            raw = read_limited(p, max_bytes=MAX_CONFIG_BYTES, what="config file", follow_links=True)
            data = jsonsafe.loads(raw, what=str(p))
        except InvalidInputError as exc:
            raise ConfigError(f"{exc}; {fix}") from exc
        except OSError as exc:
            raise ConfigError(f"cannot read {p}: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{p} must hold a JSON object of settings, not {type(data).__name__}; {fix}")
        # A run started before genome search existed searched code: resume it the same way.
        data.setdefault("representation", "code")
        # A run started before the weight was a setting was played with the weight of then.
        data.setdefault("advice_weight", ADVICE_WEIGHT_BEFORE)
        data = _with_earlier_params(data, _format(data))
        # config.json carries a few run facts beside the settings (resolved model names, ...).
        return cls.build(
            str(p), **{k: v for k, v in data.items() if k in cls.model_fields or k in _env_settings()}
        )


def _format(data: dict[str, Any]) -> int:
    """The format a config.json was written in: 0 before ``task_digest``, 1 with it, then as recorded."""
    written = data.get("config_format")
    if isinstance(written, int) and not isinstance(written, bool):
        return written
    return 1 if "task_digest" in data else 0


def _with_earlier_params(data: dict[str, Any], written: int) -> dict[str, Any]:
    """``data`` with the value each parameter of its environment had before it existed or changed
    (``EnvParam.before``), where a file of a format older than the parameter's ``since`` sets none."""
    spec = _chosen_spec(data.get("env") or DEFAULT_ENV)
    if spec is None:
        return data
    params = dict(data.get("env_params") or {})
    for p in spec.params:
        if p.before is not None and written < p.since and p.name not in params and p.key not in data:
            params[p.name] = p.before
    return {**data, "env_params": params}


def task_digest(tasks: Sequence[Task]) -> str:
    """A run's tasks in full (ids, goals, metadata) as one hash: what ``--resume`` checks."""
    blob = json.dumps([t.model_dump(mode="json") for t in tasks], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _chosen_spec(name: Any) -> Any:
    """The registration of the environment ``name`` (an alias too), or None when none is registered."""
    from atlas.envs.registry import env_spec

    try:
        return env_spec(str(name))
    except ConfigError:
        return None


def _env_settings() -> set[str]:
    """The setting names registered environments' parameters use (``rooms``, ``alfworld_data``, ...)."""
    from atlas.envs.registry import env_specs

    return {p.key for spec in env_specs() for p in spec.params}


def _problem(err: Any) -> str:
    """One pydantic error as ``field: message (got value)``."""
    field = ".".join(str(x) for x in err["loc"]) or "settings"
    if err["type"] == "extra_forbidden":
        return (
            f"{field}: {not_a_field(AlmaConfig, tuple(err['loc']))} (`atlas run --help` lists the settings)"
        )
    got = "" if err["type"] == "value_error" else f" (got {err['input']!r})"
    return f"{field}: {err['msg']}{got}"


__all__ = ["CONFIG_FORMAT", "DEPLOY_SEED_STRIDE", "EVALUATION_VERSION", "AlmaConfig", "task_digest"]
