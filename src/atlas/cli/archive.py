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


SHOW_COLUMNS = (
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
)
# Above this many entries the table is printed as plain aligned text: rich measures and wraps every
# cell (about 1 ms a row on 2 cores, a minute for 20,000 entries); plain text takes milliseconds.
RICH_ROWS = 2_000


@app.command("show")
def show_cmd(run_dir: Path = typer.Argument(..., help="Run folder (or an archive.json).")) -> None:
    """Print every design of the archive with its scores, novelty and lineage."""
    from atlas.core.safetext import safe_text

    arch = _load(run_dir)
    base = (arch.baseline or {}).get("score")
    title = f"{run_dir} — baseline {fmt(base)}"
    rows = [
        [
            e.id,
            safe_text(e.name),
            e.origin,
            str(e.generation),
            _status(e),
            ",".join(e.parent_ids),
            fmt(e.collection_score),
            fmt(e.deployment_score),
            fmt(e.normalized_score, True),
            fmt(e.novelty),
            str(e.times_sampled),
        ]
        for e in arch
    ]
    saved = arch.episodes_saved()
    caption = None
    if saved or any(e.stage != "full" for e in arch):
        caption = (
            f"staged evaluation saved {saved} deployment episodes; a design 'stopped' after a "
            "minibatch could not beat the best so far, and its scores cover only the tasks it played"
        )
    if len(rows) > RICH_ROWS:
        typer.echo(_plain_table(safe_text(title), rows, caption))
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title, caption=caption)
    for col in SHOW_COLUMNS:
        table.add_column(col)
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    make_console().print(table)


def _plain_table(title: str, rows: list[list[str]], caption: str | None) -> str:
    """``rows`` under ``SHOW_COLUMNS`` as aligned plain text (names truncated to 40 characters)."""
    cells = [list(SHOW_COLUMNS), *([c if i != 1 else c[:40] for i, c in enumerate(r)] for r in rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(SHOW_COLUMNS))]
    lines = [title, *("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells)]
    lines.insert(2, "  ".join("-" * w for w in widths))
    return "\n".join([*lines, *([caption] if caption else [])])


def _status(e: Any) -> str:
    if e.stage != "full":
        return f"{e.status} (stopped {_staged(e)})"
    if (e.metadata.get("staged") or {}).get("saved"):
        return f"{e.status} (first {_staged(e)}: the rest once a design reaches them)"  # no memory
    return e.status


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


@app.command("readvise")
def readvise_cmd(
    run_dir: Path = typer.Argument(..., help="Run folder whose recorded games are replayed."),
    design: str = typer.Option(..., "--design", help="The design id whose collection games are replayed."),
    using: str = typer.Option(
        ...,
        "--with",
        help="The design that learns from them: a .py file (`atlas design compile` makes one from a genome) or a baseline name.",
    ),
    tasks: int = typer.Option(3, "--tasks", min=1, help="How many of the run's deployment tasks to advise."),
) -> None:
    """Print what a design advises on a run's deployment tasks after learning from the collection games
    another design played there, replayed exactly from the logs (no model plays): how a change to the
    parts changes the advice the agent read.

        atlas design compile genome.json --out design.py
        atlas archive readvise runs/my-run --design d-0003 --with design.py
    """
    from atlas.alma.api import load_design
    from atlas.alma.deploy.relearn import Replayer
    from atlas.errors import AtlasError

    try:
        archive = _load(run_dir)
        if design not in archive:
            raise AtlasError(
                f"{run_dir} has no design {design!r} (`atlas archive show {run_dir}` lists them)"
            )
        replayer = Replayer(run_dir)
        entry = archive.get(design)
        advised = replayer.advice_with(entry, load_design(using), tasks=tasks)
    except AtlasError as exc:
        fail(str(exc))
        raise
    for task, advice in advised:
        typer.echo(f"== {task.id}: {task.description}\n{advice or '(no advice)'}\n")


__all__ = ["app"]
