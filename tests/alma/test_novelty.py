"""Novelty: minimum normalized AST distance (Python ``ast``)."""

from __future__ import annotations

import random

from atlas.alma.state.novelty import ast_distance, ast_tokens, levenshtein, novelty, novelty_scores

BASE = """
def update(memory, episode, tools):
    memory.setdefault("goals", []).append(episode["task"]["goal"])

def recall(memory, task, tools):
    return "seen: " + ", ".join(memory.get("goals", []))
"""

EDIT1 = BASE.replace('return "seen: "', 'if not memory.get("goals"):\n        return ""\n    return "seen: "')

EDIT2 = (
    EDIT1
    + """

def helper(memory):
    hits = tools_result = []
    for g in memory.get("goals", []):
        if g:
            hits.append(g.upper())
    return hits
"""
)

GRAPH = """
def update(memory, episode, tools):
    for step in episode["steps"]:
        tools.graph_update([["a", "b"]])

def recall(memory, task, tools):
    path = tools.graph_path("a", "b")
    return str(path) if path else ""
"""


def _naive(a, b):
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    return d[-1][-1]


def test_levenshtein_matches_the_textbook_algorithm():
    rng = random.Random(3)
    for _ in range(300):
        a = [rng.choice("abc") for _ in range(rng.randint(0, 9))]
        b = [rng.choice("abc") for _ in range(rng.randint(0, 9))]
        assert levenshtein(a, b) == _naive(a, b)


def test_identical_sources_have_zero_distance():
    assert ast_distance(BASE, BASE) == 0.0
    assert novelty(BASE, [BASE, GRAPH]) == 0.0


def test_renaming_and_comments_are_not_novelty():
    renamed = BASE.replace("goals", "targets") + "\n# a comment\n"
    assert ast_distance(BASE, renamed) == 0.0


def test_distance_grows_with_edits():
    d1 = ast_distance(BASE, EDIT1)
    d2 = ast_distance(BASE, EDIT2)
    assert 0.0 < d1 < d2 <= 1.0
    assert ast_distance(BASE, GRAPH) > d1


def test_distance_is_symmetric_and_bounded():
    for a, b in [(BASE, GRAPH), (EDIT1, EDIT2), ("x = 1", BASE)]:
        assert ast_distance(a, b) == ast_distance(b, a)
        assert 0.0 <= ast_distance(a, b) <= 1.0


def test_tool_names_are_part_of_the_shape():
    a = "def recall(memory, task, tools):\n    return tools.find_similar('x')\n"
    b = "def recall(memory, task, tools):\n    return tools.graph_path('x')\n"
    assert ast_distance(a, b) > 0


def test_unparsable_source_still_has_tokens():
    assert ast_tokens("def broken(:\n  pass") != ()


def test_novelty_scores_is_minimum_distance_to_the_others():
    scores = novelty_scores({"a": BASE, "b": EDIT1, "c": GRAPH})
    assert scores["a"] == ast_distance(BASE, EDIT1)
    assert scores["c"] == min(ast_distance(GRAPH, BASE), ast_distance(GRAPH, EDIT1))
    assert novelty_scores({"only": BASE}) == {"only": 1.0}
    assert novelty(BASE, []) == 1.0
