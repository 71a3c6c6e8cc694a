"""A raw MCP client for the request-guard tests: lines written by hand, as a broken or hostile
client would, to a real server process over stdio; and the malformed lines every server must answer."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from atlas.mcp_stdio import MAX_REQUEST_BYTES

SRC = Path(__file__).resolve().parents[1] / "src"
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
DEEP = '{"a":' * 5000 + "1" + "}" * 5000  # past the parser's recursion: the id cannot be read
MID = '{"a":' * 200 + "1" + "}" * 200
MALFORMED: list[tuple[str, bytes, object]] = [
    ("not json", b"{not json", None),
    ("deep array", b"[" * 100_000, None),
    ("deep params", b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":' + DEEP.encode() + b"}", None),
    ("nested params", b'{"jsonrpc":"2.0","id":11,"method":"tools/list","params":' + MID.encode() + b"}", 11),
    (
        "lone surrogate",
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_guidelines",'
        b'"arguments":{"namespace":"\\ud800"}}}',
        2,
    ),
    ("batch", b'[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]', None),
    (
        "protocol version not a string",
        b'{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":'
        b'12,"capabilities":{},"clientInfo":{"name":"x","version":"1"}}}',
        4,
    ),
    ("params as a string", b'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":"abc"}', 5),
    ("5000-digit id", b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"tools/list"}', None),
    ("a bare string", b'"hello"', None),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":6,"method":"tools/list"}', 6),
    ("no method", b'{"jsonrpc":"2.0","id":7}', 7),
    ("unknown method", b'{"jsonrpc":"2.0","id":8,"method":"no/such"}', 8),
    ("method not a string", b'{"jsonrpc":"2.0","id":9,"method":42}', 9),
    ("id an object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', None),
    ("not UTF-8", b'\xff\xfe{"jsonrpc":"2.0"}', None),
    (
        "arguments as a string",
        b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"list_guidelines",'
        b'"arguments":"x"}}',
        10,
    ),
]


def exchange_malformed(server: RawServer) -> None:
    """Initialize, send every malformed line (and one over the size cap): each gets an error reply
    with the id it can be matched by."""
    server.send(json.dumps(INIT).encode())
    assert "result" in server.reply()
    server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    for name, line, rid in MALFORMED:
        server.send(line)
        got = server.reply()
        assert "error" in got and got["id"] == rid, (name, got)
    server.send(b"x" * (MAX_REQUEST_BYTES + 10))
    assert "over the limit" in server.reply()["error"]["message"]


class RawServer:
    def __init__(self, *args: str) -> None:
        """``python -m atlas.mcp_server ARGS`` (``--design DIR`` serves an export)."""
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
            "HF_HUB_OFFLINE": "1",
            "ANONYMIZED_TELEMETRY": "False",
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "atlas.mcp_server", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.buf = b""

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self, wait_s: float = 120.0) -> dict:
        """The next line the server writes (a hang guard, not a timing assertion)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + wait_s
        while b"\n" not in self.buf:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, "the server sent no reply"
            chunk = os.read(fd, 1 << 16)
            assert chunk, "the server exited"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)
