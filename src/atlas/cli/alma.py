"""`atlas run`, `atlas eval` and `atlas demo` (`atlas headroom` is ``atlas.cli.headroom``,
`atlas archive` is ``atlas.cli.archive``; what they print is ``atlas.cli.output``).

Heavy imports (the loop, litellm, the sandbox, the embedder) happen inside the commands so that
``atlas --help`` stays fast.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from atlas.agent.advice_match import ADVICE_WEIGHT
from atlas.alma.state.config import AlmaConfig
from atlas.cli.output import (
    ci_text,
    demo_verdict,
    deployment_completion,
    eval_json,
    fail,
    fmt,
    held_out_lines,
    make_console,
    nothing_solved_hint,
    reached_text,
    results_table,
    usage_line,
)
from atlas.envs.registry import DEFAULT_ENV, EnvParam, env_spec, env_specs

if TYPE_CHECKING:
    from rich.console import Console

# Every size a flag sets is bounded (checked by the option parser before any work starts).
MAX_ITERATIONS, MAX_EPISODES, MAX_DEPLOY_SEEDS, MAX_CONCURRENCY, MAX_TURNS, MAX_TASKS = (
    10_000,
    1000,
    1000,
    1024,  # episodes in flight: hundreds make sense on a Ray cluster with a hosted model
    1000,
    10_000,
)
ENV_HELP = "Environment: " + " | ".join(s.name for s in env_specs()) + "."
# The demo compares with no memory: a hand-built baseline adds ~7 min on 2 cores (--baselines).
DEMO_BASELINES = "none"
DEMO_AGENT_CHECKS = 2  # candidates checked with the agent (six by default: 925 s for the demo)
DEMO_TEST_DESIGNS = 1  # the test phase plays the pick (and the best hand-built design, if any)


def default(field: str) -> Any:
    """The default of an ``AlmaConfig`` setting: `atlas run`'s options take theirs from there."""
    return AlmaConfig.model_fields[field].default


@dataclass(frozen=True)
class SharedOption:
    """An option several commands take, declared once: its flag, default, bounds and help. A command
    calls it for its parameter's default, rewording the help or changing the default where the
    option means something narrower there (``SEED(help="Random seed (tasks, sampling).")``)."""

    flag: str
    default: Any
    help: str
    min: float | None = None
    max: float | None = None

    def __call__(self, **override: Any) -> Any:
        kwargs: dict[str, Any] = {k: v for k, v in (("min", self.min), ("max", self.max)) if v is not None}
        kwargs |= {"help": self.help, **override}
        return typer.Option(kwargs.pop("default", self.default), self.flag, **kwargs)


