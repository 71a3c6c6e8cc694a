"""The sandbox worker: a child process that runs untrusted design code, one call at a time.

Started by the host (``pool.py``) as ``python -I -B <this file>`` (isolated mode: no PYTHONPATH,
no user site, so ``atlas`` itself is not even importable here) or ``python -m
atlas.alma.sandbox.worker``. Life cycle:

1. read the ``init`` message (limits, read-only paths) from stdin;
2. import everything designs may use (the allow-listed modules) and everything this file needs;
3. lock down (``protections.lockdown``: rlimits → Landlock → seccomp); from here on the process
   cannot open files for writing, read outside the stdlib, create processes, use sockets or signal
   other processes;
4. send ``ready`` with the protections report, then serve ``call`` messages until ``exit``/EOF.

Each call executes the design module (compiled once per source hash, cached) in *fresh* globals
whose builtins are restricted (no open/exec/eval/compile/getattr/...; ``__import__`` only returns
read-only copies of allow-listed modules; ``print`` is captured), calls ``update``/``recall`` with
the memory dict, the episode/task dict and a ``tools`` object whose methods are proxied to the host
as JSON lines over stdin/stdout.
"""

from __future__ import annotations

import builtins
import io
import json
import linecache
import os
import random
import resource
import sys
import time
import traceback
import types
from typing import Any

if __package__:  # python -m atlas.alma.sandbox.worker
    from atlas.alma.sandbox import protections, protocol
else:  # python -I <path>/worker.py: import the sibling modules directly
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import protections  # type: ignore[no-redef, import-not-found]
    import protocol  # type: ignore[no-redef, import-not-found]

# This file cannot import atlas: these and TOOL_NAMES are atlas.alma.design.ALLOWED_IMPORTS and
# atlas.alma.evaluate.tools.TOOL_NAMES again (tests/alma/test_sandbox.py keeps them equal).
ALLOWED_MODULES = (
    "math",
    "re",
    "json",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "statistics",
    "string",
    "random",
)
REMOVED_BUILTINS = (
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
    "copyright",
    "credits",
    "license",
    "__loader__",
    "__spec__",
    "__package__",
    "__import__",
)
HIDDEN_ATTRIBUTES = {"string": {"Formatter"}}  # Formatter.get_field is a getattr by string
DESIGN_FILE = "<design>"
MAX_ERROR_CHARS = 1_500  # of an error message (the host keeps 2000: room for the line and the clip note)
MAX_TRACEBACK_FRAMES = 30
TOOL_NAMES = (
    "store_obs",
    "find_similar",
    "graph_update",
    "graph_neighbors",
    "graph_path",
    "summarize",
    "analyze",
)

_real_import = builtins.__import__
_shared_rng = random._inst  # the generator behind random.random(); designs get their own
_dumps = json.dumps


class ToolError(Exception):
    """A tool call failed or was refused; the message says why."""


class ToolLimitExceeded(BaseException):
    """The design made more tool calls than allowed; further calls end the call."""


class OutputLimitExceeded(BaseException):
    """Raised once printing goes far beyond the output cap (a print flood)."""


