"""atlas.viewer.run_reader and atlas.viewer.lineage over the recorded sample run and over folders
shaped like a run in progress or a broken one."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from atlas.errors import ArchiveError
from atlas.viewer.lineage import lineage_layout
from atlas.viewer.run_reader import (
    design_detail,
    fingerprint,
    read_jsonl,
    read_logs,
    read_run,
    read_source,
)

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_run"
IDS = ["d-0001", "d-0002", "d-0003", "d-0004", "d-0005", "d-0006"]


@pytest.fixture
def run_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "run"
    shutil.copytree(SAMPLE, dst)
    return dst


def _archive(run_dir: Path) -> dict:
    return json.loads((run_dir / "archive.json").read_text())


def _write_archive(run_dir: Path, archive: dict) -> None:
    (run_dir / "archive.json").write_text(json.dumps(archive))


def test_reads_the_sample_run():
    run = read_run(SAMPLE)
    assert [e["id"] for e in run.entries] == IDS
    assert run.name == "sample_run"
    assert run.config["env"] == "graphworld"
    assert run.baseline_score == pytest.approx(0.41)
    assert run.state == "finished"
    assert run.warnings == []
    assert run.best()["id"] == "d-0006"
    kinds = {e["id"]: e["kind"] for e in run.entries}
    assert kinds == {
        "d-0001": "baseline",
        "d-0002": "baseline",
        "d-0003": "baseline",
        "d-0004": "evolved",
        "d-0005": "evolved",
        "d-0006": "evolved",
    }
    invalid = run.entry("d-0005")
    assert invalid["status"] == "invalid"
    assert invalid["deployment_score"] is None
    assert "import of 'os'" in invalid["errors"][0]


def test_generations_take_the_best_scored_design_of_each():
    rows = read_run(SAMPLE).generations()
    assert [r["generation"] for r in rows] == [0, 1, 2]
    assert [r["design_id"] for r in rows] == ["d-0002", "d-0004", "d-0006"]
    assert rows[1]["designs"] == 2 and rows[1]["failed"] == 1
    assert rows[2]["deployment"] == pytest.approx(0.71)
    assert rows[2]["normalized"] == pytest.approx(0.30)
    assert [r["best_so_far"] for r in rows] == pytest.approx([0.55, 0.63, 0.71])


def test_usage_per_iteration_and_total():
    run = read_run(SAMPLE)
    rows = run.usage_rows()
    assert [r["child_id"] for r in rows] == ["d-0004", "d-0005", "d-0006"]
    total = run.usage_total()
    assert total["total_tokens"] == 6900 + 5300 + 8900
    assert total["cost_usd"] == pytest.approx(0.019)


def test_summary_is_json_safe_and_has_no_sources():
    summary = read_run(SAMPLE).summary()
    text = json.dumps(summary, allow_nan=False)
    assert "def update" not in text
    assert summary["best_id"] == "d-0006"
    assert len(summary["lineage"]["nodes"]) == 6


def test_design_detail_diffs_against_the_parent():
    run = read_run(SAMPLE)
    d = design_detail(run, "d-0004")
    assert d["source"] == (SAMPLE / "designs" / "d-0004.py").read_text()
    assert d["diff_parent"] == "d-0002"
    assert d["diff"].startswith("--- d-0002.py\n+++ d-0004.py\n")
    assert '+    dead_ends = memory.setdefault("dead_ends", [])' in d["diff"].splitlines()
    assert d["children"] == ["d-0006"]
    assert "dead ends" in d["critique"] or "dead end" in d["critique"]


def test_design_detail_can_pick_the_second_parent_and_ignores_unknown_ones():
    run = read_run(SAMPLE)
    assert design_detail(run, "d-0006", "d-0003")["diff"].startswith("--- d-0003.py")
    assert design_detail(run, "d-0006", "d-9999")["diff_parent"] == "d-0004"
    root = design_detail(run, "d-0002")
    assert root["diff"] is None and root["diff_parent"] is None
    assert design_detail(run, "nope") is None


KNOWN_LINE = (
    "[D2:recall] SIMILARITY find_similar: label=LOW_QUALITY top=0.240 spread=0.040 k=3 n=3 "
    'query="Bring the key to room_G."'
)


def test_logs_are_grouped_per_episode_like_the_debug_log():
    logs = read_logs(read_run(SAMPLE), "d-0006")
    assert [e["label"] for e in logs["episodes"]] == ["C1", "C2", "C3", "D1", "D2", "D3"]
    d2 = next(e for e in logs["episodes"] if e["label"] == "D2")["lines"]
    assert d2[0] == "--- EPISODE D2: SUCCESS score 0.68 (13 steps) — Bring the key to room_G. ---"
    assert KNOWN_LINE in d2
    assert d2[-1] == '[D2:agent] put_down(object="key")'
    # Every episode line of the viewer is a line the DebugAgent saw in debug_log.txt.
    debug = set(logs["debug_log"])
    assert all(line in debug for ep in logs["episodes"] for line in ep["lines"])
    assert logs["debug_log"][0].startswith("=== DESIGN d-0006")
    assert logs["warnings"] == []
    assert read_logs(read_run(SAMPLE), "nope") is None


def test_a_design_that_never_ran_has_no_logs():
    logs = read_logs(read_run(SAMPLE), "d-0005")
    assert logs["episodes"] == [] and logs["debug_log"] == []


def test_calls_without_an_episode_record_and_foreign_records(run_copy: Path):
    logs_dir = run_copy / "logs" / "d-0004"
    (logs_dir / "episodes.jsonl").unlink()
    with (logs_dir / "calls.jsonl").open("a") as fh:
        fh.write(json.dumps({"episode": "C9", "what": "not a CallLog"}) + "\n")
        fh.write('{"phase": "recall", "episode": "C9", "tool_ca')  # still being written
    logs = read_logs(read_run(run_copy), "d-0004")
    labels = [e["label"] for e in logs["episodes"]]
    assert labels == ["C1", "C2", "C3", "D1", "D2", "D3", "C9"]
    c1 = logs["episodes"][0]["lines"]
    assert c1[0].startswith("[C1:recall] TOOL graph_path: ")
    assert logs["episodes"][-1]["lines"][0].startswith('[C9:?] RECORD {"episode": "C9"')
    assert len(logs["warnings"]) == 1 and "not a CallLog" in logs["warnings"][0]


def test_missing_folder_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ArchiveError, match="run folder not found"):
        read_run(tmp_path / "nope")


def test_a_file_or_an_unrelated_folder_is_not_a_run(tmp_path: Path):
    f = tmp_path / "x.txt"
    f.write_text("hi")
    with pytest.raises(ArchiveError, match="not a folder"):
        read_run(f)
    with pytest.raises(ArchiveError, match="not an ALMA run folder"):
        read_run(tmp_path)


def test_corrupt_archive_is_a_clear_error(run_copy: Path):
    (run_copy / "archive.json").write_text('{"version": 1, "entries": [')
    with pytest.raises(ArchiveError, match=r"archive.json is corrupt"):
        read_run(run_copy)
    (run_copy / "archive.json").write_text('["not", "an", "archive"]')
    with pytest.raises(ArchiveError, match="expected a JSON object"):
        read_run(run_copy)


def test_a_run_that_just_started(tmp_path: Path):
    """Only config.json and a trace whose last line is half written: no error, a note."""
    run_dir = tmp_path / "live"
    run_dir.mkdir()
    (run_dir / "config.json").write_text(json.dumps({"env": "graphworld"}))
    (run_dir / "trace.jsonl").write_text(
        json.dumps({"ts": datetime.now(UTC).isoformat(), "event": "run.start"}) + '\n{"ts": "2026-11-22T08:0'
    )
    run = read_run(run_dir)
    assert run.entries == [] and run.generations() == [] and run.best() is None
    assert run.state == "running"
    assert any("archive.json is not written yet" in w for w in run.warnings)
    assert not any("trace.jsonl" in w for w in run.warnings)  # the partial last line is expected
    assert run.summary()["lineage"]["nodes"] == []


def test_a_bad_line_inside_a_jsonl_file_is_reported_and_skipped(tmp_path: Path):
    p = tmp_path / "trace.jsonl"
    p.write_text('{"event": "a"}\nnot json\n{"event": "b"}\n')
    warnings: list[str] = []
    assert [e["event"] for e in read_jsonl(p, warnings)] == ["a", "b"]
    assert warnings == ["trace.jsonl: line 2 is not JSON; skipped"]


def test_entry_whose_source_is_not_written_yet(run_copy: Path):
    (run_copy / "designs" / "d-0006.py").unlink()
    shutil.rmtree(run_copy / "logs" / "d-0006")
    run = read_run(run_copy)
    assert run.entry("d-0006")["has_source"] is False
    d = design_detail(run, "d-0006")
    assert d["source"] is None and d["diff"] is None and d["has_logs"] is False
    assert read_logs(run, "d-0006") == {
        "id": "d-0006",
        "episodes": [],
        "debug_log": [],
        "truncated": False,
        "warnings": [],
    }


def test_paths_in_the_archive_cannot_leave_the_run_folder(run_copy: Path, tmp_path: Path):
    secret = tmp_path / "secret.py"
    secret.write_text("SECRET = 1\n")
    archive = _archive(run_copy)
    archive["entries"][0]["source_path"] = "../secret.py"
    archive["entries"][0]["logs_dir"] = "../"
    archive["entries"].append({"id": "../../etc", "name": "evil"})
    _write_archive(run_copy, archive)
    run = read_run(run_copy)
    assert read_source(run, "d-0001") is None
    assert read_logs(run, "d-0001")["debug_log"] == []
    assert [e["id"] for e in run.entries] == IDS
    assert any("no valid id" in w for w in run.warnings)


def test_missing_fields_get_defaults(run_copy: Path):
    _write_archive(run_copy, {"entries": [{"id": "x1", "collection_score": float("nan")}]})
    e = read_run(run_copy).entries[0]
    assert e["name"] == "x1" and e["generation"] == 0 and e["parent_ids"] == []
    assert e["collection_score"] is None and e["status"] == "ok"
    assert e["source_path"] == "designs/x1.py" and e["usage"]["total_tokens"] == 0.0


def test_fingerprint_changes_when_the_archive_is_rewritten(run_copy: Path):
    before = fingerprint(run_copy)
    archive = _archive(run_copy)
    archive["entries"].append({"id": "d-0007", "name": "new", "generation": 3, "parent_ids": ["d-0006"]})
    _write_archive(run_copy, archive)
    assert fingerprint(run_copy) != before


def test_lineage_layout_columns_and_edges():
    lay = lineage_layout(read_run(SAMPLE).entries)
    assert lay["columns"] == [0, 1, 2]
    assert lay["rows"] == 3
    assert sorted(map(tuple, lay["edges"])) == [
        ("d-0002", "d-0004"),
        ("d-0003", "d-0005"),
        ("d-0003", "d-0006"),
        ("d-0004", "d-0006"),
    ]
    pos = {n["id"]: (n["col"], n["row"]) for n in lay["nodes"]}
    assert pos["d-0001"][0] == 0 and pos["d-0004"][0] == 1 and pos["d-0006"][0] == 2
    # Children sit next to their parents: d-0004 (from d-0002) above d-0005 (from d-0003).
    assert pos["d-0004"][1] < pos["d-0005"][1]
    assert lineage_layout([]) == {"nodes": [], "edges": [], "columns": [], "rows": 0}


def test_a_generation_whose_designs_all_failed_has_no_scores(run_copy: Path):
    archive = _archive(run_copy)
    for e in archive["entries"]:
        if e["id"] == "d-0004":
            e.update(status="error", collection_score=None, deployment_score=None, normalized_score=None)
    _write_archive(run_copy, archive)
    rows = read_run(run_copy).generations()
    assert [r["generation"] for r in rows] == [0, 1, 2]
    assert rows[1]["design_id"] is None and rows[1]["deployment"] is None
    assert rows[1]["failed"] == 2 and rows[1]["best_so_far"] == pytest.approx(0.55)


def _trace(run_dir: Path, *events: tuple[str, str]) -> None:
    (run_dir / "trace.jsonl").write_text(
        "".join(json.dumps({"ts": ts, "event": ev}) + "\n" for ev, ts in events)
    )


def test_state_follows_the_last_start_or_stop(run_copy: Path):
    from datetime import timedelta

    now = datetime.now(UTC)
    old = (now - timedelta(hours=2)).isoformat()
    _trace(run_copy, ("run.start", old), ("run.stop", old), ("run.start", now.isoformat()))
    assert read_run(run_copy).state == "running"  # resumed
    _trace(run_copy, ("run.start", old), ("iteration.start", old))
    assert read_run(run_copy).state == "stalled"  # no stop and quiet for two hours: killed
    _trace(run_copy, ("run.start", old), ("run.stop", old))
    assert read_run(run_copy).state == "finished"
    _trace(run_copy, ("run.start", old), ("run.stopped", old))
    assert read_run(run_copy).state == "stopped"  # a limit stopped it: not stalled, not finished
    _trace(run_copy, ("run.start", old), ("run.stopped", old), ("run.resume", now.isoformat()))
    assert read_run(run_copy).state == "running"  # the loop writes run.resume when resumed
    (run_copy / "trace.jsonl").unlink()
    assert read_run(run_copy).state == "unknown"


def test_a_design_stopped_after_a_minibatch_is_not_the_best(run_copy: Path):
    archive = _archive(run_copy)
    for e in archive["entries"]:
        if e["id"] == "d-0006":  # the best by score, but it played only the first batch
            e["stage"] = "minibatch"
    _write_archive(run_copy, archive)
    run = read_run(run_copy)
    assert run.entry("d-0006")["stage"] == "minibatch"
    best = run.best()
    assert best is not None and best["id"] != "d-0006" and best["stage"] == "full"
    for e in archive["entries"]:
        e["stage"] = "minibatch"
    _write_archive(run_copy, archive)
    assert read_run(run_copy).best()["id"] == "d-0006"  # nobody played every task: the top score
