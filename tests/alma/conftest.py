"""A finished scripted search shared by the export / serve / MCP-design tests (run once per session)."""

from __future__ import annotations

import pytest
from alma_doubles import debug_policy, fenced, meta_policy, task_policy

# The route map of alma_doubles plus vector memory: past goals with their outcome, recalled by
# similarity (with the scores in the advice, so any drift in the restored vectors would show).
RECALLING_ROUTE_DESIGN = """
def update(memory, episode, tools):
    edges = []
    for obs in [episode["task"]["observation"]] + [s["observation"] for s in episode["steps"]]:
        here = obs.get("location")
        for other in obs.get("adjacent_rooms", []):
            edges.append([here, other])
    if edges:
        tools.graph_update(edges)
    tools.store_obs(episode["task"]["goal"], {"success": episode["success"]}, collection="goals")
    memory["episodes"] = memory.get("episodes", 0) + 1
    print("stored", len(edges), "edges")


def recall(memory, task, tools):
    start = task["observation"].get("location", "")
    dest = task["goal"].rstrip(".").split(" to ")[-1]
    path = tools.graph_path(start, dest)
    similar = tools.find_similar(task["goal"], k=2, collection="goals")
    seen = "; ".join(r["text"] + " (" + str(r["score"]) + ", solved=" + str(r["metadata"]["success"]) + ")"
                     for r in similar)
    route = ("Route: " + " -> ".join(path)) if path else "explore"
    return route + "\\nSimilar past tasks: " + seen + "\\nEpisodes learned: " + str(memory.get("episodes", 0))
"""

SEARCH = dict(
    env="graphworld",
    iterations=1,
    episodes=2,
    rooms=5,
    deploy_seeds=1,
    seed=42,
    meta_turns=2,
    baselines=[],
    quiet=True,
    trace=False,
)


@pytest.fixture(scope="session")
def scripted_run(tmp_path_factory, embedder):
    """A run folder from a real (scripted-LLM) search: no_memory, the seed design, and a route-map
    design written by the scripted MetaAgent that learns a graph of rooms in collection."""
    import atlas.alma
    from atlas.infra.llm import ScriptedLLM

    run_dir = tmp_path_factory.mktemp("search") / "run"
    atlas.alma.run(
        llm=ScriptedLLM(task_policy),
        meta_llm=ScriptedLLM(meta_policy({1: [fenced("route_map", RECALLING_ROUTE_DESIGN)]})),
        debug_llm=ScriptedLLM(debug_policy),
        embedder=embedder,
        run_dir=run_dir,
        **SEARCH,
    )
    return run_dir
