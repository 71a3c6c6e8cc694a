"""`atlas archive`: inspect a run's archive (show the table, the best design), export a design,
re-learn its memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from atlas.cli.output import fail, fmt, make_console, shown

app = typer.Typer(
    help="Inspect a run's archive: show the table, the best design, export it.", no_args_is_help=True
)


def _load(run_dir: Path, *, hydrate: bool | list[str] = False) -> Any:
    """The archive of ``run_dir`` with its sources (all, or the listed ids); a clear error, never a
    traceback."""
    from atlas.alma.state.archive import Archive
    from atlas.errors import ArchiveError

    try:
        arch = Archive.load(run_dir)
        if hydrate is False:
            return arch
        return arch.hydrate(None if hydrate is True else hydrate)
    except ArchiveError as exc:
        fail(exc)
        raise


@app.command("show")
def show_cmd(run_dir: Path = typer.Argument(..., help="Run folder (or an archive.json).")) -> None:
    """Print every design of the archive with its scores, novelty and lineage."""
    from rich.table import Table

    arch = _load(run_dir)
    base = (arch.baseline or {}).get("score")
    table = Table(title=f"{run_dir} — baseline {fmt(base)}")
    for col in (
        "id",
        "name",
        "origin",
        "gen",
        "status",
        "parents",
        "collection",
        "deployment",
        "normalized",
        "novelty",
        "sampled",
    ):
        table.add_column(col)
    for e in arch:
        status = e.status if e.stage == "full" else f"{e.status} (stopped {_staged(e)})"
        table.add_row(
            e.id,
            shown(e.name),
            e.origin,
            str(e.generation),
            status,
            ",".join(e.parent_ids),
            fmt(e.collection_score),
            fmt(e.deployment_score),
            fmt(e.normalized_score, True),
            fmt(e.novelty),
            str(e.times_sampled),
        )
    saved = arch.episodes_saved()
    if saved or any(e.stage != "full" for e in arch):
        table.caption = (
            f"staged evaluation saved {saved} deployment episodes; a design 'stopped' after a "
            "minibatch could not beat the best so far, and its scores cover only the tasks it played"
        )
    make_console().print(table)


def _staged(e: Any) -> str:
    staged = e.metadata.get("staged") or {}
    return f"{staged.get('played', '?')}/{staged.get('of', '?')}"


@app.command("best")
def best_cmd(
    run_dir: Path = typer.Argument(..., help="Run folder (or an archive.json)."),
    source: bool = typer.Option(True, "--source/--no-source", help="Print the design's source."),
) -> None:
    """Print the best design (highest normalized deployment score) and its source."""
    best = _load(run_dir).best()
    if best is None:
        fail("the archive has no scored design yet")
    if source:
        best = _load(run_dir, hydrate=[best.id]).get(best.id)
    c = make_console()
    c.print(
        f"{best.id} {shown(best.name)} ({best.origin}, generation {best.generation}): collection "
        f"{fmt(best.collection_score)}, deployment {fmt(best.deployment_score)}, normalized "
        f"{fmt(best.normalized_score, True)}"
    )
    if source and best.source:
        from atlas.core.safetext import safe_text

        typer.echo(safe_text(best.source))  # a model wrote it: no escape sequences reach the terminal


@app.command("export")
def export_cmd(
    run_dir: Path = typer.Argument(..., help="Run folder (or an archive.json)."),
    best: bool = typer.Option(
        False, "--best", help="Export the best design as a self-contained folder (--out)."
    ),
    design: str | None = typer.Option(
        None, "--design", help="Export this design id (e.g. d-0009) as a folder."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="With --best/--design: the folder to write (design "
        "source, learned memory, advice.jsonl, manifest, README).",
    ),
    output: Path = typer.Option(
        Path("archive-export.json"),
        "--output",
        "-o",
        help="Without --best/--design: where to write the whole archive as one JSON (sources inline).",
    ),
) -> None:
    """Export one design with what it learned (--best | --design ID, --out DIR), or the whole archive as
    one JSON file (-o FILE)."""
    from atlas.errors import AtlasError

    if best and design:
        fail("give --best or --design ID, not both")
    if best or design:
        if out is None:
            fail("--out DIR is required with --best/--design")
        from atlas.alma.deploy.export import export_design

        try:
            folder = export_design(run_dir, out, design_id=design)
        except AtlasError as exc:
            fail(str(exc))
            raise
        except OSError as exc:
            fail(f"cannot write {out}: {exc}")
            raise
        typer.echo(str(folder))
        return
    if out is not None:
        fail("--out needs --best or --design ID (use -o FILE for the whole archive as JSON)")
    arch = _load(run_dir, hydrate=True)
    try:
        path = arch.export(output)
    except OSError as exc:
        fail(f"cannot write {output}: {exc}")
        raise
    typer.echo(str(path))


@app.command("relearn")
def relearn_cmd(
    run_dir: Path = typer.Argument(..., help="Run folder made before learned memory was kept."),
    design: list[str] = typer.Option(None, "--design", help="Only this design id (repeatable)."),
) -> None:
    """Rebuild the learned memory of an older run's designs by replaying its recorded episodes, kept only
    when every recall of the replay returns what the run recorded (then `archive export` works)."""
    from atlas.alma.deploy.relearn import relearn
    from atlas.errors import AtlasError

    try:
        results = relearn(run_dir, design_ids=design or None)
    except AtlasError as exc:
        fail(str(exc))
        raise
    c = make_console()
    for r in results:
        c.print(
            f"{r.design_id} {r.name}: "
            + (
                f"rebuilt ({r.recalls_matched} recalls matched the run)"
                if r.ok
                else f"not rebuilt: {r.reason}"
            ),
            highlight=False,
            markup=False,
        )
    if not results:
        c.print("nothing to rebuild: every design that ran already has its learned memory")


__all__ = ["app"]
