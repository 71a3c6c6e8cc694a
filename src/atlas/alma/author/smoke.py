"""Smoke run of a design: static check, then a short sandboxed collection + deployment.

Shared by ``atlas design check`` and the MetaAgent (which shows ``SmokeReport.to_feedback()`` to
the LLM that wrote the design). Episodes come from the environment's built-in ``ExplorerPolicy``
(no LLM), so a smoke run costs seconds: for each of ``episodes`` tasks, ``recall`` (C<i>, the first
one on empty memory) → policy episode → ``update`` (C<i>); then ``freeze`` and ``recall`` on
``recall_tasks`` unseen tasks (D<j>), as in deployment.

Without an explicit ``llm`` the design's ``summarize``/``analyze`` are answered by a stub model
(a fixed short text, or a small JSON object for ``format="json"``): the smoke run checks that the
design *runs*, not what a real model would say.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atlas.alma.author.advice_probe import ProbeResult, advised_walk, can_probe, follow_advice
from atlas.alma.design import Design, DesignProblem, check_design
from atlas.alma.evaluate.runlog import CallLog
from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool
from atlas.envs.registry import DEFAULT_ENV
from atlas.infra.aio import run_sync
from atlas.protocols.embed import Embedder
from atlas.protocols.env import Environment
from atlas.protocols.llm import LLM

if TYPE_CHECKING:
    from rich.console import Console

# Explorer episodes by (environment, task, seed): views are plain JSON, copied by the sandbox call.
_PLAYED: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {}

STUB_TEXT = "- (smoke-run stub model) Explore systematically and remember what you saw."
STUB_JSON = {
    "insights": [{"title": "stub insight", "content": "smoke-run stub model reply"}],
    "summary": "smoke-run stub model reply",
}


def stub_llm() -> Any:
    """The stand-in model of smoke runs (deterministic; JSON when the prompt asks for JSON)."""
    from atlas.infra.llm import ScriptedLLM

    def reply(messages: list[dict[str, Any]], **kwargs: Any) -> str:
        prompt = str(messages[-1].get("content", "")) if messages else ""
        return json.dumps(STUB_JSON) if "JSON" in prompt else STUB_TEXT

    return ScriptedLLM(reply)


@dataclass
class SmokeReport:
    """Outcome of a smoke run. ``ok`` = valid, no call failed, every deployment recall gave advice."""

    design_name: str
    design_id: str
    env: str
    problems: list[DesignProblem] = field(default_factory=list)
    protections: dict[str, Any] = field(default_factory=dict)
    calls: list[CallLog] = field(default_factory=list)
    duration_s: float = 0.0
    episode_results: list[dict[str, Any]] = field(default_factory=list)
    stopped_early: str | None = None
    # Deployment tasks played by the advice probe (atlas.alma.author.advice_probe): label + ProbeResult fields.
    probes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def errors(self) -> list[CallLog]:
        return [c for c in self.calls if c.error is not None]

    @property
    def ran_clean(self) -> bool:
        return self.valid and bool(self.calls) and not self.errors

    @property
    def advice(self) -> list[str]:
        """Return values of the deployment recalls (D<j>)."""
        return [c.return_value or "" for c in self.calls if c.phase == "recall" and c.episode.startswith("D")]

    @property
    def advice_ok(self) -> bool:
        return bool(self.advice) and all(a.strip() for a in self.advice)

    @property
    def ok(self) -> bool:
        return self.ran_clean and self.advice_ok

    def verdict(self) -> str:
        if not self.valid:
            return f"INVALID: {len(self.problems)} static-check problem(s)"
        if self.errors:
            early = f" ({self.stopped_early})" if self.stopped_early else ""
            return f"FAILED: {len(self.errors)} of {len(self.calls)} calls raised an error{early}"
        if not self.advice_ok:
            return "NO ADVICE: recall returned empty text on deployment tasks"
        return "OK"

    def to_dict(self) -> dict[str, Any]:
        return {
            "design_name": self.design_name,
            "design_id": self.design_id,
            "env": self.env,
            "ok": self.ok,
            "verdict": self.verdict(),
            "stopped_early": self.stopped_early,
            "problems": [p.model_dump() for p in self.problems],
            "protections": self.protections,
            "duration_s": round(self.duration_s, 3),
            "episodes": self.episode_results,
            "probes": self.probes,
            "calls": [c.to_dict() for c in self.calls],
        }

    def to_feedback(self, max_chars: int = 4000) -> str:
        """Compact text for an LLM prompt: verdict, problems or errors with design line numbers,
        a few log lines per failing call, one advice sample."""
        out = [f"Smoke run of design {self.design_name!r} on {self.env}: {self.verdict()}"]
        if not self.valid:
            out.append("Static check problems (fix all of them):")
            out += [f"- {p}" for p in self.problems]
            return _clip("\n".join(out), max_chars)
        for c in self.errors[:3]:
            out.append(f"[{c.episode}:{c.phase}] {c.error_kind} error: {c.error}")
            if c.traceback:
                out += ["    " + line for line in c.traceback.splitlines()[-6:]]
            out += ["    " + line for line in c.format_lines()[:8] if " TOOL " in line or " PRINT" in line][
                :6
            ]
        if len(self.errors) > 3:
            out.append(f"... and {len(self.errors) - 3} more failing calls")
        quality = [s.label for c in self.calls for s in c.similarity]
        if quality:
            counts = {lbl: quality.count(lbl) for lbl in sorted(set(quality))}
            out.append("find_similar quality: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
        tools = [t.name for c in self.calls for t in c.tool_calls]
        if tools:
            calls = {n: tools.count(n) for n in sorted(set(tools))}
            out.append("tool calls: " + ", ".join(f"{k}={v}" for k, v in calls.items()))
        refused = [t for c in self.calls for t in c.tool_calls if t.error]
        for t in refused[:3]:
            out.append(f"tool error: {t.name}: {t.error}")
        times = [c.duration_s for c in self.calls]
        if times:
            out.append(
                f"call time: max {max(times) * 1000:.0f} ms, mean {sum(times) / len(times) * 1000:.0f} ms"
            )
        sample = next((a for a in self.advice if a.strip()), "")
        out.append("advice sample: " + (json.dumps(sample[:600]) if sample else "(empty)"))
        out += self.probe_lines()
        return _clip("\n".join(out), max_chars)

    def probe_lines(self) -> list[str]:
        """The advice probe's outcome, for the MetaAgent ([] when no probe ran)."""
        if not self.probes:
            return []
        solved = sum(1 for p in self.probes if p["success"])
        out = [
            f"advice probe: an agent doing only what your advice names (read the way the task agent "
            f"reads it, no LLM) solved {solved}/{len(self.probes)} deployment tasks"
        ]
        return out + ["  " + _clip(ProbeResult.from_dict(p).line(p["label"]), 400) for p in self.probes]

    def render(self, console: Console) -> None:
        """A readable rich report (``atlas design check``). Everything a design produced (errors,
        advice, source lines in problems) is shown as plain text: no rich markup, no terminal
        control sequences."""
        from rich.markup import escape
        from rich.panel import Panel
        from rich.table import Table
        from rich.text import Text

        def safe(text: Any) -> str:
            return escape(_visible(str(text)))

        style = "green" if self.ok else "red"
        console.print(
            Panel(
                f"[bold]{safe(self.design_name)}[/] on {self.env}: [{style}]{self.verdict()}[/]",
                title="design check",
            )
        )
        if self.protections:
            console.print(f"[bold]protections:[/] {self.protections.get('summary', '?')}")
            for d in self.protections.get("degraded", []):
                console.print(f"  [yellow]degraded:[/] {d}")
        if not self.valid:
            for p in self.problems:
                console.print(f"  [red]✗[/] {safe(p)}")
            return
        table = Table(title="calls", show_lines=False)
        for col in ("call", "ms", "tools", "prints", "result"):
            table.add_column(col)
        for c in self.calls:
            if c.error:
                result = f"[red]{c.error_kind}: {safe(c.error[:90])}[/]"
            elif c.phase == "recall":
                result = safe(repr((c.return_value or "")[:60]))
            else:
                result = "ok"
            table.add_row(
                f"{c.episode}:{c.phase}",
                f"{c.duration_s * 1000:.1f}",
                str(len(c.tool_calls)),
                str(len(c.prints)),
                result,
            )
        console.print(table)
        for c in self.errors[:3]:
            console.print(f"[red]{c.episode}:{c.phase}[/] {safe(c.error)}")
            if c.traceback:
                console.print(_visible(c.traceback), markup=False, highlight=False)
        sample = next((a for a in self.advice if a.strip()), "")
        if sample:
            console.print(Panel(Text(_visible(sample[:1200])), title="advice sample (D1)"))
        for line in self.probe_lines():
            console.print(_visible(line), markup=False, highlight=False)


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(text: str) -> str:
    """``text`` with control characters (terminal escape sequences, bidi overrides) shown as
    ``\\x1b``-style escapes instead of being sent to the terminal."""
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 20] + "\n...[truncated]"


