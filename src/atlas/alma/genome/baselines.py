"""Hand-built designs written as genomes: the library's baselines, part by part.

Each gives the same advice as its hand-written module (``atlas.alma.baselines``) on the same episodes
(a test plays both); the generic ones seed a genome search, ``spatial_graph`` is GraphWorld's own.
"""

from __future__ import annotations

from typing import Any

from atlas.alma.genome.model import Genome, parse_genome

BASELINE_GENOMES: dict[str, dict[str, Any]] = {
    "trajectory_retrieval": {
        "encode": [{"part": "episode_log", "params": {"action_form": "call", "max_actions": 25}}],
        "retrieve": [{"part": "similar_episodes", "params": {"k": 3, "floor": 0.0}}],
        "render": {"part": "lines", "params": {"order": "notes,rules,plans"}},
    },
    "reasoning_bank": {
        "encode": [{"part": "insights"}],
        "retrieve": [{"part": "similar_insights", "params": {"k": 5}}],
        "render": {"part": "lines", "params": {"order": "notes,rules,plans"}},
    },
    "cheatsheet": {
        "encode": [{"part": "cheatsheet", "params": {"max_chars": 1500}}],
        "retrieve": [{"part": "sheet"}],
        "render": {"part": "lines", "params": {"order": "notes,rules,plans"}},
    },
    "spatial_graph": {
        "encode": [
            {
                "part": "graph_edges",
                "params": {
                    "state_key": "location",
                    "neighbors_key": "adjacent_rooms",
                    "items_key": "objects_here",
                },
            }
        ],
        "retrieve": [
            {
                "part": "map_notes",
                "params": {
                    "goal_pattern": r"bring the (\S+?)\.? to (\S+?)\.?$",
                    "here_note": "pick it up first.",
                    "empty_note": "No map of this area yet: explore systematically and note which rooms connect.",
                },
            }
        ],
        "render": {"part": "lines", "params": {"order": "notes,rules,plans"}},
    },
}


def baseline_genome(name: str) -> Genome:
    """The genome of hand-built design ``name`` (KeyError when it has none)."""
    return parse_genome({"name": name, **BASELINE_GENOMES[name]}, where=f"baseline genome {name}")


__all__ = ["BASELINE_GENOMES", "baseline_genome"]
