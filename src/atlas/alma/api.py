"""The public entry points of ALMA: ``run``/``arun`` (a search, new or resumed), ``aevaluate`` (one
design against the no-memory baseline, what ``atlas eval`` runs) and ``load_design``.

They build the ``AlmaConfig`` and the run folder, make the models a search needs when they are not
given, and hand over to ``atlas.alma.search.loop.Search``. Progress: by default one line per design
on standard error (nothing with ``quiet=True``); pass ``progress=`` (an
``atlas.alma.search.progress.SearchProgress``) to show it another way, ``callbacks=`` to receive
every telemetry event.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atlas.alma.baselines import get_baseline
from atlas.alma.design import Design
from atlas.alma.search.loop import Callback, Search
from atlas.alma.search.progress import SearchProgress
from atlas.alma.state.archive import Archive, ArchiveEntry
from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.meta_model import resolve_meta_model
from atlas.alma.state.run_dir import RunDir
from atlas.envs.registry import DEFAULT_ENV
from atlas.errors import ConfigError, InvalidInputError
from atlas.infra.safe_read import read_limited
from atlas.protocols.agent import TaskPlayer
from atlas.protocols.embed import Embedder
from atlas.protocols.env import Environment
from atlas.protocols.llm import LLM

if TYPE_CHECKING:
    from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool
    from atlas.infra.llm import LLMClient

RUNTIME_FIELDS = (
    "quiet",
    "concurrency",
    "trace",
    "max_cost_usd",
    "max_minutes",
    "until_found",
    "exploit",
    "executor",
    "ray_address",
    "max_rpm",
)  # may change when a run is resumed


async def arun(
    *,
    llm: LLM | None = None,
    meta_llm: LLM | None = None,
    debug_llm: LLMClient | None = None,
    env: Environment | str = DEFAULT_ENV,
    iterations: int | None = None,
    run_dir: str | Path | None = None,
    resume: str | Path | None = None,
    trace: bool | str | Path = True,
    embedder: Embedder | None = None,
    agent: TaskPlayer | None = None,
    callbacks: list[Callback] | None = None,
    progress: SearchProgress | None = None,
    baseline_cache: Path | bool | None = None,
    runs_root: str | Path = "runs",
    pool: WorkerPool | None = None,
    limits: SandboxLimits | None = None,
    run_facts: dict[str, Any] | None = None,
    llm_factory: Callable[[], LLM] | None = None,
    **settings: Any,
) -> tuple[Archive, Path | None]:
    """Async twin of ``run``."""
    env_obj = None if isinstance(env, str) else env
    if trace is False:
        settings["trace"] = False
    if resume is not None:
        rd = RunDir.open(resume)
        config = AlmaConfig.load(rd.config_path)
        # stopping at the first found design is for one invocation, as ``atlas run --resume`` has it
        updates = {"until_found": False, **{k: v for k, v in settings.items() if k in RUNTIME_FIELDS}}
        if iterations is not None:
            updates["iterations"] = iterations
        config = AlmaConfig.build("--resume", **{**config.model_dump(), **updates})
    else:
        if iterations is not None:
            settings["iterations"] = iterations
        # the library decides the meta model when it builds the models from their names
        names_only = llm is None and meta_llm is None and llm_factory is None
        config = new_run_config(env, choose_meta_model=names_only, **settings)
        rd = RunDir.create(run_dir, env=config.env, root=runs_root)
    if llm is None and llm_factory is not None:
        llm = llm_factory()
    elif llm is None:
        from atlas.infra.llm import make_llm

        llm_factory = partial(make_llm, config.model)  # what a cluster's workers build
    llm, meta_llm = build_models(config, llm, meta_llm)
    if resume is not None:
        _check_same_task_model(rd, llm)
    search = Search(
        config,
        llm=llm,
        meta_llm=meta_llm,
        debug_llm=debug_llm,
        run_dir=rd,
        env=env_obj,
        embedder=embedder,
        agent=agent,
        trace=trace if config.trace else False,
        callbacks=callbacks,
        progress=progress,
        baseline_cache=baseline_cache,
        pool=pool,
        limits=limits,
        run_facts=run_facts,
        llm_factory=llm_factory,
    )
    archive = await search.arun(resume=resume is not None)
    return archive, search.trace_path


def new_run_config(
    env: Environment | str = DEFAULT_ENV, *, choose_meta_model: bool = True, **settings: Any
) -> AlmaConfig:
    """The settings of a new run, validated. With ``choose_meta_model`` and no ``meta_model`` given,
    the meta model is the library's default for the task model (``resolve_meta_model``: a stronger
    local model when one is installed), the one ``atlas run`` starts with too."""
    env_name = env if isinstance(env, str) else getattr(env, "name", "custom")
    if choose_meta_model:
        settings["meta_model"], _ = resolve_meta_model(settings.get("model"), settings.get("meta_model"))
    return AlmaConfig.build(env=env_name, **settings)


def build_models(config: AlmaConfig, llm: LLM | None = None, meta_llm: LLM | None = None) -> tuple[LLM, LLM]:
    """The task and meta models not given, built from the settings; a task model that also writes
    the designs gets the meta context (``meta_model.task_model_context``)."""
    from atlas.alma.state.meta_model import META_N_CTX, task_model_context
    from atlas.infra.llm import make_llm

    own_meta = bool(config.meta_model and config.meta_model != config.model)
    if llm is None:
        options = task_model_context(meta_llm is None and not own_meta)
        llm = make_llm(config.model, n_ctx=options["n_ctx"]) if options else make_llm(config.model)
    if meta_llm is None:
        meta_llm = make_llm(config.meta_model, n_ctx=META_N_CTX) if own_meta else llm
    return llm, meta_llm


def _check_same_task_model(rd: RunDir, llm: LLM) -> None:
    """Every score of a run, the baseline's included, comes from one task model; a resume with
    another would compare designs measured by different agents."""
    started = rd.read_config().get("task_model")
    now = getattr(llm, "model", None)
    if started and now and started != now:
        raise ConfigError(
            f"{rd.path} was started with the task model {started!r}; resuming with {now!r} would "
            "score new designs with another agent than the baseline and the archive. Resume with "
            f"the task model {started!r} (--model on the command line, or the same client from Python: "
            "atlas.alma.run(resume=..., llm=...)), or start a new run."
        )


MAX_DESIGN_BYTES = 1_000_000


def load_design(ref: str) -> Design:
    """A design from a file path or a library baseline name (``no_memory``, ...)."""
    path = Path(ref)
    if path.suffix == ".py" or path.exists():
        if not path.exists():
            raise ConfigError(f"no design file at {path}")
        try:  # a plain file of reasonable size (a folder, FIFO or device is refused, not read)
            text = read_limited(path, max_bytes=MAX_DESIGN_BYTES, what="design file").decode("utf-8")
        except (InvalidInputError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{exc}: give a design's .py file or a baseline name") from exc
        return Design(name=path.stem, source=text, origin="seed")
    return get_baseline(ref)


async def aevaluate(
    design: Design,
    *,
    llm: LLM,
    env: Environment | str = DEFAULT_ENV,
    run_dir: str | Path | None = None,
    runs_root: str | Path = "runs",
    embedder: Embedder | None = None,
    agent: TaskPlayer | None = None,
    progress: SearchProgress | None = None,
    baseline_cache: Path | bool | None = None,
    trace: bool = True,
    **settings: Any,
) -> tuple[ArchiveEntry, Archive]:
    """Evaluate one design (and the no-memory baseline) with the search's harness; returns the
    design's archive entry and the small archive written to ``run_dir``."""
    env_obj = None if isinstance(env, str) else env
    env_name = env if isinstance(env, str) else getattr(env, "name", "custom")
    config = AlmaConfig.build(env=env_name, iterations=0, **settings)
    rd = RunDir.create(run_dir, env=f"eval-{config.env}", root=runs_root)
    search = Search(
        config,
        llm=llm,
        run_dir=rd,
        env=env_obj,
        embedder=embedder,
        agent=agent,
        trace=trace,
        progress=progress,
        baseline_cache=baseline_cache,
    )
    entry = await search.evaluate_only(design)
    return entry, search.archive


