"""Genome files: the JSON round trip (same key, same compiled module), the design's metadata round
trip, and strict loading: every bad input is one InvalidInputError whose message names the field."""

from __future__ import annotations

import ast
import json
import re

import pytest

from atlas.alma.design import check_design
from atlas.alma.genome import (
    BASELINE_GENOMES,
    Genome,
    baseline_genome,
    compile_genome,
    genome_design,
    genome_of,
    load_genome,
    parse_genome,
)
from atlas.errors import InvalidInputError

ROUTE_EXPLORE = {
    "version": 1,
    "name": "route+explore",
    "encode": [
        {"part": "transitions", "params": {"state_key": "location", "neighbors_key": "adjacent_rooms"}},
        {"part": "sequences", "params": {"successes_only": False, "max_actions": 20}},
    ],
    "store": {"recent": 10, "cap": 50, "decay": 0.9},
    "retrieve": [
        {"part": "route", "params": {"context": "none"}},
        {"part": "explore", "params": {"form": "rules", "max_steps": 20}},
        {"part": "replay"},
    ],
    "render": {"part": "lines", "params": {"style": "split", "max_lines": 40, "order": "plans,rules,notes"}},
}


def _genomes() -> list[Genome]:
    return [parse_genome(ROUTE_EXPLORE), *(baseline_genome(n) for n in BASELINE_GENOMES), Genome()]


@pytest.mark.parametrize("genome", _genomes(), ids=lambda g: g.name)
def test_genome_file_round_trip(genome, tmp_path):
    path = tmp_path / "g.genome.json"
    path.write_text(genome.to_json(), encoding="utf-8")
    loaded = load_genome(path)
    assert loaded.key == genome.key
    assert loaded == genome
    source = compile_genome(loaded)
    assert source == compile_genome(genome)
    assert check_design(source) == []
    # the module carries the genome it was compiled from
    tree = ast.parse(source)
    assigned = {n.targets[0].id: n.value for n in tree.body if isinstance(n, ast.Assign)}
    assert ast.literal_eval(assigned["GENOME"]) == json.loads(genome.model_dump_json())
    assert f"key {genome.key}" in (ast.get_docstring(tree) or "")


def test_design_metadata_round_trip():
    genome = parse_genome(ROUTE_EXPLORE)
    design = genome_design(genome, metadata={"note": "kept"})
    assert design.name == "route+explore" and design.metadata["note"] == "kept"
    assert design.source == compile_genome(genome)
    back = genome_of(design)
    assert back is not None and back.key == genome.key and back == genome
    # through the design's own JSON form too
    assert genome_of(type(design).model_validate_json(design.model_dump_json())) == genome
    from atlas.alma.baselines import get_baseline

    assert genome_of(get_baseline("trajectory_retrieval")) is None


def test_key_ignores_name_and_explicit_defaults_but_not_parameters_or_order():
    g = parse_genome(ROUTE_EXPLORE)
    spelled = json.loads(json.dumps(ROUTE_EXPLORE))
    spelled["name"] = "another name"
    spelled["retrieve"][2]["params"] = {}  # replay has no parameters
    spelled["encode"][1]["params"]["max_actions"] = 20
    assert parse_genome(spelled).key == g.key
    defaults_spelled = parse_genome({"encode": [{"part": "sightings", "params": {"goal_only": False}}]})
    assert defaults_spelled.key == parse_genome({"encode": [{"part": "sightings"}]}).key
    changed = json.loads(json.dumps(ROUTE_EXPLORE))
    changed["retrieve"][0]["params"]["context"] = "goal_items"
    assert parse_genome(changed).key != g.key
    swapped = json.loads(json.dumps(ROUTE_EXPLORE))
    swapped["retrieve"][0], swapped["retrieve"][1] = swapped["retrieve"][1], swapped["retrieve"][0]
    assert parse_genome(swapped).key != g.key
    store = json.loads(json.dumps(ROUTE_EXPLORE))
    store["store"]["cap"] = 1000
    assert parse_genome(store).key != g.key


