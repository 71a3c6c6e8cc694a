"""What the agent check measured, read back from the archive: every genome probed with memory from the
task agent's own collection games (``_checked_rows``), the best of them as sources of the climb
(``checked_anchors``), near copies passed over (``checked_likeness``, ``to_check``), and the agent's
games that reached furthest with a design's advice (``scored_games``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from atlas.alma.genome import Genome
from atlas.alma.genome.step import Candidate, read_genome
from atlas.alma.search.seeds import NO_MEMORY_NAME
from atlas.alma.state.archive import ArchiveEntry
from atlas.alma.state.highest import collection_reached
from atlas.alma.state.search_record import CheckedRow, ProbeKind

# The agent check (``AlmaConfig.agent_checks``): the screening's best few candidates have their
# collection games played by the task agent (two at once) before one is chosen, and are probed again with
# memory from those games alone. The screening learns a candidate's memory from the baseline's games and
# from walks; a candidate whose advice changes how the agent collects learns something else. Evidence:
# the played genomes of the runs in docs/results/ (discovery-fetch-0.5b, discovery-fetch-0.5b-2,
# discovery-graphworld-0.5b, demo-0.5b, discovery-depot-0.5b), probed with memory from the baseline's
# games and then from their own (``scripts/probe_genomes.py RUN G.json=DESIGN_ID``): with their own games
# the genomes that beat no memory probe above those that did harm, which the baseline's games rank the
# wrong way round on TextWorld fetch.
OWN_KIND: ProbeKind = "own games"  # ``probe_kind`` of a probe with memory from a design's own games
# The genomes that probed best with the agent's own collection in earlier generations (played or not;
# ``checked_anchors``) stay sources of the screening's climb, and the best-screened candidate made from
# each takes one of the check's slots (at most half of them): the search climbs on the score the agent's
# games give, and the screening only filters each one's neighbours.
ANCHORS = 2


def actions_by_task(rows: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """``{task id: [action, ...]}`` of logged episodes (``EpisodeRecord.to_dict()`` rows)."""
    out: dict[str, list[str]] = {}
    for row in rows:
        if row.get("task_id"):
            steps = row.get("actions") or []
            out[str(row["task_id"])] = [str(a.get("text") or "") for a in steps if isinstance(a, dict)]
    return out


def _checked_rows(entries: Iterable[ArchiveEntry]) -> list[CheckedRow]:
    """Every genome measured with the task agent's own collection games: the agent check's rows of each
    generation (played or not), and each played genome whose probe was measured so (``probe_of``)."""
    rows: list[CheckedRow] = []
    for e in entries:
        r = e.search
        if r is None:
            continue
        rows += r.checked
        own = e.status == "ok" and r.probe_kind == OWN_KIND  # a played design measured by ``probe_of``
        if own and r.genome is not None and r.probe_score is not None:
            rows.append(
                CheckedRow(genome=r.genome, agent_probe=r.probe_score, agent_steered=r.steered or 0.0)
            )
    return rows


def scored_games(entries: Iterable[ArchiveEntry]) -> str | None:
    """The logs folder of the task agent's collection games that reached the highest scores (their mean
    ``collection_reached``, above 0) with a design's advice, an agent check's or a played design's
    (``CHECKED_GAMES``); None while none reached any."""
    entries = list(entries)
    rows = [(r.collection_reached, r.logs) for r in _checked_rows(entries)]
    rows += [
        (collection_reached(e.per_task), e.logs_dir or f"logs/{e.id}")
        for e in entries
        if e.name != NO_MEMORY_NAME
    ]
    best = max(((s, str(d)) for s, d in rows if s and s > 0 and d), default=None, key=lambda t: t[0])
    return best[1] if best else None


def checked_anchors(entries: Iterable[ArchiveEntry], n: int = ANCHORS) -> list[Genome]:
    """The ``n`` genomes whose probe with the task agent's own collection games was best (``_checked_rows``),
    best first; none that probed 0, each once."""
    best: dict[str, tuple[float, float, Genome]] = {}
    for row in _checked_rows(entries):
        g = read_genome(row.genome)
        score, steered = row.agent_probe, row.agent_steered
        if g is not None and score > 0 and (score, steered) > best.get(g.key, (0.0, 0.0, g))[:2]:
            best[g.key] = (score, steered, g)
    ranked = sorted(best.values(), key=lambda t: (t[0], t[1]), reverse=True)
    return [g for _, _, g in ranked[:n]]


def screening_rank(c: Candidate) -> tuple[float, float, int]:
    """The screening's order: probe score, then how far the advice steered, then fewer retrieve parts."""
    return (c.probe_score, c.steered, -len(c.genome.retrieve))


def checked_rank(c: Candidate) -> tuple[float, float, float, float]:
    """After the agent check: the probe with the agent's own collection first, then the screening's."""
    return (c.agent_probe or 0.0, c.agent_steered, c.probe_score, c.steered)


def _likeness(genome: Genome, screen_score: float) -> tuple[tuple[str, ...], float]:
    """What a near copy shares with its original: the retrieve parts and the screening's score (a copy
    with its parts reordered, or a parameter changed that the memory never reaches, screens the same)."""
    return tuple(sorted({r.part for r in genome.retrieve})), round(round(screen_score, 4), 3)  # rows keep 4


def checked_likeness(entries: Iterable[ArchiveEntry]) -> set[tuple[tuple[str, ...], float]]:
    """``_likeness`` of every genome the agent check measured in earlier generations."""
    out = set()
    for row in _checked_rows(entries):
        g = read_genome(row.genome)
        if g is not None and row.screen_score is not None:
            out.add(_likeness(g, row.screen_score))
    return out


def to_check(
    screened: list[Candidate],
    anchors: Sequence[Genome],
    limit: int,
    checked: Iterable[tuple[tuple[str, ...], float]] = (),
) -> list[Candidate]:
    """Up to ``limit`` candidates for the agent check, of those whose probe scored (a solved task or a
    partial score): first, for each
    of ``anchors`` (at most half of ``limit``), the best-screened candidate the climb made from it; then
    the screening's best, each the best of its set of retrieve parts (a family of near copies is
    checked once). None is a near copy (``_likeness``) of another pick or of a genome ``checked`` before:
    such a copy spends the agent's games to measure what is known (without this rule, generation 4 of
    docs/results/discovery-fetch-checked-0.5b spent all six checks on its two anchors, parts reordered)."""
    ranked = sorted(
        (c for c in screened if not c.error and c.probe_score > 0), key=screening_rank, reverse=True
    )
    known = set(checked)
    picked: list[Candidate] = []

    def take(c: Candidate) -> None:
        known.add(_likeness(c.genome, c.probe_score))
        picked.append(c)

    def new(c: Candidate) -> bool:
        return _likeness(c.genome, c.probe_score) not in known and all(c is not p for p in picked)

    for a in anchors[: limit // 2]:
        near = next((c for c in ranked if c.anchor == a.key and new(c)), None)
        if near is not None:
            take(near)
    kinds: set[tuple[str, ...]] = set()
    for c in ranked:
        kind = _likeness(c.genome, 0.0)[0]
        if kind not in kinds and new(c) and len(picked) < limit:
            kinds.add(kind)
            take(c)
    return picked


__all__ = [
    "ANCHORS",
    "OWN_KIND",
    "actions_by_task",
    "checked_anchors",
    "checked_likeness",
    "checked_rank",
    "scored_games",
    "screening_rank",
    "to_check",
]