# The options `atlas run`, `eval`, `headroom` and `demo` share.
ENV = SharedOption("--env", DEFAULT_ENV, ENV_HELP)
EPISODES = SharedOption(
    "--episodes", default("episodes"), "Tasks per collection phase and per deployment seed.", 1, MAX_EPISODES
)
SEED = SharedOption("--seed", default("seed"), "Random seed of the tasks.")
FAMILY = SharedOption("--family", None, "Family seed (default: --seed).")
NO_FAMILY = SharedOption("--no-family", False, "Disable family mode.")
DEPLOY_SEEDS = SharedOption(
    "--deploy-seeds",
    default("deploy_seeds"),
    "Seed offsets for deployment scoring (deployment tasks = --episodes × --deploy-seeds).",
    1,
    MAX_DEPLOY_SEEDS,
)
MODEL = SharedOption("--model", None, "Task model (default resolution as in `atlas run`).")
EMBED_MODEL = SharedOption("--embed-model", None, "Embedding model (default local MiniLM).")
NO_EMBED = SharedOption("--no-embed", False, "n-gram vectors instead of an embedding model.")
RUN_DIR = SharedOption("--run-dir", None, "Run folder (default runs/<env>-<time>).")
CONCURRENCY = SharedOption(
    "--concurrency", default("concurrency"), "Deployment episodes run at once.", 1, MAX_CONCURRENCY
)
QUIET = SharedOption("--quiet", False, "No progress bars.")
MAX_TURNS_OPTION = SharedOption(
    "--max-turns",
    None,
    "Task agent turns per episode (default: the environment's step limit + 8).",
    1,
    MAX_TURNS,
)
ADVICE_WEIGHT_OPTION = SharedOption(
    "--advice-weight",
    ADVICE_WEIGHT,
    "Nats the task agent adds to each listed action the advice names (times how well its line matches): "
    "how far advice can outweigh the model's own preference. A model far surer of its habits than of the "
    "advice needs more; 0 leaves the choice to the model, which still reads the advice.",
    0.0,
    100.0,
)
AS_JSON = SharedOption("--json", False, "Print one JSON object instead of tables.")
ITERATIONS = SharedOption(
    "--iterations",
    None,
    "Evolutionary iterations (default 5 when the MetaAgent writes code, 20 for genome search; with "
    "--resume: raise the total).",
    0,
    MAX_ITERATIONS,
)
BASELINES = SharedOption(
    "--baselines",
    "all",
    "Library baselines seeded into the archive: comma-separated names, 'all' or 'none' (no_memory is "
    "always there).",
)
NO_CACHE = SharedOption(
    "--no-cache",
    False,
    "Bypass the result caches: the no-memory baseline is played again instead of read from its "
    "cache, and task-model replies are not replayed (nothing is read from or written to them).",
)


def _make_client(
    model: str | None, label: str, console: Console, why: str | None = None, **options: Any
) -> Any:
    """make_llm with the chosen model and why printed (``why``: the caller chose it, for this reason)."""
    from atlas.errors import AtlasError
    from atlas.infra.llm import make_llm, resolve_default_model

    resolved, reason = resolve_default_model(model)
    console.print(f"{label}: [bold]{resolved}[/bold] — {why or reason}")
    try:  # a plug-in provider whose factory raises is an LLMConfigError naming it, one line
        return make_llm(model, **options)
    except AtlasError as exc:
        fail(exc)
        raise  # unreachable: _fail exits


def _confirm_saved_models(resume: Path, saved: Any, model: str | None, meta_model: str | None) -> None:
    """A run folder may be someone else's: resuming never sends its prompts to a provider its
    config.json names (at the cost of your key) unless --model / --meta-model say so too."""
    from atlas.infra.llm.aliases import resolve_alias

    for flag, given, named in (
        ("--model", model, saved.model),
        ("--meta-model", meta_model, saved.meta_model),
    ):
        if named and not given and not resolve_alias(named).startswith("local:"):
            fail(
                f"{resume}/config.json names the model {named!r}, which is not a local one: resuming "
                f"would send the run's prompts to it (with your key). Confirm with {flag} {named}"
            )


def check_choice(flag: str, value: str, allowed: tuple[str, ...]) -> None:
    """A flag whose value must be one of ``allowed``: checked before any work, on --resume too."""
    if value not in allowed:
        fail(f"{flag} {value!r}: must be one of {', '.join(allowed)}")


def check_output_file(path: Path, flag: str) -> None:
    """An output file the command will write at the end: checked before any work, so a long run is
    never lost to a path that cannot be written."""
    if path.is_dir():
        fail(f"{flag} {path} is a folder: give a file path (e.g. {path / 'episodes.jsonl'})")
    if not path.parent.is_dir():
        fail(f"{flag} {path}: the folder {path.parent} does not exist; create it first")
    if (path.exists() and not os.access(path, os.W_OK)) or not os.access(path.parent, os.W_OK):
        fail(f"{flag} {path} cannot be written here (permissions)")


def parse_baselines(value: str) -> list[str] | None:
    """``all`` → None (every library baseline), ``none`` → [], else the listed names (checked)."""
    v = value.strip().lower()
    if v == "all":
        return None
    if v in ("none", ""):
        return []
    from atlas.alma.baselines import list_baselines

    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in list_baselines()]
    if unknown:
        fail(f"unknown baseline(s) {', '.join(unknown)}; known: {', '.join(list_baselines())}")
    return names


