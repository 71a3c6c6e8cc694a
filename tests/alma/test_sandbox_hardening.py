"""More hostile and broken designs against the real sandbox: deep or cyclic values, huge messages,
forged ``done`` lines, shared random state, and design text that reaches the terminal. Each ends
with a clear error in the call's log, the host alive and the pool still serving."""

from __future__ import annotations

import io
import json
import random
import sys

import pytest

from atlas.alma.author.smoke import SmokeReport
from atlas.alma.design import Design, check_design
from atlas.alma.evaluate.runlog import CallLog
from atlas.alma.evaluate.runner import DesignRunner
from atlas.alma.sandbox import protocol
from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool
from atlas.infra.embeddings import NGramEmbedder

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")

TASK = {"goal": "Bring the key to room_C.", "observation": {"location": "room_A"}}
EPISODE = {"task": TASK, "steps": [], "success": True, "score": 1.0, "steps_taken": 0}
UPDATE = "def update(memory, episode, tools):\n    pass\n"
RECALL = "def recall(memory, task, tools):\n    return 'ok'\n"
LIMITS = SandboxLimits(timeout_s=3.0, memory_mb=256, max_memory_bytes=100_000)


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(LIMITS, max_workers=2, spares=0)
    yield p
    p.close()


def _runner(pool: WorkerPool, source: str, *, skip: bool = False) -> DesignRunner:
    design = Design(name="hostile", source=source, origin="meta")
    return DesignRunner(
        design, embedder=NGramEmbedder(), llm=None, pool=pool, limits=LIMITS, skip_static_check=skip
    )


def recall(pool: WorkerPool, source: str, *, skip: bool = False, frozen: bool = False) -> tuple[str, CallLog]:
    runner = _runner(pool, source, skip=skip)
    try:
        if frozen:
            runner.freeze()
        return runner.recall_sync(TASK)
    finally:
        runner.close()


def update(pool: WorkerPool, source: str, *, skip: bool = False) -> tuple[dict, CallLog]:
    runner = _runner(pool, source, skip=skip)
    runner.memory = {"kept": 1}
    try:
        log = runner.update_sync(EPISODE)
        return runner.memory, log
    finally:
        runner.close()


def _still_serves(pool: WorkerPool) -> None:
    advice, log = recall(pool, UPDATE + RECALL)
    assert log.error is None and advice == "ok"


DEEP = "    x = []\n    for _ in range(900):\n        x = [x]\n"


# --- deep and cyclic values -------------------------------------------------------------------------


@pytest.mark.parametrize("call", ["tools.store_obs('a', metadata={'d': x})", "tools.graph_update([x])"])
def test_deeply_nested_tool_arguments_are_refused_in_the_worker(pool, call):
    """Before: the host decoded the 900-level arguments and its log truncation hit RecursionError
    (the host's call crashed)."""
    advice, log = recall(
        pool, UPDATE + "def recall(memory, task, tools):\n" + DEEP + f"    return str({call})\n"
    )
    assert advice == "" and log.error_kind == "design"
    assert "arguments are nested more than 50 levels deep" in log.error
    _still_serves(pool)


def test_forged_deep_message_is_a_protocol_violation_not_a_host_crash(pool):
    """Code past the Python layer can write any line: a 100 000-level array used to raise
    RecursionError in the host's JSON decoder."""
    escape = (
        "def recall(memory, task, tools):\n    try:\n        raise ValueError('x')\n"
        "    except ValueError as e:\n        f = e.__traceback__.tb_frame\n"
        "    while 'sys' not in f.f_globals:\n        f = f.f_back\n"
        "    out = f.f_globals['sys'].__stdout__.buffer\n"
        '    out.write(b\'{"op":"tool","name":"graph_update","args":{"edges":\' + b\'[\' * 100000'
        " + b']' * 100000 + b'}}\\n')\n    out.flush()\n    return 'x'\n"
    )
    advice, log = recall(pool, UPDATE + escape, skip=True)
    assert advice == "" and log.error_kind == "protocol" and log.worker["killed"]
    _still_serves(pool)


def test_protocol_refuses_deep_nesting_and_nan():
    deep = b'{"op":"done","value":' + b"[" * 70 + b"]" * 70 + b"}\n"
    with pytest.raises(protocol.ProtocolError, match="nested more than"):
        protocol.decode(deep, protocol.WORKER_OPS)
    for constant in (b"NaN", b"Infinity", b"-Infinity"):
        with pytest.raises(protocol.ProtocolError):
            protocol.decode(b'{"op":"done","memory":{"x":' + constant + b"}}\n", protocol.WORKER_OPS)
    assert protocol.too_deep([[[]]], 2) and not protocol.too_deep([[[]]], 3)


@pytest.mark.parametrize(
    "body,expected",
    [
        (DEEP + "    memory['d'] = x\n", "nested more than 50 levels deep; flatten it"),
        (
            "    memory['self'] = memory\n",
            "memory['self']: refers back to a list/dict that contains it (a cycle)",
        ),
        (
            "    memory['counts'] = {3: 1}\n",
            "memory['counts']: key 3 is a int, JSON keys must be strings (use str(key))",
        ),
    ],
)
def test_memory_that_is_not_plain_json_is_refused(pool, body, expected):
    """Before: 900 levels were accepted (and crashed recursive host code later), int keys silently
    became strings, and a cycle produced a path of 200 repeated keys."""
    memory, log = update(pool, "def update(memory, episode, tools):\n    memory['new'] = 1\n" + body + RECALL)
    assert log.error_kind == "limit" and expected in log.error and "discarded" in log.error
    assert memory == {"kept": 1}


