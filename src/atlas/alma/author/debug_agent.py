"""DebugAgent: an LLM agent that greps the parents' runtime logs and returns an evidence-based
critique with 2–4 mandatory constraints for the next design.

Tool calling goes through JSON actions in plain text (``{"tool": "grep", "args": {...}}`` or
``{"final": {...}}``) so it works with any model, including small local ones. The final answer is
validated with pydantic; when the model never produces a valid one within its turns, one
``LLMClient.astructured`` call (which repairs and re-asks) gets it. Skipped when the logs say nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from atlas.alma.author.prompts import DEBUG_FINAL_REQUEST, DEBUG_SYSTEM, debug_overview, untrusted
from atlas.errors import LLMError, LLMResponseError, ScriptExhaustedError
from atlas.protocols.llm import Message

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient

MAX_TOOL_OUTPUT = 3000  # characters of one tool result shown to the model
KEEP_EXCHANGES = 4  # tool exchanges kept in the prompt (older ones are dropped: small contexts)
MAX_MATCHES = 40
CRITIQUE_MAX_TOKENS = 2048  # the final critique (analysis + constraints) must not be cut mid-JSON
# A group holding a repeat (+, *, {n,}) that is itself repeated: catastrophic backtracking.
_NESTED_REPEAT = re.compile(
    r"\((?:[^()\\]|\\.)*(?:[+*]|\{\d*,\d*\})(?:[^()\\]|\\.)*\)\s*(?:[+*]|\{\d*,\d*\})"
    r"|[+*}]\)+[+*{]"
)


class Critique(BaseModel):
    """What the DebugAgent hands the MetaAgent."""

    analysis: str = Field(min_length=1)
    constraints: list[str] = Field(min_length=2)
    evidence: list[str] = Field(default_factory=list)

    @field_validator("constraints")
    @classmethod
    def _two_to_four(cls, v: list[str]) -> list[str]:
        v = [c.strip() for c in v if isinstance(c, str) and c.strip()]
        if len(v) < 2:
            raise ValueError("give at least 2 non-empty constraints")
        return v[:4]

    @field_validator("evidence", mode="before")
    @classmethod
    def _evidence_strings(cls, v: Any) -> list[str]:
        if v is None:
            return []
        if isinstance(v, str):
            return [v]
        return [x if isinstance(x, str) else json.dumps(x) for x in v]

    def to_text(self) -> str:
        out = ["ANALYSIS:", self.analysis.strip(), "", "MANDATORY CONSTRAINTS:"]
        out += [f"{i}. {c}" for i, c in enumerate(self.constraints, 1)]
        if self.evidence:
            out += ["", "EVIDENCE:"] + [f"- {e}" for e in self.evidence[:8]]
        return "\n".join(out)


@dataclass
class DebugResult:
    """Outcome of one analysis: a critique, or why there is none."""

    critique: Critique | None
    skipped: bool = False
    reason: str = ""
    turns: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str | None:
        return self.critique.to_text() if self.critique else None


class LogTools:
    """grep / count / head over one log text (the DebugAgent's only window on the logs)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    @staticmethod
    def _compile(pattern: str) -> re.Pattern[str]:
        """The pattern as a regex; an invalid one, or one that could backtrack for ages (a repeated
        group that itself repeats, like ``(a+)+``), is searched literally."""
        if not _NESTED_REPEAT.search(pattern):
            try:
                return re.compile(pattern, re.IGNORECASE)
            except re.error:
                pass
        return re.compile(re.escape(pattern), re.IGNORECASE)

    def grep(self, pattern: str, context: int = 0, max_matches: int = MAX_MATCHES) -> str:
        if not pattern:
            return "error: grep needs a non-empty pattern"
        rx = self._compile(str(pattern))
        context = max(0, min(int(context or 0), 5))
        hits = [i for i, line in enumerate(self.lines) if rx.search(line)]
        if not hits:
            return f"no lines match {pattern!r}"
        shown: list[str] = []
        last = -1
        for i in hits[: max(1, int(max_matches))]:
            lo, hi = max(0, i - context), min(len(self.lines), i + context + 1)
            if context and shown and lo > last + 1:
                shown.append("--")
            for j in range(max(lo, last + 1), hi):
                shown.append(f"{j + 1}: {self.lines[j]}")
            last = hi - 1
        head = f"{len(hits)} matching lines"
        if len(hits) > max_matches:
            head += f" (first {max_matches} shown)"
        return _cap(head + "\n" + "\n".join(shown))

    def count(self, pattern: str) -> str:
        rx = self._compile(str(pattern))
        return f"{sum(1 for line in self.lines if rx.search(line))} lines match {pattern!r}"

    def head(self, start: int = 1, n: int = 40) -> str:
        start = max(1, int(start or 1))
        n = max(1, min(int(n or 40), 200))
        chunk = self.lines[start - 1 : start - 1 + n]
        if not chunk:
            return f"the log has {len(self.lines)} lines; nothing at line {start}"
        return _cap("\n".join(f"{start + k}: {line}" for k, line in enumerate(chunk)))

    def call(self, tool: str, args: dict[str, Any]) -> str:
        try:
            if tool == "grep":
                return self.grep(
                    args.get("pattern", ""), args.get("context", 0), args.get("max_matches", MAX_MATCHES)
                )
            if tool == "count":
                return self.count(args.get("pattern", ""))
            if tool == "head":
                return self.head(args.get("start", 1), args.get("n", 40))
        except (TypeError, ValueError, OverflowError) as exc:
            return f"error: bad arguments for {tool}: {exc}"
        return f"error: unknown tool {tool!r}; use grep, count or head"


def _cap(text: str) -> str:
    if len(text) <= MAX_TOOL_OUTPUT:
        return text
    return (
        text[:MAX_TOOL_OUTPUT]
        + f"\n... [{len(text) - MAX_TOOL_OUTPUT} more characters cut; narrow the pattern]"
    )


def log_stats(text: str) -> dict[str, Any]:
    lines = text.splitlines()
    tags: dict[str, int] = {}
    for kind in ("TOOL", "PRINT", "RETURN", "ERROR", "SIMILARITY"):
        n = sum(1 for line in lines if re.match(rf"\[[^\]]+\] {kind}\b", line))
        if n:
            tags[kind] = n
    episodes = sum(1 for line in lines if line.startswith("--- EPISODE"))
    return {"lines": len(lines), "episodes": episodes, "tags": tags}


class DebugAgent:
    """``await DebugAgent(llm).analyze(log_text, parents)`` → ``DebugResult``."""

    def __init__(self, llm: LLMClient, *, max_turns: int = 6, head_lines: int = 30) -> None:
        self.llm = llm
        self.max_turns = max_turns
        self.head_lines = head_lines

    async def analyze(
        self,
        log_text: str,
        parents: list[dict[str, Any]],
        *,
        informative: bool = True,
        advice_vs_actions: list[str] | None = None,
    ) -> DebugResult:
        """Investigate ``log_text`` (the DebugLog of ``parents``: dicts with id, name and scores).
        ``advice_vs_actions`` (``advice_use.departure_lines``): what the designs advised against what
        the agent then did; shown to the model and always the first lines of the critique's evidence."""
        if not informative or not log_text.strip():
            return DebugResult(
                None, skipped=True, reason="the parents' logs record no tool calls, prints or errors"
            )
        tools = LogTools(log_text)
        system = DEBUG_SYSTEM.replace("{max_turns}", str(self.max_turns))
        compared = list(advice_vs_actions or [])
        overview = debug_overview(parents, log_stats(log_text), tools.head(1, self.head_lines), compared)
        messages: list[Message] = [
            {"role": "system", "content": system},
            {"role": "user", "content": overview},
        ]
        result = DebugResult(None)
        try:
            result = await self._loop(messages, tools, result)
            if result.critique is not None and compared:
                rest = [e for e in result.critique.evidence if e not in compared]
                result.critique.evidence = [*compared, *rest]
            return result
        except ScriptExhaustedError:
            raise
        except LLMError as exc:  # the model failed after retries: no critique, the search goes on
            result.critique = None
            result.reason = f"the debug model failed: {exc}"
            return result

    async def _loop(self, messages: list[Message], tools: LogTools, result: DebugResult) -> DebugResult:
        for turn in range(1, self.max_turns + 1):
            result.turns = turn
            messages = _trim(messages)
            reply = await self.llm.acomplete(messages, temperature=0.2)
            text = reply.text or ""
            messages.append({"role": "assistant", "content": text})
            action = _parse_action(text)
            if action is None:
                messages.append(
                    {
                        "role": "user",
                        "content": 'Reply with exactly one JSON object: a tool call or {"final": {...}}.',
                    }
                )
                continue
            if "final" in action:
                try:
                    result.critique = Critique.model_validate(action["final"])
                    return result
                except ValidationError as exc:
                    messages.append(
                        {
                            "role": "user",
                            "content": f"Your final answer is invalid: {_brief(exc)}. "
                            'Fix it and reply with {"final": {...}} again.',
                        }
                    )
                    continue
            tool, args = str(action.get("tool", "")), action.get("args") or {}
            if not isinstance(args, dict):
                args = {}
            if any(c["tool"] == tool and c["args"] == args for c in result.tool_calls):
                # small models repeat one grep until the turns run out; the answer would not change
                result.tool_calls.append({"tool": tool, "args": args, "output_chars": 0, "repeat": True})
                messages.append(
                    {
                        "role": "user",
                        "content": f"You already ran {tool} with these arguments; its result is above. "
                        'Use another pattern or tool, or give {"final": {...}} now.',
                    }
                )
                continue
            output = tools.call(tool, args)
            result.tool_calls.append({"tool": tool, "args": args, "output_chars": len(output)})
            left = self.max_turns - turn
            messages.append(
                {
                    "role": "user",
                    "content": f"{tool} result (log data):\n{untrusted(output)}\n\n({left} turns left)",
                }
            )
        messages.append({"role": "user", "content": DEBUG_FINAL_REQUEST})
        try:
            final = await self.llm.astructured(messages, Critique, max_tokens=CRITIQUE_MAX_TOKENS)
        except LLMResponseError as exc:
            result.reason = f"no valid critique: {exc}"
            return result
        result.critique = final if isinstance(final, Critique) else Critique.model_validate(final)
        return result


def _trim(messages: list[Message]) -> list[Message]:
    """System + overview + the last ``KEEP_EXCHANGES`` exchanges, so the prompt stays bounded
    (roles keep alternating: the overview is followed by an assistant turn)."""
    head, rest = messages[:2], messages[2:]
    keep = 2 * KEEP_EXCHANGES
    if len(rest) <= keep:
        return messages
    dropped = (len(rest) - keep) // 2
    overview = {**head[1], "content": head[1]["content"] + f"\n\n({dropped} earlier tool exchanges omitted)"}
    return [head[0], overview, *rest[-keep:]]


def _brief(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors())


def _parse_action(text: str) -> dict[str, Any] | None:
    """The JSON action in a reply (tolerates fences and prose around it), or None."""
    from atlas.infra.llm import parse_json_reply

    try:
        value = parse_json_reply(text)
    except LLMResponseError:
        return None
    if isinstance(value, dict) and ("tool" in value or "final" in value):
        return value
    if isinstance(value, dict) and "analysis" in value and "constraints" in value:
        return {"final": value}  # a bare final answer is accepted too
    return None


__all__ = ["Critique", "DebugAgent", "DebugResult", "LogTools", "log_stats"]