async def asmoke_run(
    design: Design | str,
    env: str | Environment = DEFAULT_ENV,
    episodes: int = 3,
    *,
    recall_tasks: int = 2,
    llm: LLM | None = None,
    embedder: Embedder | None = None,
    pool: WorkerPool | None = None,
    limits: SandboxLimits | None = None,
    seed: int = 0,
    skip_static_check: bool = False,
    max_timeouts: int = 2,
    tasks: tuple[list[Any], list[Any]] | None = None,
    explorer_episodes: int | None = None,
    walks: str = "goal_words",
    unadvised: str = "stop",
    logged: Mapping[str, Sequence[str]] | None = None,
    isolated: bool = True,
) -> SmokeReport:
    """Async smoke run (see the module docstring). ``design`` may be a Design or source text;
    ``env`` an environment name or instance; ``tasks``: (collection, deployment) tasks to play instead
    of ``episodes`` + ``recall_tasks`` generated ones; ``explorer_episodes``: how many collection
    episodes the explorer plays (None: all), the rest random valid actions that favour what the goal
    names (``GoalWordPolicy``) — the mix a weak task agent's collection has (few episodes solved,
    many wanderings); ``walks`` names another walk (``atlas.envs.policies.WALKS``): ``random``, or
    ``goal_averse``, a collection that solves nothing, or ``advised``: each episode played with the
    design's own advice as memory grows (``advised_walk``), as the task agent collects, or ``logged``:
    the actions a task agent took in each collection task (``logged``: ``{task id: [action, ...]}``).
    ``unadvised``: the probe's rule where the advice names nothing (``follow_advice``).
    ``isolated=False``: the design's calls may share sandbox workers (``DesignRunner``), for the
    genome screening of the parts' own code."""
    from atlas.alma.baselines import make_host_design
    from atlas.alma.evaluate.runner import DesignRunner
    from atlas.envs.policies import WALKS, ExplorerPolicy, GoalAversePolicy, LoggedWalk, form_words
    from atlas.envs.registry import get_env
    from atlas.envs.views import episode_view, task_view

    if walks not in (*WALKS, "advised", "logged"):
        raise ValueError(f"walks must be one of {', '.join(WALKS)}, advised, logged; got {walks!r}")
    if walks == "logged" and logged is None:
        raise ValueError("walks='logged' replays a task agent's logged actions: pass logged={task id: [...]}")
    if isinstance(design, str):
        design = Design(name="candidate", source=design, origin="meta")
    environment = get_env(env) if isinstance(env, str) else env
    report = SmokeReport(design_name=design.name, design_id=design.id, env=environment.name)
    started = time.perf_counter()
    if design.origin != "host" and not skip_static_check:
        report.problems = check_design(design.source)
        if report.problems:
            return report
    if embedder is None:
        from atlas.infra.embeddings import default_embedder

        embedder = default_embedder()
    runner = DesignRunner(
        design,
        embedder=embedder,
        llm=llm if llm is not None else stub_llm(),
        pool=pool,
        limits=limits,
        skip_static_check=skip_static_check,
        host_executor=make_host_design,
        isolated=isolated,
    )

    def too_slow() -> bool:
        # a design that hangs would cost a full timeout per call: two timeouts are evidence enough
        if sum(1 for c in report.calls if c.error_kind == "timeout") >= max_timeouts:
            report.stopped_early = f"stopped after {max_timeouts} timed-out calls"
            return True
        return False

    try:
        report.protections = runner.protections
        if tasks is None:
            made = environment.generate_tasks(episodes + recall_tasks, seed)
            tasks = (made[:episodes], made[episodes:])
        form = form_words([environment.format_goal(t) for t in tasks[0]])  # goal-averse walks may name it
        for i, task in enumerate(tasks[0], start=1):
            explore = explorer_episodes is None or i <= explorer_episodes
            if not explore and walks == "advised" and can_probe(environment):
                # played with this design's own advice: the episode differs per design, nothing to cache
                play = environment.clone()
                _, log = await runner.recall(task_view(play, task, play.reset(task)), label=f"C{i}")
                report.calls.append(log)
                trajectory = advised_walk(play, task, log.return_value or "", seed)
                report.episode_results.append(
                    {
                        "label": f"C{i}",
                        "success": trajectory.success,
                        "score": trajectory.score,
                        "steps": len(trajectory.steps),
                    }
                )
                report.calls.append(await runner.update(episode_view(play, trajectory), label=f"C{i}"))
                if too_slow():
                    return report
                continue
            policy = (
                ExplorerPolicy(seed)
                if explore or walks == "advised"  # advised, where the actions are not listed: the explorer
                else LoggedWalk(logged or {})
                if walks == "logged"
                else GoalAversePolicy(seed, form=form)
                if walks == "goal_averse"
                else WALKS[walks](seed)
            )
            key = (
                id(environment),
                environment.name,
                task.id,
                repr(sorted(task.metadata.items())),
                seed,
                "explorer" if explore else walks,
                tuple(sorted(form)),
                tuple((logged or {}).get(task.id, ())) if walks == "logged" and not explore else (),
            )
            if key not in _PLAYED:  # policies ignore advice: their episode is the same for every design
                play = environment.clone()
                first = task_view(play, task, play.reset(task))
                trajectory = policy.run(play, task)
                result = {
                    "success": trajectory.success,
                    "score": trajectory.score,
                    "steps": len(trajectory.steps),
                }
                _PLAYED[key] = (first, episode_view(play, trajectory), result)
                while len(_PLAYED) > 256:
                    _PLAYED.pop(next(iter(_PLAYED)))
            first, episode, result = _PLAYED[key]
            _, log = await runner.recall(first, label=f"C{i}")
            report.calls.append(log)
            report.episode_results.append({"label": f"C{i}", **result})
            report.calls.append(await runner.update(episode, label=f"C{i}"))
            if too_slow():
                return report
        runner.freeze()
        for j, task in enumerate(tasks[1], start=1):
            play = environment.clone()
            _, log = await runner.recall(task_view(play, task, play.reset(task)), label=f"D{j}")
            report.calls.append(log)
            if can_probe(play) and log.error is None:
                probe = follow_advice(play, task, log.return_value or "", unadvised=unadvised)
                report.probes.append({"label": f"D{j}", **probe.to_dict()})
            if too_slow():
                return report
    finally:
        await runner.aclose()
        report.duration_s = time.perf_counter() - started
    return report


def smoke_run(
    design: Design | str, env: str | Environment = DEFAULT_ENV, episodes: int = 3, **kwargs: Any
) -> SmokeReport:
    """Sync wrapper of ``asmoke_run`` (safe inside a running event loop)."""
    return run_sync(asmoke_run(design, env, episodes, **kwargs))


__all__ = ["SmokeReport", "asmoke_run", "smoke_run", "stub_llm"]
