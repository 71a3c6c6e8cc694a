"""The viewer's design panel and the report show task and scenario goal completion."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from atlas.viewer.report import write_report
from atlas.viewer.run_reader import design_detail, read_run

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_run"


def test_design_detail_and_report_carry_goal_completion(tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(SAMPLE, run_dir)
    archive = json.loads((run_dir / "archive.json").read_text())
    best = max(
        (e for e in archive["entries"] if e.get("deployment_score") is not None),
        key=lambda e: e["deployment_score"],
    )
    deployed = [t for t in best["per_task"] if t["phase"] == "deployment"]
    for i, t in enumerate(deployed):  # two scenarios; the first fully solved, the second not
        t["scenario"] = "A" if i < len(deployed) // 2 else "B"
        t["success"] = i < len(deployed) // 2 or i == len(deployed) - 1
    (run_dir / "archive.json").write_text(json.dumps(archive))

    detail = design_detail(read_run(run_dir), best["id"])
    assert detail is not None
    gc = detail["goal_completion"]
    assert gc["sgc"]["successes"] == 1 and gc["sgc"]["n"] == 2
    assert gc["tgc"]["successes"] == len(deployed) // 2 + 1 and gc["tgc"]["n"] == len(deployed)
    assert gc["sgc"]["ci95"][0] < 0.5 < gc["sgc"]["ci95"][1]

    paths = write_report(run_dir, tmp_path / "report")
    text = paths.markdown.read_text()
    assert "Deployment goal completion: tasks **" in text and "scenarios **50%**" in text


def test_the_viewer_script_renders_goal_completion():
    js = (Path(__file__).resolve().parents[2] / "src" / "atlas" / "viewer" / "static" / "app.js").read_text()
    assert "d.goal_completion" in js and "scenario goal completion" in js