def _run_search(
    console: Console, *, model: str | None, meta_model: str | None, resume: Path | None, **kwargs: Any
) -> tuple[Any, Path | None]:
    from atlas.alma.api import run
    from atlas.alma.state.meta_model import META_N_CTX, task_model_context
    from atlas.cli.progress import RichProgress
    from atlas.errors import AtlasError, BudgetReached

    saved = "saved in the run's config.json" if resume is not None else None
    why = saved
    if resume is None:  # decided in the library, as atlas.alma.run decides it
        from atlas.alma.state.meta_model import resolve_meta_model

        meta_model, why = resolve_meta_model(model, meta_model)
    shared = not meta_model or meta_model == model
    llm = _make_client(
        model, "task model", console, why=saved if model else None, **task_model_context(shared)
    )
    meta_llm = llm if shared else _make_client(meta_model, "meta model", console, why=why, n_ctx=META_N_CTX)
    if meta_llm is llm:
        console.print("meta model: same as the task model")
    if resume is None:  # a new run saves the model names in its settings; a resumed run has them
        kwargs.update(model=model, meta_model=meta_model)
    if kwargs.get("executor") == "ray":  # a cluster's workers build the task model by its name
        from functools import partial

        from atlas.infra.llm import make_llm

        kwargs["llm_factory"] = partial(make_llm, model or llm.model)
    try:
        progress = RichProgress(bool(kwargs.get("quiet")))
        return run(llm=llm, meta_llm=meta_llm, resume=resume, progress=progress, **kwargs)
    except BudgetReached as exc:  # the budget the user set: the outcome asked for, exit 0
        from rich.markup import escape

        console.print(f"[yellow]stopped:[/yellow] {escape(str(exc))}")
        raise typer.Exit(0) from exc
    except AtlasError as exc:
        fail(exc)
        raise


def _env_cli_params() -> list[tuple[EnvParam, dict[str, Any]]]:
    """The registered environments' own parameters, one CLI option each, with every environment's
    default for it (environment name → default): an option two environments share takes the chosen
    one's default. Plug-ins are loaded first so their environments' options exist too."""
    from atlas.infra.plugins import load_plugins_or_warn

    # a broken plug-in costs a warning line (once), never the command (or --help); the working ones load
    load_plugins_or_warn(warn=lambda line: typer.echo(f"warning: {line}", err=True))
    seen: dict[str, tuple[EnvParam, dict[str, Any]]] = {}
    for spec in env_specs():
        for p in spec.params:
            seen.setdefault(p.key, (p, {}))[1][spec.name] = p.default
    return list(seen.values())


def _env_option(p: EnvParam, defaults: dict[str, Any]) -> inspect.Parameter:
    """The CLI option of one environment parameter. Where the environments that declare it give it other
    defaults, its value is None unless given (the chosen environment's own default applies:
    ``EnvSpec.kwargs``) and ``--help`` lists each environment's."""
    values = {repr(d) for d in defaults.values()}
    default = p.default if len(values) == 1 else None
    shown: str | bool = len(values) == 1 or ", ".join(
        f"{d} for {name}" for name, d in defaults.items() if d is not None
    )
    numeric = p.type in (int, float)
    option = typer.Option(
        default,
        p.cli_flag,
        help=p.help,
        show_default=shown,
        min=p.min if numeric else None,
        max=p.max if numeric else None,
    )
    return inspect.Parameter(
        p.key,
        inspect.Parameter.KEYWORD_ONLY,
        default=option,
        annotation=p.type if default is not None else Optional[p.type],  # noqa: UP045
    )


