"""Coding-agent transcripts → trajectories: Claude Code's session JSONL, Codex CLI's rollout JSONL,
or an OpenAI-style message list.

A session holds many tasks, so each *turn* (a prompt the user typed and everything the agent did
until the next one) becomes one ``Trajectory``: the prompt is the task, each tool call a ``Step``
(tool, arguments, output; a failed call keeps its output in ``Step.error``), the agent's last
words ``metadata["final_answer"]``, the session's working directory ``metadata["cwd"]``. A turn the user interrupted is a failure; otherwise the outcome
is inferred as for any message list (``messages.messages_to_trajectory``). Turns with no tool
call teach no procedure and are left out. Trajectory ids are derived from the session and the
turn, so reading the same transcript twice yields the same ids (the bank skips what it has).

A line that is not JSON (a transcript still being written ends mid-line) is skipped and counted
in ``Transcript.skipped_lines``; a file with no turn at all is an ``InvalidInputError``. Files
over ``MAX_TRANSCRIPT_BYTES`` are read from their end (the latest turns), and tool outputs are
cut to ``MAX_OUTPUT_CHARS`` so one turn stays storable.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from atlas.core.types import Trajectory
from atlas.errors import InvalidInputError
from atlas.memory.common import check_size
from atlas.memory.guidelines.messages import looks_like_error, messages_to_trajectory, parse_trajectory

Format = Literal["claude-code", "codex", "openai"]
FORMATS: tuple[str, ...] = ("auto", "claude-code", "codex", "openai")
MAX_TRANSCRIPT_BYTES = 32_000_000
MAX_OUTPUT_CHARS = 4_000
_INTERRUPTED = "[Request interrupted by user"
_CODEX_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")
_EXIT_CODE = re.compile(r"^Exit code: (-?\d+)", re.M)


@dataclass
class Transcript:
    """What one transcript file held: its turns as trajectories, and what could not be read."""

    format: Format
    session_id: str
    trajectories: list[Trajectory] = field(default_factory=list)
    skipped_lines: int = 0
    truncated: bool = False  # the file was over MAX_TRANSCRIPT_BYTES: only its end was read
    skipped_turns: list[str] = field(default_factory=list)  # turns that could not be stored, and why


def _cut(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - limit} characters cut] …\n{text[-half:]}"


def _blocks_text(content: Any) -> str:
    """Text of a string or a list of content blocks (text / input_text / output_text); images and
    other blocks are named, not kept."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False)
    out = []
    for b in content:
        if isinstance(b, str):
            out.append(b)
        elif isinstance(b, dict) and isinstance(b.get("text"), str):
            out.append(b["text"])
        elif isinstance(b, dict) and b.get("type"):
            out.append(f"[{b['type']}]")
    return "\n".join(out)


def _read_lines(data: bytes) -> tuple[list[dict[str, Any]], int]:
    rows, skipped = [], 0
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            skipped += 1
            continue
        if isinstance(row, dict):
            rows.append(row)
        else:
            skipped += 1
    return rows, skipped


def _turn_id(prefix: str, session: str, key: str) -> str:
    digest = hashlib.sha1(f"{session}\0{key}".encode()).hexdigest()[:16]
    return f"{prefix}-{digest}"


@dataclass
class _Turn:
    key: str
    prompt: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    calls: int = 0


def _assistant(text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        msg["tool_calls"] = calls
    return msg


def _call(call_id: str, name: str, args: Any) -> dict[str, Any]:
    if not isinstance(args, dict):
        args = {"input": args}
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


# --- Claude Code -----------------------------------------------------------------------------------
def _claude_turns(rows: list[dict[str, Any]]) -> tuple[str, list[_Turn]]:
    session, turns = "", list[_Turn]()
    known: set[str] = set()
    for row in rows:
        kind = row.get("type")
        msg = row.get("message")
        if kind not in ("user", "assistant") or not isinstance(msg, dict) or row.get("isSidechain"):
            continue
        session = session or str(row.get("sessionId") or "")
        content = msg.get("content")
        if kind == "user":
            blocks = content if isinstance(content, list) else [content]
            results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
            if results and turns:
                for res in results:
                    if res.get("tool_use_id") not in known:
                        continue
                    text = _blocks_text(res.get("content"))
                    turns[-1].interrupted |= _INTERRUPTED in text
                    turns[-1].messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": res["tool_use_id"],
                            "content": _cut(text),
                            "is_error": bool(res.get("is_error")),
                        }
                    )
                continue
            text = _blocks_text(content).strip()
            if row.get("isMeta") or row.get("isCompactSummary") or not text:
                continue  # meta lines; a compaction's summary continues the turn it interrupted
            if text.startswith(_INTERRUPTED):
                if turns:
                    turns[-1].interrupted = True
                continue
            if text.startswith("<local-command-") or text.startswith("<command-"):
                continue  # a slash command and its output, not a task
            turns.append(_Turn(str(row.get("uuid") or len(turns)), text))
        elif turns:
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            text = "\n".join(
                b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and b.get("text")
            )
            calls = []
            for b in blocks:
                if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name"):
                    cid = str(b.get("id") or f"call-{turns[-1].calls}")
                    if cid in known:
                        continue
                    known.add(cid)
                    calls.append(_call(cid, str(b["name"]), b.get("input") or {}))
            if text or calls:
                turns[-1].messages.append(_assistant(text, calls))
                turns[-1].calls += len(calls)
    return session, turns


