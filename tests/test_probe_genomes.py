"""scripts/probe_genomes.py on a committed run: the screening's probe of a genome with memory from the
no-memory agent's logged collection games, and with memory from the games its own design played (what
the search's agent check measures). Real sandbox, real embedder, no LLM."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "probe_genomes.py"
DEMO = ROOT / "tests" / "fixtures" / "runs" / "demo"

pytestmark = pytest.mark.slow


def genome_of(design_id: str, tmp_path: Path) -> Path:
    entries = json.loads((DEMO / "archive.json").read_text())["entries"]
    entry = next(
        e for e in (entries.values() if isinstance(entries, dict) else entries) if e["id"] == design_id
    )
    path = tmp_path / f"{design_id}.json"
    path.write_text(json.dumps(entry["metadata"]["genome"]))
    return path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)


def rows(stdout: str) -> dict[str, float]:
    """``{memory source: probe score}`` of the script's table."""
    out = {}
    for line in stdout.splitlines()[1:]:
        _, source, score, *_ = line.split()
        out[source] = float(score)
    return out


def test_the_found_genome_is_probed_with_the_baselines_games_and_with_its_own(tmp_path):
    out = run(str(DEMO), f"{genome_of('d-0003', tmp_path)}=d-0003")
    assert out.returncode == 0, out.stderr
    scores = rows(out.stdout)
    assert set(scores) == {"baseline", "d-0003"}
    # the demo's found design beat no memory by +0.708: its advice solves probe tasks from either memory
    assert scores["baseline"] > 0.5 and scores["d-0003"] > 0.5, out.stdout


def test_a_design_without_logged_games_is_refused(tmp_path):
    out = run(str(DEMO), f"{genome_of('d-0003', tmp_path)}=d-0999")
    assert out.returncode != 0 and "no logged collection games of 'd-0999'" in out.stderr
