"""What a run folder's ``config.json`` says beside the settings: the resolved models, the tasks, when
the run started and each time it was resumed, and which executor played it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from atlas.alma.state.config import AlmaConfig
from atlas.alma.state.run_dir import RunDir


def write_new_facts(run_dir: RunDir, config: AlmaConfig, **facts: Any) -> None:
    """The settings of a new run and the facts the search resolved (models, tasks, representation)."""
    run_dir.write_config({**config.model_dump(), **facts, "created_at": datetime.now(UTC).isoformat()})


def write_resume_facts(run_dir: RunDir, config: AlmaConfig) -> None:
    """A resumed run: its generations, this session's executor, and when it was resumed."""
    facts = run_dir.read_config()
    facts.update(iterations=config.iterations, executor=config.executor, ray_address=config.ray_address)
    resumed = facts.get("resumed_at")
    facts["resumed_at"] = [*(resumed if isinstance(resumed, list) else []), datetime.now(UTC).isoformat()]
    run_dir.write_config(facts)


__all__ = ["write_new_facts", "write_resume_facts"]
