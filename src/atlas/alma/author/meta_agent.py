"""MetaAgent: writes a new memory design from parent designs, their scores and a critique.

Multi-turn: each candidate goes through the static check (``check_design``) and a sandboxed
smoke run (``atlas.alma.author.smoke.smoke_run``, the machinery behind ``atlas design check``); their
findings are fed back and the model fixes its module, up to ``max_turns`` rounds. A design that
never validates comes back with ``status == "invalid"`` and every error seen, so the loop can
record it and go on. The prompts are domain-blind: the only domain knowledge the model gets is
the environment's context schema.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atlas.alma.author.design_ops import crossover, functions, splice
from atlas.alma.author.prompts import (
    META_SYSTEM,
    TOOLS_DOC,
    design_contract,
    meta_feedback,
    meta_request,
    probe_feedback,
    schema_text,
)
from atlas.alma.design import Design, check_design
from atlas.envs.registry import spec_of
from atlas.errors import DesignError, LLMError, ScriptExhaustedError
from atlas.protocols.embed import Embedder
from atlas.protocols.env import Environment
from atlas.protocols.llm import LLM, Message

if TYPE_CHECKING:
    from atlas.alma.author.smoke import SmokeReport
    from atlas.alma.sandbox.pool import WorkerPool

#: What runs a smoke run: ``smoke(design, env, episodes=..., embedder=..., llm=..., pool=...)``.
SmokeRun = Callable[..., "SmokeReport | Awaitable[SmokeReport]"]

_OPEN = re.compile(r"(`{3,}|~{3,})\s*([\w+#.-]*)")
_NAME = re.compile(r"^\s*\**name\**\s*[:=]\s*`?([A-Za-z][\w\- ]{0,60})`?", re.IGNORECASE | re.MULTILINE)
PYTHON_TAGS = {"", "python", "py", "python3", "py3"}
MAX_SOURCE_CHARS = 40_000  # a design module longer than this is refused (it is shown to later prompts)
MAX_ECHO_CHARS = 20_000  # of a reply kept in the next turn's prompt
# Reply budget: a whole design module (GraphWorld's seed is ~1,400 tokens) must fit; backends clamp
# it to the context left after the prompt. Under the old default of 1,024 every rewrite of the seed
# was cut mid-line and "fixed" three times into the same syntax error.
MAX_REPLY_TOKENS = 4096


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, code)`` of every fenced block (``` or ~~~), in order; an unclosed last fence
    runs to the end of the reply."""
    blocks: list[tuple[str, str]] = []
    fence, lang = "", ""
    buf: list[str] = []
    for line in (text or "").splitlines():
        s = line.strip()
        if not fence:
            m = _OPEN.match(s)
            if m:
                fence, lang, buf = m.group(1), m.group(2).lower(), []
        elif s.startswith(fence) and not s.strip(fence[0]):
            blocks.append((lang, "\n".join(buf)))
            fence = ""
        elif s.endswith(fence) and s != fence:  # code and closing fence on one line
            buf.append(line.rstrip()[: -len(fence)])
            blocks.append((lang, "\n".join(buf)))
            fence = ""
        else:
            buf.append(line)
    if fence:
        blocks.append((lang, "\n".join(buf)))
    return blocks


def _defines(code: str) -> bool:
    return "def recall" in code or "def update" in code


def extract_code(text: str) -> str | None:
    """The Python module in a reply: the longest fenced block holding ``def recall`` or
    ``def update`` (Python-tagged or untagged blocks first, then any tag; else the longest
    Python block; an unclosed last fence counts), or a bare module."""
    blocks = fenced_blocks(text)
    python = [code for lang, code in blocks if lang in PYTHON_TAGS]
    pick = [c for c in python if _defines(c)] or [c for _, c in blocks if _defines(c)] or python
    pick = [c for c in pick if c.strip()]
    if pick:
        return _without_header(textwrap.dedent(max(pick, key=len)).strip("\n")) + "\n"
    if not blocks and "def update" in (text or "") and "def recall" in (text or ""):
        return _without_header(text.strip()) + "\n"
    return None


_HEADER = re.compile(r"^\s*(name|plan)\s*:", re.IGNORECASE)


def _without_header(code: str) -> str:
    """``code`` without the reply's own "Name: ..." / "Plan: ..." lines when the model put them at the
    top of the fence (prose there is a syntax error; the name is read from the reply anyway)."""
    lines = code.splitlines()
    while lines and (_HEADER.match(lines[0]) or (not lines[0].strip() and len(lines) > 1)):
        lines.pop(0)
    return "\n".join(lines).strip("\n")


