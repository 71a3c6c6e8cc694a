"""DebugLog: a design's runtime logs as greppable text, for the DebugAgent and for people.

    === DESIGN d-0003 spatial_graph (seed) — collection 0.500, deployment 0.550, normalized +0.140 ===
    STORES after collection: memory keys: rooms=list[6], sightings=dict[5] (812 bytes); vectors: 0; graph: 8 nodes, 11 edges
    SIMILARITY summary: 4 find_similar calls — OK 1, WEAK 1, NO_RESULTS 2
    CALLS: 12 (2 with errors); advice empty in 3 of 6 episodes
    --- EPISODE D2: FAILED (20 steps) — Bring the key to room_C. ---
    [D2:recall] TOOL graph_neighbors: node="room_A" -> ["room_B"]
    [D2:recall] RETURN: "Known exits from room_A: room_B."
    [D2:agent] move_to(room="room_B")
    [D2:agent] pick_up(object="key") ERROR: There is no key in room_B.

Episodes are ordered worst, best, second worst, second best, … so the most telling ones come
first, and the text is size-capped (the rest is summarized in one line).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas.alma.author.advice_use import advice_use
from atlas.alma.author.prompts import fmt
from atlas.alma.sandbox.clean import safe_text
from atlas.alma.state.run_dir import confined
from atlas.errors import ArchiveError

MAX_AGENT_LINES = 30  # actions shown per episode
DEFAULT_CAP = 24_000  # characters of DebugLog text handed to the DebugAgent
FILE_CAP = 400_000  # characters of a design's debug_log.txt on disk
READ_CAP = 32_000_000  # bytes read back from one log file (a bigger file is damaged or hostile)
_SIM_LABELS = ("NO_RESULTS", "LOW_QUALITY", "WEAK", "NO_DISCRIMINATION", "OK")
_TAG = re.compile(r"^\[[^\]]+:(?:recall|update)\] (TOOL|PRINT|RETURN|ERROR|WARN|SIMILARITY)\b")


def call_lines(call: dict[str, Any], label: str) -> list[str]:
    """Greppable lines of one CallLog dict, tagged ``[<label>:<phase>]``."""
    from atlas.alma.evaluate.runlog import CallLog

    return CallLog.from_dict(call).format_lines(label)


def _one_line(text: str, limit: int = 300) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[:limit] + "…"


@dataclass
class DesignLogs:
    """One design's evaluation as the DebugLog needs it (read back from the run folder)."""

    entry: dict[str, Any]  # id, name, origin, collection/deployment/normalized scores
    episodes: list[dict[str, Any]] = field(default_factory=list)  # EpisodeRecord.to_dict()
    calls: list[dict[str, Any]] = field(default_factory=list)  # CallLog dicts with "episode"
    stores: dict[str, Any] = field(default_factory=dict)

    damaged: list[str] = field(default_factory=list)  # what could not be read back, said in the text

    @classmethod
    def from_dir(cls, logs_dir: str | Path, entry: dict[str, Any]) -> DesignLogs:
        """Read a design's logs back. Logs only feed the DebugAgent, so a damaged, oversized or
        escaping file costs that file (noted in ``damaged``), never the search."""
        d = Path(logs_dir)
        damaged: list[str] = []
        stores: dict[str, Any] = {}
        ev = _read(d, "evaluation.json", damaged)
        if ev is not None:
            try:
                data = json.loads(ev)
                found = data.get("stores") if isinstance(data, dict) else None
                stores = found if isinstance(found, dict) else {}
            except (ValueError, RecursionError) as exc:
                damaged.append(f"evaluation.json: {type(exc).__name__}")
        episodes = [e for e in _rows(d, "episodes.jsonl", damaged) if _episode_ok(e)]
        calls = [c for c in _rows(d, "calls.jsonl", damaged) if _call_ok(c)]
        return cls(entry=entry, episodes=episodes, calls=calls, stores=stores, damaged=damaged)


