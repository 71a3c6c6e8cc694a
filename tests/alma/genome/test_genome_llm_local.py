"""The local LLM as a genome operator: the real 0.5B model, decoding under the genome's JSON schema
(llama.cpp grammar), returns a genome that loads, or a reason the search records before mutating."""

from __future__ import annotations

import json
import random

import pytest

from atlas.alma.design import check_design
from atlas.alma.genome import baseline_genome, compile_genome, parse_genome
from atlas.alma.genome.llm_edit import genome_schema, llm_edit
from atlas.alma.genome.operators import observation_keys
from atlas.infra import local_models
from atlas.infra.aio import run_sync

pytestmark = [pytest.mark.local_llm, pytest.mark.timeout(900)]

MODEL = "qwen2.5-coder-0.5b"
KEYS = observation_keys(
    [
        {"location": "room_A", "adjacent_rooms": ["room_B"], "steps_left": 20},
        {"location": "room_B", "adjacent_rooms": ["room_A"], "steps_left": 19},
    ]
)


@pytest.fixture(scope="module")
def llm():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra [local])")
    if not local_models.is_verified(MODEL) and not local_models.verify(MODEL):
        pytest.skip(f"local model not assembled: run `atlas models pull {MODEL}`")
    from atlas.infra.llm import make_llm

    return make_llm(f"local:{MODEL}", temperature=0.0)


def test_the_schema_holds_only_known_parts_and_allowed_values():
    schema = genome_schema(KEYS)
    retrieve = schema["properties"]["retrieve"]["items"]["anyOf"]
    names = {alt["properties"]["part"]["const"] for alt in retrieve}
    assert "route" in names and "map_notes" not in names  # generic parts only
    route = next(a for a in retrieve if a["properties"]["part"]["const"] == "route")
    assert route["properties"]["params"]["properties"]["context"]["enum"] == ["goal_items", "none"]


def test_the_local_model_edits_a_genome_under_the_grammar(llm):
    parent = baseline_genome("trajectory_retrieval")
    parents = [(parent, 0.0, "collection 0/3 solved; the advice named no listed action")]
    raw = run_sync(
        llm.acomplete(
            [{"role": "user", "content": "Reply with a genome as JSON."}],
            json_schema=genome_schema(KEYS),
            max_tokens=400,
        )
    )
    data = json.loads(raw.text)  # the grammar guarantees JSON of the schema's shape
    assert set(data) <= {"encode", "store", "retrieve", "render"} and data["retrieve"]
    genome, why = run_sync(llm_edit(llm, parents, KEYS, random.Random(0), name="edit"))
    if genome is None:  # a usable reply is not guaranteed, a clear reason is
        assert why and ("unchanged" in why or "genome" in why or "JSON" in why), why
    else:
        assert parse_genome(genome.model_dump()).key == genome.key
        assert check_design(compile_genome(genome)) == []