def no_code_problem(text: str) -> str:
    """Why no module was found in ``text`` (fed back to the model)."""
    langs = sorted({lang for lang, _ in fenced_blocks(text) if lang not in PYTHON_TAGS})
    if langs:
        return (
            f"the reply's code is in {', '.join(langs)}, not Python: write the module in Python, in one "
            "```python fence defining update() and recall()"
        )
    return "no ```python fence with a module defining update() and recall() found in the reply"


def extract_name(text: str, default: str) -> str:
    m = _NAME.search(text or "")
    if not m:
        return default
    name = re.sub(r"[^0-9a-zA-Z]+", "_", m.group(1).strip()).strip("_").lower()
    return name[:48] or default


@dataclass
class MetaResult:
    """What the MetaAgent produced: a validated source (``status == "ok"``) or the last attempt
    and every problem met (``status == "invalid"``)."""

    name: str
    source: str | None
    status: str  # "ok" | "invalid" (never validated) | "error" (the model call failed)
    errors: list[str] = field(default_factory=list)
    turns: int = 0
    smoke_feedback: str | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)  # per turn: problems, smoke ok


class MetaAgent:
    """``await MetaAgent(llm, env=env, embedder=..., design_llm=...).generate(parents, critique, ...)``.

    The smoke run (``atlas.alma.author.smoke.asmoke_run``) plays ``smoke_episodes`` built-in policy
    episodes through ``update`` and then tries ``recall`` on unseen tasks; ``design_llm`` answers the
    design's summarize/analyze there (None: the smoke run's stub model, cheap and deterministic);
    ``pool`` shares sandbox workers with the harness. ``llm`` may be None for ``crossover`` only
    (made from code, no model call).
    """

    def __init__(
        self,
        llm: LLM | None,
        *,
        env: Environment,
        embedder: Embedder | None = None,
        design_llm: LLM | None = None,
        max_turns: int = 3,
        smoke_episodes: int = 2,
        smoke: SmokeRun | None = None,
        pool: WorkerPool | None = None,
        temperature: float | None = 0.7,
        probe_retry: bool = False,
    ) -> None:
        self.llm = llm
        self.env = env
        self.embedder = embedder
        self.design_llm = design_llm
        self.max_turns = max_turns
        self.smoke_episodes = smoke_episodes
        self._smoke = smoke
        self.pool = pool
        self.temperature = temperature
        self._schema: str | None = None
        self.probe_retry = probe_retry
        self._last_recalls: list[str] | None = None
        # the last smoke run's advice-probe lines when its advice steered no probe task to success
        self._last_probe: str | None = None
        self._parent_reports: dict[str, SmokeReport] = {}

    def system_prompt(self) -> str:
        if self._schema is None:
            self._schema = schema_text(spec_of(self.env).context_schema(self.env))
        return META_SYSTEM.format(contract=design_contract(), tools=TOOLS_DOC, schema=self._schema)

    async def _smoke_report(self, design: Design) -> SmokeReport:
        smoke: SmokeRun
        if self._smoke is not None:
            smoke = self._smoke
        else:
            from atlas.alma.author.smoke import asmoke_run

            smoke = asmoke_run
        kwargs: dict[str, Any] = {"episodes": self.smoke_episodes}
        if self.embedder is not None:
            kwargs["embedder"] = self.embedder
        if self.design_llm is not None:
            kwargs["llm"] = self.design_llm
        if self.pool is not None:
            kwargs["pool"] = self.pool
        report = smoke(design, self.env, **kwargs)
        return await report if inspect.isawaitable(report) else report

    async def _smoke_check(self, design: Design) -> tuple[bool, str]:
        report = await self._smoke_report(design)
        self._last_recalls = _recalls(report)
        probes = report.probes or []
        failed = bool(probes) and not any(p.get("success") for p in probes)
        self._last_probe = "\n".join(report.probe_lines()) if failed else None
        return bool(report.ok), report.to_feedback()

    async def _parent_report(self, parent: dict[str, Any], i: int) -> SmokeReport | None:
        """The smoke report of a parent (cached by source; None for host designs and sourceless
        parents): the twin check's reference and the parent's advice probe."""
        source = parent.get("source")
        if not source or parent.get("origin") == "host":
            return None
        if source not in self._parent_reports:
            design = Design(
                id=str(parent.get("id") or f"parent-{i}"),
                name=str(parent.get("name") or f"parent_{i}"),
                source=source,
                origin="meta",
            )
            self._parent_reports[source] = await self._smoke_report(design)
        return self._parent_reports[source]

    async def twin_of(self, recalls: list[str] | None, parents: list[dict[str, Any]]) -> int | None:
        """The number (1-based) of the parent whose smoke run recalls exactly the same advice, task
        for task, as the candidate's did (``recalls``): a copy, whatever its formatting. None: none."""
        if not recalls:
            return None
        for i, parent in enumerate(parents, start=1):
            report = await self._parent_report(parent, i)
            if report is not None and _recalls(report) == recalls:
                return i
        return None

    async def _with_probe(self, parent: dict[str, Any], i: int) -> dict[str, Any]:
        """The parent's brief with its smoke run's advice probe (``probe``) when one ran."""
        report = await self._parent_report(parent, i)
        probe = "\n".join(report.probe_lines()) if report is not None else ""
        return {**parent, "probe": probe} if probe else parent

    async def generate(
        self,
        parents: list[dict[str, Any]],
        critique: str | None,
        *,
        generation: int,
        baseline: float | None = None,
        design_id: str = "candidate",
        mode: str = "write",
        example: str | None = None,
    ) -> MetaResult:
        """Write a design. ``parents``: dicts with id, name, source, scores and ``analysis``.
        ``mode="edit"``: the model returns one function, spliced into the first parent's source
        (a reply holding a whole module is taken as a new design). ``example``: advice that lets
        the agent succeed on one collection task, shown as the kind of advice to aim for."""
        default_name = f"design_g{generation}"
        parents = [await self._with_probe(p, i) for i, p in enumerate(parents, start=1)]
        messages: list[Message] = [
            {"role": "system", "content": self.system_prompt()},
            {
                "role": "user",
                "content": meta_request(parents, critique, baseline, generation, mode=mode, example=example),
            },
        ]
        result = MetaResult(name=default_name, source=None, status="invalid")
        fallback: tuple[str, str, str | None] | None = None  # a valid design sent back by the advice probe
        for turn in range(1, self.max_turns + 1):
            result.turns = turn
            # Only the latest attempt and its feedback stay in the prompt (small contexts).
            messages = [*messages[:2], *messages[-2:]] if len(messages) > 4 else messages
            assert self.llm is not None, "MetaAgent.generate needs a model (crossover does not)"
            try:
                reply = await self.llm.acomplete(
                    messages, temperature=self.temperature, max_tokens=MAX_REPLY_TOKENS
                )
            except ScriptExhaustedError:
                raise
            except LLMError as exc:  # failed after its retries: record it, the search goes on
                result.status = "error"
                result.errors.append(f"turn {turn}: the meta model failed: {exc}")
                return result
            text = reply.text or ""
            messages.append({"role": "assistant", "content": _echo(text)})
            source = extract_code(text)
            result.name = extract_name(text, result.name)
            if source is not None and mode == "edit" and not _whole_module(source):
                try:
                    source = splice(parents[0]["source"], source)
                except DesignError as exc:
                    problem = f"the edit cannot be applied to Parent 1: {exc}"
                    result.errors.append(f"turn {turn}: {problem}")
                    result.attempts.append({"turn": turn, "problems": [problem], "smoke_ok": None})
                    messages.append({"role": "user", "content": meta_feedback([problem], None)})
                    continue
            if source is None:
                problem = no_code_problem(text)
                result.errors.append(f"turn {turn}: {problem}")
                result.attempts.append({"turn": turn, "problems": [problem], "smoke_ok": None})
                messages.append({"role": "user", "content": meta_feedback([problem], None)})
                continue
            if len(source) > MAX_SOURCE_CHARS:
                problem = (
                    f"the module is {len(source):,} characters; keep it under {MAX_SOURCE_CHARS:,} "
                    "(store data in memory or the tools, not in the source)"
                )
                result.source = source[:MAX_SOURCE_CHARS] + "\n# [... cut: the module was too long]\n"
                result.errors.append(f"turn {turn}: {problem}")
                result.attempts.append({"turn": turn, "problems": [problem], "smoke_ok": None})
                messages.append({"role": "user", "content": meta_feedback([problem], None)})
                continue
            result.source = source
            copied = copied_example_lines(source, example)
            if copied:
                problem = (
                    f"your module writes the example's advice literally ({len(copied)} lines, e.g. "
                    f"{copied[0]!r}): that advice is for another task. recall() must compute its lines "
                    "from the task and from what update() stored"
                )
                result.errors.append(f"turn {turn}: {problem}")
                result.attempts.append({"turn": turn, "problems": [problem], "smoke_ok": None})
                messages.append({"role": "user", "content": meta_feedback([problem], None)})
                continue
            problems, ok, feedback = await self.validate(source, result.name, design_id)
            if problems and reply.usage.completion_tokens >= MAX_REPLY_TOKENS:
                problems = [
                    f"your reply stopped at the {MAX_REPLY_TOKENS}-token limit, so the module is cut "
                    "off: write a shorter one (fewer comments and helpers), or change one function",
                    *problems,
                ]
            if problems:
                result.errors.extend(f"turn {turn}: {p}" for p in problems)
                result.attempts.append({"turn": turn, "problems": problems, "smoke_ok": None})
                messages.append({"role": "user", "content": meta_feedback(problems, None)})
                continue
            result.smoke_feedback = feedback
            twin = await self.twin_of(self._last_recalls, parents) if ok else None
            if twin is not None:
                problem = (
                    f"your design gives exactly the same advice as Parent {twin} on every smoke task: "
                    "it is a copy of it. Change what memory stores or what recall returns"
                    + (" (one function, as asked)" if mode == "edit" else "")
                )
                result.errors.append(f"turn {turn}: {problem}")
                result.attempts.append({"turn": turn, "problems": [problem], "smoke_ok": ok, "copy_of": twin})
                messages.append({"role": "user", "content": meta_feedback([problem], None)})
                continue
            result.attempts.append({"turn": turn, "problems": [], "smoke_ok": ok})
            if ok and self._last_probe and self.probe_retry and turn < self.max_turns and fallback is None:
                # valid, but its advice steers nothing: one more turn to make it actionable
                fallback = (result.name, source, feedback)
                result.errors.append(f"turn {turn}: the advice probe solved no task")
                messages.append({"role": "user", "content": probe_feedback(self._last_probe)})
                continue
            if ok:
                result.status = "ok"
                return result
            result.errors.append(f"turn {turn}: smoke run failed:\n{(feedback or '').strip()}")
            messages.append({"role": "user", "content": meta_feedback([], feedback)})
        if fallback is not None:  # the later turns did not produce a valid design: keep the valid one
            result.name, result.source, result.smoke_feedback = fallback
            result.status = "ok"
        return result

    async def validate(self, source: str, name: str, design_id: str) -> tuple[list[str], bool, str | None]:
        """The design check: ``(static problems, passed, smoke report)``; the smoke run is skipped
        (report None) when the static check finds problems."""
        problems = [str(p) for p in check_design(source)]
        if problems:
            return problems, False, None
        ok, feedback = await self._smoke_check(Design(id=design_id, name=name, source=source, origin="meta"))
        return [], ok, feedback

    async def crossover(
        self, parents: list[dict[str, Any]], *, generation: int, design_id: str = "candidate"
    ) -> MetaResult:
        """A child with ``update`` from the first parent and ``recall`` from the second, made from
        code (no model call) and put through the same design check as a written design."""
        a, b = parents[0], parents[1]
        name = f"cross_g{generation}"
        try:
            source = crossover(a["source"], b["source"])
        except DesignError as exc:
            return MetaResult(name=name, source=None, status="invalid", errors=[f"crossover: {exc}"])
        problems, ok, feedback = await self.validate(source, name, design_id)
        errors = [
            *problems,
            *([f"smoke run failed:\n{(feedback or '').strip()}"] if not problems and not ok else []),
        ]
        if not errors and (twin := await self.twin_of(self._last_recalls, parents)) is not None:
            errors.append(f"a copy of Parent {twin}: the same advice on every smoke task")
        return MetaResult(
            name=name,
            source=source,
            status="invalid" if errors else "ok",
            errors=errors,
            smoke_feedback=feedback,
            attempts=[{"turn": 0, "operator": "crossover", "problems": problems, "smoke_ok": not errors}],
        )