def _read(d: Path, name: str, damaged: list[str]) -> str | None:
    """A log file's text (None when missing or unreadable; the reason goes to ``damaged``)."""
    try:
        path = confined(d, name, what="log file")
        if not path.is_file():
            return None
        with path.open("rb") as fh:
            data = fh.read(READ_CAP + 1)
    except (ArchiveError, OSError) as exc:
        damaged.append(f"{name}: {exc}")
        return None
    if len(data) > READ_CAP:
        damaged.append(f"{name}: over {READ_CAP} bytes, only the start was read")
        data = data[:READ_CAP]
    return data.decode("utf-8", "replace")


def _rows(d: Path, name: str, damaged: list[str]) -> list[dict[str, Any]]:
    text = _read(d, name, damaged)
    rows: list[dict[str, Any]] = []
    bad = 0
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            bad += 1
            continue
        if isinstance(row, dict):
            rows.append(row)
        else:
            bad += 1
    if bad:
        damaged.append(f"{name}: {bad} unreadable lines skipped")
    return rows


def _episode_ok(ep: dict[str, Any]) -> bool:
    return (
        isinstance(ep.get("label"), str)
        and isinstance(ep.get("score", 0.0), int | float)
        and isinstance(ep.get("steps", 0), int)
        and isinstance(ep.get("actions", []), list)
        and all(isinstance(a, dict) for a in ep.get("actions", []))
    )


def _call_ok(call: dict[str, Any]) -> bool:
    from atlas.alma.evaluate.runlog import CallLog

    try:
        CallLog.from_dict(call).format_lines("x")
    except (KeyError, TypeError, ValueError, AttributeError):
        return False
    return True


def _stores_line(stores: dict[str, Any]) -> str:
    if not stores:
        return "STORES after collection: (nothing recorded)"
    parts = []
    keys = stores.get("memory_keys") or {}
    if keys and isinstance(keys, dict):
        parts.append(
            "memory keys: "
            + ", ".join(f"{k}={v}" for k, v in keys.items())
            + f" ({stores.get('memory_bytes', 0)} bytes)"
        )
    else:
        parts.append("memory: empty")
    colls = stores.get("collections")
    vec = f"vectors: {stores.get('vector_items', 0)}"
    if colls and isinstance(colls, dict):
        vec += " (" + ", ".join(f"{c}={n}" for c, n in colls.items()) + ")"
    parts.append(vec)
    parts.append(f"graph: {stores.get('graph_nodes', 0)} nodes, {stores.get('graph_edges', 0)} edges")
    return "STORES after collection: " + "; ".join(parts)


