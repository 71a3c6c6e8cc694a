"""ServedDesign: an exported design's recall/update in the same sandbox with the same tools."""

from __future__ import annotations

import json

import pytest

from atlas.alma.deploy.export import export_design, load_export
from atlas.alma.deploy.served import ServedDesign
from atlas.alma.state.archive import Archive
from atlas.errors import ConfigError, DesignError, InvalidInputError
from atlas.infra.embeddings import NGramEmbedder


@pytest.fixture(scope="module")
def exported(scripted_run, tmp_path_factory):
    design_id = Archive.load(scripted_run).find(name="route_map")[0].id
    return export_design(scripted_run, tmp_path_factory.mktemp("exp") / "route_map", design_id=design_id)


def test_recall_gives_the_advice_the_design_gave_in_the_run(exported, embedder):
    records = load_export(exported).advice
    assert len(records) == 2 and all("Similar past tasks: " in r["advice"] for r in records)
    with ServedDesign.open(exported, embedder=embedder) as served:
        for r in records:
            assert served.recall(r["task"]) == r["advice"]
        info = served.info()
    assert info["holds"]["vector_items"] == 2 and info["holds"]["graph_edges"] > 0 and not info["learn"]


def test_frozen_refuses_update_and_learning_mode_learns(exported, embedder):
    task = load_export(exported).advice[0]["task"]
    episode = {"task": task, "steps": [], "success": True, "score": 0.9, "steps_taken": 0}
    with (
        ServedDesign.open(exported, embedder=embedder) as frozen,
        pytest.raises(DesignError, match="served frozen"),
    ):
        frozen.update(episode)
    with ServedDesign.open(exported, embedder=embedder, learn=True) as learning:
        before = learning.recall(task)
        assert "Episodes learned: 2" in before
        learning.update(episode)
        after = learning.recall(task)
        assert "Episodes learned: 3" in after and learning.snapshot()["memory"]["episodes"] == 3
        with pytest.raises(InvalidInputError, match="'task' view"):
            learning.update({"steps": []})
    assert (
        json.loads((exported / "memory.json").read_text())["memory"]["episodes"] == 2
    )  # the export is untouched


def test_a_design_that_fails_in_recall_is_a_clear_error(exported, embedder):
    with ServedDesign.open(exported, embedder=embedder) as served:
        # a bare goal has no observation: the design asks graph_path for a path from "" and fails
        with pytest.raises(DesignError, match=r"recall failed: ToolError: .*src must not be empty"):
            served.recall("Bring the key to room_B.")
        with pytest.raises(InvalidInputError, match="task: must be"):
            served.recall({"observation": {}})


def test_missing_or_wrong_embedder_is_a_clear_error(exported, tmp_path):
    with pytest.raises(ConfigError, match="made with the embedder 'minilm', not 'ngram'"):
        ServedDesign.open(exported, embedder=NGramEmbedder())
    # an export naming an embedder that is not a local one (the manifest is rewritten consistently)
    manifest = json.loads((exported / "design.json").read_text())
    manifest["embedder"]["name"] = "no-such-embedder"
    other = tmp_path / "other"
    other.mkdir()
    for f in exported.iterdir():
        (other / f.name).write_bytes(f.read_bytes())
    (other / "design.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match="'no-such-embedder', which is not a local one"):
        ServedDesign.open(other)


def test_auto_wraps_an_openai_client_with_an_exported_design(exported, embedder):
    """atlas.auto with a design export: the design's recall goes into the prompt (through the real
    OpenAI SDK and a ScriptedLLM behind an OpenAI-compatible endpoint on 127.0.0.1)."""
    from openai import OpenAI

    import atlas.auto
    from atlas.infra.llm import ScriptedLLM
    from openai_compat import ScriptedOpenAIServer

    line = load_export(exported).advice[1]
    with (
        ServedDesign.open(exported, embedder=embedder, learn=True) as served,
        ScriptedOpenAIServer(ScriptedLLM(default="Done.")) as server,
    ):
        memory = atlas.auto.DesignMemory(served, view=lambda goal: {**line["task"], "goal": goal})
        client = atlas.auto.wrap(OpenAI(base_url=server.base_url, api_key="unused"), memory)
        client.chat.completions.create(
            model="scripted", messages=[{"role": "user", "content": line["task"]["goal"]}]
        )
        assert (
            server.task_prompts()[0]
            == atlas.auto.framed_advice(line["advice"]) + "\n\n" + line["task"]["goal"]
        )
        assert server.system_prompts() == [""]  # the advice never goes into the system role
        assert served.snapshot()["memory"]["episodes"] == 3  # the finished task was learned (learn=True)


def test_a_design_whose_recall_fails_still_lets_the_model_answer(exported, embedder):
    """atlas.auto: the route-map design's recall fails for a bare goal (no start
    room); the caller is warned and the model still answers."""
    from openai import OpenAI

    import atlas.auto
    from atlas.infra.llm import ScriptedLLM
    from openai_compat import ScriptedOpenAIServer

    with (
        ServedDesign.open(exported, embedder=embedder) as served,
        ScriptedOpenAIServer(ScriptedLLM(default="Done.")) as server,
    ):
        client = atlas.auto.wrap(OpenAI(base_url=server.base_url, api_key="unused"), served)
        with pytest.warns(atlas.auto.MemoryFailedWarning, match=r"could not advise .*recall failed"):
            reply = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "Bring the key to room_B."}]
            )
    assert reply.choices[0].message.content == "Done." and len(server.requests) == 1
