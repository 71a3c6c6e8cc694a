"""`atlas tips`: a project's learned tips as markdown files (list, show, edit, rm)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import typer

from atlas.cli.exits import fail

app = typer.Typer(
    help="Tips a coding agent learned in this project: markdown files under .atlas/tips "
    "(read, edit or delete them; the index follows).",
    no_args_is_help=True,
)

_PROJECT = typer.Option(None, "--project", "-p", help="The project folder (default: the current folder).")
_DIR = typer.Option(
    None,
    "--dir",
    envvar="ATLAS_TIPS_DIR",
    help="The tips folder, absolute or relative to the project (default .atlas/tips).",
)
_JSON = typer.Option(False, "--json", help="Print JSON instead of text.")


def tips_folder(project: Path | None, folder: str | None) -> Path:
    """The tips folder, as the hook script finds it: ``folder`` (relative to the project) or
    ``.atlas/tips`` in the project."""
    root = Path(os.path.realpath(project or Path.cwd()))
    return Path(os.path.normpath(root / (folder or ".atlas/tips")))


@app.command("list")
def list_tips(project: Path | None = _PROJECT, folder: str | None = _DIR, as_json: bool = _JSON) -> None:
    """The tips, one line each (id, kind, uses, text); files that cannot be read are named."""
    from atlas.memory.guidelines.tipfiles import read_tips

    where = tips_folder(project, folder)
    tips, problems = read_tips(where)
    if as_json:
        rows = [
            {
                "id": t.id,
                "kind": t.kind,
                "trigger": t.trigger,
                "uses": t.uses,
                "learner": t.learner,
                "source": t.source,
                "created": t.created,
                "file": str(t.path),
                "content": t.content,
            }
            for t in tips
        ]
        typer.echo(json.dumps(rows, indent=2))
    else:
        if not tips:
            typer.echo(f"no tips in {where}")
        for t in tips:
            first = t.content.splitlines()[0]
            typer.echo(f"{t.id}  [{t.kind}] uses={t.uses}  {first[:100]}")
    for problem in problems:
        typer.echo(f"warning: {problem}", err=True)


@app.command("show")
def show(
    tip_id: str = typer.Argument(..., help="A tip's id (or its start) or file name."),
    project: Path | None = _PROJECT,
    folder: str | None = _DIR,
) -> None:
    """One tip file as it is on disk."""
    from atlas.errors import AtlasError
    from atlas.memory.guidelines.tipfiles import find_tip

    try:
        tip = find_tip(tips_folder(project, folder), tip_id)
    except AtlasError as exc:
        fail(exc)
    assert tip.path is not None
    typer.echo(f"# {tip.path}")
    typer.echo(tip.path.read_text(encoding="utf-8"), nl=False)


@app.command("edit")
def edit(
    tip_id: str = typer.Argument(..., help="A tip's id (or its start) or file name."),
    project: Path | None = _PROJECT,
    folder: str | None = _DIR,
) -> None:
    """Open a tip in $VISUAL / $EDITOR. The edited copy replaces the file only if it is still a
    valid tip (the file is left as it was otherwise)."""
    from atlas.errors import AtlasError, ConfigError
    from atlas.memory.guidelines.tipfiles import TipFile, atomic_write, find_tip

    try:
        tip = find_tip(tips_folder(project, folder), tip_id)
        assert tip.path is not None
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or shutil.which("nano") or "vi"
        with tempfile.TemporaryDirectory(prefix="atlas-tip-") as tmp:
            copy = Path(tmp) / tip.path.name
            copy.write_text(tip.path.read_text(encoding="utf-8"), encoding="utf-8")
            done = subprocess.run([*shlex.split(editor), str(copy)], check=False)
            if done.returncode != 0:
                raise ConfigError(f"the editor ({editor}) exited {done.returncode}; the tip is unchanged")
            text = copy.read_text(encoding="utf-8")
            TipFile.parse(text, tip.path)  # refuse an edit that is no longer a tip
        atomic_write(tip.path, text)
    except (AtlasError, OSError) as exc:
        fail(exc)
    typer.echo(f"saved {tip.path}")


@app.command("rm")
def rm(
    tip_id: str = typer.Argument(..., help="A tip's id (or its start) or file name."),
    project: Path | None = _PROJECT,
    folder: str | None = _DIR,
) -> None:
    """Delete a tip file: the next prompt no longer gets it."""
    from atlas.errors import AtlasError
    from atlas.memory.guidelines.tipfiles import remove_tip

    try:
        tip = remove_tip(tips_folder(project, folder), tip_id)
    except (AtlasError, OSError) as exc:
        fail(exc)
    typer.echo(f"removed {tip.id} ({tip.path})")


__all__ = ["app", "tips_folder"]