def test_parse_accepts_json_text_and_bytes():
    text = json.dumps(ROUTE_EXPLORE)
    assert parse_genome(text) == parse_genome(text.encode()) == parse_genome(ROUTE_EXPLORE)


def _with(**changes):
    data = json.loads(json.dumps(ROUTE_EXPLORE))
    data.update(changes)
    return data


BAD = {
    "not JSON": ("{'encode': [", "not JSON"),
    "a JSON list": ("[1, 2]", "a genome is a JSON object, not list"),
    "a JSON string": ('"genome"', "a genome is a JSON object"),
    "wrong type store.cap": (_with(store={"cap": "x"}), "store.cap:"),
    "out of range store.decay": (_with(store={"decay": 0.0}), "store.decay:"),
    "wrong type encode": (_with(encode={"part": "sightings"}), "encode:"),
    "unknown top-level field": (_with(parts=[]), "parts:"),
    "unknown version": (_with(version=2), "version:"),
    "unknown encode part": (
        _with(encode=[*ROUTE_EXPLORE["encode"], {"part": "x"}]),
        "encode[2].part: unknown encode part 'x'",
    ),
    "unknown retrieve part": (
        _with(retrieve=[{"part": "oracle"}]),
        "retrieve[0].part: unknown retrieve part 'oracle'",
    ),
    "unknown render part": (_with(render={"part": "html"}), "render.part: unknown render part 'html'"),
    "unknown parameter": (
        _with(retrieve=[{"part": "route", "params": {"depth": 3}}]),
        "retrieve[0].params.depth: route has no such parameter",
    ),
    "bad choice": (
        _with(retrieve=[{"part": "route", "params": {"context": "everything"}}]),
        "retrieve[0].params.context: must be one of ['goal_items', 'none']",
    ),
    "bool for an int": (
        _with(render={"part": "lines", "params": {"max_lines": True}}),
        "render.params.max_lines: must be an integer",
    ),
    "string for a bool": (
        _with(encode=[{"part": "transitions"}, {"part": "sequences", "params": {"successes_only": "yes"}}]),
        "encode[1].params.successes_only: must be true or false",
    ),
    "float out of range": (
        _with(
            encode=[{"part": "episode_log"}], retrieve=[{"part": "similar_episodes", "params": {"floor": 2}}]
        ),
        "retrieve[0].params.floor: must be between 0 and 1",
    ),
    "number for a key": (
        _with(encode=[{"part": "transitions", "params": {"state_key": 3}}], retrieve=[]),
        "encode[0].params.state_key: must be a string",
    ),
    "retrieve without its encode part": (
        _with(encode=[{"part": "sightings"}], retrieve=[{"part": "route"}]),
        "retrieve[0].part: route reads the memory of encode part 'transitions'",
    ),
    "route towards sighted without sightings": (
        _with(
            encode=[{"part": "transitions"}], retrieve=[{"part": "route", "params": {"towards": "sighted"}}]
        ),
        "retrieve[0].part: route (with towards='sighted') reads the memory of encode part 'sightings'",
    ),
    "duplicated encode part": (
        _with(
            encode=[{"part": "sightings"}, {"part": "sightings", "params": {"goal_only": True}}], retrieve=[]
        ),
        "encode[1].part: 'sightings' appears twice",
    ),
    "duplicated retrieve part": (
        _with(retrieve=[{"part": "route"}, {"part": "explore"}, {"part": "route"}]),
        "retrieve[2].part: 'route' appears twice",
    ),
}


