"""The symbolic compressor: anti-unification, MDL scoring, runnable abstractions."""

from __future__ import annotations

import ast

from atlas.memory.stitch import StitchCompressor, anti_unify, code_snippets, match, normalize, size, to_tuple

RECOLOR_A = """
def solve(grid):
    g = rotate_90(grid)
    return [[2 if v == 1 else v for v in row] for row in g]
"""
RECOLOR_B = """
def solve(grid):
    h = mirror_horizontal(grid)
    return [[5 if c == 3 else c for c in r] for r in h]
"""
RECOLOR_C = """
def solve(x):
    y = [[7 if q == 0 else q for q in row] for row in x]
    return y
"""


def _expr(src: str):
    return to_tuple(ast.parse(src, mode="eval").body)


def test_anti_unification_turns_differences_into_holes():
    template, holes = anti_unify(_expr("f(a, 1) + g(2)"), _expr("f(b, 1) + g(3)"))
    assert holes == 2
    assert size(template) == size(_expr("f(a, 1) + g(2)"))  # holes replace one-node leaves


def test_same_differing_pair_shares_one_hole():
    template, holes = anti_unify(_expr("f(a) + f(a)"), _expr("f(b) + f(b)"))
    assert holes == 1
    binds: dict = {}
    assert match(template, _expr("f(zz) + f(zz)"), binds)
    assert not match(template, _expr("f(zz) + f(yy)"), {})


def test_structural_mismatch_at_root_gives_no_template():
    assert anti_unify(_expr("a + b"), _expr("f(x)")) is None


def test_alpha_normalization_makes_bound_names_equal():
    a, _ = normalize(_expr("[v * 2 for v in xs]"))
    b, _ = normalize(_expr("[c * 2 for c in xs]"))
    assert a == b
    free_a, _ = normalize(_expr("v * 2"))
    assert free_a == _expr("v * 2")  # a free name is not renamed


def test_hole_cannot_capture_a_bound_variable():
    # the differing parts mention the comprehension variable, so they cannot be call arguments
    res = anti_unify(normalize(_expr("[v + 1 for v in xs]"))[0], normalize(_expr("[v * 2 for v in xs]"))[0])
    assert res is None


def test_compression_finds_the_shared_recolor_pattern_and_code_runs():
    sc = StitchCompressor()
    programs = sc.parse_programs([(RECOLOR_A, "t1"), (RECOLOR_B, "t2"), (RECOLOR_C, "t3")])
    found = sc.compress(programs)
    assert found, "expected at least one abstraction"
    best = found[0]
    assert best.uses == 3 and best.benefit > 0 and len(best.params) == 3
    ns: dict = {}
    exec(best.code, ns)
    fn = ns[best.name]
    grid = [[1, 0], [3, 1]]
    # each use rewritten as a call must compute what the original expression computed
    for original, call in best.examples:
        env = {"g": grid, "h": grid, "x": grid, fn.__name__: fn}
        assert eval(call, env) == eval(original, env)


def test_mdl_benefit_is_saved_size_minus_abstraction_size():
    sc = StitchCompressor(max_abstractions=1)
    progs = sc.parse_programs([("y = foo(bar(a, 1), 2)", "1"), ("z = foo(bar(b, 1), 2)", "2")])
    (abstraction,) = sc.compress(progs)
    # template foo(bar(HOLE, 1), 2): Call Name Call Name Hole Const Const = 7 nodes
    # each use: 7 nodes → Call(Name, one 1-node argument) = 3 nodes saves 4; two uses save 8; minus 7
    assert abstraction.size == 7
    assert abstraction.benefit == 2 * (7 - 3) - 7


def test_no_abstraction_when_nothing_repeats():
    sc = StitchCompressor()
    progs = sc.parse_programs(
        [("print(sorted(items, key=len))", "1"), ("total = sum(x * x for x in range(10))", "2")]
    )
    assert sc.compress(progs) == []


def test_statement_templates_and_imports_are_self_contained():
    a = "import math\nfor i in range(n):\n    out.append(math.sqrt(i) + 1)\n"
    b = "import math\nfor j in range(m):\n    out.append(math.sqrt(j) + 1)\n"
    sc = StitchCompressor(max_abstractions=1)
    (abstraction,) = sc.compress(sc.parse_programs([(a, "1"), (b, "2")]))
    assert abstraction.code.startswith("import math")
    ns: dict = {}
    exec(abstraction.code, ns)
    out: list = []
    args = {"x0": 3, "out": out}
    ns[abstraction.name](*[args[p] for p in abstraction.params])
    assert out == [1.0, 2.0, 1 + 2**0.5]


