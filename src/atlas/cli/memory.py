"""`atlas memory` commands: store trajectories, query the memory, show statistics.

The memory lives in a directory (``--path``, default ``./atlas_memory``): SQLite records, Chroma
vectors and ``memory.json`` naming the embedder. Heavy libraries load inside the commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

app = typer.Typer(help="Store trajectories in the memory library and query it.", no_args_is_help=True)

PathOpt = typer.Option(Path("atlas_memory"), "--path", "-p", help="Memory directory (created if missing).")
NoEmbedOpt = typer.Option(
    False,
    "--no-embed",
    help="Use the fast n-gram embedder instead of the local MiniLM model (no model load). A directory "
    "keeps the embedder it was created with; this flag is only needed when creating one.",
)
PrimitivesOpt = typer.Option(None, "--primitives", help="Preload a domain's primitive concepts: arc or swe.")


def _open(path: Path, no_embed: bool, primitives: str | None = None) -> Any:
    from atlas.errors import AtlasError
    from atlas.infra.embeddings import NGramEmbedder, default_embedder
    from atlas.memory.system import build_memory_system, stored_embedder_name

    stored = stored_embedder_name(path)
    use_ngram = no_embed or stored == "ngram"
    embedder = NGramEmbedder() if use_ngram else default_embedder()
    try:
        return build_memory_system(path, embedder=embedder, primitives=primitives)
    except AtlasError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def _load_trajectories(file: Path) -> list[Any]:
    try:
        data = json.loads(file.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        typer.echo(f"error: cannot read {file}: {exc}", err=True)
        raise typer.Exit(2) from exc
    if isinstance(data, dict) and "trajectories" in data:
        data = data["trajectories"]
    return data if isinstance(data, list) else [data]


@app.command("store")
def store(
    file: Path = typer.Argument(
        ..., help='A trajectory as JSON, a JSON list of them, or {"trajectories": [...]}.'
    ),
    path: Path = PathOpt,
    no_embed: bool = NoEmbedOpt,
    primitives: str | None = PrimitivesOpt,
) -> None:
    """Store the trajectories of FILE; prints the ids each component stored (JSON lines)."""
    from atlas.errors import InvalidInputError
    from atlas.memory.common import validate_trajectory

    items = _load_trajectories(file)
    try:  # validate everything first: a bad file stores nothing
        trajectories = [validate_trajectory(t) for t in items]
    except InvalidInputError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    failed = 0
    with _open(path, no_embed, primitives) as memory:
        for traj in trajectories:
            result = memory.store(traj)
            failed += bool(result["errors"])
            typer.echo(json.dumps(result))
    if failed:
        typer.echo(f"{failed} trajectories had component errors (see 'errors')", err=True)
        raise typer.Exit(1)


@app.command("query")
def query(
    task: str = typer.Argument(..., help="The task description to find memories for."),
    path: Path = PathOpt,
    k: int = typer.Option(4, "--k", "-k", min=1, help="Items per component."),
    as_json: bool = typer.Option(False, "--json", help="Print the raw MemoryQueryResult as JSON."),
    no_embed: bool = NoEmbedOpt,
) -> None:
    """Print what the memory knows about TASK, as agent advice (or JSON)."""
    from atlas.memory.system import format_advice

    if not (path / "memory.json").exists():
        typer.echo(f"error: no memory at {path} (store something first)", err=True)
        raise typer.Exit(2)
    with _open(path, no_embed) as memory:
        result = memory.query_sync(task, k)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    typer.echo(format_advice(result) or "(nothing relevant in memory)")
    for component, reason in result.errors.items():
        typer.echo(f"warning: {component}: {reason}", err=True)


@app.command("stats")
def stats(path: Path = PathOpt, no_embed: bool = NoEmbedOpt) -> None:
    """Print item counts per component (JSON)."""
    if not (path / "memory.json").exists():
        typer.echo(f"error: no memory at {path}", err=True)
        raise typer.Exit(2)
    from atlas.memory.system import stored_embedder_name

    with _open(path, no_embed) as memory:
        counts = memory.stats()
        concepts = memory.concept_library
        if concepts is not None:
            counts["concept_corpus_programs"] = concepts.corpus_size()
        counts["embedder"] = stored_embedder_name(path)
    typer.echo(json.dumps(counts, indent=2))