def with_env_options(func: Callable[..., None]) -> Callable[..., None]:
    """Give a command one option per registered environment parameter (``--rooms``, ``--alfworld-data``,
    a plug-in's own), placed after ``--episodes``; the command receives the ones given as
    ``env_settings`` (setting name → value), which ``AlmaConfig`` files under the chosen environment's
    ``env_params``."""
    params = _env_cli_params()
    sig = inspect.signature(func)
    own = [q for q in sig.parameters.values() if q.name != "env_settings"]
    for q in own:  # the plug-ins just loaded are environments too
        if q.name == "env" and getattr(q.default, "help", None) == ENV_HELP:
            q.default.help = "Environment: " + " | ".join(s.name for s in env_specs()) + "."
    extra = [_env_option(p, defaults) for p, defaults in params]
    at = next((i + 1 for i, q in enumerate(own) if q.name == "episodes"), len(own))
    ordered = (
        [q.replace(kind=inspect.Parameter.KEYWORD_ONLY) for q in own[:at]]
        + extra
        + [q.replace(kind=inspect.Parameter.KEYWORD_ONLY) for q in own[at:]]
    )

    @functools.wraps(func)
    def command(**kwargs: Any) -> None:
        given = {p.key: kwargs.pop(p.key) for p, _ in params}
        if isinstance(name := kwargs.get("env"), str):
            _known_env(name)  # before a model is loaded or a game played
        return func(env_settings={k: v for k, v in given.items() if v is not None}, **kwargs)

    command.__signature__ = sig.replace(parameters=ordered)  # type: ignore[attr-defined]
    command.__annotations__ = {**func.__annotations__, **{q.name: q.annotation for q in extra}}
    return command


def _known_env(name: str) -> None:
    """Fail with the registry's message (the known names, how a plug-in registers) when ``name`` is no
    environment."""
    from atlas.errors import ConfigError

    try:
        env_spec(name)
    except ConfigError as exc:
        fail(str(exc))


