"""The search record (``ArchiveEntry.search``): typed, written under its own key of ``archive.json``, and
read from archives that kept its fields in ``metadata``. ``tests/fixtures/old_genome_run`` is such a run
folder (a genome search on GraphWorld, copied from docs/results/demo-0.5b-shared-workers: its config, archive,
designs and learned memory): it loads, resumes, views and exports with its scores and genomes as they
were recorded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from alma_doubles import debug_policy, task_policy
from typer.testing import CliRunner

import atlas.alma
from atlas.alma.search.agent_check import OWN_KIND, checked_anchors
from atlas.alma.state.archive import Archive, ArchiveEntry
from atlas.alma.state.search_record import LEGACY_KEYS, SearchRecord, migrate_entry
from atlas.cli import app
from atlas.errors import ArchiveError
from atlas.infra.llm import ScriptedLLM
from atlas.viewer.run_reader import read_run

OLD_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "old_genome_run"
SCORES = ("status", "collection_score", "deployment_score", "normalized_score", "stage", "per_task")


def _raw() -> list[dict[str, Any]]:
    return json.loads((OLD_RUN / "archive.json").read_text())["entries"]


def _legacy(raw: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in raw["metadata"].items() if k in LEGACY_KEYS}


def _copy(tmp_path: Path) -> Path:
    run = tmp_path / "old"
    shutil.copytree(OLD_RUN, run)
    return run


def test_the_fixture_is_an_archive_from_before_the_record():
    raw = _raw()
    assert all("search" not in e for e in raw)
    assert {k for e in raw for k in _legacy(e)} >= set(LEGACY_KEYS) - {"agent_probe"}


def test_an_old_archive_loads_with_every_search_field_in_the_record_as_written():
    archive = Archive.load(OLD_RUN)
    for raw, e in zip(_raw(), archive, strict=True):
        found = _legacy(raw)
        assert e.search is not None and found, e.id
        # typed and lossless: the record writes back what the old metadata held (empty lists aside)
        assert e.search.model_dump(mode="json") == {k: v for k, v in found.items() if v != []}, e.id
        assert e.metadata == {k: v for k, v in raw["metadata"].items() if k not in LEGACY_KEYS}
        assert {k: getattr(e, k) for k in SCORES[:-2]} == {k: raw[k] for k in SCORES[:-2]}
    child = archive.get("d-0003")
    assert child.search.operator == "mutate" and child.search.probe_kind == OWN_KIND
    assert len(child.search.candidates) == 256 and child.search.checked[0].screen_score is not None
    assert child.search.operator_stats[0].operator == "mutate"


def test_saved_again_the_record_has_its_own_key_and_reads_back_the_same(tmp_path: Path):
    run = _copy(tmp_path)
    before = Archive.load(run)
    before.save()
    data = json.loads((run / "archive.json").read_text())
    assert all(not (set(e["metadata"]) & set(LEGACY_KEYS)) for e in data["entries"])
    assert data["entries"][2]["search"]["genome"] == _raw()[2]["metadata"]["genome"]
    after = Archive.load(run)
    assert [e.search for e in after] == [e.search for e in before]


def test_a_record_from_before_probe_kind_was_kept_migrates_and_says_how_it_was_screened():
    old = {
        "id": "d-0004",
        "name": "mutate-d-0004",
        "status": "invalid",
        "metadata": {
            "operator": "mutate",
            "probe_score": 0.3,
            "steered": 0.35,
            "agent_probe": 0.2,
            "candidates": [{"key": "abc", "probe_score": 0.3, "steered": 0.35, "solved": 1, "error": ""}],
            "staged": {"saved": 3},
        },
    }
    entry = ArchiveEntry.model_validate(old)
    assert entry.metadata == {"staged": {"saved": 3}}  # what is not the search's stays
    rec = entry.search
    assert rec is not None and rec.probe_kind is None and rec.screened_with == "walks"
    assert (rec.agent_probe, rec.candidates[0].solved) == (0.2, 1)
    assert migrate_entry(entry.to_json_dict()) == entry.to_json_dict()  # the new form is left as it is
    assert old["metadata"]["operator"] == "mutate"  # the raw data is not changed in place


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({"probe_score": "high"}, "search.probe_score"),
        ({"candidates": [{"key": "a"}, "not a row"]}, "search.candidates.1"),
        ({"probe_kind": "guessed"}, "search.probe_kind"),
        ({"checked": [{"agent_probe": 0.5}]}, "search.checked.0.genome"),
    ],
)
def test_a_damaged_record_is_a_clear_error_naming_the_entry_and_field(tmp_path: Path, metadata, field):
    run = _copy(tmp_path)
    data = json.loads((run / "archive.json").read_text())
    data["entries"][2]["metadata"].update(metadata)
    (run / "archive.json").write_text(json.dumps(data))
    with pytest.raises(ArchiveError, match=rf"invalid entry d-0003: {field}"):
        Archive.load(run)


def test_an_unknown_search_field_is_refused():
    with pytest.raises(ValueError, match="operater"):
        SearchRecord.model_validate({"operater": "mutate"})


def test_the_old_run_views_as_it_was_recorded():
    run = read_run(OLD_RUN)
    summary = run.summary()
    assert summary["warnings"] == [] and summary["representation"] == "genome"
    assert summary["operators"]["rows"] == [
        {
            "operator": "mutate",
            "tries": 1,
            "wins": 1,
            "rate": 1.0,
            "candidates": 256,
            "evaluated": 1,
            "candidates_per_child": 256.0,
            "fallbacks": 0,
        }
    ]
    for raw, e in zip(_raw(), run.entries, strict=True):
        meta = raw["metadata"]
        assert (e["operator"], e["probe_score"], e["genome"]) == (
            meta.get("operator"),
            meta.get("probe_score"),
            meta.get("genome"),
        )
        assert e["normalized_score"] == raw["normalized_score"]


def test_the_old_run_exports_with_its_scores_and_genomes(tmp_path: Path):
    out = tmp_path / "export.json"
    res = CliRunner().invoke(app, ["archive", "export", str(OLD_RUN), "-o", str(out)])
    assert res.exit_code == 0, res.output
    exported = json.loads(out.read_text())["entries"]
    for raw, e in zip(_raw(), exported, strict=True):
        assert {k: e[k] for k in SCORES} == {k: raw[k] for k in SCORES}
        assert (e["search"]["probe_score"], e["search"].get("genome")) == (
            raw["metadata"]["probe_score"],
            raw["metadata"].get("genome"),
        )
        assert e["source"] == (OLD_RUN / raw["source_path"]).read_text()
    assert Archive.load(out).get("d-0003").search == Archive.load(OLD_RUN).get("d-0003").search
    folder = tmp_path / "best"
    res = CliRunner().invoke(app, ["archive", "export", str(OLD_RUN), "--best", "--out", str(folder)])
    assert res.exit_code == 0, res.output
    assert (folder / "design.json").exists()


def test_the_old_run_resumes_a_generation_on_its_recorded_probes(tmp_path: Path, embedder):
    """A scripted task agent resumes the run (the config names the model that played it, and its
    256-candidate screening is cut to 8 to keep the test short). The played designs' probes with their
    own games are read from the migrated records, not measured again (the copy has no logs to measure
    them with): the new generation's bar is the best design's recorded probe, and its anchors are the
    genomes the old record's agent check measured."""
    run = _copy(tmp_path)
    config = json.loads((run / "config.json").read_text())
    config.update(task_model="scripted", genome_candidates=8)
    (run / "config.json").write_text(json.dumps(config))
    old = Archive.load(run)
    anchors = {g.key for g in checked_anchors(old)}
    assert anchors  # from the migrated ``checked`` rows and the played genomes' own-games probes

    archive, _ = atlas.alma.run(
        resume=run,
        llm=ScriptedLLM(task_policy),
        meta_llm=ScriptedLLM(default="not a genome: generation 2 recombines, with no model"),
        debug_llm=ScriptedLLM(debug_policy),
        embedder=embedder,
        iterations=2,
        until_found=False,
        trace=False,
        baseline_cache=False,
        quiet=True,
    )
    for before, after in zip(old, archive, strict=False):
        assert {k: getattr(after, k) for k in SCORES} == {k: getattr(before, k) for k in SCORES}
        assert after.search == before.search, after.id
    new = archive.entries[len(old)]
    assert new.generation == 2 and new.search is not None and new.search.operator == "recombine"
    assert new.search.probe_bar == old.get("d-0003").search.probe_score == 0.5708
    assert {r.anchor for r in new.search.checked if r.anchor} <= anchors
    data = json.loads((run / "archive.json").read_text())
    assert all(not (set(e["metadata"]) & set(LEGACY_KEYS)) for e in data["entries"])