def test_later_abstractions_can_use_earlier_ones():
    progs = [f"r{i} = scale(shift(grid{i}, {i}), 2) + scale(shift(grid{i}, {i}), 2)" for i in range(4)]
    sc = StitchCompressor(max_abstractions=3)
    found = sc.compress(sc.parse_programs([(p, str(i)) for i, p in enumerate(progs)]))
    for a in found:
        compile(a.code, a.name, "exec")  # every abstraction's code stands alone
        for dep in a.depends_on:
            assert f"def {dep}(" in a.code


def test_required_globals_lists_what_the_code_calls_from_outside():
    from atlas.memory.stitch import required_globals

    code = "import math\n\ndef f(grid, k):\n    g = rotate_90(grid)\n    return [math.sqrt(v) for v in g] + helper(k)\n"
    assert required_globals(code) == ["helper", "rotate_90"]


def test_code_snippets_reads_metadata_args_and_code_actions(traj):
    from atlas.core.types import Step

    t = traj("t", code="x = f(1)")
    t.steps.append(Step(action="python", args={"code": "y = g(2)"}))
    t.steps.append(Step(action="result = [[c for c in row] for row in grid]"))
    found = code_snippets(t)
    assert "x = f(1)" in found and "y = g(2)" in found
    assert "result = [[c for c in row] for row in grid]" in found
    assert "look()" not in found  # too small to be code worth compressing


# --- statement-level abstractions (loops, accumulators) ------------------------------------------------------

LOOP_A = """
def total_price(items):
    total = 0
    for x in items:
        total = total + x * 3
    return total
"""
LOOP_B = """
def weigh(prices):
    s = 0
    for p in prices:
        s = s + p * 5
    return s
"""
LOOP_C = """
def score(values, bonus):
    acc = bonus
    for v in values:
        acc = acc + v * 7
    return acc
"""


def _run_rewritten(abstraction, original_source: str, fn_name: str, *args):
    """Run a program before and after replacing the abstraction's example block by its call."""
    ns_before: dict = {}
    exec(original_source, ns_before)
    rewritten = original_source
    for before, call in abstraction.examples:
        if before in ast.unparse(ast.parse(rewritten)):
            rewritten = ast.unparse(ast.parse(rewritten)).replace(before, call)
    ns_after: dict = {}
    exec(abstraction.code + "\n" + rewritten, ns_after)
    assert rewritten != ast.unparse(ast.parse(original_source))
    return ns_before[fn_name](*args), ns_after[fn_name](*args)


def test_loop_accumulators_become_one_abstraction_that_returns_the_total():
    sc = StitchCompressor(max_abstractions=1)
    programs = sc.parse_programs([(LOOP_A, "a"), (LOOP_B, "b"), (LOOP_C, "c")])
    (best,) = sc.compress(programs)
    assert best.uses == 3 and best.benefit > 0 and best.returns == ["total"]
    assert "for " in best.code and "return total" in best.code
    assert [call for _, call in best.examples] == [
        "total = fn_loop(0, items, 3)",
        "s = fn_loop(0, prices, 5)",
        "acc = fn_loop(bonus, values, 7)",
    ]
    for src, name, args in ((LOOP_A, "total_price", ([1, 2],)), (LOOP_C, "score", ([1, 2], 10))):
        before, after = _run_rewritten(best, src, name, *args)
        assert before == after


def test_a_name_read_before_it_is_assigned_is_passed_in_and_returned():
    progs = [
        f"def f{i}(xs, t):\n    for x in xs:\n        t = t + x * {i + 2}\n    return t\n" for i in range(3)
    ]
    sc = StitchCompressor(max_abstractions=1)
    (best,) = sc.compress(sc.parse_programs([(p, str(i)) for i, p in enumerate(progs)]))
    assert best.returns == ["t"] and best.params[-1] == "t"  # in-out parameter
    ns: dict = {}
    exec(best.code, ns)
    assert ns[best.name](2, [1, 2], 10) == 10 + 1 * 2 + 2 * 2


def test_a_block_whose_later_read_may_stay_unassigned_is_not_abstracted():
    # `last` is assigned only inside the loop and read afterwards: a call could not always return it
    progs = [
        f"def f{i}(xs):\n    for x in xs:\n        last = x * {i + 2} + x * x\n    return last\n"
        for i in range(3)
    ]
    sc = StitchCompressor()
    found = sc.compress(sc.parse_programs([(p, str(i)) for i, p in enumerate(progs)]))
    assert all(not a.returns for a in found)
    assert all("for " not in a.code for a in found)


def test_mdl_prefers_the_loop_block_to_its_inner_expression():
    sc = StitchCompressor(max_abstractions=1)
    (best,) = sc.compress(sc.parse_programs([(LOOP_A, "a"), (LOOP_B, "b"), (LOOP_C, "c")]))
    no_blocks = StitchCompressor(max_abstractions=1, max_block=0)
    inner = no_blocks.compress(no_blocks.parse_programs([(LOOP_A, "a"), (LOOP_B, "b"), (LOOP_C, "c")]))
    assert all(best.benefit > a.benefit for a in inner)  # the expression-level pattern saves less