def register(app: typer.Typer) -> None:
    """Add run / eval / demo to the top-level app."""

    @app.command("run")
    @with_env_options
    def run_cmd(
        env: str = ENV(),
        iterations: int | None = ITERATIONS(),
        episodes: int = EPISODES(),
        seed: int = SEED(help="Random seed (tasks, sampling)."),
        family: int | None = FAMILY(help="Family seed shared by all tasks (default: same as --seed)."),
        no_family: bool = NO_FAMILY(help="Disable family mode: every task its own layout."),
        deploy_seeds: int = DEPLOY_SEEDS(
            help="Seed offsets for deployment scoring: "
            "deployment tasks = --episodes × --deploy-seeds (default 3 × 8 = 24, "
            "enough for a paired 95% interval to show a +0.15 gain; fewer for a "
            "quick run)."
        ),
        model: str | None = MODEL(
            help="Task model (default: provider key in the environment, else the local model)."
        ),
        meta_model: str | None = typer.Option(
            None,
            "--meta-model",
            help="Model of the meta and debug agents "
            "(default: local:qwen2.5-coder-1.5b when the task model is "
            "local and that model is installed, else --model).",
        ),
        embed_model: str | None = EMBED_MODEL(
            help="Embedding model for designs' vector store (default: local MiniLM)."
        ),
        no_embed: bool = NO_EMBED(help="No embedding model: n-gram vectors."),
        no_trace: bool = typer.Option(False, "--no-trace", help="Do not write trace.jsonl."),
        quiet: bool = QUIET(help="No progress bars or per-iteration lines."),
        run_dir: Path | None = RUN_DIR(),
        resume: Path | None = typer.Option(
            None, "--resume", help="Continue a stopped run from its folder (its saved settings are used)."
        ),
        concurrency: int | None = CONCURRENCY(
            default=None,
            help=f"Deployment episodes run at once (across the cluster with --executor ray); default "
            f"{default('concurrency')}, with --resume the run's own.",
        ),
        executor: str = typer.Option(
            default("executor"),
            "--executor",
            help="Where episodes run: 'local' (this process, threads) or 'ray' (work units on a Ray "
            "cluster; needs the extra: pip install 'atlas-memory[ray]'). Each design's collection is one "
            "unit, its deployment episodes run in parallel; a lost worker's unit is retried elsewhere.",
        ),
        ray_address: str = typer.Option(
            "auto",
            "--ray-address",
            help="With --executor ray: 'auto' joins the cluster this machine is part of (`ray start`) "
            "and starts a local one when there is none; HOST:PORT joins that head (an address that "
            "does not answer is an error within 15 s).",
        ),
        baselines: str = BASELINES(),
        no_env_seed: bool = typer.Option(
            False,
            "--no-env-seed",
            help="Leave the environment's hand-written seed design out of the archive: "
            "the search starts from no memory and the library baselines alone (a test "
            "of discovery rather than of refinement).",
        ),
        max_turns: int | None = MAX_TURNS_OPTION(),
        advice_weight: float = ADVICE_WEIGHT_OPTION(),
        max_cost: float | None = typer.Option(
            None,
            "--max-cost",
            help="Stop the search cleanly once "
            "the run has cost this many dollars (more than 0; providers that report a "
            "cost; checked after every episode, and a generation cut short is played again on --resume); "
            "--resume with a higher value continues.",
        ),
        max_rpm: float | None = typer.Option(
            None,
            "--max-rpm",
            min=0.0,
            help="The provider's request-rate limit: task-model requests per minute (episodes and "
            "design tools), evenly spaced, across every worker with --executor ray (default: none).",
        ),
        max_minutes: float | None = typer.Option(
            None,
            "--max-minutes",
            help="The run's time, its resumed parts included (more than 0): no generation starts "
            "that would end, at the pace of the run's generations so far, in the time the test phase "
            "keeps; then the test phase plays and the search stops cleanly (the archive is saved; "
            "--resume with a higher limit continues).",
        ),
        until_found: bool = typer.Option(
            False,
            "--until-found",
            help="Stop after the first generation whose design beats no memory with its paired 95% "
            "interval above 0 (the demo does; --resume goes on).",
        ),
        stage_tasks: int = typer.Option(
            default("stage_tasks"),
            "--stage-tasks",
            min=0,
            help="Staged evaluation: a new design plays "
            "the deployment tasks in batches of this many and goes on only while "
            "it can still beat the best design so far; a design stopped early is "
            "marked 'minibatch' and claims nothing (0: play every task).",
        ),
        stage_rule: str = typer.Option(
            default("stage_rule"),
            "--stage-rule",
            help="When to stop a staged design: 'bound' (only "
            "when even perfect scores on the remaining tasks could not beat the "
            "best) or 'ci' (also when its paired 95% interval against the best "
            "on the tasks played is below 0).",
        ),
        meta_operators: str = typer.Option(
            "write,edit,crossover",
            "--meta-operators",
            help="How each "
            "generation's design is made, cycled by generation: 'write' a new "
            "module, 'edit' one function of a parent, 'crossover' two parents' "
            "update and recall (from code, no model call; falls back to write "
            "when the child fails the design check).",
        ),
        exploit: float | None = typer.Option(
            None,
            "--exploit",
            min=0.0,
            max=1.0,
            help="Probability that a generation's first parent (the one "
            "'edit' rewrites) is the best design so far instead of a draw weighted by "
            "score, novelty and exploration (default 0.7; can change on --resume).",
        ),
        no_probe_retry: bool = typer.Option(
            False,
            "--no-probe-retry",
            help="Accept a written design as soon as it passes the smoke run, even when "
            "an agent doing only what its advice names solves no smoke task (by default "
            "the MetaAgent gets one more turn with that report).",
        ),
        no_replay: bool = typer.Option(
            False,
            "--no-replay",
            help="Do not replay identical greedy task-model "
            "prompts from the on-disk cache (local models; on by default).",
        ),
        no_cache: bool = NO_CACHE(),
        representation: str = typer.Option(
            default("representation"),
            "--representation",
            help="What the search varies: 'genome' (designs composed from "
            "environment-blind memory parts: mutation, recombination, random draws and the meta model "
            "as a grammar-constrained genome editor, each child screened by the advice probe first), "
            "'code' (the MetaAgent writes modules), 'both', or 'auto' (genome with a local meta "
            "model, both with a hosted one). The run says which it picked.",
        ),
        genome_candidates: int = typer.Option(
            default("genome_candidates"),
            "--genome-candidates",
            min=1,
            max=1000,
            help="Genome search: candidates screened by the advice probe per generation (a "
            "fraction of a second each, no LLM; it stops early only for one that solves every probe "
            "task); the best few have their collection games played by the task agent and are probed "
            "again with memory from those (--agent-checks), and the best of them is played when that "
            "probe beats that of the best design played so far.",
        ),
        agent_checks: int = typer.Option(
            default("agent_checks"),
            "--agent-checks",
            min=0,
            max=64,
            help="Genome search: how many of the screening's best candidates (each the best of its set of "
            "retrieve parts) have their collection games played by the task agent before one is chosen; "
            "each costs those games (about a minute each on TextWorld fetch with the local model). 0: "
            "play the screening's best unchecked.",
        ),
        test_seeds: int | None = typer.Option(
            None,
            "--test-seeds",
            min=0,
            max=1000,
            help="The run's result: at the end, the pick, the next best and the best hand-built design play "
            "beside no memory on EPISODES x TEST_SEEDS held-out test tasks no choice saw (or the test split), "
            "when one scored above no memory on the deployment tasks. Default: --deploy-seeds; 0: none.",
        ),
        test_designs: int = typer.Option(
            default("test_designs"), "--test-designs", min=1, max=20, help="Designs played on the test tasks."
        ),
        env_settings: dict[str, Any] | None = None,
    ) -> None:
        """Run an ALMA search: evolve memory designs on collection and deployment tasks, then report
        the chosen design on held-out test tasks no choice saw."""
        console = make_console()
        check_choice("--stage-rule", stage_rule, ("bound", "ci"))
        for flag, limit in (("--max-cost", max_cost), ("--max-minutes", max_minutes)):
            if limit is not None and not limit > 0:
                fail(f"{flag} {limit:g}: must be more than 0 (leave it out for no limit)")
        check_choice("--representation", representation, ("auto", "genome", "code", "both"))
        kwargs: dict[str, Any] = {"quiet": quiet, "trace": not no_trace, "until_found": until_found}
        if concurrency is not None:  # a resumed run keeps its own unless told otherwise
            kwargs["concurrency"] = concurrency
        if executor not in ("local", "ray"):
            fail(f"--executor must be 'local' or 'ray', got {executor!r}")
        kwargs.update(executor=executor, ray_address=ray_address if executor == "ray" else None)
        if executor == "ray":
            from atlas.alma.cluster.connect import import_ray
            from atlas.errors import ConfigError

            try:
                import_ray()  # before any model or run folder is made: say how to install the extra
            except ConfigError as exc:
                fail(exc)
        if max_cost is not None:
            kwargs["max_cost_usd"] = max_cost
        if max_minutes is not None:
            kwargs["max_minutes"] = max_minutes
        if max_rpm is not None:
            kwargs["max_rpm"] = max_rpm
        if exploit is not None:
            kwargs["exploit"] = exploit
        if no_cache:  # neither cache is read or written (a resumed run too)
            kwargs["baseline_cache"] = False
        if resume is None:
            kwargs.update(
                env=env,
                episodes=episodes,
                seed=seed,
                family=family,
                use_family=not no_family,
                deploy_seeds=deploy_seeds,
                embed_model=embed_model,
                no_embed=no_embed,
                **(env_settings or {}),
                run_dir=run_dir,
                baselines=parse_baselines(baselines),
                env_seed=not no_env_seed,
                max_turns=max_turns,
                advice_weight=advice_weight,
                stage_tasks=stage_tasks,
                stage_rule=stage_rule,
                replay_cache=not (no_replay or no_cache),
                probe_retry=not no_probe_retry,
                meta_operators=[o.strip() for o in meta_operators.split(",") if o.strip()],
                representation=representation,
                genome_candidates=genome_candidates,
                agent_checks=agent_checks,
                test_seeds=test_seeds,
                test_designs=test_designs,
            )
        else:
            from atlas.alma.state.config import AlmaConfig
            from atlas.errors import ConfigError

            try:
                saved = AlmaConfig.load(resume / "config.json")
            except ConfigError as exc:
                fail(exc)
                raise
            _confirm_saved_models(resume, saved, model, meta_model)
            model = model or saved.model
            meta_model = meta_model or saved.meta_model
        if iterations is not None:
            kwargs["iterations"] = iterations
        archive, trace_path = _run_search(
            console, model=model, meta_model=meta_model, resume=resume, **kwargs
        )
        console.print(results_table(archive))
        for line in held_out_lines(archive):
            console.print(line, markup=False, highlight=False)
        console.print(usage_line(archive))
        if hint := nothing_solved_hint(archive):
            console.print(f"[yellow]{hint}[/yellow]", markup=True, highlight=False)
        folder = archive.path.parent if archive.path else None
        console.print(f"run folder: {folder}" + (f"   trace: {trace_path}" if trace_path else ""))
        console.print(f"view it: atlas view {folder}")

    @app.command("eval")
    @with_env_options
    def eval_cmd(
        design: str = typer.Argument(
            ..., help="A design file (.py) or a library baseline name (e.g. no_memory)."
        ),
        env: str = ENV(),
        episodes: int = EPISODES(),
        seed: int = SEED(),
        family: int | None = FAMILY(),
        no_family: bool = NO_FAMILY(),
        deploy_seeds: int = DEPLOY_SEEDS(),
        model: str | None = MODEL(),
        embed_model: str | None = EMBED_MODEL(),
        no_embed: bool = NO_EMBED(),
        run_dir: Path | None = RUN_DIR(help="Where to write logs (default runs/eval-…)."),
        concurrency: int = CONCURRENCY(),
        quiet: bool = QUIET(),
        max_turns: int | None = MAX_TURNS_OPTION(),
        advice_weight: float = ADVICE_WEIGHT_OPTION(),
        no_cache: bool = NO_CACHE(),
        as_json: bool = AS_JSON(
            help="Print one JSON object: per-task scores of the "
            "design and of no memory, the paired difference with its 95% interval, "
            "the settings."
        ),
        env_settings: dict[str, Any] | None = None,
    ) -> None:
        """Score one design: collection, deployment, the no-memory baseline on the same tasks, and the
        paired difference (normalized) with its bootstrap 95% interval."""
        from atlas.alma.api import aevaluate, load_design
        from atlas.alma.design import check_design
        from atlas.cli.progress import RichProgress
        from atlas.errors import AtlasError
        from atlas.infra.aio import run_sync

        console = make_console(stderr=as_json)  # with --json, stdout holds the JSON object only
        try:
            d = load_design(design)
        except AtlasError as exc:
            fail(exc)
            raise
        problems = check_design(d.source) if d.origin != "host" else []
        if problems:
            fail("the design fails the static check:\n" + "\n".join(f"  {p}" for p in problems))
        llm = _make_client(model, "task model", console)
        try:
            entry, archive = run_sync(
                aevaluate(
                    d,
                    llm=llm,
                    env=env,
                    run_dir=run_dir,
                    episodes=episodes,
                    seed=seed,
                    family=family,
                    use_family=not no_family,
                    deploy_seeds=deploy_seeds,
                    model=model,
                    embed_model=embed_model,
                    no_embed=no_embed,
                    concurrency=concurrency,
                    quiet=quiet,
                    progress=RichProgress(quiet, stdout_ok=not as_json),
                    max_turns=max_turns,
                    advice_weight=advice_weight,
                    baseline_cache=False if no_cache else None,
                    **(env_settings or {}),
                )
            )
        except AtlasError as exc:
            fail(exc)
            raise
        base = archive.baseline or {}
        if as_json:
            import json

            print(json.dumps(eval_json(entry, archive)))
            return
        console.print(f"design      {entry.name} ({entry.status})")
        console.print(f"collection  {fmt(entry.collection_score)}")
        console.print(f"deployment  {fmt(entry.deployment_score)}")
        console.print(f"baseline    {fmt(base.get('score'))}{'  (cached)' if base.get('cached') else ''}")
        console.print(f"normalized  {fmt(entry.normalized_score, True)}{ci_text(entry.vs_no_memory)}")
        console.print(f"completion  {deployment_completion(entry).text()}")
        if (reached := reached_text(entry, archive)) is not None:
            console.print(reached)
        if entry.errors:
            console.print("errors: " + "; ".join(entry.errors))
        console.print(f"logs: {(archive.path.parent if archive.path else Path()) / (entry.logs_dir or '')}")

    @app.command("demo")
    def demo_cmd(
        iterations: int = ITERATIONS(
            default=3,
            help="Genome generations at most (small on purpose; it stops at the first design that beats "
            "no memory with its interval above 0).",
        ),
        model: str | None = MODEL(help="Model for everything (default: provider key, else the local model)."),
        run_dir: Path | None = RUN_DIR(help="Run folder (default runs/graphworld-<time>)."),
        quiet: bool = QUIET(),
        baselines: str = BASELINES(
            default=DEMO_BASELINES,
            help="Library baselines in the table and on the test tasks "
            "(comma-separated, 'all' or 'none'), e.g. trajectory_retrieval; none by default to keep the "
            "demo short (each adds about 7 minutes on 2 cores).",
        ),
        max_turns: int | None = MAX_TURNS_OPTION(
            help="Task agent turns per episode (default: the step limit + 8)."
        ),
        rooms: int = typer.Option(8, "--rooms", min=2, max=200, help="Rooms per GraphWorld (2-200)."),
    ) -> None:
        """The main job, small: a genome search on GraphWorld (8 rooms, 3 collection episodes, 6 deployment
        tasks) started without GraphWorld's hand-written design, with the default model and the local
        embedder, stopping at the first design that beats no memory (`--until-found`); then its pick
        and no memory on 6 held-out test tasks, the results table and what its numbers can show."""
        import time

        console = make_console()
        console.print(
            "[bold]ATLAS demo[/bold]: discovering memory on GraphWorld from environment-blind parts "
            f"(rooms {rooms}, episodes 3, deploy-seeds 2, up to {iterations} genome generations, stopping at "
            "the first design that beats no memory; no hand-written GraphWorld design); the local model "
            "takes a while on 2 cores."
        )
        t0 = time.perf_counter()
        archive, _trace = _run_search(
            console,
            model=model,
            meta_model=None,
            resume=None,
            env=DEFAULT_ENV,
            iterations=iterations,
            episodes=3,
            rooms=rooms,
            deploy_seeds=2,
            seed=42,
            run_dir=run_dir,
            quiet=quiet,
            concurrency=1,
            max_turns=max_turns,
            baselines=parse_baselines(baselines),
            env_seed=False,
            representation="genome",
            meta_turns=2,
            until_found=True,
            agent_checks=DEMO_AGENT_CHECKS,
            test_designs=DEMO_TEST_DESIGNS,
        )
        console.print(results_table(archive, title="ATLAS demo — GraphWorld"))
        console.print(usage_line(archive))
        for line in demo_verdict(archive):
            console.print(line, markup=False, highlight=False)
        if hint := nothing_solved_hint(archive):
            console.print(f"[yellow]{hint}[/yellow]", markup=True, highlight=False)
        folder = archive.path.parent if archive.path else None
        console.print(f"finished in {time.perf_counter() - t0:.0f} s; run folder: {folder}")
        console.print(f"see it: atlas view {folder}   |   atlas report {folder}")


__all__ = ["register", "with_env_options"]
