"""`atlas memory` commands: store trajectories, query the memory, show statistics.

The memory lives in a directory (``--path``, default ``./atlas_memory``): SQLite records, Chroma
vectors and ``memory.json`` naming the embedder. Heavy libraries load inside the commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from atlas.cli.exits import fail

app = typer.Typer(help="Store trajectories in the memory library and query it.", no_args_is_help=True)

PathOpt = typer.Option(Path("atlas_memory"), "--path", "-p", help="Memory directory (created if missing).")
NoEmbedOpt = typer.Option(
    False,
    "--no-embed",
    help="Use the fast n-gram embedder instead of the local MiniLM model (no model load). A directory "
    "keeps the embedder it was created with; this flag is only needed when creating one.",
)
PrimitivesOpt = typer.Option(None, "--primitives", help="Preload a domain's primitive concepts: arc or swe.")


def _require_memory(path: Path) -> None:
    """Read-only commands need an existing memory directory."""
    if path.exists() and not path.is_dir():
        fail(f"--path {path} is a file, not a memory directory")
    if not (path / "memory.json").exists():
        fail(f"no memory at {path} (store something first, or pass the right --path)")


def _open(path: Path, no_embed: bool, primitives: str | None = None) -> Any:
    from atlas.errors import AtlasError
    from atlas.infra.embeddings import NGramEmbedder, default_embedder
    from atlas.memory.system import build_memory_system, stored_embedder_name

    try:
        stored = stored_embedder_name(path)
        use_ngram = no_embed or stored == "ngram"
        embedder = NGramEmbedder() if use_ngram else default_embedder()
        return build_memory_system(path, embedder=embedder, primitives=primitives)
    except AtlasError as exc:
        fail(str(exc))  # opening a damaged directory: the input is bad


MAX_FILE_BYTES = 256_000_000  # a trajectories file; each trajectory is also capped (MAX_TRAJECTORY_CHARS)


def _json_lines(raw: bytes, file: Path) -> list[Any]:
    """A JSON Lines file: one trajectory per line (blank lines skipped); the first bad line is named."""
    from atlas.core import jsonsafe
    from atlas.errors import InvalidInputError

    if len(raw) > MAX_FILE_BYTES:
        raise InvalidInputError(f"{file}: {len(raw)} bytes, over the limit of {MAX_FILE_BYTES}")
    lines = enumerate(raw.splitlines(), start=1)
    return [jsonsafe.loads(line, what=f"{file}, line {n}") for n, line in lines if line.strip()]


def _load_trajectories(file: Path) -> list[Any]:
    from atlas.core import jsonsafe
    from atlas.errors import InvalidInputError

    try:
        raw = file.read_bytes().removeprefix(b"\xef\xbb\xbf")
        if file.suffix.lower() == ".jsonl":
            data = _json_lines(raw, file)
        else:
            data = jsonsafe.loads(raw, what=str(file), max_bytes=MAX_FILE_BYTES)
    except (OSError, InvalidInputError) as exc:
        fail(f"cannot read {file}: {exc}")
    if isinstance(data, dict) and "trajectories" in data:
        data = data["trajectories"]
    items = data if isinstance(data, list) else [data]
    if not items:
        fail(
            f"{file} holds no trajectories (expected an object, a non-empty list, or {{'trajectories': [...]}})"
        )
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            where = f"item {i}" if isinstance(data, list) else "the file"
            fail(f"{file}: {where} is {type(item).__name__}, expected a trajectory object")
    return items


@app.command("store")
def store(
    file: Path = typer.Argument(
        ...,
        help='A trajectory as JSON, a JSON list of them, {"trajectories": [...]}, or a .jsonl file of '
        "one trajectory per line.",
    ),
    path: Path = PathOpt,
    no_embed: bool = NoEmbedOpt,
    primitives: str | None = PrimitivesOpt,
) -> None:
    """Store the trajectories of FILE; prints the ids each component stored (JSON lines)."""
    from atlas.errors import InvalidInputError
    from atlas.memory.common import validate_trajectory

    items = _load_trajectories(file)
    trajectories = []
    for i, item in enumerate(items):  # validate everything first: a bad file stores nothing
        try:
            trajectories.append(validate_trajectory(item))
        except InvalidInputError as exc:
            fail(f"{file}, trajectory {i}: {exc}" if len(items) > 1 else f"{file}: {exc}")
    if path.exists() and not path.is_dir():
        fail(f"--path {path} is a file, not a memory directory")
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
    k: int = typer.Option(4, "--k", "-k", min=1, max=100, help="Items per component."),
    as_json: bool = typer.Option(False, "--json", help="Print the raw MemoryQueryResult as JSON."),
    no_embed: bool = NoEmbedOpt,
) -> None:
    """Print what the memory knows about TASK, as agent advice (or JSON)."""
    from atlas.memory.system import format_advice

    _require_memory(path)
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
    _require_memory(path)
    from atlas.memory.system import stored_embedder_name

    with _open(path, no_embed) as memory:
        counts = memory.stats()
        concepts = memory.concept_library
        if concepts is not None:
            counts["concept_corpus_programs"] = concepts.corpus_size()
        counts["embedder"] = stored_embedder_name(path)
    typer.echo(json.dumps(counts, indent=2))
