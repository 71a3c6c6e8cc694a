"""Exit codes of the ``atlas`` command, one meaning each.

0  done
1  ATLAS failed (a model, the sandbox, a store), or a check the command runs did not pass
2  your input is bad (usage, a missing or damaged file or run folder, invalid JSON, bad settings)
"""

from __future__ import annotations

from typing import NoReturn

import typer

from atlas.errors import (
    ArchiveError,
    ConfigError,
    DesignCheckError,
    EnvError,
    InvalidInputError,
    LLMConfigError,
)

FAILED = 1
BAD_INPUT = 2
_INPUT_ERRORS = (InvalidInputError, ConfigError, ArchiveError, DesignCheckError, EnvError, LLMConfigError)


def exit_code(exc: BaseException) -> int:
    """BAD_INPUT for errors in what the user gave, FAILED for everything else."""
    return BAD_INPUT if isinstance(exc, (*_INPUT_ERRORS, RecursionError, UnicodeError)) else FAILED


def fail(error: BaseException | str, code: int | None = None) -> NoReturn:
    """Print ``error: ...`` on stderr and exit with its code (``code`` overrides; a bare message is
    bad input unless told otherwise)."""
    typer.echo(f"error: {error}", err=True)
    raise typer.Exit(
        code if code is not None else exit_code(error) if isinstance(error, BaseException) else BAD_INPUT
    )


__all__ = ["BAD_INPUT", "FAILED", "exit_code", "fail"]
