"""Which model writes designs when ``--meta-model`` (``meta_model=``) is not given: a stronger local
model than the task model when one is installed (writing code is harder than playing an episode),
else the task model itself. Decided here for the command line and the Python API alike."""

from __future__ import annotations

from collections.abc import Mapping

from atlas.infra.llm import resolve_default_model
from atlas.infra.local_models import is_verified

STRONGER_LOCAL = "qwen2.5-coder-1.5b"
# Context of a local meta model: its prompt holds two parents' sources, their Analysis and the
# advice example (~8-9k tokens with GraphWorld's seed as a parent), and its reply a whole module.
# 8192 refused such a prompt outright; Qwen2.5-Coder is trained for 32k. Providers ignore it.
META_N_CTX = 16384


def default_meta_model(
    task_model: str | None, env: Mapping[str, str] | None = None
) -> tuple[str | None, str]:
    """``(meta_model, reason)``; ``None`` means "the task model"."""
    resolved, _ = resolve_default_model(task_model, env)
    stronger = f"local:{STRONGER_LOCAL}"
    if not resolved.startswith("local:") or resolved == stronger:
        return None, "same as the task model"
    if is_verified(STRONGER_LOCAL, env):
        return (
            stronger,
            f"no --meta-model given and {STRONGER_LOCAL} is installed: a stronger local model "
            "than the task model writes the designs",
        )
    return None, (
        f"same as the task model; `atlas models pull {STRONGER_LOCAL}` installs a stronger local "
        "meta model, used automatically"
    )


def resolve_meta_model(
    task_model: str | None, meta_model: str | None, env: Mapping[str, str] | None = None
) -> tuple[str | None, str | None]:
    """The meta model a new run starts with and why: the one given (``why`` is None: the caller
    chose it), else ``default_meta_model(task_model)``. ``atlas run`` and ``atlas.alma.run`` both
    decide it here; a resumed run keeps the one its config.json saved."""
    if meta_model:
        return meta_model, None
    return default_meta_model(task_model, env)


def task_model_context(shares_meta: bool) -> dict[str, int]:
    """``make_llm`` options of the task model: when it also writes the designs (no other meta
    model), the context a meta prompt needs; a meta prompt must fit the model it is sent to (the
    demo's 0.5B at 8192 refused its first genome-editing prompt, 8,249 tokens)."""
    return {"n_ctx": META_N_CTX} if shares_meta else {}


__all__ = ["META_N_CTX", "STRONGER_LOCAL", "default_meta_model", "resolve_meta_model", "task_model_context"]
