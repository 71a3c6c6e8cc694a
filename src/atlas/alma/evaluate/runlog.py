"""Runtime logs of design calls: structured records + a greppable text formatter.

Every ``update``/``recall`` call of a design yields one ``CallLog``: what it printed, each tool
call (arguments and result, truncated), the return value, an error with a traceback whose line
numbers are those of the *design source*, the duration, and the quality of each ``find_similar``.
``format_lines(tag)`` renders it as lines the DebugAgent greps::

    [C1:recall] TOOL find_similar: k=3 query="flask" -> []
    [C1:recall] SIMILARITY find_similar: label=NO_RESULTS k=3 n=0
    [C1:recall] PRINT: no results found for flask
    [C1:recall] RETURN: "Go to room_B first."
    [C1:recall] ERROR: KeyError: 'goal' (design line 12)

Similarity labels (cosine similarity of the configured embedder; thresholds tuned on MiniLM,
where a paraphrase scores ≈0.8 and an unrelated sentence ≈0.1–0.2):

- ``NO_RESULTS``: nothing came back (empty store or collection).
- ``LOW_QUALITY``: the best score is below ``low`` (0.30) — nothing relevant was found; the results
  are noise and should not be trusted.
- ``WEAK``: the best score is below ``ok`` (0.50) — loosely related at best.
- ``NO_DISCRIMINATION``: two or more results whose scores differ by less than ``flat_spread``
  (0.02) — the query cannot tell them apart (templated texts, near-duplicates).
- ``OK``: otherwise.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from atlas.alma.sandbox.clean import safe_text

Phase = Literal["update", "recall"]
SimilarityLabel = Literal["NO_RESULTS", "LOW_QUALITY", "WEAK", "NO_DISCRIMINATION", "OK"]

ARG_CHARS = 120  # per argument value in a TOOL line
RESULT_CHARS = 300  # per tool result in a TOOL line / record
RETURN_CHARS = 400  # of the return value in a RETURN line


@dataclass(frozen=True)
class SimilarityThresholds:
    """Cut-offs for ``find_similar`` quality labels (see the module docstring)."""

    low: float = 0.30
    ok: float = 0.50
    flat_spread: float = 0.02


DEFAULT_THRESHOLDS = SimilarityThresholds()


@dataclass
class SimilarityStats:
    """Quality of one ``find_similar`` result list."""

    k: int
    n: int
    top: float | None
    spread: float | None  # top score minus the last returned score
    label: SimilarityLabel
    query: str = ""

    @classmethod
    def of(
        cls,
        scores: list[float],
        k: int,
        query: str = "",
        thresholds: SimilarityThresholds = DEFAULT_THRESHOLDS,
    ) -> SimilarityStats:
        if not scores:
            return cls(k=k, n=0, top=None, spread=None, label="NO_RESULTS", query=query)
        top = max(scores)
        spread = top - min(scores)
        label: SimilarityLabel
        if top < thresholds.low:
            label = "LOW_QUALITY"
        elif len(scores) >= 2 and spread < thresholds.flat_spread:
            label = "NO_DISCRIMINATION"
        elif top < thresholds.ok:
            label = "WEAK"
        else:
            label = "OK"
        return cls(k=k, n=len(scores), top=round(top, 4), spread=round(spread, 4), label=label, query=query)


@dataclass
class ToolCallRecord:
    """One tool call made by a design: arguments and result are truncated copies."""

    name: str
    args: dict[str, Any]
    result: Any = None
    error: str | None = None
    duration_ms: float = 0.0
    similarity: SimilarityStats | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ToolCallRecord:
        sim = d.get("similarity")
        return cls(
            name=d["name"],
            args=args if isinstance(args := d.get("args", {}), dict) else {"args": args},
            result=d.get("result"),
            error=d.get("error"),
            duration_ms=float(d.get("duration_ms", 0.0)),
            similarity=SimilarityStats(**sim) if sim else None,
        )


@dataclass
class CallLog:
    """The runtime log of one ``update`` or ``recall`` call.

    ``error`` is a one-line summary (``"KeyError: 'goal' (design line 12)"``), ``error_kind`` says
    whose fault and what kind (``design`` exception, ``timeout``, ``crash``, ``limit``,
    ``invalid_return``, ``protocol``, ``static_check``, ``frozen``), ``traceback`` keeps only the
    design's frames with its own line numbers.
    """

    phase: Phase
    episode: str = ""
    design_id: str = ""
    prints: list[str] = field(default_factory=list)
    prints_dropped: int = 0
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    tool_calls_dropped: int = 0  # calls past the log budget: counted, not recorded
    return_value: str | None = None
    error: str | None = None
    error_kind: str | None = None
    traceback: str | None = None
    warnings: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    worker: dict[str, Any] = field(default_factory=dict)  # pid, reused, killed, cpu_s

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def similarity(self) -> list[SimilarityStats]:
        return [t.similarity for t in self.tool_calls if t.similarity is not None]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["similarity"] = [asdict(s) for s in self.similarity]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CallLog:
        return cls(
            phase=d["phase"],
            episode=d.get("episode", ""),
            design_id=d.get("design_id", ""),
            prints=list(d.get("prints", [])),
            prints_dropped=int(d.get("prints_dropped", 0)),
            tool_calls=[ToolCallRecord.from_dict(t) for t in d.get("tool_calls", [])],
            tool_calls_dropped=int(d.get("tool_calls_dropped", 0)),
            return_value=d.get("return_value"),
            error=d.get("error"),
            error_kind=d.get("error_kind"),
            traceback=d.get("traceback"),
            warnings=list(d.get("warnings", [])),
            duration_s=float(d.get("duration_s", 0.0)),
            worker=dict(d.get("worker", {})),
        )

    def format_lines(self, tag: str | None = None) -> list[str]:
        """Greppable lines, each prefixed ``[<tag>:<phase>]`` (tag defaults to ``episode``)."""
        label = tag if tag is not None else self.episode
        prefix = f"[{label}:{self.phase}]" if label else f"[{self.phase}]"
        lines: list[str] = []
        for t in self.tool_calls:
            args = " ".join(f"{k}={_short(v, ARG_CHARS)}" for k, v in sorted(t.args.items()))
            outcome = f"ERROR {t.error}" if t.error is not None else _short(t.result, RESULT_CHARS)
            lines.append(f"{prefix} TOOL {t.name}: {args} -> {outcome}".rstrip())
            if t.similarity is not None:
                s = t.similarity
                top = "-" if s.top is None else f"{s.top:.3f}"
                spread = "-" if s.spread is None else f"{s.spread:.3f}"
                lines.append(
                    f"{prefix} SIMILARITY {t.name}: label={s.label} top={top} spread={spread} k={s.k} n={s.n} "
                    f"query={_short(s.query, ARG_CHARS)}"
                )
        if self.tool_calls_dropped:
            lines.append(
                f"{prefix} TOOL [... {self.tool_calls_dropped} more tool calls not recorded (log budget)]"
            )
        for p in self.prints:
            lines.append(f"{prefix} PRINT: {safe_text(p)}")
        if self.prints_dropped:
            lines.append(f"{prefix} PRINT: [... {self.prints_dropped} more characters of output dropped]")
        for w in self.warnings:
            lines.append(f"{prefix} WARN: {safe_text(w)}")
        if self.return_value is not None:
            lines.append(f"{prefix} RETURN: {_short(self.return_value, RETURN_CHARS)}")
        if self.error is not None:
            lines.append(f"{prefix} ERROR: {safe_text(self.error)}")
            for tb in safe_text(self.traceback or "").splitlines():
                lines.append(f"{prefix} TRACE: {tb}")
        lines.append(f"{prefix} TIME: {self.duration_s * 1000:.1f} ms, {len(self.tool_calls)} tool calls")
        return lines

    def format(self, tag: str | None = None) -> str:
        return "\n".join(self.format_lines(tag))


def _short(value: Any, limit: int) -> str:
    """Compact JSON of ``value`` cut to ``limit`` characters (one line)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        text = repr(value)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def bounded(value: Any, max_chars: int) -> Any:
    """``truncate(value)``, or its compact JSON cut to ``max_chars`` when that is still longer: a
    log record never holds more than ``max_chars`` characters of one value."""
    small = truncate(value)
    if len(json.dumps(small, ensure_ascii=False, default=str)) <= max_chars:
        return small
    return _short(small, max_chars)


def bounded_args(args: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """Tool-call arguments for a log record: still a mapping (the log renders ``name=value`` pairs),
    each value bounded to its share of ``max_chars``."""
    items = list(args.items())[:30]
    share = max(40, max_chars // max(1, len(items)))
    return {str(k): bounded(v, share) for k, v in items}


def truncate(value: Any, limit: int = RESULT_CHARS) -> Any:
    """A JSON-safe copy of ``value`` small enough for a log record (long strings cut, long lists cut)."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + f"...[+{len(value) - limit} chars]"
    if isinstance(value, list | tuple):
        items = [truncate(v, limit) for v in value[:20]]
        if len(value) > 20:
            items.append(f"...[+{len(value) - 20} items]")
        return items
    if isinstance(value, dict):
        return {str(k): truncate(v, limit) for k, v in list(value.items())[:30]}
    if value is None or isinstance(value, bool | int | float):
        return value
    return truncate(repr(value), limit)


__all__ = [
    "DEFAULT_THRESHOLDS",
    "CallLog",
    "Phase",
    "SimilarityLabel",
    "SimilarityStats",
    "SimilarityThresholds",
    "ToolCallRecord",
    "bounded",
    "bounded_args",
    "truncate",
]
