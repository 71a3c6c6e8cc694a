"""Prompt templates of the LLM stages. Each stage has its own system prompt, so ``stage_of`` can
tell from a conversation which stage sent it (a log reader or a test double uses that)."""

from __future__ import annotations

from typing import Any

from atlas.core.types import Trajectory

STAGES = ("thoughts", "attribution", "segmentation", "tips", "generalize", "consolidate", "select")

_SYSTEM: dict[str, str] = {
    "thoughts": (
        "You label an AI agent's thoughts. Kinds: analytical (reads/interprets the situation), "
        "planning (decides what to do next), validation (checks a result), reflection (reconsiders a "
        "mistake or draws a lesson). Reply with JSON only."
    ),
    "attribution": (
        "You analyse an AI agent's trajectory and attribute its outcome to decisions, citing step "
        "indices (0-based, as numbered). Separate the symptom from the source: the step that failed "
        "is rarely the decision that caused it. Reply with JSON only."
    ),
    "segmentation": (
        "You split an AI agent's trajectory into logical subtasks. Describe each subtask in "
        "generalized form, without names, ids, numbers, emails or other task-specific entities "
        "(e.g. 'Retrieve service account credentials', not 'Retrieve Spotify password for "
        "john@x.com'). Reply with JSON only."
    ),
    "tips": (
        "You write reusable, actionable guidelines for AI agents from one (part of a) trajectory. "
        "Tips must generalize: no specific names, ids, numbers or values; say when they apply "
        "(trigger) and how (steps). Reply with JSON only."
    ),
    "generalize": (
        "You rewrite task descriptions in generalized form: keep the kind of action and object, "
        "replace specific names, accounts, ids, numbers and values with their category. Reply with JSON only."
    ),
    "consolidate": (
        "You maintain a bank of agent guidelines. For each new tip decide: ADD (new, distinct "
        "advice), UPDATE (same advice as an existing tip: merge into it), DELETE (an existing tip is "
        "wrong or superseded; name it and the new tip is added), NONE (nothing to store). Tips "
        "learned from successful trajectories outrank tips learned from failed ones. Reply with JSON only."
    ),
    "select": (
        "You choose which stored guidelines will help an AI agent with a new task. Select only tips "
        "that clearly apply; selecting none is better than selecting loosely related ones. Reply with JSON only."
    ),
}

_STAGE_OF_SYSTEM: dict[str, str] = {text: stage for stage, text in _SYSTEM.items()}

_USER: dict[str, str] = {
    "thoughts": (
        "Label each of these {n} thoughts.\n{thoughts}\n\n"
        'Reply: {{"labels": ["analytical"|"planning"|"validation"|"reflection", ...]}} (exactly {n} labels).'
    ),
    "attribution": "{trajectory}\n\n{instruction}\nEvery step index is a number from 0 to {last}.",
    "segmentation": (
        "{trajectory}\n\nSegment the steps into at most {max_segments} subtasks in order. "
        'Reply: {{"segments": [{{"description": "generalized subtask", "start": first_step, '
        '"end": last_step}}]}} with 0 <= start <= end <= {last}, segments in order and not overlapping.'
    ),
    "tips": (
        "{trajectory}\n\n{attribution}Focus: {focus}\n\n"
        "Write {min_tips} to {max_tips} tips. Allowed categories: {categories} "
        "(strategy = a pattern that worked; recovery = how to avoid or recover from a failure, with a "
        "negative_example of what went wrong; optimization = a more efficient way, with a "
        "negative_example of the wasteful approach).\n"
        'Reply: {{"tips": [{{"category": ..., "content": "the advice", "purpose": "why it helps", '
        '"implementation_steps": ["..."], "trigger": "when to apply it", "negative_example": "what not '
        'to do" or null, "application_context": "where it applies", "task_category": "short kind of '
        'task", "priority": "low"|"medium"|"high"}}]}}'
    ),
    "generalize": (
        "Generalize each description.\n{items}\n\n"
        'Reply: {{"descriptions": ["...", ...]}} (exactly {n}, same order).'
    ),
    "consolidate": (
        "Subtask: {subtask}\n\nExisting tips in this cluster:\n{existing}\n\nNew tips (from a {evidence} "
        "trajectory):\n{new}\n\n"
        'Reply: {{"decisions": [{{"tip": new_tip_index, "action": "ADD"|"UPDATE"|"DELETE"|"NONE", '
        '"target_id": existing id for UPDATE/DELETE or null, "merged_content": improved text for '
        'UPDATE or null, "reason": "..."}}]}} — one decision per new tip.'
    ),
    "select": (
        "Task: {task}\n\nCandidate guidelines:\n{candidates}\n\nChoose at most {k}. "
        'Reply: {{"selected": [...], "reason": "..."}} where selected lists the ids (g1, g2, ...) '
        "of the guidelines that apply, [] when none does."
    ),
}

ATTRIBUTION_INSTRUCTIONS = {
    "failure": (
        "The agent failed. Give the immediate cause (what directly triggered the failure), the "
        "proximate cause (recent decisions that enabled it), the root cause (the originating issue) "
        "and contributing factors, each with the step index it happened at.\n"
        'Reply: {"immediate_cause": {"description": ..., "step": i}, "proximate_cause": {...}, '
        '"root_cause": {...}, "contributing_factors": [{"description": ..., "step": i}]}'
    ),
    "recovery": (
        "The agent hit a failure and recovered. Say what enabled the failure, how the agent "
        "recognised it, the corrective action, and why the correction worked, with step indices.\n"
        'Reply: {"failure_enabler": {"description": ..., "step": i}, "recognition": {...}, '
        '"corrective_action": {...}, "why_it_worked": "..."}'
    ),
    "inefficient_success": (
        "The agent succeeded inefficiently. Say what was suboptimal (with the wasted step indices) "
        "and the more efficient alternative.\n"
        'Reply: {"suboptimal": "...", "steps": [i, ...], "efficient_alternative": "...", '
        '"estimated_steps_saved": n}'
    ),
}


def stage_messages(stage: str, **fields: Any) -> list[dict[str, str]]:
    """The chat messages of one stage call."""
    return [
        {"role": "system", "content": _SYSTEM[stage]},
        {"role": "user", "content": _USER[stage].format(**fields)},
    ]


def stage_of(messages: list[dict[str, Any]]) -> str | None:
    """Which stage a conversation belongs to (by its system prompt); None if it is not ours."""
    for m in messages:
        content = m.get("content")
        if m.get("role") == "system" and isinstance(content, str):
            return _STAGE_OF_SYSTEM.get(content)
    return None


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def render_steps(
    trajectory: Trajectory,
    thought_kinds: dict[int, str] | None = None,
    *,
    start: int = 0,
    end: int | None = None,
    width: int = 240,
) -> str:
    """Numbered steps (thought, action, observation, error), clipped so prompts stay bounded."""
    kinds = thought_kinds or {}
    last = len(trajectory.steps) - 1 if end is None else end
    lines = []
    for i in range(start, last + 1):
        s = trajectory.steps[i]
        if s.thought:
            lines.append(f"[{i}] thought ({kinds.get(i, '?')}): {_clip(s.thought, width)}")
        lines.append(f"[{i}] action: {_clip(s.action, width)}")
        if s.error:
            lines.append(f"[{i}] ERROR: {_clip(s.error, width)}")
        elif s.observation:
            lines.append(f"[{i}] observation: {_clip(s.observation, width)}")
    return "\n".join(lines) if lines else "(no steps)"


__all__ = ["ATTRIBUTION_INSTRUCTIONS", "STAGES", "render_steps", "stage_messages", "stage_of"]
