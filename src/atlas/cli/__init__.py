"""The ``atlas`` command. Each group lives in its own module; heavy imports happen inside commands
so that ``atlas --help`` stays fast."""

from __future__ import annotations

import os

import typer

# No hub downloads, no telemetry, no cost-map fetches: set before any library is imported.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from atlas.cli import alma, archive, design, guidelines, headroom, mcp, memory, models, tips, view

app = typer.Typer(
    name="atlas",
    help="ATLAS: memory for LLM agents, and ALMA, a search that discovers better memory designs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
app.add_typer(memory.app, name="memory")
app.add_typer(guidelines.app, name="guidelines")
app.add_typer(tips.app, name="tips")
app.add_typer(design.app, name="design")
app.add_typer(models.app, name="models")
app.add_typer(archive.app, name="archive")
alma.register(app)  # run, eval, demo
headroom.register(app)  # headroom
mcp.register(app)  # mcp
view.register(app)  # view, report


def _summaries(group: typer.Typer) -> None:
    """Give every command of ``group`` and its subgroups a one-paragraph summary for the command list,
    rewrapped to the terminal: typer keeps a docstring's line breaks there, and its lines came out
    ragged at 80 columns."""
    import inspect

    for info in group.registered_commands:
        doc = info.help or (info.callback.__doc__ if info.callback else None)
        if info.short_help is None and doc:
            info.short_help = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _summaries(sub.typer_instance)


_summaries(app)


def main() -> None:
    """Run ``atlas``; an error no command caught still ends with one clear line and its exit code
    (see ``atlas.cli.exits``), never a traceback."""
    import sys

    from atlas.cli.exits import exit_code
    from atlas.errors import AtlasError

    try:
        app()
    except (AtlasError, RecursionError, UnicodeError) as exc:
        if isinstance(exc, RecursionError):
            message = "the input nests too deeply to read; flatten it"
        else:
            message = str(exc)
        print(f"error: {message}", file=sys.stderr)
        sys.exit(exit_code(exc))


__all__ = ["app", "main"]