def _order(episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Worst, best, second worst, second best, … (stable on ties: label order)."""
    ranked = sorted(episodes, key=lambda e: (e.get("score", 0.0), e.get("success", False)))
    out: list[dict[str, Any]] = []
    lo, hi = 0, len(ranked) - 1
    while lo <= hi:
        out.append(ranked[lo])
        if hi != lo:
            out.append(ranked[hi])
        lo, hi = lo + 1, hi - 1
    return out


def episode_block(ep: dict[str, Any], calls: list[dict[str, Any]]) -> list[str]:
    label = ep["label"]
    status = "SUCCESS" if ep.get("success") else "FAILED"
    lines = [
        f"--- EPISODE {label}: {status} score {ep.get('score', 0.0):.2f} ({ep.get('steps', 0)} steps) "
        f"— {_one_line(ep.get('goal', ''), 160)} ---"
    ]
    for call in calls:
        lines.extend(call_lines(call, label))
    if (use := advice_use(ep)) is not None:
        lines.append(f"[{label}:advice] {use.text()}")
    acts = ep.get("actions") or []
    for a in acts[:MAX_AGENT_LINES]:
        err = f" ERROR: {_one_line(a['error'], 200)}" if a.get("error") else ""
        lines.append(f"[{label}:agent] {_one_line(a.get('action', ''), 200)}{err}")
    if len(acts) > MAX_AGENT_LINES:
        lines.append(f"[{label}:agent] ... {len(acts) - MAX_AGENT_LINES} more actions")
    return lines


def render_design(logs: DesignLogs, *, max_chars: int = FILE_CAP) -> str:
    """The DebugLog text of one design (header, summaries, episodes worst/best first, capped)."""
    e = logs.entry
    head = [
        f"=== DESIGN {e.get('id')} {e.get('name')} ({e.get('origin', '?')}) — "
        f"collection {fmt(e.get('collection_score'))}, deployment {fmt(e.get('deployment_score'))}, "
        f"normalized {fmt(e.get('normalized_score'), signed=True)} ===",
        _stores_line(logs.stores),
        *([f"DAMAGED LOGS (skipped): {'; '.join(logs.damaged)[:500]}"] if logs.damaged else []),
    ]
    by_ep: dict[str, list[dict[str, Any]]] = {}
    for c in logs.calls:
        by_ep.setdefault(str(c.get("episode", "?")), []).append(c)
    blocks = [episode_block(ep, by_ep.get(ep["label"], [])) for ep in _order(logs.episodes)]
    body = [line for b in blocks for line in b]
    head.append(_similarity_line(body))
    head.append(_calls_line(body, logs.episodes))
    text_lines = list(head)
    size = sum(len(x) + 1 for x in text_lines)
    shown = 0
    for b in blocks:
        block_size = sum(len(x) + 1 for x in b)
        if size + block_size > max_chars and shown > 0:
            break
        if size + block_size > max_chars:  # even the first episode is too big: cut it
            b = _cut(b, max_chars - size)
            block_size = sum(len(x) + 1 for x in b)
        text_lines.extend(b)
        size += block_size
        shown += 1
    if shown < len(blocks):
        rest = logs.episodes and _order(logs.episodes)[shown:]
        labels = ", ".join(ep["label"] for ep in rest or [])
        text_lines.append(f"... {len(blocks) - shown} more episodes omitted (size cap): {labels}")
    return safe_text("\n".join(text_lines) + "\n")  # design-written text: no control or escape sequences


def _cut(lines: list[str], budget: int) -> list[str]:
    out: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > budget - 60:
            out.append(f"... episode cut at the size cap ({len(lines) - len(out)} more lines)")
            break
        out.append(line)
        size += len(line) + 1
    return out


def _similarity_line(body: list[str]) -> str:
    sims = [line for line in body if re.match(r"^\[[^\]]+\] SIMILARITY\b", line)]
    finds = sum(1 for line in body if re.match(r"^\[[^\]]+\] TOOL find_similar\b", line))
    if not sims and not finds:
        return "SIMILARITY summary: no find_similar calls"
    counts = {lab: sum(1 for s in sims if re.search(rf"\b{lab}\b", s)) for lab in _SIM_LABELS}
    labels = ", ".join(f"{k} {v}" for k, v in counts.items() if v) or "no quality labels"
    return f"SIMILARITY summary: {finds} find_similar calls — {labels}"


def _calls_line(body: list[str], episodes: list[dict[str, Any]]) -> str:
    errors = sum(1 for line in body if re.match(r"^\[[^\]]+:(recall|update)\] ERROR\b", line))
    tools = sum(1 for line in body if re.match(r"^\[[^\]]+\] TOOL\b", line))
    prints = sum(1 for line in body if re.match(r"^\[[^\]]+\] PRINT\b", line))
    empty = sum(1 for ep in episodes if not (ep.get("advice") or "").strip())
    return (
        f"CALLS: {tools} tool calls, {prints} prints, {errors} errors; "
        f"advice empty in {empty} of {len(episodes)} episodes"
    )


@dataclass
class DebugLog:
    """The DebugAgent's input: several designs' texts, concatenated under one size cap."""

    text: str
    informative: bool

    @classmethod
    def build(cls, designs: list[DesignLogs], *, max_chars: int = DEFAULT_CAP) -> DebugLog:
        if not designs:
            return cls("", False)
        share = max(2000, max_chars // len(designs))
        parts = [render_design(d, max_chars=share) for d in designs]
        text = "\n".join(parts)
        return cls(text, is_informative(text))


def is_informative(text: str) -> bool:
    """True when the logs record anything a design did: a tool call, a print, an error or
    non-empty advice (a design that does nothing leaves nothing to analyze)."""
    for line in text.splitlines():
        m = _TAG.match(line)
        if not m:
            continue
        if m.group(1) != "RETURN":
            return True
        value = line.split("RETURN", 1)[1].strip(" :")
        if value not in ("", '""', "''", "None"):
            return True
    return False


__all__ = [
    "DEFAULT_CAP",
    "DebugLog",
    "DesignLogs",
    "call_lines",
    "episode_block",
    "is_informative",
    "render_design",
]