# --- huge messages ----------------------------------------------------------------------------------


def test_huge_exception_message_is_clipped_not_a_protocol_violation(pool):
    _, log = recall(pool, UPDATE + "def recall(memory, task, tools):\n    raise ValueError('x' * 10**7)\n")
    assert log.error_kind == "design" and log.error.startswith("ValueError: xxx")
    assert "more characters]" in log.error and "(design line 4)" in log.error
    assert len(log.error) < 3000 and len(log.traceback or "") < 9000 and not log.worker.get("killed")


def test_deep_recursion_traceback_is_short(pool):
    body = "def recall(memory, task, tools):\n    def f(n):\n        return f(n + 1)\n    return f(0)\n"
    _, log = recall(pool, UPDATE + body)
    assert "RecursionError" in log.error and "earlier frames omitted" in log.traceback


def test_huge_tool_arguments_are_refused_in_the_worker(pool):
    body = (
        "def recall(memory, task, tools):\n    try:\n        tools.store_obs('x' * 10**7)\n"
        "    except ToolError as e:\n        return str(e)\n"
    )
    advice, log = recall(pool, UPDATE + body)
    assert log.error is None and not log.worker.get("killed")
    assert advice.startswith("store_obs: arguments are 10000") and "over the limit of 1000000" in advice


# --- a forged done line cannot bypass the caps -------------------------------------------------------

# passes the static check: monkey-patching a library class is plain attribute assignment
FORGING_DESIGN = """import json

if not hasattr(json.JSONEncoder, "honest"):
    json.JSONEncoder.honest = json.JSONEncoder.iterencode


def forged(self, o, _one_shot=False):
    if isinstance(o, dict) and o.get("op") == "done":
        return list(json.JSONEncoder.honest(self, {
            "op": "done", "id": o.get("id"), "ok": True, "value": "A" * 300000,
            "prints": ["p" * 1000] * 200, "memory": {"big": "B" * 500000}}, _one_shot))
    raise ValueError("memory is never encoded honestly")


def update(memory, episode, tools):
    json.JSONEncoder.iterencode = forged


def recall(memory, task, tools):
    json.JSONEncoder.iterencode = forged
    return "short"
"""


def test_forged_done_line_cannot_exceed_the_caps(pool):
    source = FORGING_DESIGN
    # the static check refuses patching a shared class; past it, the sandbox still holds the caps
    assert any("'.iterencode'" in p.message for p in check_design(source))
    advice, log = recall(pool, source, skip=True, frozen=True)
    assert log.error is None and len(advice) == LIMITS.max_return_chars
    assert any("truncated to 8000" in w for w in log.warnings)
    assert sum(len(p) for p in log.prints) <= LIMITS.max_print_chars
    memory, log = update(pool, source, skip=True)
    assert log.error_kind == "limit" and "over the cap of 100000" in log.error
    assert memory == {"kept": 1}


# --- shared state between calls ----------------------------------------------------------------------


def test_random_seed_does_not_carry_over_to_the_next_call(pool):
    """Seeding (or reading the state of) the worker's shared generator was a channel from one call
    to the next, e.g. between deployment recalls whose memory is frozen."""
    source = (
        "import random\n\ndef update(memory, episode, tools):\n    random.seed(7)\n\n"
        "def recall(memory, task, tools):\n    return repr([random.random() for _ in range(3)])\n"
    )
    runner = _runner(pool, source)
    try:
        assert runner.update_sync(EPISODE).error is None
        advice, log = runner.recall_sync(TASK)
    finally:
        runner.close()
    seeded = random.Random(7)
    assert log.error is None and advice != repr([seeded.random() for _ in range(3)])
    assert log.worker["reused"]  # the same worker ran both calls


# --- odd return values --------------------------------------------------------------------------------


def test_str_subclass_return_is_a_plain_str(pool):
    """A str subclass whose slicing returns a non-str used to crash the worker while encoding."""
    source = UPDATE + (
        "class S(str):\n    def __getitem__(self, k):\n        return object()\n"
        "    def __len__(self):\n        return 10**9\n\n"
        "def recall(memory, task, tools):\n    return S('hello')\n"
    )
    advice, log = recall(pool, source, skip=True)
    assert log.error is None and advice == "hello"


# --- design text shown in the terminal ----------------------------------------------------------------


def test_smoke_render_shows_design_text_verbatim():
    """Rich markup in a design's error or advice used to raise MarkupError in ``atlas design check``,
    and terminal escape sequences went straight to the terminal."""
    from rich.console import Console

    report = SmokeReport(design_name="[bold]x", design_id="d", env="graphworld")
    failed = CallLog(phase="recall", episode="C1", design_id="d")
    failed.error, failed.error_kind = "ValueError: [/red] \x1b]52;c;ZXZpbA==\x07 (design line 5)", "design"
    failed.traceback = "Traceback:\n  \x1b[2J"
    advice = CallLog(phase="recall", episode="D1", design_id="d")
    advice.return_value = "[/] go \x1b[31mnorth"
    report.calls += [failed, advice]
    out = io.StringIO()
    report.render(Console(file=out, width=200, force_terminal=False))
    text = out.getvalue()
    assert "\x1b" not in text and "\\x1b]52" in text and "[/red]" in text and "[/] go \\x1b[31mnorth" in text
    assert json.dumps(report.to_dict())  # the JSON report is unaffected
