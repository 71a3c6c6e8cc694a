"""Which learner turns a coding session's turns into tips, and the learning of one turn into tip
files (the Lite tier).

The order (``choose_learner``): the model the user configured (``--model``, ``ATLAS_MODEL`` or a
provider API key: the full extraction pipeline of ``GuidelineBank``), else the coding agent's own
headless mode when it is installed (``claude -p``, ``codex exec``: ``agent_cli.py``), else the
no-LLM extractor (``rule_tips.py``: corrections, failing → working commands, errors and their
fixes). The local 0.5B model is used only when chosen (``ATLAS_LITE_LEARNER=local`` or
``--model local:...``). ``ATLAS_LITE_LEARNER`` = auto (default) | model | local | claude | codex |
rules forces one. When the model fails on a turn, the turn stays recorded for it to retry
(``atlas guidelines reprocess``) and the no-LLM extractor's tips are written meanwhile; when the
headless agent fails, the no-LLM extractor learns the turn.

Learning is idempotent: a turn the bank has processed is not learned again, tip ids are derived
from the turn, and an existing tip file is never overwritten, so a job replayed after a crash adds
each tip once."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas.core.types import Guideline, Trajectory
from atlas.errors import AtlasError
from atlas.infra.llm.resolve import resolve_default_model
from atlas.memory.guidelines.agent_cli import AgentCLITips, Budget, find_agent
from atlas.memory.guidelines.bank import GuidelineBank
from atlas.memory.guidelines.extraction import trajectory_record
from atlas.memory.guidelines.rule_tips import RuleTipExtractor
from atlas.memory.guidelines.tipfiles import TipFile, write_tip

log = logging.getLogger(__name__)

LEARNERS = ("auto", "model", "local", "claude", "codex", "rules")
RULES_NOTE = (
    "learning without a model: only corrections and command fixes become tips; richer tips need a "
    "model (set ANTHROPIC_API_KEY or OPENAI_API_KEY, or ATLAS_LITE_MODEL) or the claude/codex CLI"
)


@dataclass
class Learner:
    """The learner chosen for a server: ``kind`` is model, agent or rules; ``why`` says why."""

    kind: str
    why: str
    agent: AgentCLITips | None = None
    rules: RuleTipExtractor = field(default_factory=RuleTipExtractor)

    @property
    def note(self) -> str:
        return RULES_NOTE if self.kind == "rules" else f"learning with {self.why}"


def choose_learner(
    explicit_model: str | None, env: Mapping[str, str] | None = None, home: Path | None = None
) -> Learner:
    """The learner for this environment (module docstring)."""
    env = os.environ if env is None else env
    setting = (env.get("ATLAS_LITE_LEARNER") or "auto").strip().lower()
    if setting not in LEARNERS:
        raise AtlasError(f"ATLAS_LITE_LEARNER must be one of {', '.join(LEARNERS)}, got {setting!r}")
    if setting in ("model", "local") or (setting == "auto" and explicit_model):
        return Learner("model", f"the model {explicit_model or 'of the standard resolution'}")
    if setting == "auto":
        model, reason = resolve_default_model(None, env)
        if not model.startswith("local:"):
            return Learner("model", f"the model {model} ({reason})")
    if setting in ("auto", "claude", "codex"):
        agent = find_agent(setting if setting != "auto" else None, path=env.get("PATH"))
        if agent:
            executable = shutil.which(agent, path=env.get("PATH"))
            ledger = (home or Path.home() / ".atlas" / "lite") / "agent_budget.json"
            budget = Budget(
                ledger,
                max_usd_per_day=float(env.get("ATLAS_LITE_AGENT_MAX_USD") or 1.0),
                max_calls_per_day=int(env.get("ATLAS_LITE_AGENT_MAX_CALLS") or 100),
            )
            tips = AgentCLITips(
                agent,
                budget,
                timeout=float(env.get("ATLAS_LITE_AGENT_TIMEOUT") or 180),
                model=env.get("ATLAS_LITE_AGENT_MODEL") or None,
                executable=executable,
            )
            return Learner("agent", f"the headless `{agent}` CLI", agent=tips)
    return Learner("rules", "the no-LLM extractor")


@dataclass
class Learned:
    """What learning one turn did."""

    trajectory_id: str
    status: str  # learned | duplicate | failed
    tip_ids: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    learner: str = ""
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def write_files(tips_dir: Path | None, tips: list[Guideline], learner: str) -> list[str]:
    """Each tip as a file (an existing one is left as the person may have edited it)."""
    if tips_dir is None:
        return []
    out = []
    for g in tips:
        path = write_tip(tips_dir, TipFile.from_guideline(g, learner))
        if path is not None:
            out.append(str(path))
    return out


async def learn_turn(
    learner: Learner,
    bank: GuidelineBank,
    traj: Trajectory,
    tips_dir: Path | None,
    project_root: str | None = None,
) -> Learned:
    """Learn one turn into ``tips_dir`` and ``bank`` with ``learner`` (module docstring)."""
    prev = bank.store.trajectory(traj.id)
    if prev and prev.get("status") == "processed":
        # a crash may have come between the bank and the files: make sure the files exist
        ids = list(prev.get("guideline_ids", []))
        files = write_files(tips_dir, bank.store.get_many(ids), str(prev.get("learner") or ""))
        return Learned(traj.id, "duplicate", ids, files, reason="turn already learned")
    attempts = int(prev.get("attempts", 0)) + 1 if prev else 1
    notes = []
    tips: list[Guideline] = []
    if learner.kind == "model":
        result = await bank.asave(traj)
        if result.status in ("processed", "duplicate"):
            tips = bank.store.get_many(result.guideline_ids)
            return Learned(
                traj.id, "learned", result.guideline_ids, write_files(tips_dir, tips, "model"), "model"
            )
        # the turn stays recorded for the model to retry; meanwhile the no-LLM tips are written
        tips = learner.rules.extract(traj, project_root)
        files = write_files(tips_dir, tips, "rules")
        reason = f"{result.reason}; {len(tips)} tip(s) of the no-LLM extractor written meanwhile"
        return Learned(traj.id, "failed", [g.id for g in tips], files, "rules", reason)
    name = "rules"
    if learner.kind == "agent" and learner.agent is not None:
        try:
            tips = await learner.agent.extract(traj, project_root)
            name = f"{learner.agent.agent}-cli"
        except AtlasError as exc:
            notes.append(f"{exc}; the no-LLM extractor learned instead")
    if name == "rules":
        tips = learner.rules.extract(traj, project_root)
    files = write_files(tips_dir, tips, name)
    if tips:
        await bank.aimport_guidelines(tips)
    ids = [g.id for g in tips]
    record = trajectory_record(traj, "processed", attempts, None, None, ids, None)
    record["learner"] = name
    bank.store.put_trajectory(record)
    return Learned(traj.id, "learned", ids, files, name, "; ".join(notes) or None)


__all__ = ["LEARNERS", "RULES_NOTE", "Learned", "Learner", "choose_learner", "learn_turn", "write_files"]