MIN_EXAMPLE_LINE = 12  # shorter example lines ("pick_up key.") are too generic to call a copy


def copied_example_lines(source: str, example: str | None) -> list[str]:
    """The lines of the advice example that ``source`` holds verbatim (two or more: the design
    returns the example's literal advice, for another task, instead of computing its own, as the
    1.5B meta model did when asked to rewrite a ``recall`` with the example in view)."""
    if not example:
        return []
    advice = example.split("Advice:", 1)[-1]
    lines = {line.strip().rstrip(".") for line in advice.splitlines()}
    copied = sorted(line for line in lines if len(line) >= MIN_EXAMPLE_LINE and line in source)
    return copied if len(copied) >= 2 else []


def _recalls(report: SmokeReport) -> list[str] | None:
    """What a smoke run's recalls returned, in order (None: the run did not get that far)."""
    calls = [c for c in report.calls if c.phase == "recall"]
    if not calls or any(c.error for c in calls):
        return None
    return [c.return_value or "" for c in calls]


def _whole_module(source: str) -> bool:
    """True when ``source`` defines both ``update`` and ``recall`` at top level (a whole design)."""
    try:
        names = set(functions(source))
    except DesignError:
        return True  # not parseable: let the design check report it as the module it claims to be
    return {"update", "recall"} <= names


def _echo(text: str) -> str:
    """A reply as kept in the conversation: an enormous one is cut so the next prompt still fits."""
    if len(text) <= MAX_ECHO_CHARS:
        return text
    return text[:MAX_ECHO_CHARS] + f"\n[... {len(text) - MAX_ECHO_CHARS:,} more characters of this reply cut]"


__all__ = [
    "MetaAgent",
    "MetaResult",
    "copied_example_lines",
    "extract_code",
    "extract_name",
    "fenced_blocks",
    "no_code_problem",
]
