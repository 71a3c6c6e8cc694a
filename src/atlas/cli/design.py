"""`atlas design` commands: check a memory design (static check + sandboxed smoke run), list and
show the baseline designs.

Heavy imports (the sandbox, the embedder, environments) happen inside the commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from atlas.envs.registry import DEFAULT_ENV

app = typer.Typer(
    help="Memory designs: check one in the sandbox, list and show the baselines, compile and explain genomes.",
    no_args_is_help=True,
)


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


@app.command("check")
def check(
    file: Path = typer.Argument(
        ...,
        help="Design source file (.py) defining update(memory, episode, tools) "
        "and recall(memory, task, tools).",
    ),
    env: str = typer.Option(
        DEFAULT_ENV,
        "--env",
        "-e",
        help="Environment whose built-in policy plays the "
        "smoke-run episodes: graphworld | alfworld | textworld.",
    ),
    episodes: int = typer.Option(
        3, "--episodes", "-n", min=0, max=1000, help="Collection episodes to update on."
    ),
    recall_tasks: int = typer.Option(
        2, "--recall-tasks", min=1, max=1000, help="Unseen tasks to recall on after freezing."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the generated tasks and of the policy."),
    model: str | None = typer.Option(
        None,
        "--model",
        "-m",
        help="Model answering the design's summarize/analyze "
        "calls (default: a deterministic stub, no LLM needed).",
    ),
    timeout: float = typer.Option(
        10.0, "--timeout", min=0.1, max=600.0, help="Wall-clock seconds of design time per call."
    ),
    no_embed: bool = typer.Option(
        False,
        "--no-embed",
        help="Use the n-gram embedder instead of MiniLM (faster start, meaningless similarity scores).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON instead of a rich table."),
    feedback: bool = typer.Option(
        False, "--feedback", help="Print the compact text the meta-agent is shown."
    ),
) -> None:
    """Static check, then a sandboxed smoke run (update on N policy episodes, recall on unseen tasks).

    Exit code 0 only if the design is valid, every call ran without error and recall returned
    non-empty advice on the deployment tasks; 1 otherwise; 2 for a usage error.
    """
    from rich.markup import escape

    from atlas.alma.author.smoke import smoke_run
    from atlas.alma.design import Design
    from atlas.alma.sandbox.pool import SandboxLimits
    from atlas.errors import AtlasError

    try:
        source = file.read_text(encoding="utf-8")
    except OSError as exc:
        _console(stderr=True).print(f"[red]error:[/red] cannot read {file}: {exc}")
        raise typer.Exit(2) from exc
    design = Design(name=file.stem, source=source, origin="meta")
    try:
        embedder = None
        if no_embed:
            from atlas.infra.embeddings import NGramEmbedder

            embedder = NGramEmbedder()
        llm = None
        if model:
            from atlas.infra.llm import make_llm

            llm = make_llm(model)
        report = smoke_run(
            design,
            env,
            episodes,
            recall_tasks=recall_tasks,
            seed=seed,
            llm=llm,
            embedder=embedder,
            limits=SandboxLimits(timeout_s=timeout),
        )
    except AtlasError as exc:  # the design's faults are in the report; this is the input or ATLAS failing
        from atlas.cli.exits import exit_code

        _console(stderr=True).print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(exit_code(exc)) from exc
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, default=str))
    elif feedback:
        typer.echo(report.to_feedback())
    else:
        report.render(_console())
    raise typer.Exit(0 if report.ok else 1)


@app.command("list")
def list_designs() -> None:
    """List the baseline designs (sandboxed sources and host-side adapters)."""
    from rich.table import Table

    from atlas.alma.baselines import describe_baseline, get_baseline, list_baselines

    table = Table(title="baseline designs")
    table.add_column("name")
    table.add_column("origin")
    table.add_column("description")
    for name in list_baselines():
        table.add_row(name, get_baseline(name).origin, describe_baseline(name))
    _console().print(table)


@app.command("show")
def show(name: str = typer.Argument(..., help="Baseline name (see `atlas design list`).")) -> None:
    """Print a baseline design's source (host-side adapters print their description)."""
    from atlas.alma.baselines import get_baseline
    from atlas.errors import ConfigError

    try:
        design = get_baseline(name)
    except ConfigError as exc:
        _console(stderr=True).print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    typer.echo(design.source.rstrip("\n"))


def _genome_from(ref: str) -> Any:
    """A genome from a genome JSON file, a design module compiled from one (its GENOME constant), or a
    baseline's name; None when ``ref`` is a design written as code."""
    import ast

    from atlas.alma.genome import BASELINE_GENOMES, baseline_genome, load_genome, parse_genome
    from atlas.errors import ConfigError, InvalidInputError

    path = Path(ref)
    if path.suffix == ".json":
        return load_genome(path)
    if path.suffix == ".py" or path.exists():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError) as exc:
            raise InvalidInputError(f"cannot read design {path}: {exc}") from exc
        for node in tree.body:
            if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["GENOME"]:
                try:
                    return parse_genome(ast.literal_eval(node.value), where=f"{path}: GENOME")
                except ValueError as exc:
                    raise InvalidInputError(f"{path}: GENOME is not a literal: {exc}") from exc
        return None
    if ref in BASELINE_GENOMES:
        return baseline_genome(ref)
    raise ConfigError(
        f"{ref!r} is neither a genome (.json), a design file (.py) nor a baseline with a genome "
        f"({', '.join(BASELINE_GENOMES)})"
    )


@app.command("compile")
def compile_cmd(
    genome_file: Path = typer.Argument(..., help="Genome JSON file (see docs/genome.md)."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write the module here instead of stdout."),
) -> None:
    """Compile a genome to an ordinary design module (checked; run it with `atlas design check`)."""
    from atlas.alma.design import check_design
    from atlas.alma.genome import compile_genome, load_genome
    from atlas.errors import InvalidInputError

    try:
        source = compile_genome(load_genome(genome_file))
    except InvalidInputError as exc:
        _console(stderr=True).print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    problems = check_design(source)
    if problems:  # a compiler bug, not the user's: say so
        _console(stderr=True).print(
            f"[red]error:[/red] the compiled module fails the design check: {problems[0]}"
        )
        raise typer.Exit(1)
    if out is None:
        typer.echo(source.rstrip("\n"))
    else:
        out.write_text(source, encoding="utf-8")
        _console().print(f"wrote {out} ({len(source.splitlines())} lines)")


@app.command("explain")
def explain(
    design: str = typer.Argument(
        ..., help="A genome (.json), a design module compiled from one (.py), or a baseline name."
    ),
) -> None:
    """Show a design's genome and what each of its parts does."""
    from atlas.errors import AtlasError

    try:
        genome = _genome_from(design)
    except AtlasError as exc:
        _console(stderr=True).print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    if genome is None:
        typer.echo(f"{design} was written as code, not composed from parts: it has no genome.")
        raise typer.Exit(1)
    typer.echo(f"genome {genome.name!r} (key {genome.key}):")
    for line in genome.describe():
        typer.echo("  " + line)
    typer.echo(genome.to_json().rstrip("\n"))


__all__ = ["app"]
