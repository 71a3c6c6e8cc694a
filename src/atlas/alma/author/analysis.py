"""The Analysis of a parent design for the MetaAgent: compressed episode summaries built from the
run logs the loop keeps (``episodes.jsonl``): what the agent did, where it went wrong, the advice
it got and whether it followed it.

    C1 SOLVED score 0.85 in 6 steps — Bring the key to room_C.
      advice (48 chars): "Route: room_A -> room_C"
      actions: move_to room_B, pick_up key, move_to room_C ×2, put_down key
      advice use: followed the advice on 3 of 5 actions; first departure: C1 step 1: advised …
    D2 FAILED score 0.00 in 20 steps — …
      went wrong: step 4 pick_up key error: There is no key here.; not solved in 20 steps

Episodes are ordered worst first, then best (the same order as the DebugLog), within a size cap.
"""

from __future__ import annotations

from typing import Any

from atlas.alma.author.advice_use import advice_use, listed_text
from atlas.core.safetext import safe_text

MAX_EPISODES = 4
MAX_ACTIONS = 10  # distinct runs of actions shown per episode
MAX_CHARS = 2200  # of one parent's analysis


def _clip(text: str, limit: int) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _action(a: dict[str, Any]) -> str:
    """An action record's text as the agent's action list writes it (``move_to room_B``); records
    written before the harness kept that text hold only the call form, which is converted."""
    return str(a.get("text") or listed_text(str(a.get("action", ""))))


def compress_actions(actions: list[dict[str, Any]], limit: int = MAX_ACTIONS) -> str:
    """Actions in order as the agent's action list writes them (``move_to room_B ×3``: the form
    advice must use), repeats collapsed, errors marked ``!``."""
    runs: list[list[Any]] = []
    for a in actions:
        text = _clip(_action(a), 60) + ("!" if a.get("error") else "")
        if runs and runs[-1][0] == text:
            runs[-1][1] += 1
        else:
            runs.append([text, 1])
    shown = [t if n == 1 else f"{t} ×{n}" for t, n in runs[:limit]]
    if len(runs) > limit:
        shown.append(f"… {len(runs) - limit} more")
    return ", ".join(shown) or "(none)"


def went_wrong(ep: dict[str, Any]) -> str | None:
    """Where a failed (or error-laden) episode went wrong: its first errors and how it ended."""
    actions = [a for a in ep.get("actions") or [] if isinstance(a, dict)]
    errors = [(i, a) for i, a in enumerate(actions, 1) if a.get("error")]
    parts = [f"step {i} {_clip(_action(a), 60)} error: {_clip(a['error'], 90)}" for i, a in errors[:2]]
    if len(errors) > 2:
        parts.append(f"{len(errors) - 2} more errors")
    if not ep.get("success"):
        parts.append(f"not solved in {ep.get('steps', len(actions))} steps")
    return "; ".join(parts) or None


def episode_summary(ep: dict[str, Any]) -> list[str]:
    """A few lines about one episode (an ``EpisodeRecord`` dict)."""
    status = "SOLVED" if ep.get("success") else "FAILED"
    lines = [
        f"{ep.get('label', '?')} {status} score {float(ep.get('score') or 0.0):.2f} in {ep.get('steps', 0)} "
        f"steps — {_clip(ep.get('goal', ''), 100)}"
    ]
    advice = str(ep.get("advice") or "")
    lines.append(
        f'  advice ({len(advice)} chars): "{_clip(advice, 160)}"' if advice.strip() else "  advice: none"
    )
    lines.append(
        f"  actions: {compress_actions([a for a in ep.get('actions') or [] if isinstance(a, dict)])}"
    )
    if wrong := went_wrong(ep):
        lines.append(f"  went wrong: {wrong}")
    if (use := advice_use(ep)) is not None:
        lines.append(f"  advice use: {use.text()}")
    return lines


def _order(episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ranked = sorted(episodes, key=lambda e: (float(e.get("score") or 0.0), bool(e.get("success"))))
    out: list[dict[str, Any]] = []
    while ranked:
        out.append(ranked.pop(0))
        if ranked:
            out.append(ranked.pop())
    return out


def parent_analysis(
    episodes: list[dict[str, Any]], *, max_episodes: int = MAX_EPISODES, max_chars: int = MAX_CHARS
) -> str:
    """The Analysis text of one parent from its episode records (worst and best first, capped)."""
    if not episodes:
        return "(no episode records)"
    with_advice = [e for e in episodes if str(e.get("advice") or "").strip()]
    uses = [u for e in with_advice if (u := advice_use(e)) is not None]
    counted = sum(u.actions_with_args for u in uses)
    head = (
        f"{sum(bool(e.get('success')) for e in episodes)}/{len(episodes)} episodes solved; advice given in "
        f"{len(with_advice)}; actions that followed the advice: "
        f"{sum(u.followed for u in uses)} of {counted}"
        if counted
        else f"{sum(bool(e.get('success')) for e in episodes)}/{len(episodes)} episodes solved; advice given in "
        f"{len(with_advice)}"
    )
    out = [head]
    size = len(head)
    for ep in _order(episodes)[:max_episodes]:
        block = episode_summary(ep)
        cost = sum(len(x) + 1 for x in block)
        if size + cost > max_chars:
            out.append("… more episodes omitted (size cap)")
            break
        out.extend(block)
        size += cost
    return safe_text("\n".join(out))  # design-written advice: no control or escape sequences


__all__ = ["compress_actions", "episode_summary", "parent_analysis", "went_wrong"]
