"""`atlas report`'s "Where the time went": the phases of a real (tiny) genome search, each read from
the archive's own timings, and a baseline read from the cache counted as taking none of the run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from viewer_helpers import edit_archive

from atlas.viewer.report import write_report
from atlas.viewer.run_reader import read_run
from atlas.viewer.time_spent import time_spent


def _phases(run_dir: Path) -> dict[str, Any]:
    return {p.name.split(" (")[0]: p for p in time_spent(read_run(run_dir))}


def test_each_phase_is_the_sum_of_the_archive_timings_of_its_designs(genome_run: Path):
    data = json.loads((genome_run / "archive.json").read_text())
    played = {e["id"]: e["metadata"].get("eval_duration_s") or 0.0 for e in data["entries"]}
    first = data["entries"][0]
    assert first["name"] == "no_memory" and played[first["id"]] > 0
    hand = [e["id"] for e in data["entries"][1:] if e["generation"] == 0]
    assert hand, "the fixture plays trajectory_retrieval"
    phases = _phases(genome_run)
    assert phases["no-memory baseline"].seconds == pytest.approx(played[first["id"]])
    assert phases["hand-built designs"].seconds == pytest.approx(sum(played[i] for i in hand))
    generations = sum(it["duration_s"] for it in data["iterations"])
    assert generations > 0
    assert phases["search generations"].seconds == pytest.approx(generations)
    assert phases["test tasks no choice saw"].seconds == pytest.approx(data["held_out"]["duration_s"])


def test_the_report_shows_the_phases_with_their_share(genome_run: Path, tmp_path: Path):
    md = write_report(genome_run, tmp_path / "report").markdown.read_text()
    section = md.split("## Where the time went\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [r.split(" | ")[0].strip("| ").split(" (")[0] for r in rows[:4]] == [
        "no-memory baseline",
        "hand-built designs",
        "search generations",
        "test tasks no choice saw",
    ]
    shares = [int(r.split(" | ")[2].rstrip("%")) for r in rows]
    assert 97 <= sum(shares) <= 103, section  # rounded to whole percents


def test_a_baseline_read_from_the_cache_took_none_of_the_run(genome_run: Path, tmp_path: Path):
    run = tmp_path / "run"
    shutil.copytree(genome_run, run)

    def cached(data: dict[str, Any]) -> None:
        data["entries"][0]["metadata"]["baseline_cached"] = True

    edit_archive(run, cached)
    baseline = _phases(run)["no-memory baseline"]
    assert baseline.seconds == 0.0 and "read from the cache" in baseline.note
