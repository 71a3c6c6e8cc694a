"""Shared by the viewer's genome tests: the committed run from before genomes, the genome the
scripted meta model answers with, and an archive editor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
OLD_RUN = REPO / "tests" / "fixtures" / "runs" / "graphworld-code-search"

# The genome the scripted meta model answers every llm_edit with (valid under the schema).
EDIT = {
    "encode": [
        {"part": "transitions", "params": {"state_key": "location", "neighbors_key": "adjacent_rooms"}},
        {"part": "goal_actions", "params": {"state_key": "location"}},
    ],
    "retrieve": [
        {"part": "goal_rules", "params": {}},
        {"part": "route", "params": {}},
        {"part": "explore", "params": {}},
    ],
    "render": {"part": "lines", "params": {}},
}


def edit_archive(run_dir: Path, change: Any) -> None:
    """Rewrite ``archive.json`` through ``change(data)`` (as a damaged or hand-edited file would be)."""
    path = run_dir / "archive.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
