"""ARC and SWE primitives: every concept's code is real Python that runs."""

from __future__ import annotations

import pytest

from atlas.errors import ConfigError
from atlas.memory.primitives import ARCPrimitiveLoader, SWEPrimitiveLoader, get_primitive_loader
from atlas.memory.primitives.arc import ARC_FUNCTIONS

GRID = [
    [0, 0, 0, 0],
    [0, 1, 1, 0],
    [0, 1, 0, 2],
    [0, 0, 0, 2],
]


def _load(concept) -> dict:
    ns: dict = {}
    exec(concept.code, ns)
    return ns


@pytest.fixture(scope="module")
def arc():
    return {name: _load(c)[name] for name, c in ARCPrimitiveLoader().load().items()}


def test_required_arc_primitives_exist():
    names = set(ARCPrimitiveLoader().load())
    assert {"get_objects", "flood_fill", "rotate_90", "mirror_horizontal", "get_background_color"} <= names
    assert len(names) >= 15


def test_every_arc_concept_executes_standalone_and_matches_the_function():
    for name, concept in ARCPrimitiveLoader().load().items():
        fn = _load(concept)[name]
        assert fn.__doc__ == ARC_FUNCTIONS[name].__doc__
        assert concept.is_primitive and concept.domain == "arc"


def test_background_and_objects(arc):
    assert arc["get_background_color"](GRID) == 0
    objs = arc["get_objects"](GRID)
    assert [(o["color"], o["size"]) for o in objs] == [(1, 3), (2, 2)]
    assert objs[0]["bbox"] == (1, 1, 2, 2)
    assert len(arc["get_objects"]([[1, 0], [0, 1]], background=0, diagonal=True)) == 1


def test_flood_fill_recolors_connected_region_only(arc):
    out = arc["flood_fill"](GRID, 1, 1, 5)
    assert out[1][1] == out[1][2] == out[2][1] == 5
    assert out[2][2] == 0 and GRID[1][1] == 1  # input untouched


def test_geometry(arc):
    g = [[1, 2], [3, 4]]
    assert arc["rotate_90"](g) == [[3, 1], [4, 2]]
    assert arc["rotate_180"](g) == [[4, 3], [2, 1]]
    assert arc["rotate_270"](g) == [[2, 4], [1, 3]]
    assert arc["rotate_90"](arc["rotate_270"](g)) == g
    assert arc["mirror_horizontal"](g) == [[2, 1], [4, 3]]
    assert arc["mirror_vertical"](g) == [[3, 4], [1, 2]]
    assert arc["transpose"](g) == [[1, 3], [2, 4]]


def test_cropping_scaling_tiling(arc):
    assert arc["crop_to_content"](GRID) == [[1, 1, 0], [1, 0, 2], [0, 0, 2]]
    assert arc["crop"](GRID, 1, 1, 2, 2) == [[1, 1], [1, 0]]
    assert arc["scale_up"]([[1, 2]], 2) == [[1, 1, 2, 2], [1, 1, 2, 2]]
    assert arc["tile"]([[1, 2]], 2, 2) == [[1, 2, 1, 2], [1, 2, 1, 2]]


def test_colors_lines_overlay(arc):
    assert arc["count_colors"](GRID) == {0: 11, 1: 3, 2: 2}
    assert arc["replace_color"]([[1, 2]], 1, 9) == [[9, 2]]
    assert arc["draw_line"](arc["make_grid"](3, 3), 0, 0, 2, 2, 4) == [[4, 0, 0], [0, 4, 0], [0, 0, 4]]
    assert arc["overlay"]([[1, 1]], [[0, 3]]) == [[1, 3]]
    assert arc["grid_shape"](GRID) == (4, 4)


def test_swe_primitives_run_on_a_real_tree(tmp_path):
    swe = {name: _load(c)[name] for name, c in SWEPrimitiveLoader().load().items()}
    assert {"read_file", "write_file", "search_codebase"} <= set(swe)
    root = str(tmp_path)
    swe["write_file"](f"{root}/pkg/mod.py", "def target():\n    return 41\n")
    assert swe["read_file"](f"{root}/pkg/mod.py", 2, 2) == "    return 41\n"
    assert swe["list_files"](root, ".py") == ["pkg/mod.py"]
    assert swe["search_codebase"](root, r"return \d+") == [("pkg/mod.py", 2, "    return 41")]
    assert swe["find_definition"](root, "target") == [("pkg/mod.py", 1)]
    assert swe["replace_in_file"](f"{root}/pkg/mod.py", "41", "42") == 1
    with pytest.raises(ValueError):
        swe["replace_in_file"](f"{root}/pkg/mod.py", "nope", "x")
    res = swe["run_command"](["python3", "-c", "print(6 * 7)"])
    assert res["returncode"] == 0 and res["stdout"].strip() == "42"


def test_loader_registry():
    assert isinstance(get_primitive_loader("arc"), ARCPrimitiveLoader)
    with pytest.raises(ConfigError):
        get_primitive_loader("chess")
