"""Host-side design tools over the real MiniLM embedder, InMemoryVectorStore and GraphStore;
LLM tools through ScriptedLLM."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from atlas.alma.evaluate.runlog import SimilarityStats, SimilarityThresholds
from atlas.alma.evaluate.tools import DesignTools, ToolRefusal
from atlas.infra.llm import ScriptedLLM


@pytest.fixture
def tools(embedder):
    return DesignTools(embedder, ScriptedLLM(default="a summary"))


def test_store_and_find_with_collections(tools):
    assert (
        tools.call(
            "store_obs",
            {"text": "the key is in room_B", "metadata": {"room": "room_B"}, "collection": "spatial"},
        ).value
        == "stored:obs-1"
    )
    tools.call("store_obs", {"text": "always look before moving", "collection": "strategy"})
    tools.call("store_obs", {"text": "the torch lies in the kitchen"})
    only = tools.call("find_similar", {"query": "where is the key", "k": 3, "collection": "spatial"}).value
    assert [r["text"] for r in only] == ["the key is in room_B"] and only[0]["metadata"] == {"room": "room_B"}
    everywhere = tools.call("find_similar", {"query": "where is the key", "k": 3, "collection": None})
    assert len(everywhere.value) == 3 and everywhere.value[0]["text"] == "the key is in room_B"
    assert everywhere.value[0]["score"] >= everywhere.value[1]["score"] >= everywhere.value[2]["score"]
    assert tools.call("find_similar", {"query": "key", "collection": "nowhere"}).value == []


def test_similarity_labels_with_minilm(tools):
    empty = tools.call("find_similar", {"query": "find the key", "k": 3})
    assert empty.value == [] and empty.similarity.label == "NO_RESULTS"
    tools.call("store_obs", {"text": "where is the key"})
    good = tools.call("find_similar", {"query": "find the key", "k": 1})
    assert good.similarity.label == "OK" and good.similarity.top > 0.6
    noise = tools.call("find_similar", {"query": "quarterly tax filing deadlines", "k": 1})
    assert noise.similarity.label == "LOW_QUALITY"
    for room in "ABCD":
        tools.call("store_obs", {"text": f"visited room_{room}", "collection": "rooms"})
    flat = tools.call("find_similar", {"query": "visited room_X", "k": 4, "collection": "rooms"})
    assert flat.similarity.n == 4


def test_similarity_thresholds():
    t = SimilarityThresholds()
    assert SimilarityStats.of([], 3).label == "NO_RESULTS"
    assert SimilarityStats.of([0.2, 0.1], 3, thresholds=t).label == "LOW_QUALITY"
    assert SimilarityStats.of([0.4, 0.2], 3).label == "WEAK"
    assert SimilarityStats.of([0.9, 0.89, 0.895], 3).label == "NO_DISCRIMINATION"
    ok = SimilarityStats.of([0.8, 0.5], 3, "q")
    assert ok.label == "OK" and ok.spread == pytest.approx(0.3) and ok.top == 0.8 and ok.n == 2


@pytest.mark.parametrize(
    "name,args,fragment",
    [
        ("store_obs", {"text": ""}, "text must not be empty"),
        ("store_obs", {"text": 5}, "text must be a string"),
        ("store_obs", {"text": "x", "metadata": [1]}, "metadata must be a dict"),
        ("store_obs", {"text": "x", "metadata": {"a": "b" * 5000}}, "over the limit"),
        ("store_obs", {"text": "x" * 30000}, "over the limit of 20000"),
        ("find_similar", {"query": "x", "k": 0}, "k must be an integer from 1 to 50"),
        ("find_similar", {"query": "x", "k": "3"}, "k must be an integer"),
        ("find_similar", {"query": "x", "collection": 3}, "collection must be a string"),
        ("graph_update", {"edges": "a-b"}, "edges must be a list"),
        ("graph_update", {"edges": [["a"]]}, "pair of non-empty node names"),
        ("graph_update", {"edges": [["a", 1]]}, "pair of non-empty node names"),
        ("graph_neighbors", {"node": ""}, "node must not be empty"),
        ("graph_path", {"src": "a"}, "missing argument 'dst'"),
        ("graph_path", {"src": "a", "dst": 3}, "dst must be a string"),
        ("analyze", {"text": "x", "format": "yaml"}, "format must be 'text' or 'json'"),
        ("teleport", {}, "unknown tool 'teleport'"),
    ],
)
def test_bad_arguments_are_refused(tools, name, args, fragment):
    with pytest.raises(ToolRefusal, match=fragment):
        tools.call(name, args)


def test_graph_tools(tools):
    assert (
        tools.call(
            "graph_update", {"edges": [["room_A", "room_B"], ["room_B", "room_C"], ["room_C", "room_C"]]}
        ).value
        == "ok: 2 new edges"
    )
    assert tools.call("graph_neighbors", {"node": "room_B"}).value == ["room_A", "room_C"]
    assert tools.call("graph_neighbors", {"node": "room_Z"}).value == []
    assert tools.call("graph_path", {"src": "room_A", "dst": "room_C"}).value == [
        "room_A",
        "room_B",
        "room_C",
    ]
    assert tools.call("graph_path", {"src": "room_A", "dst": "room_Z"}).value is None


def test_freeze_refuses_writes_only(tools):
    tools.call("store_obs", {"text": "before freeze"})
    tools.freeze()
    for name, args in (("store_obs", {"text": "x"}), ("graph_update", {"edges": [["a", "b"]]})):
        with pytest.raises(ToolRefusal, match="refused: memory is frozen for deployment"):
            tools.call(name, args)
    assert tools.call("find_similar", {"query": "before"}).value[0]["text"] == "before freeze"
    assert tools.call("graph_neighbors", {"node": "a"}).value == []


def test_llm_tools(embedder):
    llm = ScriptedLLM(
        ["short summary", "free-text analysis", 'Sure: ```json\n{"insights": ["a"]}\n```', "not json at all"]
    )
    tools = DesignTools(embedder, llm)
    assert tools.call("summarize", {"text": "long text", "instruction": "one line"}).value == "short summary"
    assert "Instruction: one line" in llm.history[0].prompt and "long text" in llm.history[0].prompt
    assert tools.call("analyze", {"text": "t", "instruction": "i"}).value == "free-text analysis"
    assert tools.call("analyze", {"text": "t", "instruction": "i", "format": "json"}).value == {
        "insights": ["a"]
    }
    assert "JSON" in llm.history[2].prompt
    with pytest.raises(ToolRefusal, match="analyze: the model's reply was not valid JSON"):
        tools.call("analyze", {"text": "t", "instruction": "i", "format": "json"})
    with pytest.raises(ToolRefusal, match="summarize failed: the model call failed"):
        tools.call("summarize", {"text": "t"})  # script exhausted


def test_llm_tools_without_llm(embedder):
    with pytest.raises(ToolRefusal, match="no LLM is configured"):
        DesignTools(embedder, None).call("summarize", {"text": "t"})


def test_snapshot_round_trip(tools, embedder):
    tools.call("store_obs", {"text": "the key is in room_B", "metadata": {"n": 1}, "collection": "spatial"})
    tools.call("graph_update", {"edges": [["room_A", "room_B"]]})
    snap = json.loads(json.dumps(tools.snapshot()))
    again = DesignTools.from_snapshot(snap, embedder)
    assert again.call("find_similar", {"query": "key"}).value[0]["text"] == "the key is in room_B"
    assert again.call("graph_path", {"src": "room_A", "dst": "room_B"}).value == ["room_A", "room_B"]
    assert again.call("store_obs", {"text": "next"}).value == "stored:obs-2"


class SpyEmbedder:
    """The real embedder, recording whether the tools' lock was held while embedding."""

    def __init__(self, inner, tools_ref):
        self.inner, self.tools_ref, self.locked_during_embed = inner, tools_ref, []
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts):
        self.locked_during_embed.append(self.tools_ref[0]._lock.locked())
        return self.inner.embed(texts)


def test_embedding_happens_outside_the_lock(embedder):
    ref = []
    spy = SpyEmbedder(embedder, ref)
    tools = DesignTools(spy, None)
    ref.append(tools)
    tools.call("store_obs", {"text": "seed"})
    tools.call("find_similar", {"query": "seed"})
    assert spy.locked_during_embed == [False, False]  # single thread: the reading is exact

    def work(i):
        tools.call("store_obs", {"text": f"note {i}"})
        return tools.call("find_similar", {"query": f"note {i}", "k": 2}).value

    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(work, range(8)))
    assert all(results)
    assert tools.call("find_similar", {"query": "note", "k": 50}).similarity.n == 9
