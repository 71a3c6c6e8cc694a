"""DebugLog: greppable text from runtime logs (headers, tagged lines, summaries, order, cap)."""

from __future__ import annotations

import re

from atlas.alma.author.debug_log import DebugLog, DesignLogs, is_informative, render_design
from atlas.alma.evaluate.runlog import CallLog, SimilarityStats, ToolCallRecord
from atlas.alma.state.run_dir import RunDir


def _calls(label: str, *, empty: bool) -> list[dict]:
    recall = CallLog(
        phase="recall",
        episode=label,
        tool_calls=[
            ToolCallRecord(
                "find_similar",
                {"query": "flask", "k": 3},
                result=[] if empty else [{"score": 0.8, "text": "visited room_A", "metadata": {}}],
                similarity=SimilarityStats.of([] if empty else [0.8], 3, "flask"),
            )
        ],
        prints=["no results found for flask"] if empty else [],
        return_value="" if empty else "go to room_A",
    )
    update = CallLog(
        phase="update",
        episode=label,
        tool_calls=[ToolCallRecord("store_obs", {"text": "visited room_A"}, result="stored:1")],
    )
    return [{**recall.to_dict(), "episode": label}, {**update.to_dict(), "episode": label}]


def _episode(label: str, score: float, phase: str = "collection") -> dict:
    return {
        "label": label,
        "phase": phase,
        "task_id": f"t-{label}",
        "goal": "Bring the key to room_C.",
        "success": score > 0,
        "score": score,
        "steps": 12,
        "advice": "" if score == 0 else "go",
        "actions": [
            {"action": 'move_to(room="room_B")', "error": None},
            {"action": 'pick_up(object="key")', "error": "There is no key in room_B."},
        ],
    }


def _logs(n: int = 4) -> DesignLogs:
    scores = [0.0, 0.7, 0.5, 0.9, 0.0, 0.6][:n]
    eps = [_episode(f"C{i + 1}", s) for i, s in enumerate(scores)]
    calls = [c for i, s in enumerate(scores) for c in _calls(f"C{i + 1}", empty=s == 0)]
    entry = {
        "id": "d-0002",
        "name": "vector_notes",
        "origin": "meta",
        "collection_score": 0.5,
        "deployment_score": 0.55,
        "normalized_score": 0.14,
    }
    stores = {
        "memory_keys": {"notes": "list[4]"},
        "memory_bytes": 120,
        "vector_items": 4,
        "collections": {"default": 4},
        "graph_nodes": 0,
        "graph_edges": 0,
    }
    return DesignLogs(entry=entry, episodes=eps, calls=calls, stores=stores)


def test_headers_tags_and_summaries():
    text = render_design(_logs())
    lines = text.splitlines()
    assert lines[0].startswith("=== DESIGN d-0002 vector_notes (meta)") and "normalized +0.140" in lines[0]
    assert "STORES after collection: memory keys: notes=list[4]" in text
    assert "vectors: 4 (default=4)" in text
    assert re.search(r"SIMILARITY summary: 4 find_similar calls — NO_RESULTS 1, OK 3", text)
    assert "--- EPISODE C1: FAILED score 0.00 (12 steps) — Bring the key to room_C. ---" in text
    assert '[C1:recall] TOOL find_similar: k=3 query="flask" -> []' in text
    assert "[C1:recall] PRINT: no results found for flask" in text
    assert '[C1:update] TOOL store_obs: text="visited room_A" -> "stored:1"' in text
    assert '[C2:recall] RETURN: "go to room_A"' in text
    assert '[C1:agent] pick_up(object="key") ERROR: There is no key in room_B.' in text
    assert "advice empty in 1 of 4 episodes" in text


def test_worst_and_best_episodes_first():
    text = render_design(_logs(6))
    order = re.findall(r"--- EPISODE (C\d)", text)
    # scores C1 0, C2 .7, C3 .5, C4 .9, C5 0, C6 .6 → worst, best, next worst, next best, ...
    assert order[:2] == ["C1", "C4"]
    assert order[2] == "C5" and order[3] == "C2"


def test_size_cap_omits_the_rest():
    text = render_design(_logs(6), max_chars=1600)
    assert len(text) <= 1800
    assert "more episodes omitted (size cap)" in text
    assert text.count("--- EPISODE") < 6


def test_informative_detection():
    assert is_informative(render_design(_logs()))
    silent = DesignLogs(
        entry={"id": "d-0001", "name": "no_memory"},
        episodes=[_episode("C1", 0.5)],
        calls=[
            {**CallLog(phase="recall", episode="C1", return_value="").to_dict(), "episode": "C1"},
            {**CallLog(phase="update", episode="C1").to_dict(), "episode": "C1"},
        ],
    )
    assert not is_informative(render_design(silent))
    assert DebugLog.build([silent]).informative is False
    assert DebugLog.build([]).informative is False


def test_build_concatenates_parents_and_reads_run_folder(tmp_path):
    rd = RunDir.create(tmp_path / "run")
    logs = _logs()
    rd.write_logs(
        "d-0002", calls=logs.calls, episodes=logs.episodes, debug_log="x", extra={"stores": logs.stores}
    )
    back = DesignLogs.from_dir(rd.logs_dir("d-0002"), logs.entry)
    assert back.episodes == logs.episodes and back.stores == logs.stores
    other = DesignLogs(
        entry={**logs.entry, "id": "d-0003", "name": "other"},
        episodes=logs.episodes,
        calls=logs.calls,
        stores={},
    )
    dl = DebugLog.build([back, other], max_chars=50_000)
    assert dl.informative
    assert "=== DESIGN d-0002" in dl.text and "=== DESIGN d-0003" in dl.text
    assert "STORES after collection: (nothing recorded)" in dl.text