class Channel:
    """JSON lines over the worker's own stdin/stdout (the design never sees these objects)."""

    def __init__(self) -> None:
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        sys.stdout = io.StringIO()  # stray writes never reach the protocol stream
        sys.stdin = io.StringIO()

    def send(self, message: dict[str, Any]) -> None:
        self._out.write(protocol.encode(message))
        self._out.flush()

    def send_raw(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()

    def recv(self) -> dict[str, Any] | None:
        line = self._in.readline()
        if not line:
            return None
        return protocol.decode(line, protocol.HOST_OPS)


class Capture:
    """The design's ``print``: keeps up to ``limit`` characters, counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def print(
        self, *args: Any, sep: str | None = " ", end: str | None = "\n", file: Any = None, flush: bool = False
    ) -> None:
        text = (" " if sep is None else str(sep)).join(str(a) for a in args) + (
            "\n" if end is None else str(end)
        )
        room = self.limit - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(len(text), room)
        self.dropped += max(0, len(text) - max(room, 0))
        if self.dropped > 50 * self.limit + 10_000_000:
            raise OutputLimitExceeded(f"print flood: over {self.dropped} characters printed")

    def lines(self) -> list[str]:
        return "".join(self.parts).splitlines()


def _module_proxy(
    module: types.ModuleType, seen: dict[str, types.ModuleType], rng: random.Random | None = None
) -> types.ModuleType:
    """A fresh module object holding only the public, non-module attributes of ``module``
    (plus allow-listed submodules): ``statistics.sys``, ``json.codecs``, ``random._os`` are absent,
    and monkey-patching it changes nothing outside this call. ``random.seed``/``random.random``/...
    are methods of ``rng``, a generator of this call only: seeding or reading the state of the
    worker's shared generator would carry data from one call to the next."""
    if module.__name__ in seen:
        return seen[module.__name__]
    proxy = types.ModuleType(module.__name__, module.__doc__)
    seen[module.__name__] = proxy
    hidden = HIDDEN_ATTRIBUTES.get(module.__name__, set())
    for name, value in vars(module).items():
        if name.startswith("_") or name in hidden:
            continue
        if isinstance(value, types.ModuleType):
            if value.__name__.split(".")[0] not in ALLOWED_MODULES:
                continue
            value = _module_proxy(value, seen, rng)
        elif rng is not None and getattr(value, "__self__", None) is _shared_rng:
            value = getattr(rng, name)
        setattr(proxy, name, value)
    return proxy


def _make_import(seen: dict[str, types.ModuleType]):
    rng = random.Random()

    def safe_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0):
        if level:
            raise ImportError("relative imports are not allowed in a design")
        top = name.split(".")[0]
        if top not in ALLOWED_MODULES:
            raise ImportError(f"import of {name!r} is not allowed (allowed: {', '.join(ALLOWED_MODULES)})")
        module = _real_import(name, None, None, fromlist, 0)
        target = module if fromlist else sys.modules[top]
        return _module_proxy(target, seen, rng)

    return safe_import


def _safe_builtins(capture: Capture) -> dict[str, Any]:
    safe = dict(vars(builtins))
    for name in REMOVED_BUILTINS:
        safe.pop(name, None)
    safe["__import__"] = _make_import({})
    safe["print"] = capture.print
    safe["ToolError"] = ToolError
    return safe


class Tools:
    """What a design receives as ``tools``: each method is a call to the host."""

    def __init__(self, call: Any) -> None:
        def store_obs(text, metadata=None, collection="default"):
            return call("store_obs", {"text": text, "metadata": metadata, "collection": collection})

        def find_similar(query, k=3, collection=None):
            return call("find_similar", {"query": query, "k": k, "collection": collection})

        def graph_update(edges):
            return call("graph_update", {"edges": edges})

        def graph_neighbors(node):
            return call("graph_neighbors", {"node": node})

        def graph_path(src, dst):
            return call("graph_path", {"src": src, "dst": dst})

        def summarize(text, instruction=""):
            return call("summarize", {"text": text, "instruction": instruction})

        def analyze(text, instruction="", format="text"):
            return call("analyze", {"text": text, "instruction": instruction, "format": format})

        self.store_obs = store_obs
        self.find_similar = find_similar
        self.graph_update = graph_update
        self.graph_neighbors = graph_neighbors
        self.graph_path = graph_path
        self.summarize = summarize
        self.analyze = analyze

    def __repr__(self) -> str:
        return "<tools: " + ", ".join(TOOL_NAMES) + ">"


