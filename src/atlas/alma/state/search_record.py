"""What the search records about how a design was made and screened (``ArchiveEntry.search``).

A child of the search records its operator and whether it beat its parent (the operator bandit,
``atlas.alma.genome.bandit``, reads them back); a genome child also records its genome, every
candidate the advice probe screened, the genomes the agent check measured, the probe score it was
chosen on and the bar it had to beat (``atlas.alma.search.genome_step``). A played design's probe
with its own collection games (the bar's measure) is recorded on any entry, hand-built ones
included. ``archive.json`` keeps the record under the entry's ``search`` key, without empty fields.

Archives written before the record kept these fields as loose keys of ``metadata``; reading one
moves them into the record (``migrate_entry``), so an old run folder loads, resumes, views and
exports as a new one does.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

#: How a probe score was measured: memory learned from the screening's walks, from the no-memory
#: baseline's logged collection games (with advised walks), or from the design's own collection games
#: as the task agent played them.
ProbeKind = Literal["walks", "logged", "own games"]

#: The ``metadata`` keys archives kept before the record, each now the record's field of that name.
LEGACY_KEYS = (
    "operator",
    "representation",
    "genome",
    "screen_score",
    "probe_score",
    "steered",
    "probe_solved",
    "probe_kind",
    "agent_probe",
    "probe_bar",
    "candidates",
    "checked",
    "operator_notes",
    "beat_parent",
    "operator_stats",
)


class _Record(BaseModel):
    """Typed and closed (an unknown field is an error, not kept); writes neither None nor an empty
    list, so a record holds only what the search recorded."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if v is not None and v != []}


class CandidateRow(_Record):
    """One candidate genome the advice probe screened (by its ``Genome.key``)."""

    key: str
    probe_score: float = 0.0
    steered: float = 0.0
    solved: int = 0
    error: str = ""
    agent_probe: float | None = None  # when the agent check measured it


class CheckedRow(_Record):
    """One genome the agent check measured: its probe with memory from the task agent's own collection
    games with it (``agent_*``), and the screening's score (``screen_score``)."""

    genome: dict[str, Any]  # as written; it may not load under another version's parts
    agent_probe: float
    agent_steered: float = 0.0
    agent_solved: int = 0
    screen_score: float | None = None
    anchor: str | None = None  # the key of the checked genome the climb made it from
    logs: str | None = None  # logs/<id>-check<n>: the task agent's collection games with it
    collection_reached: float | None = None  # the mean highest score those games reached


class OperatorStatsRow(_Record):
    """The operator bandit's tries and wins when the entry was made (``genome.bandit.stats_table``)."""

    operator: str
    tries: int = 0
    wins: int = 0
    rate: float = 0.0


class SearchRecord(_Record):
    """How a design was made and screened; fields the search did not record stay None or empty."""

    operator: str | None = None  # mutate, recombine, random, llm_edit; write, edit, crossover
    representation: str | None = None  # genome or both: the run's resolved representation
    beat_parent: bool | None = None  # the bandit's reward
    operator_stats: list[OperatorStatsRow] = Field(default_factory=list)
    # where an operator fell back (an unusable llm_edit reply: mutation instead)
    operator_notes: list[str] = Field(default_factory=list)
    genome: dict[str, Any] | None = None  # the design's genome as written (None: written as code)
    candidates: list[CandidateRow] = Field(default_factory=list)
    checked: list[CheckedRow] = Field(default_factory=list)
    screen_score: float | None = None  # the screening's probe of the chosen genome
    probe_score: float | None = None  # the probe the design was chosen on (or measured with later)
    steered: float | None = None  # that probe with partial credit for advice followed
    probe_solved: int | None = None
    probe_kind: ProbeKind | None = None  # how ``probe_score`` was measured (None: not recorded)
    agent_probe: float | None = None  # a screened-out child's best probe with the agent's games
    probe_bar: float | None = None  # the probe a candidate had to beat to be played
    # played though the agent check refuted it (``REFUTED_TO_PLAY`` generations refuted since one was played)
    played_refuted: bool | None = None

    @property
    def screened_with(self) -> ProbeKind:
        """How ``probe_score`` was measured; archives that did not record it screened with walks."""
        return self.probe_kind or "walks"


def migrate_entry(data: Any) -> Any:
    """An archive entry's raw data with the search's keys moved from ``metadata`` into ``search``
    (what archives kept before the record); data already in the new form, or not an object,
    comes back as it is. Fields already in ``search`` win over ``metadata``'s."""
    if not isinstance(data, dict) or not isinstance(data.get("metadata"), dict):
        return data
    meta = data["metadata"]
    if not any(k in meta for k in LEGACY_KEYS):
        return data
    found = {k: meta[k] for k in LEGACY_KEYS if k in meta}
    record = data.get("search")
    if isinstance(record, SearchRecord):
        record = record.model_dump()
    merged = {**found, **record} if isinstance(record, dict) else found
    rest = {k: v for k, v in meta.items() if k not in found}
    return {**data, "metadata": rest, "search": merged}


def raw_search(entry: dict[str, Any]) -> dict[str, Any]:
    """A raw archive entry's search record as a plain dict, unvalidated (``{}`` if it has none): for
    readers of a live or damaged run folder, which show what they can (``atlas.viewer``)."""
    record = migrate_entry(entry).get("search")
    return record if isinstance(record, dict) else {}


__all__ = [
    "LEGACY_KEYS",
    "CandidateRow",
    "CheckedRow",
    "OperatorStatsRow",
    "ProbeKind",
    "SearchRecord",
    "migrate_entry",
    "raw_search",
]