def run(**kwargs: Any) -> tuple[Archive, Path | None]:
    """Run an ALMA search and return ``(archive, trace_path)``.

    ``llm`` plays the tasks; ``meta_llm`` (default ``llm``) writes designs. Without either, both are
    built from ``model=`` and ``meta_model=`` (names); a new run without ``meta_model`` gets the same
    default meta model as ``atlas run`` (``new_run_config``). ``env`` is a name
    ("graphworld" | "alfworld" | "textworld") or an Environment; ``iterations``, ``episodes``,
    ``rooms``, ``seed``, ``family``, ``use_family``, ``deploy_seeds``, ``concurrency``, ``quiet``, …
    are ``AlmaConfig`` fields. ``executor="ray"`` (with ``ray_address="auto"`` or ``"HOST:PORT"``) plays
    the episodes on a Ray cluster: the workers build the task model from ``model=NAME``, or from
    ``llm_factory`` (a picklable zero-argument callable) when ``llm`` is an object. ``trace=True`` writes ``<run_dir>/trace.jsonl`` (a str: that path;
    False: none). ``resume=RUN_DIR`` continues a stopped run with its saved settings.
    """
    from atlas.infra.aio import run_sync

    return run_sync(arun(**kwargs))


__all__ = ["RUNTIME_FIELDS", "aevaluate", "arun", "build_models", "load_design", "new_run_config", "run"]