@pytest.mark.parametrize(("data", "field"), list(BAD.values()), ids=list(BAD))
def test_bad_input_is_one_error_naming_the_field(data, field, tmp_path):
    with pytest.raises(InvalidInputError) as err:
        parse_genome(data, where="my.genome.json")
    message = str(err.value)
    assert message.startswith("my.genome.json: ")
    assert field in message
    assert "Traceback" not in message and "\n" not in message
    # the same through a file: the message names the file
    path = tmp_path / "bad.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    with pytest.raises(InvalidInputError) as err:
        load_genome(path)
    assert str(err.value).startswith(f"{path}: ") and field in str(err.value)


def test_unknown_part_message_lists_the_known_parts():
    with pytest.raises(InvalidInputError, match=r"known: transitions, goal_actions, sightings"):
        parse_genome({"encode": [{"part": "x"}]})
    with pytest.raises(InvalidInputError, match=r"\(it has: context, towards\)"):
        parse_genome(
            {"encode": [{"part": "transitions"}], "retrieve": [{"part": "route", "params": {"k": 1}}]}
        )


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (
            {"parts": []},
            "parts: not a field here; the fields are version, name, encode, store, retrieve, render",
        ),
        (
            {"encode": [{"part": "effects", "param": {}}]},
            "encode[0].param: not a field here (did you mean params?); the fields are part, params",
        ),
        ({"render": {"part": "lines", "x": 1}}, "render.x: not a field here; the fields are part, params"),
        ({"store": {"size": 3}}, "store.size: not a field here; the fields are recent, cap, decay"),
    ],
)
def test_a_field_of_no_genome_names_the_fields_there_are(data, said):
    with pytest.raises(InvalidInputError, match=re.escape(said)):
        parse_genome(data)


def test_unreadable_genome_files(tmp_path):
    with pytest.raises(InvalidInputError, match="cannot read genome file"):
        load_genome(tmp_path / "missing.json")
    with pytest.raises(InvalidInputError, match="cannot read genome file"):
        load_genome(tmp_path)  # a directory
    latin = tmp_path / "latin1.json"
    latin.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(InvalidInputError, match="cannot read genome file"):
        load_genome(latin)
    empty = tmp_path / "empty.json"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="not JSON"):
        load_genome(empty)


def test_text_parameters_are_bounded():
    long = "x" * 301
    with pytest.raises(InvalidInputError, match=r"retrieve\[0\]\.params\.here_note: longer than 300"):
        parse_genome(
            {
                "encode": [{"part": "graph_edges"}],
                "retrieve": [{"part": "map_notes", "params": {"here_note": long}}],
            }
        )
    with pytest.raises(InvalidInputError, match="name"):
        parse_genome({"name": "n" * 81})


@pytest.mark.parametrize(
    "data",
    [
        {"name": 'a"""b', "encode": [{"part": "sightings"}], "retrieve": [{"part": "where_seen"}]},
        {"encode": [{"part": "transitions", "params": {"state_key": '""";INJECTED = 1;"""'}}]},
    ],
    ids=["name", "state_key"],
)
def test_any_valid_genome_compiles_to_a_module_holding_only_its_parts(data):
    source = compile_genome(parse_genome(data))
    tree = ast.parse(source)  # the name case: SyntaxError (unterminated string literal)
    assigned = {n.targets[0].id for n in tree.body if isinstance(n, ast.Assign)}
    assert "INJECTED" not in assigned  # the state_key case: an extra top-level statement ran
    assert check_design(source) == []


@pytest.mark.parametrize("store", [{"cap": "200"}, {"recent": True}, {"decay": "0.9"}])
def test_store_fields_of_the_wrong_type_are_refused(store):
    with pytest.raises(InvalidInputError, match=r"store\."):
        parse_genome({"store": store})


@pytest.mark.parametrize("k", [0, 51])
def test_int_parameters_outside_their_choices_are_refused(k):
    with pytest.raises(InvalidInputError, match=r"retrieve\[0\]\.params\.k"):
        parse_genome(
            {
                "encode": [{"part": "episode_log"}],
                "retrieve": [{"part": "similar_episodes", "params": {"k": k}}],
            }
        )
