"""Turn guidelines into the text an agent is shown (prompt advice, MCP replies, CLI output)."""

from __future__ import annotations

from atlas.core.types import Guideline


def format_guideline(g: Guideline, *, steps: bool = True) -> str:
    """One tip as a few lines: category, when it applies, the advice, how, what to avoid."""
    lines = [f"[{g.category}] {g.content}"]
    if g.trigger:
        lines.append(f"  When: {g.trigger}")
    if steps and g.implementation_steps:
        lines.append("  Steps: " + "; ".join(g.implementation_steps))
    if g.negative_example:
        lines.append(f"  Avoid: {g.negative_example}")
    return "\n".join(lines)


def format_guidelines(
    guidelines: list[Guideline], *, header: str = "Guidelines learned from past tasks:"
) -> str:
    """A numbered block for a prompt; empty string when there is nothing to say."""
    if not guidelines:
        return ""
    body = "\n".join(f"{i}. {format_guideline(g)}" for i, g in enumerate(guidelines, 1))
    return f"{header}\n{body}"


__all__ = ["format_guideline", "format_guidelines"]
