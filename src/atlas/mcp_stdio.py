"""The MCP servers' transports (stdio, streamable HTTP), guarded: every request gets a JSON-RPC reply.

``run_guarded`` is the one way both servers (``atlas.mcp_server``, ``atlas.mcp_design``) are run.

The MCP SDK hands a line it cannot validate to the session as an exception and sends nothing
back, so a client that sent a malformed request waits until its own timeout. Here each line is
checked first (size, JSON, nesting depth, Unicode, JSON-RPC shape, a known method with valid
params); a line that fails gets a JSON-RPC error reply (``id`` null when the request's id is
unusable), and only valid messages reach the SDK. Lines are read with a size cap, so a huge
request costs at most ``MAX_REQUEST_BYTES`` of memory.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

from atlas.core import jsonsafe
from atlas.errors import InvalidInputError

MAX_REQUEST_BYTES = 8_000_000  # one JSON-RPC line; larger requests are refused unread
MAX_ID_CHARS = 200
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
_TOO_LONG = object()


def error_reply(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _valid_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) < 2**53
    return isinstance(value, str) and len(value) <= MAX_ID_CHARS


def _bad_unicode(value: Any) -> bool:
    """True when a string or key anywhere in ``value`` holds a lone surrogate (not valid Unicode)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def check_message(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(message, None)`` for a line the SDK may handle; ``(None, reply)`` for one that must be
    answered with an error here; ``(None, None)`` for a bad notification (never answered)."""
    if len(line) > MAX_REQUEST_BYTES:
        return None, error_reply(
            None, INVALID_REQUEST, f"request is over the limit of {MAX_REQUEST_BYTES} bytes"
        )
    try:
        msg = jsonsafe.loads(
            line, what="request", max_depth=sys.maxsize
        )  # depth is checked below, with the id
    except InvalidInputError as exc:
        return None, error_reply(None, PARSE_ERROR, f"parse error: {exc}")
    if isinstance(msg, list):
        return None, error_reply(
            None, INVALID_REQUEST, "batch requests are not supported: send one request per line"
        )
    if not isinstance(msg, dict):
        return None, error_reply(None, INVALID_REQUEST, "a request must be a JSON object")
    has_id = "id" in msg
    rid = msg.get("id") if _valid_id(msg.get("id")) else None
    is_request = has_id and "method" in msg

    def refuse(code: int, message: str) -> tuple[None, dict[str, Any] | None]:
        # a notification (no id) is never answered, unless it is not even a valid message
        return None, (error_reply(rid, code, message) if has_id or "method" not in msg else None)

    if has_id and not _valid_id(msg["id"]):
        return None, error_reply(
            None, INVALID_REQUEST, f"id must be a string (at most {MAX_ID_CHARS} characters) or an integer"
        )
    if jsonsafe.depth(msg) > jsonsafe.MAX_DEPTH:
        return refuse(INVALID_REQUEST, f"request nests deeper than {jsonsafe.MAX_DEPTH} levels")
    if msg.get("jsonrpc") != "2.0":
        return refuse(INVALID_REQUEST, 'jsonrpc must be "2.0"')
    if _bad_unicode(msg):
        return refuse(INVALID_PARAMS, "strings must be valid Unicode (a lone surrogate was found)")
    if "method" not in msg:
        return (
            (msg, None)
            if has_id and ("result" in msg or "error" in msg)
            else refuse(INVALID_REQUEST, "a request needs a method")
        )
    method, params = msg["method"], msg.get("params")
    if not isinstance(method, str):
        return refuse(INVALID_REQUEST, "method must be a string")
    if params is not None and not isinstance(params, dict):
        return refuse(INVALID_PARAMS, f"params must be an object, not {type(params).__name__}")
    if method == "initialize" and not isinstance((params or {}).get("protocolVersion"), str):
        return refuse(INVALID_PARAMS, "initialize needs params.protocolVersion (a string)")
    problem = _sdk_problem(msg, is_request)
    if problem is not None:
        return refuse(*problem)
    return msg, None


def _methods(union: Any) -> set[str]:
    """The method names a union of SDK request (or notification) models accepts."""
    from typing import get_args

    names: set[str] = set()
    for model in get_args(union.model_fields["root"].annotation):
        names.update(a for a in get_args(model.model_fields["method"].annotation) if isinstance(a, str))
    return names


def _sdk_problem(msg: dict[str, Any], is_request: bool) -> tuple[int, str] | None:
    """Validate against the SDK's own models: what it would drop without a reply."""
    from mcp import types
    from pydantic import ValidationError

    union = types.ClientRequest if is_request else types.ClientNotification
    if msg["method"] not in _methods(union):
        return METHOD_NOT_FOUND, f"unknown method {str(msg['method'])[:100]!r}"
    try:
        types.JSONRPCMessage.model_validate(msg)
        union.model_validate({k: msg[k] for k in ("method", "params") if k in msg})
    except (ValidationError, RecursionError, ValueError) as exc:
        errs = exc.errors() if isinstance(exc, ValidationError) else []
        first = errs[0] if errs else {"loc": (), "msg": str(exc)}
        where = ".".join(str(x) for x in first.get("loc", ()))
        return INVALID_PARAMS, f"invalid params: {where}: {first.get('msg')}"[:500]
    return None


def _read_line(stream: BinaryIO) -> bytes | object | None:
    """One line of at most MAX_REQUEST_BYTES (``_TOO_LONG`` when longer: the rest is skipped), None at EOF."""
    line = stream.readline(MAX_REQUEST_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_REQUEST_BYTES and not line.endswith(b"\n"):
        while True:
            rest = stream.readline(1 << 20)
            if not rest or rest.endswith(b"\n"):
                return _TOO_LONG
    return line


@asynccontextmanager
async def guarded_stdio(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> AsyncIterator[Any]:
    """Like the SDK's ``stdio_server``: yields ``(read_stream, write_stream)`` for ``Server.run``."""
    import anyio
    from mcp import types
    from mcp.shared.message import SessionMessage

    inp = stdin or sys.stdin.buffer
    out = stdout or sys.stdout.buffer
    lock = anyio.Lock()
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)

    def write(text: str) -> None:
        out.write(text.encode("utf-8") + b"\n")
        out.flush()

    async def emit(text: str) -> None:
        async with lock:
            await anyio.to_thread.run_sync(write, text)

    async def reader() -> None:
        async with read_writer:
            while True:
                line = await anyio.to_thread.run_sync(_read_line, inp)
                if line is None:
                    return
                if line is _TOO_LONG:
                    await emit(
                        json.dumps(
                            error_reply(
                                None,
                                INVALID_REQUEST,
                                f"request is over the limit of {MAX_REQUEST_BYTES} bytes",
                            )
                        )
                    )
                    continue
                assert isinstance(line, bytes)
                if not line.strip():
                    continue
                msg, reply = check_message(line)
                if reply is not None:
                    await emit(json.dumps(reply))
                if msg is not None:
                    await read_writer.send(SessionMessage(types.JSONRPCMessage.model_validate(msg)))

    async def writer() -> None:
        async with write_reader:
            async for session_message in write_reader:
                await emit(session_message.message.model_dump_json(by_alias=True, exclude_none=True))

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        yield read_stream, write_stream


def guarded_http_app(app: Any) -> Any:
    """Wrap the SDK's streamable-HTTP ASGI app: a POST body is read with the same size cap and
    checked like a stdio line; a bad one is answered here with a JSON-RPC error (HTTP 400)."""

    async def guard(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST" or _is_hook(scope):
            await app(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > MAX_REQUEST_BYTES:
                await _send_json(
                    send,
                    413,
                    error_reply(
                        None, INVALID_REQUEST, f"request is over the limit of {MAX_REQUEST_BYTES} bytes"
                    ),
                )
                return
            chunks.append(body)
            more = message.get("more_body", False)
        data = b"".join(chunks)
        _, reply = check_message(data)
        if reply is not None:
            await _send_json(send, 400, reply)
            return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return guard


def _is_hook(scope: dict[str, Any]) -> bool:
    """The coding-agent hook routes (``atlas.mcp_hooks``) speak plain JSON, not JSON-RPC; they cap
    and check their bodies themselves."""
    return str(scope.get("path", "")).startswith("/hooks/")


async def _send_json(send: Any, status: int, obj: dict[str, Any]) -> None:
    body = json.dumps(obj).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class ClientGoneFilter(logging.Filter):
    """Drops the MCP SDK's traceback for a client that closed its event stream (anyio's
    ``ClosedResourceError`` / ``BrokenResourceError``): it is not a server error, and one is logged per
    finished session, so a server whose stderr is a pipe nobody reads filled it and stopped answering."""

    GONE = ("ClosedResourceError", "BrokenResourceError")

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (exc is not None and type(exc).__name__ in self.GONE)


def quiet_client_gone() -> None:
    """Install ``ClientGoneFilter`` on the SDK's streamable-HTTP logger (once)."""
    sdk = logging.getLogger("mcp.server.streamable_http")
    if not any(isinstance(f, ClientGoneFilter) for f in sdk.filters):
        sdk.addFilter(ClientGoneFilter())


async def run_http(server: Any) -> None:
    """Serve a FastMCP ``server`` over streamable HTTP with the same request checks as stdio."""
    import uvicorn

    quiet_client_gone()

    config = uvicorn.Config(
        guarded_http_app(server.streamable_http_app()),
        host=server.settings.host,
        port=server.settings.port,
        log_level=server.settings.log_level.lower(),
    )
    await uvicorn.Server(config).serve()


TRANSPORTS = ("stdio", "streamable-http")


def run_guarded(server: Any, transport: str) -> None:
    """Serve a FastMCP ``server`` until the transport closes, through the guard above: both MCP
    servers (the memory library's and an exported design's) run here, never through ``server.run``
    (the SDK's transports drop a malformed request without a reply and read any size)."""
    if transport not in TRANSPORTS:
        raise InvalidInputError(f"transport: must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
    import anyio

    anyio.run(run_stdio if transport == "stdio" else run_http, server)


async def run_stdio(server: Any) -> None:
    """Serve a FastMCP ``server`` over the guarded stdio transport until stdin closes."""
    low = server._mcp_server  # what FastMCP.run_stdio_async runs, over our transport
    async with guarded_stdio() as (read_stream, write_stream):
        await low.run(read_stream, write_stream, low.create_initialization_options())


__all__ = [
    "MAX_REQUEST_BYTES",
    "TRANSPORTS",
    "check_message",
    "error_reply",
    "guarded_http_app",
    "guarded_stdio",
    "run_guarded",
    "run_http",
    "run_stdio",
]
