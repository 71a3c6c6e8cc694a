"""Hostile designs against the real sandbox: one per protection, each contained with a clear error
and the host unaffected (no file written, no connection made, no process left, host alive).

Most hostile designs here *bypass the static check* (``skip_static_check=True``) and first escape
the restricted builtins by walking frames to the worker's real globals (``ESCAPE``): this proves
the OS layers (Landlock, seccomp, rlimits, the host's timeout and caps) contain code the Python
layers would have stopped. The same designs are also shown to be rejected by the static check.
"""

from __future__ import annotations

import os
import socket
import sys
import uuid
from pathlib import Path

import pytest

from atlas.alma.design import ALLOWED_IMPORTS, Design, check_design
from atlas.alma.evaluate.runner import DesignRunner
from atlas.alma.sandbox.pool import SandboxLimits, WorkerPool
from atlas.infra.embeddings import NGramEmbedder

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")

# Escapes the restricted builtins: the traceback's frame chain leads to the worker module's globals
# (real builtins, os, sys). Only the OS-level protections stand after this.
ESCAPE = """
def _real():
    try:
        raise ValueError("x")
    except ValueError as e:
        f = e.__traceback__.tb_frame
    while f.f_back is not None:
        f = f.f_back
        if "os" in f.f_globals and "sys" in f.f_globals:
            return f.f_globals
    raise RuntimeError("no escape found")


def update(memory, episode, tools):
    pass
"""

TASK = {"goal": "Bring the key to room_C.", "observation": {"location": "room_A"}, "domain": "graphworld"}