# --- Codex CLI -------------------------------------------------------------------------------------
def _codex_output(raw: Any) -> tuple[str, bool]:
    """A function call's output text and whether it failed (exit code, or error-looking text)."""
    text = raw if isinstance(raw, str) else _blocks_text(raw)
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        data = None
    if isinstance(data, dict) and "output" in data:
        meta: dict[str, Any] = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
        code = meta.get("exit_code")
        return str(data["output"]), isinstance(code, int) and code != 0
    m = _EXIT_CODE.search(text[:200])
    if m:
        return text, int(m.group(1)) != 0
    return text, looks_like_error(text)


def _codex_turns(rows: list[dict[str, Any]]) -> tuple[str, list[_Turn]]:
    session, turns = "", list[_Turn]()
    known: set[str] = set()
    for row in rows:
        if row.get("type") == "session_meta" and isinstance(row.get("payload"), dict):
            session = session or str(row["payload"].get("id") or "")
            continue
        if "payload" in row:
            if row.get("type") != "response_item" or not isinstance(row["payload"], dict):
                continue
            item = row["payload"]
        else:  # the older rollout format: items are the lines themselves
            if "instructions" in row and "id" in row and not session:
                session = str(row["id"])
            item = row
        kind = item.get("type")
        if kind == "message":
            text = _blocks_text(item.get("content")).strip()
            if item.get("role") == "user":
                if text and not text.startswith(_CODEX_CONTEXT):
                    turns.append(_Turn(f"{len(turns)}:{text[:200]}", text))
            elif item.get("role") == "assistant" and turns and text:
                turns[-1].messages.append(_assistant(text, []))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call") and turns:
            cid = str(item.get("call_id") or item.get("id") or f"call-{turns[-1].calls}")
            raw = item.get("arguments", item.get("input", item.get("action", {})))
            if isinstance(raw, str):
                with contextlib.suppress(json.JSONDecodeError):  # custom tools (apply_patch) take free text
                    raw = json.loads(raw)
            known.add(cid)
            last = turns[-1].messages[-1] if turns[-1].messages else None
            call = _call(cid, str(item.get("name") or kind), raw)
            if last and last["role"] == "assistant" and "tool_calls" in last:
                last["tool_calls"].append(call)
            elif last and last["role"] == "assistant":
                last["tool_calls"] = [call]
            else:
                turns[-1].messages.append(_assistant("", [call]))
            turns[-1].calls += 1
        elif kind in ("function_call_output", "custom_tool_call_output") and turns:
            cid = str(item.get("call_id") or "")
            if cid not in known:
                continue
            text, failed = _codex_output(item.get("output"))
            turns[-1].interrupted |= "aborted by user" in text[:200]
            turns[-1].messages.append(
                {"role": "tool", "tool_call_id": cid, "content": _cut(text), "is_error": failed}
            )
    return session, turns


# --- reading ---------------------------------------------------------------------------------------
def detect_format(rows: list[dict[str, Any]]) -> Format:
    """``claude-code`` or ``codex`` from the first row that says which; InvalidInputError otherwise."""
    for row in rows:
        if "sessionId" in row or (row.get("type") in ("user", "assistant") and "message" in row):
            return "claude-code"
        if row.get("type") in ("session_meta", "response_item", "turn_context", "event_msg"):
            return "codex"
        if row.get("record_type") or (row.get("type") == "message" and "role" in row):
            return "codex"
    raise InvalidInputError(
        "transcript: neither a Claude Code session (lines with 'sessionId' and 'message') nor a "
        "Codex rollout (lines with 'payload'); pass --format openai for a message list"
    )


