"""atlas.viewer.report and `atlas report`: real matplotlib files from the recorded sample run."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from atlas.cli import app
from atlas.errors import ArchiveError
from atlas.viewer.report import write_report

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_run"
REPO = Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("report")
    paths = write_report(SAMPLE, out)
    # Keep a copy of the charts as test artifacts (docs/images/report_scores.png comes from here).
    shots = REPO / "artifacts" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    shutil.copy(paths.scores_png, shots / "report_scores.png")
    shutil.copy(paths.lineage_png, shots / "report_lineage.png")
    return paths


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_writes_every_file(report):
    assert report.out_dir.is_dir()
    for p in report.files():
        assert p.is_file() and p.stat().st_size > 0, p


@pytest.mark.parametrize("name", ["scores_png", "lineage_png"])
def test_pngs_are_valid_images(report, name):
    w, h = _png_size(getattr(report, name))
    assert w > 400 and h > 200


@pytest.mark.parametrize("name", ["scores_svg", "lineage_svg"])
def test_svgs_are_valid_svg(report, name):
    root = ET.parse(getattr(report, name)).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox")


def test_svg_output_is_stable(tmp_path: Path):
    a = write_report(SAMPLE, tmp_path / "a")
    b = write_report(SAMPLE, tmp_path / "b")
    assert a.scores_svg.read_bytes() == b.scores_svg.read_bytes()
    assert a.lineage_svg.read_bytes() == b.lineage_svg.read_bytes()


def _table_rows(md: str, header_start: str) -> list[list[str]]:
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


def test_markdown_table_lists_every_design_and_the_baseline(report):
    md = report.markdown.read_text()
    rows = _table_rows(md, "| Design | ID |")
    archive = json.loads((SAMPLE / "archive.json").read_text())
    ids = [r[1].strip("`") for r in rows]
    assert ids == ["—"] + [e["id"] for e in archive["entries"]]
    assert rows[0][0] == "baseline (no memory)" and rows[0][7] == "0.410"
    by_id = {r[1].strip("`"): r for r in rows[1:]}
    for e in archive["entries"]:
        row = by_id[e["id"]]
        assert row[0].startswith(e["name"])
        if e["deployment_score"] is not None:
            assert row[6] == f"{e['collection_score']:.3f}"
            assert row[7] == f"{e['deployment_score']:.3f}"
            assert row[8] == f"{e['normalized_score']:+.3f}"
    assert by_id["d-0005"][5].startswith("invalid: line 3")
    assert by_id["d-0006"][0] == "graph_paths_and_insights ★"


def test_markdown_has_best_design_generations_and_usage(report):
    md = report.markdown.read_text()
    assert "## Best design" in md and "**graph_paths_and_insights** (`d-0006`" in md
    assert "normalized **+0.300**" in md
    gens = _table_rows(md, "| Generation | Best design |")
    assert [g[0] for g in gens] == ["0", "1", "2"]
    usage = _table_rows(md, "| Iteration |")
    assert [u[2] for u in usage[:3]] == ["`d-0004`", "`d-0005`", "`d-0006`"]
    assert usage[-1][6] == "**21,100**"
    assert "![Scores per generation](scores_per_generation.png)" in md
    assert "![Lineage](lineage.png)" in md


def test_default_output_folder_is_run_dir_report(tmp_path: Path):
    run = tmp_path / "run"
    shutil.copytree(SAMPLE, run)
    paths = write_report(run)
    assert paths.out_dir == run / "report"
    assert (run / "report" / "report.md").is_file()


def test_the_report_gives_the_runs_own_time_when_the_archive_keeps_it(tmp_path: Path, report):
    assert "The run's own time" not in report.markdown.read_text()  # the sample run predates it
    run = tmp_path / "run"
    shutil.copytree(SAMPLE, run)
    archive = json.loads((run / "archive.json").read_text())
    (run / "archive.json").write_text(json.dumps({**archive, "run_time_s": 5430.0}))
    md = write_report(run).markdown.read_text()
    assert "The run's own time, resumed parts included: 90.5 minutes." in md


def test_a_run_with_no_designs_yet_still_gets_a_report(tmp_path: Path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"env": "graphworld"}))
    paths = write_report(run)
    md = paths.markdown.read_text()
    assert "No design has a deployment score yet." in md
    assert "archive.json is not written yet" in md
    _png_size(paths.scores_png)
    _png_size(paths.lineage_png)


def test_missing_run_raises_archive_error(tmp_path: Path):
    with pytest.raises(ArchiveError, match="run folder not found"):
        write_report(tmp_path / "nope")


def test_cli_report(tmp_path: Path):
    result = CliRunner().invoke(app, ["report", str(SAMPLE), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "Report written to" in result.output
    assert (tmp_path / "r" / "lineage.svg").is_file()


def test_cli_report_on_a_missing_or_corrupt_run_prints_a_message_not_a_traceback(tmp_path: Path):
    result = CliRunner().invoke(app, ["report", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "error: run folder not found" in result.output
    assert "Traceback" not in result.output
    run = tmp_path / "run"
    shutil.copytree(SAMPLE, run)
    (run / "archive.json").write_text("{")
    result = CliRunner().invoke(app, ["report", str(run)])
    assert result.exit_code == 2
    assert "archive.json is corrupt" in result.output
    assert "Traceback" not in result.output


def test_settings_show_the_resolved_model_when_none_was_given(tmp_path: Path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(
        json.dumps(
            {
                "env": "graphworld",
                "model": None,
                "meta_model": None,
                "task_model": "local:qwen2.5-coder-0.5b",
                "meta_model_resolved": "local:qwen2.5-coder-0.5b",
            }
        )
    )
    md = write_report(run).markdown.read_text()
    assert "| model | local:qwen2.5-coder-0.5b |" in md and "| meta_model | local:qwen2.5-coder-0.5b |" in md
    assert "None" not in md.split("## Best design")[0]