def _group_alive(pgid: int) -> list[int]:
    """PIDs whose process group is ``pgid`` (a worker's whole tree)."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            alive.append(int(entry))
    return alive


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(SandboxLimits(timeout_s=3.0, memory_mb=256), max_workers=2, spares=1)
    yield p
    pids = p.pids()
    p.close()
    for pid in pids:
        assert _group_alive(pid) == [], f"worker {pid} left processes behind"


@pytest.fixture(scope="module")
def listener():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    yield srv
    srv.close()


def _no_connection(srv: socket.socket) -> bool:
    try:
        conn, _ = srv.accept()
    except TimeoutError:
        return True
    conn.close()
    return False


def run_recall(pool: WorkerPool, body: str, *, skip: bool = True, prefix: str = ESCAPE):
    design = Design(name="hostile", source=prefix + "\n" + body, origin="meta")
    runner = DesignRunner(design, embedder=NGramEmbedder(), llm=None, pool=pool, skip_static_check=skip)
    try:
        advice, log = runner.recall_sync(TASK, label="H1")
    finally:
        runner.close()
    return advice, log


# --- OS layer: escaped code is still contained ------------------------------------------------------


def _cases(tmp_secret: Path, marker: Path, port: int) -> list[tuple[str, str, str]]:
    """(name, recall body using _real(), expected error text)."""
    return [
        (
            "read /etc/passwd",
            'def recall(memory, task, tools):\n    return _real()["builtins"].open("/etc/passwd").read()',
            "Permission denied",
        ),
        (
            "read a tmp file",
            f'def recall(memory, task, tools):\n    return _real()["builtins"].open({str(tmp_secret)!r}).read()',
            "Permission denied",
        ),
        (
            "list the project",
            'def recall(memory, task, tools):\n    return str(_real()["os"].listdir("/work"))',
            "Permission denied",
        ),
        (
            "read /proc of the host",
            'def recall(memory, task, tools):\n    os = _real()["os"]\n'
            '    return _real()["builtins"].open("/proc/%d/environ" % os.getppid()).read()',
            "Permission denied",
        ),
        (
            "write a file",
            f'def recall(memory, task, tools):\n    _real()["builtins"].open({str(marker)!r}, "w").write("x")\n'
            '    return "wrote"',
            "Operation not permitted",
        ),
        (
            "create a file with os.open",
            f'def recall(memory, task, tools):\n    os = _real()["os"]\n'
            f'    os.open({str(marker)!r}, os.O_CREAT | os.O_WRONLY)\n    return "created"',
            "Operation not permitted",
        ),
        (
            "socket connect",
            f'def recall(memory, task, tools):\n    s = _real()["builtins"].__import__("socket")\n'
            f'    s.create_connection(("127.0.0.1", {port}), timeout=1)\n    return "connected"',
            "Operation not permitted",
        ),
        (
            "subprocess",
            f'def recall(memory, task, tools):\n    sp = _real()["builtins"].__import__("subprocess")\n'
            f'    return str(sp.run(["touch", {str(marker)!r}]).returncode)',
            "Operation not permitted",
        ),
        (
            "os.system",
            f'def recall(memory, task, tools):\n    r = _real()["os"].system("touch {marker}")\n'
            '    raise RuntimeError("system returned %d" % r)',
            "system returned",
        ),
        (
            "subclasses walk to os.system",
            "def recall(memory, task, tools):\n"
            "    for c in ().__class__.__base__.__subclasses__():\n"
            '        if c.__name__ == "_wrap_close":\n'
            f'            r = c.__init__.__globals__["system"]("touch {marker}")\n'
            '            raise RuntimeError("system returned %d" % r)\n    return "not found"',
            "system returned",
        ),
        (
            "os.fork",
            'def recall(memory, task, tools):\n    return str(_real()["os"].fork())',
            "Operation not permitted",
        ),
        (
            "os.execv",
            'def recall(memory, task, tools):\n    _real()["os"].execv("/bin/sh", ["sh", "-c", "true"])',
            "Operation not permitted",
        ),
        (
            "kill the host",
            'def recall(memory, task, tools):\n    os = _real()["os"]\n    os.kill(os.getppid(), 9)\n'
            '    return "killed"',
            "Operation not permitted",
        ),
        (
            "kill every process",
            'def recall(memory, task, tools):\n    _real()["os"].kill(-1, 9)\n    return "x"',
            "Operation not permitted",
        ),
        (
            "start a thread",
            'def recall(memory, task, tools):\n    t = _real()["builtins"].__import__("_thread")\n'
            '    t.start_new_thread(len, ((),))\n    return "started"',
            "can't start new thread",
        ),
        (
            "raise the CPU limit",
            'def recall(memory, task, tools):\n    r = _real()["builtins"].__import__("resource")\n'
            '    r.setrlimit(r.RLIMIT_CPU, (10**6, 10**6))\n    return "raised"',
            "not allowed",
        ),
        (
            "ctypes fork/socket/system",
            f'def recall(memory, task, tools):\n    ct = _real()["builtins"].__import__("ctypes")\n'
            "    libc = ct.CDLL(None)\n"
            f'    r = (libc.fork(), libc.socket(2, 1, 0), libc.system(b"touch {marker}"))\n'
            '    raise RuntimeError("ctypes results %r" % (r,))',
            "ctypes results (-1, -1, ",
        ),
    ]


@pytest.mark.slow
def test_os_layer_contains_escaped_code(pool, listener, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    marker = tmp_path / f"written-{uuid.uuid4().hex}"
    port = listener.getsockname()[1]
    host_pid = os.getpid()
    for name, body, expected in _cases(secret, marker, port):
        advice, log = run_recall(pool, body)
        assert advice == "", name
        assert log.error is not None and expected in log.error, (name, log.error)
        assert "TOP SECRET" not in (log.error + "".join(log.prints)), name
        assert not marker.exists(), f"{name}: a file was written"
        assert os.getpid() == host_pid
    assert _no_connection(listener), "a design reached the network"
    assert secret.read_text() == "TOP SECRET"


def test_same_hostile_designs_fail_the_static_check(tmp_path):
    for name, body, _ in _cases(tmp_path / "s", tmp_path / "m", 1):
        problems = check_design(ESCAPE + "\n" + body)
        assert any(
            "tb_frame" in p.message
            or "f_back" in p.message
            or "f_globals" in p.message
            or "dunder" in p.message
            for p in problems
        ), name


def test_static_check_rejects_at_run_time_too(pool):
    advice, log = run_recall(
        pool, 'def recall(memory, task, tools):\n    return open("/etc/passwd").read()', skip=False
    )
    assert advice == "" and log.error_kind == "static_check"
    assert "'open' is not allowed" in log.error


# --- Python layer: restricted builtins and module proxies ----------------------------------------

REMOVED = [
    "open",
    "exec",
    "eval",
    "compile",
    "input",
    "globals",
    "locals",
    "vars",
    "getattr",
    "setattr",
    "delattr",
    "breakpoint",
    "help",
    "exit",
    "quit",
    "memoryview",
]
FORBIDDEN_MODULES = [
    "os",
    "sys",
    "subprocess",
    "socket",
    "ctypes",
    "importlib",
    "builtins",
    "io",
    "pathlib",
    "shutil",
    "pickle",
    "marshal",
    "types",
    "inspect",
    "gc",
    "threading",
    "multiprocessing",
    "signal",
    "resource",
    "urllib",
    "http",
    "posix",
    "_posixsubprocess",
    "codecs",
    "tempfile",
]


@pytest.mark.parametrize("name", REMOVED)
def test_removed_builtins_are_absent(pool, name):
    _, log = run_recall(pool, f"def recall(memory, task, tools):\n    f = {name}\n    return 'x'", prefix="")
    assert log.error is not None and f"NameError: name '{name}' is not defined" in log.error


@pytest.mark.parametrize("module", FORBIDDEN_MODULES)
def test_forbidden_imports_fail_at_run_time(pool, module):
    _, log = run_recall(
        pool,
        f"import {module}\ndef update(memory, episode, tools):\n    pass\n"
        "def recall(memory, task, tools):\n    return 'x'",
        prefix="",
    )
    assert log.error is not None and f"import of {module!r} is not allowed" in log.error


@pytest.mark.parametrize("expr", ["__import__('o' + 's')", "__import__('sys')"])
def test_obfuscated_imports_are_refused(pool, expr):
    _, log = run_recall(pool, f"def recall(memory, task, tools):\n    return str({expr})", prefix="")
    assert log.error is not None and "ImportError" in log.error
    assert check_design(
        f"def update(memory, episode, tools):\n    pass\ndef recall(memory, task, tools):\n"
        f"    return str({expr})\n"
    )


@pytest.mark.parametrize(
    "expr", ["random._os", "statistics.sys", "json.codecs", "re.enum", "string.Formatter", "random._inst"]
)
def test_module_proxies_hide_dangerous_attributes(pool, expr):
    mod = expr.split(".")[0]
    _, log = run_recall(
        pool,
        f"import {mod}\ndef update(memory, episode, tools):\n    pass\n"
        f"def recall(memory, task, tools):\n    return str({expr})",
        prefix="",
    )
    assert log.error is not None and "AttributeError" in log.error


def test_allowed_modules_work(pool):
    body = (
        "import math, re, json, collections, itertools, functools, heapq, statistics, string, random\n"
        "from collections import Counter, abc\n"
        "def update(memory, episode, tools):\n    pass\n"
        "def recall(memory, task, tools):\n"
        "    c = Counter('aab')\n"
        "    return json.dumps([math.sqrt(4), statistics.mean([1, 3]), c['a'], heapq.nsmallest(1, [3, 1]),"
        " string.ascii_lowercase[:2], bool(re.match('a', 'a')), random.Random(1).randint(0, 0)])"
    )
    advice, log = run_recall(pool, body, prefix="", skip=False)
    assert log.error is None, log.error
    assert advice == '[2.0, 2, 2, [1], "ab", true, 0]'


def test_format_string_attribute_access(pool):
    """``"{0.__class__}".format(x)`` is rejected statically; at run time it can only produce a string."""
    body = "def recall(memory, task, tools):\n    return '{0.__class__}'.format(memory)"
    assert any("dunder" in p.message for p in check_design(ESCAPE + body))
    advice, log = run_recall(pool, body, prefix="def update(memory, episode, tools):\n    pass\n")
    assert log.error is None and advice == "<class 'dict'>"


def test_generator_frame_walk_is_contained(pool, tmp_path):
    marker = tmp_path / "gen-escape"
    body = (
        "def recall(memory, task, tools):\n"
        "    def gen():\n"
        "        yield holder[0].gi_frame.f_back\n"
        "    holder = [None]\n"
        "    holder[0] = gen()\n"
        "    f = next(holder[0])\n"
        "    while 'os' not in f.f_globals:\n"
        "        f = f.f_back\n"
        "    os = f.f_globals['os']\n"
        f"    os.open({str(marker)!r}, os.O_CREAT | os.O_WRONLY)\n"
        "    return 'escaped'\n"
    )
    assert any(
        "gi_frame" in p.message
        for p in check_design("def update(memory, episode, tools):\n    pass\n" + body)
    )
    _, log = run_recall(pool, body, prefix="def update(memory, episode, tools):\n    pass\n")
    assert log.error is not None and "Operation not permitted" in log.error
    assert not marker.exists()


# --- resource limits and caps ----------------------------------------------------------------------


@pytest.mark.slow
def test_memory_bomb_is_contained_and_worker_replaced(pool):
    body = "def recall(memory, task, tools):\n    x = []\n    while True:\n        x.append('a' * 10**7)"
    _, log = run_recall(pool, body, prefix="def update(memory, episode, tools):\n    pass\n")
    assert log.error is not None and "MemoryError" in log.error
    advice, ok = run_recall(
        pool,
        "def recall(memory, task, tools):\n    return 'fine'",
        prefix="def update(memory, episode, tools):\n    pass\n",
    )
    assert ok.error is None and advice == "fine"


@pytest.mark.slow
def test_infinite_loop_times_out_and_worker_is_killed(pool):
    _, log = run_recall(
        pool,
        "def recall(memory, task, tools):\n    while True:\n        pass",
        prefix="def update(memory, episode, tools):\n    pass\n",
    )
    assert log.error_kind == "timeout" and "timed out after 3 s" in log.error
    assert log.worker["killed"] is True
    assert _group_alive(log.worker["pid"]) == []


@pytest.mark.slow
def test_loop_at_import_time_times_out(pool):
    _, log = run_recall(
        pool,
        "while True:\n    pass\ndef recall(memory, task, tools):\n    return 'x'",
        prefix="def update(memory, episode, tools):\n    pass\n",
    )
    assert log.error_kind == "timeout"


def test_deep_recursion(pool):
    body = "def recall(memory, task, tools):\n    def f(n):\n        return f(n + 1)\n    return f(0)"
    _, log = run_recall(pool, body, prefix="def update(memory, episode, tools):\n    pass\n")
    assert log.error is not None and "RecursionError" in log.error and "design line" in log.error


def test_print_flood_is_capped(pool):
    _, log = run_recall(
        pool,
        "def recall(memory, task, tools):\n    while True:\n        print('x' * 1000)",
        prefix="def update(memory, episode, tools):\n    pass\n",
    )
    assert log.error_kind == "limit" and "print flood" in log.error
    assert sum(len(p) for p in log.prints) <= 20_000
    advice, log = run_recall(
        pool,
        "def recall(memory, task, tools):\n    print('y' * 10**6)\n    return 'ok'",
        prefix="def update(memory, episode, tools):\n    pass\n",
    )
    assert log.error is None and advice == "ok" and log.prints_dropped > 900_000


def test_tool_flood(pool):
    polite = "def recall(memory, task, tools):\n    while True:\n        tools.graph_neighbors('a')"
    _, log = run_recall(pool, polite, prefix="def update(memory, episode, tools):\n    pass\n")
    assert log.error_kind == "limit" and "tool call limit of 200" in log.error
    stubborn = (
        "def recall(memory, task, tools):\n    while True:\n        try:\n"
        "            tools.graph_neighbors('a')\n        except BaseException:\n            pass"
    )
    _, log = run_recall(pool, stubborn, prefix="def update(memory, episode, tools):\n    pass\n")
    assert log.error_kind == "limit" and "tool call flood" in log.error and log.worker["killed"]
    swallowed = (
        "def recall(memory, task, tools):\n    for _ in range(300):\n        try:\n"
        "            tools.graph_neighbors('a')\n        except BaseException:\n            return 'done'"
    )
    advice, log = run_recall(pool, swallowed, prefix="def update(memory, episode, tools):\n    pass\n")
    assert advice == "" and log.error_kind == "limit" and "tool call limit of 200" in log.error


@pytest.mark.parametrize(
    "value,kind", [("42", "int"), ("None", "NoneType"), ("['a']", "list"), ("b'x'", "bytes")]
)
def test_non_str_return(pool, value, kind):
    advice, log = run_recall(
        pool,
        f"def recall(memory, task, tools):\n    return {value}",
        prefix="def update(memory, episode, tools):\n    pass\n",
    )
    assert advice == "" and log.error_kind == "invalid_return" and f"got {kind}" in log.error


def test_long_return_is_truncated_with_warning(pool):
    advice, log = run_recall(
        pool,
        "def recall(memory, task, tools):\n    return 'a' * 100000",
        prefix="def update(memory, episode, tools):\n    pass\n",
    )
    assert log.error is None and len(advice) == 8000 and "truncated" in log.warnings[0]


def test_crashing_worker_is_replaced(pool):
    body = (
        'def recall(memory, task, tools):\n    ct = _real()["builtins"].__import__("ctypes")\n'
        "    return str(ct.string_at(0))"
    )
    _, log = run_recall(pool, body)
    assert log.error_kind == "crash" and "SIGSEGV" in log.error
    advice, log = run_recall(
        pool,
        "def recall(memory, task, tools):\n    return 'after crash'",
        prefix="def update(memory, episode, tools):\n    pass\n",
    )
    assert advice == "after crash"


@pytest.mark.parametrize(
    "body,kind,fragment",
    [
        ('    _real()["os"]._exit(0)', "crash", "worker exited with status 0"),
        ('    os = _real()["os"]\n    os.kill(os.getpid(), 19)', "timeout", "timed out"),  # SIGSTOP itself
        ('    os = _real()["os"]\n    os.kill(os.getpid(), 9)', "crash", "SIGKILL"),
        ('    _real()["os"].close(1)\n    while True:\n        pass', "crash", "died"),
    ],
)
def test_worker_suicide_and_stalls_are_contained(pool, body, kind, fragment):
    _, log = run_recall(pool, "def recall(memory, task, tools):\n" + body)
    assert log.error_kind == kind and fragment in log.error, log.error
    assert _group_alive(log.worker["pid"]) == []


def test_forged_protocol_message_kills_the_worker(pool):
    body = (
        'def recall(memory, task, tools):\n    out = _real()["sys"].__stdout__\n'
        '    out.buffer.write(b"this is not json\\n")\n    out.buffer.flush()\n    return "x"'
    )
    _, log = run_recall(pool, body)
    assert log.error_kind == "protocol" and log.worker["killed"]


# --- memory ----------------------------------------------------------------------------------------


def _update(pool, body: str, memory: dict | None = None):
    design = Design(
        name="mem", source=body + "\ndef recall(memory, task, tools):\n    return str(memory)", origin="meta"
    )
    runner = DesignRunner(
        design,
        embedder=NGramEmbedder(),
        llm=None,
        pool=pool,
        limits=SandboxLimits(timeout_s=3.0, max_memory_bytes=100_000),
    )
    runner.memory = dict(memory or {"kept": 1})
    try:
        log = runner.update_sync({"task": TASK, "steps": [], "success": True, "score": 1.0, "steps_taken": 0})
        return runner.memory, log
    finally:
        runner.close()


@pytest.mark.parametrize(
    "assignment,expected",
    [
        ("memory['s'] = {1, 2}", "a set is not JSON-serializable"),
        ("memory['f'] = float('nan')", "not JSON"),
        ("memory['o'] = object()", "not JSON-serializable"),
        ("memory['b'] = b'x'", "bytes"),
        ("memory['big'] = 'x' * 200000", "over the cap of 100000"),
    ],
)
def test_bad_memory_is_refused_and_changes_discarded(pool, assignment, expected):
    memory, log = _update(
        pool, f"def update(memory, episode, tools):\n    memory['new'] = 2\n    {assignment}"
    )
    assert log.error is not None and expected in log.error and "discarded" in log.error
    assert memory == {"kept": 1}


def test_good_memory_persists(pool):
    memory, log = _update(
        pool,
        "def update(memory, episode, tools):\n    memory['n'] = memory.get('kept', 0) + 1\n"
        "    memory['t'] = (1, 2)",
    )
    assert log.error is None and memory == {"kept": 1, "n": 2, "t": [1, 2]}


def test_error_in_update_keeps_old_memory(pool):
    memory, log = _update(
        pool, "def update(memory, episode, tools):\n    memory['x'] = 1\n    raise KeyError('goal')"
    )
    assert memory == {"kept": 1}
    assert log.error == "KeyError: 'goal' (design line 3)"
    assert 'File "<design>", line 3, in update' in log.traceback
    assert "raise KeyError('goal')" in log.traceback
    assert "worker.py" not in log.traceback


def test_host_survives_everything(pool):
    """After the hostile designs above, the same pool still runs a legitimate design."""
    advice, log = run_recall(
        pool,
        "def recall(memory, task, tools):\n    return task['goal']",
        prefix="def update(memory, episode, tools):\n    pass\n",
        skip=False,
    )
    assert log.error is None and advice == TASK["goal"]


# --- degraded mode: no Landlock, no seccomp ------------------------------------------------------------


@pytest.mark.slow
def test_without_landlock_and_seccomp_limits_and_timeout_still_hold(embedder):
    """Where the kernel lacks Landlock/seccomp the host still enforces rlimits, the timeout and the
    caps, and the protections report says what is missing."""
    limits = SandboxLimits(timeout_s=2.0, memory_mb=256, disable_layers=("landlock", "seccomp"))
    with WorkerPool(limits, max_workers=1, spares=0) as degraded:
        design = Design(
            name="loop",
            source="def update(memory, episode, tools):\n    pass\n\n\n"
            "def recall(memory, task, tools):\n    while True:\n        pass\n",
        )
        runner = DesignRunner(design, embedder=embedder, llm=None, pool=degraded)
        report = runner.protections
        assert not report["landlock"]["active"] and not report["seccomp"]["active"]
        assert "landlock" not in report["summary"] and "wall-clock-timeout" in report["summary"]
        assert any("Landlock unavailable" in d for d in report["degraded"])
        assert any("seccomp unavailable" in d for d in report["degraded"])
        _, log = runner.recall_sync(TASK)
        assert log.error_kind == "timeout" and _group_alive(log.worker["pid"]) == []
        _, log = run_recall(
            degraded,
            "def recall(memory, task, tools):\n    return 'x' * 10**9",
            prefix="def update(memory, episode, tools):\n    pass\n",
        )
        assert "MemoryError" in log.error
        _, log = run_recall(
            degraded,
            'def recall(memory, task, tools):\n    return open("/etc/passwd").read()',
            prefix="def update(memory, episode, tools):\n    pass\n",
        )
        assert "NameError" in log.error  # the Python layer still stands
        runner.close()


def test_both_sides_of_the_sandbox_name_the_same_tools_and_imports():
    """The worker cannot import atlas, so it writes the design tools and the allowed imports again;
    they must be what the host serves and what the static check allows."""
    from atlas.alma.evaluate import tools as host_tools
    from atlas.alma.sandbox import worker

    assert worker.TOOL_NAMES == host_tools.TOOL_NAMES
    methods = {n for n in vars(worker.Tools(lambda name, args: None)) if not n.startswith("_")}
    assert methods == set(host_tools.TOOL_NAMES)
    assert set(worker.ALLOWED_MODULES) == set(ALLOWED_IMPORTS)
