"""Stage 1, trajectory intelligence: label each thought, detect cognitive patterns from the steps,
and decide the outcome class. Everything here is deterministic except ``LLMThoughtClassifier``."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import model_validator

from atlas.core.types import Trajectory
from atlas.memory.guidelines.config import OutcomeRules
from atlas.memory.guidelines.prompts import render_steps, stage_messages
from atlas.memory.guidelines.schemas import _Reply, bounded

if TYPE_CHECKING:
    from atlas.infra.llm.client import LLMClient

ThoughtKind = Literal["analytical", "planning", "validation", "reflection"]
OutcomeClass = Literal["clean_success", "failure", "recovery", "inefficient_success"]
THOUGHT_KINDS: tuple[str, ...] = ("analytical", "planning", "validation", "reflection")


@dataclass
class Pattern:
    """A cognitive pattern found in the steps (``kind`` + the step indices that show it)."""

    kind: Literal["self_correction", "api_discovery", "repeated_failing_action", "repeated_action"]
    steps: list[int]
    detail: str


@dataclass
class TrajectoryIntelligence:
    """The structured view later stages work from."""

    outcome: OutcomeClass
    thoughts: dict[int, str] = field(default_factory=dict)  # step index -> thought kind
    patterns: list[Pattern] = field(default_factory=list)
    error_steps: list[int] = field(default_factory=list)
    n_steps: int = 0
    reasons: list[str] = field(default_factory=list)  # why this outcome class

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- thought classification ---------------------------------------------------------------------


@runtime_checkable
class ThoughtClassifier(Protocol):
    async def classify(self, thoughts: list[str]) -> list[str]: ...


_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "reflection",
        re.compile(
            r"\b(mistake|wrong|should have|instead|reali[sz]e|oops|didn'?t work|did not work|failed|"
            r"that was|my error|in hindsight|learned|lesson)\b",
            re.I,
        ),
    ),
    (
        "validation",
        re.compile(
            r"\b(verify|verif|check|confirm|make sure|ensure|double-check|validate|test whether|is it correct)\w*",
            re.I,
        ),
    ),
    (
        "planning",
        re.compile(
            r"\b(i will|i'll|plan|first|next|then|let me|going to|step \d|after that|need to|should)\b", re.I
        ),
    ),
]


class RuleThoughtClassifier:
    """Keyword rules, first match wins (reflection > validation > planning > analytical). Free."""

    async def classify(self, thoughts: list[str]) -> list[str]:
        out = []
        for t in thoughts:
            kind = "analytical"
            for name, rx in _RULES:
                if rx.search(t or ""):
                    kind = name
                    break
            out.append(kind)
        return out


class ThoughtLabels(_Reply):
    n_items: ClassVar[int] = 0
    labels: list[ThoughtKind]

    @model_validator(mode="after")
    def _count(self) -> ThoughtLabels:
        if len(self.labels) != self.n_items:
            raise ValueError(f"need exactly {self.n_items} labels, got {len(self.labels)}")
        return self


class LLMThoughtClassifier:
    """One LLM call labels every thought; the reply must have exactly one valid label per thought."""

    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm

    async def classify(self, thoughts: list[str]) -> list[str]:
        if not thoughts:
            return []
        n = len(thoughts)
        schema = bounded(ThoughtLabels, n_items=n)
        listing = "\n".join(f"{i}. {t}" for i, t in enumerate(thoughts))
        reply = await self.llm.astructured(stage_messages("thoughts", thoughts=listing, n=n), schema)
        return list(reply.labels)


# --- patterns and outcome -----------------------------------------------------------------------

_DISCOVERY_TOOLS = re.compile(
    r"^(look|help|list\w*|search\w*|describe\w*|inspect\w*|get_schema|docs?|man)$", re.I
)


def detect_patterns(trajectory: Trajectory, rules: OutcomeRules) -> list[Pattern]:
    """Self-correction, API discovery and repeated (failing) actions, found from the steps alone."""
    steps = trajectory.steps
    patterns: list[Pattern] = []
    fail_counts: Counter[str] = Counter(s.action for s in steps if s.error)
    for action, n in fail_counts.items():
        if n >= rules.repeated_failure_threshold:
            idx = [i for i, s in enumerate(steps) if s.action == action and s.error]
            patterns.append(Pattern("repeated_failing_action", idx, f"{action} failed {n} times"))
    counts: Counter[str] = Counter(s.action for s in steps)
    for action, n in counts.items():
        if n >= rules.repeat_threshold:
            idx = [i for i, s in enumerate(steps) if s.action == action]
            patterns.append(Pattern("repeated_action", idx, f"{action} repeated {n} times"))
    # self-correction: an error followed by a different action that works
    for i, s in enumerate(steps):
        if not s.error:
            continue
        for j in range(i + 1, min(len(steps), i + 4)):
            nxt = steps[j]
            if nxt.error is None and nxt.action != s.action:
                patterns.append(
                    Pattern("self_correction", [i, j], f"after {s.action} failed, {nxt.action} worked")
                )
                break
    # API discovery: a tool first used after an earlier observation/error mentioned it, or a
    # discovery-style tool (look, list_*, search_*, help) whose result named new tools
    seen_tools: set[str] = set()
    for j, s in enumerate(steps):
        tool = s.tool or s.action.split("(", 1)[0]
        if tool not in seen_tools and j > 0:
            for i in range(j):
                text = f"{steps[i].observation} {steps[i].error or ''}"
                if re.search(rf"\b{re.escape(tool)}\b", text):
                    patterns.append(Pattern("api_discovery", [i, j], f"{tool} learned from step {i}"))
                    break
        elif _DISCOVERY_TOOLS.match(tool) and tool not in seen_tools:
            patterns.append(Pattern("api_discovery", [j], f"{tool} used to discover the environment"))
        seen_tools.add(tool)
    return patterns


def decide_outcome(
    trajectory: Trajectory, patterns: list[Pattern], rules: OutcomeRules
) -> tuple[str, list[str]]:
    """Clean success, failure, failure-then-recovery or inefficient success, with the reasons."""
    n = len(trajectory.steps)
    errors = sum(1 for s in trajectory.steps if s.error)
    if not trajectory.success:
        return "failure", [f"task not completed ({errors} errors in {n} steps)"]
    if errors >= rules.min_errors_for_recovery:
        return "recovery", [f"succeeded after {errors} error(s)"]
    reasons = []
    if n > rules.max_clean_steps:
        reasons.append(f"{n} steps > max_clean_steps {rules.max_clean_steps}")
    optimal = trajectory.metadata.get("optimal_steps")
    if isinstance(optimal, int | float) and optimal > 0 and n > rules.inefficiency_ratio * optimal:
        reasons.append(f"{n} steps > {rules.inefficiency_ratio} × optimal {optimal}")
    repeats = [p for p in patterns if p.kind == "repeated_action"]
    if repeats:
        reasons.append(repeats[0].detail)
    if reasons:
        return "inefficient_success", reasons
    return "clean_success", [f"succeeded in {n} steps without errors"]


class TrajectoryAnalyzer:
    """Runs stage 1: thoughts (rule or LLM classifier), patterns, outcome."""

    def __init__(
        self, rules: OutcomeRules | None = None, classifier: ThoughtClassifier | None = None
    ) -> None:
        self.rules = rules or OutcomeRules()
        self.classifier = classifier or RuleThoughtClassifier()

    async def analyze(self, trajectory: Trajectory) -> TrajectoryIntelligence:
        indexed = [(i, s.thought) for i, s in enumerate(trajectory.steps) if s.thought]
        labels = await self.classifier.classify([t for _, t in indexed]) if indexed else []
        patterns = detect_patterns(trajectory, self.rules)
        outcome, reasons = decide_outcome(trajectory, patterns, self.rules)
        return TrajectoryIntelligence(
            outcome=outcome,  # type: ignore[arg-type]
            thoughts={i: lab for (i, _), lab in zip(indexed, labels, strict=True)},
            patterns=patterns,
            error_steps=[i for i, s in enumerate(trajectory.steps) if s.error],
            n_steps=len(trajectory.steps),
            reasons=reasons,
        )


def describe(trajectory: Trajectory, intel: TrajectoryIntelligence) -> str:
    """The text block every LLM stage sees: task, outcome, patterns, numbered steps."""
    lines = [
        f"Task: {trajectory.task.description}",
        f"Outcome: {intel.outcome} ({'; '.join(intel.reasons)})",
    ]
    if intel.patterns:
        lines.append(
            "Patterns: " + "; ".join(f"{p.kind} at steps {p.steps}: {p.detail}" for p in intel.patterns)
        )
    lines.append(f"Steps (numbered 0 to {intel.n_steps - 1}):")
    lines.append(render_steps(trajectory, intel.thoughts))
    return "\n".join(lines)


__all__ = [
    "THOUGHT_KINDS",
    "LLMThoughtClassifier",
    "OutcomeClass",
    "Pattern",
    "RuleThoughtClassifier",
    "ThoughtClassifier",
    "ThoughtKind",
    "TrajectoryAnalyzer",
    "TrajectoryIntelligence",
    "decide_outcome",
    "describe",
    "detect_patterns",
]