def _to_trajectories(
    fmt: Format, session: str, turns: list[_Turn], metadata: dict[str, Any]
) -> tuple[list[Trajectory], list[str]]:
    """The turns with a tool call as trajectories, and why any other turn could not be one (too big
    to store, say): one bad turn does not cost the session's other turns."""
    prefix = "cc" if fmt == "claude-code" else "codex"
    out, skipped = [], []
    for i, turn in enumerate(turns):
        if turn.calls == 0:
            continue
        meta = {**metadata, "source": fmt, "session_id": session, "turn": i}
        try:
            traj = messages_to_trajectory(
                [{"role": "user", "content": turn.prompt}, *turn.messages],
                task=_cut(turn.prompt, 2_000),
                success=False if turn.interrupted else None,
                trajectory_id=_turn_id(prefix, session, turn.key),
                metadata=meta,
            )
            check_size(traj.model_dump(mode="json"), f"turn {i}")
        except InvalidInputError as exc:
            skipped.append(f"turn {i}: {exc}")
            continue
        out.append(traj)
    return out, skipped


def read_transcript(
    source: str | Path | bytes,
    fmt: str = "auto",
    *,
    metadata: dict[str, Any] | None = None,
) -> Transcript:
    """Read a transcript (a path, or its bytes) into one trajectory per turn (module docstring).
    ``fmt``: ``auto`` (by content), ``claude-code``, ``codex`` or ``openai`` (a message list, a
    trajectory, or ``{"messages": [...]}``: one trajectory)."""
    if fmt not in FORMATS:
        raise InvalidInputError(f"format: must be one of {', '.join(FORMATS)}, got {fmt!r}")
    truncated = False
    if isinstance(source, bytes):
        data = source
    else:
        path = Path(source)
        try:
            size = path.stat().st_size
            with path.open("rb") as fh:
                if size > MAX_TRANSCRIPT_BYTES:
                    fh.seek(size - MAX_TRANSCRIPT_BYTES)
                    fh.readline()  # drop the partial first line
                    truncated = True
                data = fh.read()
        except OSError as exc:
            raise InvalidInputError(
                f"transcript: cannot read {path}: {exc.strerror or exc} (check the path)"
            ) from exc
    if len(data) > MAX_TRANSCRIPT_BYTES:
        data, truncated = data[-MAX_TRANSCRIPT_BYTES:], True
        data = data[data.find(b"\n") + 1 :]
    head = data.lstrip()[:1]
    if fmt == "openai" or (fmt == "auto" and head == b"[") or (fmt == "auto" and _single_json(data)):
        traj = parse_trajectory(data)
        if metadata:
            traj = traj.model_copy(update={"metadata": {**traj.metadata, **metadata}})
        return Transcript("openai", str(traj.id), [traj], 0, truncated)
    rows, skipped = _read_lines(data)
    if not rows:
        raise InvalidInputError(
            f"transcript: no JSON line could be read ({skipped} malformed); is this a transcript file?"
        )
    kind: Format = detect_format(rows) if fmt == "auto" else fmt  # type: ignore[assignment]
    session, turns = (_claude_turns if kind == "claude-code" else _codex_turns)(rows)
    session = session or hashlib.sha1(data[:4096]).hexdigest()[:16]
    if not turns:
        raise InvalidInputError(
            f"transcript: no user prompt found in this {kind} transcript ({len(rows)} lines read, "
            f"{skipped} malformed); check --format"
        )
    meta = dict(metadata or {})
    cwd = _session_cwd(rows)
    if cwd and "cwd" not in meta:
        meta["cwd"] = cwd  # the project folder: its paths in tips are written relative to it
    trajectories, bad_turns = _to_trajectories(kind, session, turns, meta)
    return Transcript(kind, session, trajectories, skipped, truncated, bad_turns)


def _session_cwd(rows: list[dict[str, Any]]) -> str | None:
    """The working directory a session ran in (Claude Code rows and Codex's session_meta name it)."""
    for row in rows[:200]:
        payload = row.get("payload")
        cwd = row.get("cwd") or (payload.get("cwd") if isinstance(payload, dict) else None)
        if isinstance(cwd, str) and cwd.startswith("/"):
            return cwd
    return None


def _single_json(data: bytes) -> bool:
    """True for a file that is one JSON object (a trajectory or {"messages": ...}), not JSON lines."""
    text = data.strip()
    if not text.startswith(b"{"):
        return False
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return False  # several lines, each an object: JSON lines
    return isinstance(obj, dict) and not ({"sessionId", "payload", "record_type"} & set(obj))


__all__ = [
    "FORMATS",
    "MAX_OUTPUT_CHARS",
    "MAX_TRANSCRIPT_BYTES",
    "Transcript",
    "detect_format",
    "read_transcript",
]