def _tool_caller(channel: Channel, max_bytes: int):
    def call(name: str, args: dict[str, Any]) -> Any:
        if protocol.too_deep(args, protocol.MAX_VALUE_DEPTH):
            raise ToolError(
                f"{name}: arguments are nested more than {protocol.MAX_VALUE_DEPTH} levels deep; flatten them"
            )
        try:
            message = {"op": "tool", "name": name, "args": args}
            data = protocol.encode(message)
        except (TypeError, ValueError) as exc:
            raise ToolError(f"{name}: arguments must be JSON-serializable ({exc})") from None
        if len(data) > max_bytes:
            raise ToolError(
                f"{name}: arguments are {len(data)} bytes of JSON, over the limit of {max_bytes}; "
                "send less per call"
            )
        channel.send_raw(data)
        reply = channel.recv()
        if reply is None:
            raise SystemExit(0)  # host went away
        if reply.get("op") != "tool_result":
            raise ToolError(f"{name}: unexpected reply from host")
        if reply.get("ok"):
            return reply.get("result")
        if reply.get("fatal"):
            raise ToolLimitExceeded(str(reply.get("error")))
        raise ToolError(str(reply.get("error")))

    return call


def _design_traceback(exc: BaseException) -> tuple[str, int | None]:
    """The traceback restricted to design frames (line numbers of the design source) and the
    line of the innermost design frame."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == DESIGN_FILE]
    last_line = frames[-1].lineno if frames else None
    if isinstance(exc, SyntaxError) and exc.filename == DESIGN_FILE:
        last_line = exc.lineno
    lines = ["Traceback (most recent call last):\n"]
    if len(frames) > MAX_TRACEBACK_FRAMES:
        lines.append(f"  ... {len(frames) - MAX_TRACEBACK_FRAMES} earlier frames omitted ...\n")
    lines += traceback.format_list(frames[-MAX_TRACEBACK_FRAMES:])
    lines.append(_clip("".join(traceback.format_exception_only(type(exc), exc)), MAX_ERROR_CHARS))
    return "".join(lines).rstrip(), last_line


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}...[{len(text) - limit} more characters]"


class Worker:
    def __init__(self, channel: Channel, limits: dict[str, Any]) -> None:
        self.channel = channel
        self.limits = limits
        self.code: dict[str, types.CodeType] = {}

    def serve(self) -> None:
        while True:
            message = self.channel.recv()
            if message is None or message["op"] == "exit":
                return
            if message["op"] == "call":
                self.handle_call(message)

    def _compile(self, message: dict[str, Any]) -> types.CodeType | None:
        digest = str(message.get("hash"))
        if digest in self.code:
            return self.code[digest]
        source = message.get("source")
        if not isinstance(source, str):
            self.channel.send({"op": "need_source", "id": message.get("id"), "hash": digest})
            return None
        code = compile(source, DESIGN_FILE, "exec", dont_inherit=True)
        linecache.cache[DESIGN_FILE] = (len(source), None, source.splitlines(True), DESIGN_FILE)
        self.code[digest] = code
        return code

    def handle_call(self, message: dict[str, Any]) -> None:
        started = time.perf_counter()
        limits = {**self.limits, **(message.get("limits") or {})}
        capture = Capture(int(limits["max_print_chars"]))
        result: dict[str, Any] = {
            "op": "done",
            "id": message.get("id"),
            "ok": True,
            "value": None,
            "warnings": [],
            "recycle": False,
        }
        memory_bytes: bytes | None = None
        function = message.get("function")
        try:
            code = self._compile(message)
            if code is None:
                return  # need_source sent; the host will resend the call with the source
            globals_: dict[str, Any] = {"__name__": "design", "__builtins__": _safe_builtins(capture)}
            exec(code, globals_)
            fn = globals_.get(str(function))
            if not callable(fn):
                raise NameError(f"the design defines no function {function!r}")
            memory = message.get("memory")
            if not isinstance(memory, dict):
                memory = {}
            tools = Tools(_tool_caller(self.channel, int(limits.get("max_tool_args_bytes", 1_000_000))))
            value = fn(memory, message.get("arg"), tools)
            if function == "recall":
                if not isinstance(value, str):
                    result.update(
                        ok=False,
                        error_kind="invalid_return",
                        error=f"recall must return a str, got {type(value).__name__}",
                    )
                    value = None
                else:
                    value = str.__str__(value)  # a plain str: a subclass may override len/slicing
                    cap = int(limits["max_return_chars"])
                    if len(value) > cap:
                        result["warnings"].append(
                            f"recall returned {len(value)} characters; truncated to {cap}"
                        )
                        value = value[:cap]
            elif value is not None:
                result["warnings"].append(f"update returned a {type(value).__name__}; the value is ignored")
                value = None
            result["value"] = value
            if result["ok"] and message.get("return_memory"):
                memory_bytes = self._encode_memory(memory, result, int(limits["max_memory_bytes"]))
        except BaseException as exc:  # the design's failure is data: report it, keep serving
            try:
                tb, line = _design_traceback(exc)
                text = _clip(f"{type(exc).__name__}: {exc}", MAX_ERROR_CHARS)
            except BaseException:  # an exception whose str() itself fails
                tb, line, text = None, None, f"{type(exc).__name__} (its message could not be rendered)"
            where = f" (design line {line})" if line else ""
            kind = "design"
            if isinstance(exc, ToolLimitExceeded | OutputLimitExceeded):
                kind = "limit"
            result.update(
                ok=False, value=None, error=f"{text}{where}", error_kind=kind, traceback=tb, error_line=line
            )
            if isinstance(exc, MemoryError | RecursionError):
                result["recycle"] = True
            memory_bytes = None
        result["prints"] = capture.lines()
        result["prints_dropped"] = capture.dropped
        usage = resource.getrusage(resource.RUSAGE_SELF)
        result["cpu_s"] = usage.ru_utime + usage.ru_stime
        result["duration_s"] = time.perf_counter() - started
        data = protocol.encode(result)
        if memory_bytes is not None:
            data = data[:-2] + b',"memory":' + memory_bytes + b"}\n"
        self.channel.send_raw(data)

    def _encode_memory(self, memory: dict[str, Any], result: dict[str, Any], cap: int) -> bytes | None:
        problem = protocol.json_problem(memory)
        if problem is None:
            try:
                text = _dumps(memory, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
            except (TypeError, ValueError, RecursionError) as exc:
                problem = str(exc)
        if problem is not None:
            result.update(
                ok=False,
                error_kind="limit",
                error=f"memory is not JSON-serializable ({problem}); changes from this call were discarded",
            )
            return None
        data = text.encode("ascii")
        if len(data) > cap:
            result.update(
                ok=False,
                error_kind="limit",
                error=f"memory is {len(data)} bytes of JSON, over the cap of {cap}; "
                "changes from this call were discarded",
            )
            return None
        return data


def _preload() -> None:
    """Import now what designs (and this file) may need later: after lock-down, imports can only
    read the stdlib, and the allow-listed modules' own imports are resolved here."""
    for name in ALLOWED_MODULES:
        _real_import(name)
    import collections.abc  # noqa: F401
    import encodings.idna  # noqa: F401


def main() -> int:
    sys.dont_write_bytecode = True
    channel = Channel()
    init = channel.recv()
    if init is None or init.get("op") != "init":
        return 2
    limits = dict(init.get("limits") or {})
    _preload()
    disable = tuple(str(x) for x in init.get("disable") or ())
    report = protections.lockdown(limits, list(init.get("read_paths") or []), disable)
    report["builtins"] = {
        "active": True,
        "removed": [n for n in REMOVED_BUILTINS if not n.startswith("__")],
        "imports": list(ALLOWED_MODULES),
    }
    channel.send({"op": "ready", "pid": os.getpid(), "protections": report})
    Worker(channel, limits).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
