"""Learning tips with the coding agent's own headless mode: ``claude -p`` (Claude Code) or
``codex exec`` (Codex CLI), one call per turn, in the background job (never inside a hook).

The agent reads the turn (``render_trajectory``) and answers a JSON object of tips; the call has a
time limit, and a spending cap kept in a small ledger file (Claude Code reports each call's cost;
Codex does not, so its calls are counted instead). The child runs with ``ATLAS_LITE_DISABLE=1`` in a
temporary folder, so the plugin's own hooks do not fire inside it and it does not learn from itself."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atlas.core.types import Guideline, Trajectory
from atlas.errors import LLMError
from atlas.memory.common import render_trajectory
from atlas.memory.guidelines.generalize import RuleGeneralizer
from atlas.memory.guidelines.rule_tips import relative_paths, tip_id

AGENTS = ("claude", "codex")
PROMPT = """You are reading one turn of a coding session in a software project. Write the tips a \
future session in THIS project should know so it does not repeat a mistake or rediscover a fact: \
how to build, test or run things here, a command that fails and the one that works, an error and \
its fix, a rule the user stated. Keep every command, flag, path, package name and version exactly \
as written. Leave out anything true of only this one task (ticket numbers, one-off files). At most \
3 tips; none if the turn teaches nothing. Do not use any tool. Answer with JSON only:
{"tips": [{"content": "...", "trigger": "when it applies", "kind": "strategy|recovery|optimization"}]}

The turn:
"""


@dataclass
class Budget:
    """How much the headless agent may spend per day: dollars (Claude Code) and calls (both)."""

    ledger: Path
    max_usd_per_day: float = 1.0
    max_calls_per_day: int = 100

    def _read(self) -> dict[str, Any]:
        today = time.strftime("%Y-%m-%d")
        try:
            data = json.loads(self.ledger.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        return (
            data
            if isinstance(data, dict) and data.get("day") == today
            else {"day": today, "usd": 0.0, "calls": 0}
        )

    def left(self) -> str | None:
        """None while the budget allows another call; else why not."""
        data = self._read()
        if float(data.get("usd", 0)) >= self.max_usd_per_day:
            return f"the headless agent spent ${data['usd']:.2f} today (cap ${self.max_usd_per_day:.2f})"
        if int(data.get("calls", 0)) >= self.max_calls_per_day:
            return f"the headless agent was called {data['calls']} times today (cap {self.max_calls_per_day})"
        return None

    def spend(self, usd: float) -> None:
        data = self._read()
        data["usd"] = float(data.get("usd", 0)) + usd
        data["calls"] = int(data.get("calls", 0)) + 1
        from atlas.memory.guidelines.tipfiles import atomic_write

        with contextlib.suppress(OSError):
            atomic_write(self.ledger, json.dumps(data))


def find_agent(prefer: str | None = None, path: str | None = None) -> str | None:
    """The headless agent to learn with: ``prefer`` if installed, else the first of ``AGENTS`` on PATH."""
    order = [prefer] if prefer in AGENTS else list(AGENTS)
    return next((a for a in order if a and shutil.which(a, path=path)), None)


def parse_tips(text: str) -> list[dict[str, Any]]:
    """The tips of an agent's answer: the first JSON object with a ``tips`` list in it."""
    for m in re.finditer(r"\{", text):
        with contextlib.suppress(ValueError):
            data, _ = json.JSONDecoder().raw_decode(text[m.start() :])
            if isinstance(data, dict) and isinstance(data.get("tips"), list):
                return [t for t in data["tips"] if isinstance(t, dict) and isinstance(t.get("content"), str)]
    raise LLMError(f"the headless agent's answer holds no JSON tips: {text[:200]!r}")


class AgentCLITips:
    """Tips from one call of ``claude -p`` or ``codex exec`` per turn."""

    def __init__(
        self,
        agent: str,
        budget: Budget,
        *,
        timeout: float = 180.0,
        model: str | None = None,
        executable: str | None = None,
        rules: RuleGeneralizer | None = None,
    ) -> None:
        if agent not in AGENTS:
            raise ValueError(f"agent must be one of {AGENTS}, got {agent!r}")
        self.agent = agent
        self.budget = budget
        self.timeout = timeout
        self.model = model
        self.executable = executable or shutil.which(agent) or agent
        self.rules = rules or RuleGeneralizer()

    def argv(self, prompt: str, out_file: str) -> list[str]:
        if self.agent == "claude":
            cmd = [self.executable, "-p", "--output-format", "json", "--max-turns", "1"]
        else:
            cmd = [self.executable, "exec", "--skip-git-repo-check", "--sandbox", "read-only"]
            cmd += ["--output-last-message", out_file]
        if self.model:
            cmd += ["--model", self.model]
        return [*cmd, prompt]

    async def run(self, prompt: str) -> tuple[str, float]:
        """The agent's answer text and what it cost (0 when it does not say)."""
        why = self.budget.left()
        if why:
            raise LLMError(f"{why}; set ATLAS_LITE_AGENT_MAX_USD or ATLAS_LITE_AGENT_MAX_CALLS to raise it")
        with tempfile.TemporaryDirectory(prefix="atlas-learn-") as tmp:
            out_file = os.path.join(tmp, "answer.txt")
            env = {**os.environ, "ATLAS_LITE_DISABLE": "1"}
            try:
                proc = await asyncio.create_subprocess_exec(
                    *self.argv(prompt, out_file),
                    cwd=tmp,
                    env=env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                )
            except OSError as exc:
                raise LLMError(f"cannot run `{self.executable}`: {exc.strerror or exc}") from exc
            try:
                out, err = await asyncio.wait_for(proc.communicate(), self.timeout)
            except TimeoutError as exc:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, 9)
                await proc.wait()
                self.budget.spend(0.0)
                raise LLMError(f"`{self.agent}` did not answer in {self.timeout:g} s; killed") from exc
            text = out.decode(errors="replace")
            if proc.returncode != 0:
                self.budget.spend(0.0)
                raise LLMError(
                    f"`{self.agent}` exited {proc.returncode}: {err.decode(errors='replace')[-300:]}"
                )
            cost = 0.0
            if self.agent == "claude":
                with contextlib.suppress(ValueError):
                    data = json.loads(text)
                    if isinstance(data, dict):
                        cost = float(data.get("total_cost_usd") or 0.0)
                        text = str(data.get("result", text))
            elif os.path.exists(out_file):
                text = Path(out_file).read_text(encoding="utf-8", errors="replace")
            self.budget.spend(cost)
            return text, cost

    async def extract(self, trajectory: Trajectory, project_root: str | None = None) -> list[Guideline]:
        root = project_root or str(trajectory.metadata.get("cwd") or "")
        text, _ = await self.run(PROMPT + relative_paths(render_trajectory(trajectory, max_steps=40), root))
        tips = []
        for raw in parse_tips(text)[:3]:
            content = self.rules.generalize_text(relative_paths(str(raw["content"]).strip(), root))
            kind = (
                raw.get("kind") if raw.get("kind") in ("strategy", "recovery", "optimization") else "strategy"
            )
            if not content:
                continue
            tips.append(
                Guideline(
                    id=tip_id(content),
                    category=kind,
                    content=content,
                    trigger=self.rules.generalize_text(str(raw.get("trigger") or "")),
                    task_category="coding",
                    source_trajectory_ids=[trajectory.id],
                    metadata={"learner": f"{self.agent}-cli", "task": trajectory.task.description[:300]},
                )
            )
        return tips


__all__ = ["AGENTS", "AgentCLITips", "Budget", "find_agent", "parse_tips"]
