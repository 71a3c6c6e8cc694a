"""The no-memory baseline's cache entry, read as data: every design's fitness is measured against it,
so an entry is used only when it is a sealed record (``atlas.infra.cache_seal``: the evaluation key
it answers and the SHA-256 of its content, both matching) of a plain JSON file that played exactly
this run's tasks, in order, with scores in [0, 1]. Anything else — edited scores, a removed or
foreign episode, a wrong shape, a file written before entries were sealed, a FIFO or an oversized
file — is refused with a one-line warning naming the file, and the baseline is played again (and
the entry rewritten). Never trusted into a score, never a crash."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

from atlas.alma.evaluate.harness import Evaluation
from atlas.errors import InvalidInputError
from atlas.infra.cache_seal import seal, unseal
from atlas.infra.safe_read import read_json

log = logging.getLogger(__name__)
MAX_ENTRY_BYTES = 64_000_000  # one evaluation: thousands of episodes with their steps


def _episode_problem(i: int, e: Any) -> str | None:
    if not isinstance(e, dict):
        return f"episode {i} is not an object"
    if e.get("phase") not in ("collection", "deployment"):
        return f"episode {i}: phase must be 'collection' or 'deployment'"
    score = e.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        return f"episode {i}: score is not a number"
    if not 0.0 <= score <= 1.0:
        return f"episode {i}: score {score} is outside [0, 1]"
    if not isinstance(e.get("success"), bool) or not isinstance(e.get("task_id"), str):
        return f"episode {i}: success must be a boolean and task_id a string"
    if isinstance(e.get("steps"), bool) or not isinstance(e.get("steps"), int) or e["steps"] < 0:
        return f"episode {i}: steps must be a non-negative integer"
    if not isinstance(e.get("label"), str) or not isinstance(e.get("goal"), str):
        return f"episode {i}: label and goal must be strings"
    return None


def entry_problem(data: Any, collection_ids: list[str], deployment_ids: list[str]) -> str | None:
    """Why ``data`` is not this run's baseline (None when it is)."""
    if not isinstance(data, dict) or not isinstance(data.get("episodes"), list):
        return "not a cached evaluation (no 'episodes' list)"
    if data.get("status", "ok") != "ok" or data.get("stage", "full") != "full":
        return "not a complete evaluation"
    for i, e in enumerate(data["episodes"]):
        problem = _episode_problem(i, e)
        if problem:
            return problem
    played = {
        phase: [e["task_id"] for e in data["episodes"] if e["phase"] == phase]
        for phase in ("collection", "deployment")
    }
    if played["collection"] != collection_ids or played["deployment"] != deployment_ids:
        return "its episodes are not this run's tasks (an episode removed, added or reordered)"
    return None


def read_baseline(
    path: Path, key: str, collection_ids: list[str], deployment_ids: list[str]
) -> tuple[Evaluation | None, str | None]:
    """``(the cached baseline, None)`` when the entry at ``path`` answers ``key`` and is valid for
    these tasks; ``(None, why)`` when there is an entry that cannot be trusted (warned, one line);
    ``(None, None)`` when there is none."""
    if not path.exists() and not path.is_symlink():
        return None, None
    try:
        data = unseal(read_json(path, max_bytes=MAX_ENTRY_BYTES, what="baseline cache entry"), key)
        problem = entry_problem(data, collection_ids, deployment_ids)
        if problem is None:
            return Evaluation.from_dict(data), None
    except (InvalidInputError, ValueError, TypeError, KeyError) as exc:
        problem = str(exc)
    log.warning("ignoring the cached no-memory baseline %s: %s; playing it again", path, problem)
    return None, problem


def baseline_record(key: str, evaluation: Evaluation) -> str:
    """The text of the cache entry for ``evaluation``, the baseline of the evaluation key ``key``."""
    return json.dumps(seal(key, json.loads(json.dumps(evaluation.to_dict(), default=str))))


__all__ = ["MAX_ENTRY_BYTES", "baseline_record", "entry_problem", "read_baseline"]
