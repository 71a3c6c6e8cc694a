"""What a generation's screening reports: a progress line while it runs (``screening_line``) and, once
it ends, the record kept in its entry (``screening_record``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from atlas.alma.state.search_record import CandidateRow, CheckedRow, SearchRecord

if TYPE_CHECKING:
    from atlas.alma.genome.step import Candidate


def screening_line(name: str, screened: list[Candidate], budget: int) -> str:
    """How far a generation's screening got: candidates screened, the best probe and steer so far."""
    ok = [c for c in screened if not c.error]
    best = max((c.probe_score for c in ok), default=0.0)
    steered = max((c.steered for c in ok), default=0.0)
    return (
        f"screened  {name}: {len(screened)} of up to {budget} candidates, best probe {best:.3f}, "
        f"steered {steered:.3f}, {sum(1 for c in ok if c.solved)} solved a probe task"
    )


def screening_record(
    screened: Sequence[Candidate], checked: Sequence[Candidate], notes: list[str]
) -> SearchRecord:
    """A generation's record of its screening: every candidate screened (by key), every genome the agent
    check measured, and the operator's fallback notes."""
    return SearchRecord(
        candidates=[
            CandidateRow(
                key=c.genome.key,
                probe_score=round(c.probe_score, 4),
                steered=round(c.steered, 4),
                solved=c.solved,
                error=c.error,
                agent_probe=None if c.agent_probe is None else round(c.agent_probe, 4),
            )
            for c in screened
        ],
        checked=[
            CheckedRow(
                genome=c.genome.model_dump(),
                agent_probe=round(c.agent_probe, 4),
                agent_steered=round(c.agent_steered, 4),
                agent_solved=c.agent_solved,
                screen_score=round(c.probe_score, 4),
                anchor=c.anchor or None,
                logs=c.logs or None,
                collection_reached=c.collection_reached,
            )
            for c in checked
            if c.agent_probe is not None
        ],
        operator_notes=notes,
    )


__all__ = ["screening_line", "screening_record"]
