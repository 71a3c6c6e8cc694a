"""What a run folder's ``config.json`` says beside the settings: the resolved models, the tasks, when
the run started and each time it was resumed, and which executor played it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from atlas.alma.state.config import CONFIG_FORMAT, AlmaConfig, task_digest
from atlas.alma.state.run_dir import RunDir
from atlas.core.types import Task
from atlas.errors import ConfigError


def write_new_facts(run_dir: RunDir, config: AlmaConfig, **facts: Any) -> None:
    """The settings of a new run and the facts the search resolved (models, tasks, representation)."""
    created = datetime.now(UTC).isoformat()
    run_dir.write_config(
        {**config.model_dump(), **facts, "config_format": CONFIG_FORMAT, "created_at": created}
    )


def check_resume_tasks(run_dir: RunDir, tasks: Sequence[Task]) -> None:
    """ConfigError when the environment no longer makes the tasks the run was started on (its
    defaults or code changed): resuming would compare designs played on different tasks."""
    facts = run_dir.read_config()
    ids = [*facts.get("collection_tasks", []), *facts.get("deployment_tasks", [])]
    digest = facts.get("task_digest")
    if (digest is None or digest == task_digest(tasks)) and (not ids or ids == [t.id for t in tasks]):
        return
    raise ConfigError(
        f"{run_dir.path} was started on other tasks than its settings make now (the environment's "
        "defaults or code changed since): resuming would compare designs played on different tasks. "
        "Set the changed parameter in config.json's env_params, or start a new run"
    )


def write_resume_facts(run_dir: RunDir, config: AlmaConfig) -> None:
    """A resumed run: its generations, the executor it resumes with, and when it was resumed."""
    facts = run_dir.read_config()
    facts.update(iterations=config.iterations, executor=config.executor, ray_address=config.ray_address)
    resumed = facts.get("resumed_at")
    facts["resumed_at"] = [*(resumed if isinstance(resumed, list) else []), datetime.now(UTC).isoformat()]
    run_dir.write_config(facts)


__all__ = ["check_resume_tasks", "write_new_facts", "write_resume_facts"]
