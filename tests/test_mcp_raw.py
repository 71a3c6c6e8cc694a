"""The MCP server under raw malformed messages (issue 19, item 8): every request gets a JSON-RPC
reply — an error naming the problem — and the server keeps serving. A real server process over
stdio; lines are written by hand, as a broken or hostile client would."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from atlas.mcp_stdio import MAX_REQUEST_BYTES, check_message

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


@pytest.mark.parametrize(("name", "line", "rid"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_check_message_answers_every_malformed_request(name, line, rid):
    msg, reply = check_message(line)
    assert msg is None and reply is not None and reply["id"] == rid and reply["error"]["message"]


def test_valid_messages_pass():
    assert check_message(json.dumps(INIT).encode())[0] == INIT
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert check_message(json.dumps(note).encode()) == (note, None)


class Server:
    def __init__(self, tmp_path: Path) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
            "HF_HUB_OFFLINE": "1",
            "ANONYMIZED_TELEMETRY": "False",
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "atlas.mcp_server", "--path", str(tmp_path / "mem")],
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


def test_every_raw_malformed_request_gets_a_reply_and_the_server_keeps_serving(tmp_path: Path):
    server = Server(tmp_path)
    try:
        server.send(json.dumps(INIT).encode())
        assert "result" in server.reply()
        server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for name, line, rid in MALFORMED:
            server.send(line)
            got = server.reply()
            assert "error" in got and got["id"] == rid, (name, got)
        server.send(b"x" * (MAX_REQUEST_BYTES + 10))
        assert "over the limit" in server.reply()["error"]["message"]
        server.send(
            b'{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"list_guidelines",'
            b'"arguments":{"namespace":"alice\\n"}}}'
        )
        got = server.reply()
        assert got["id"] == 99 and got["result"]["isError"] is True  # "alice\n" is not a namespace
        server.send(b'{"jsonrpc":"2.0","id":100,"method":"tools/list"}')
        got = server.reply()
        assert got["id"] == 100 and {t["name"] for t in got["result"]["tools"]} >= {"get_guidelines"}
    finally:
        server.close()


def test_streamable_http_answers_malformed_posts_and_keeps_serving(tmp_path: Path):
    import socket
    import urllib.error
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "atlas.mcp_server", "--transport", "streamable-http", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def post(body: bytes) -> tuple[int, bytes]:
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/mcp",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        try:
            with urllib.request.urlopen(req, timeout=60) as res:
                return res.status, res.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    try:
        deadline = time.monotonic() + 120
        while True:  # wait for the server to listen (a hang guard, not a timing assertion)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        for name, line, rid in MALFORMED:
            status, body = post(line)
            got = json.loads(body)
            assert status == 400 and "error" in got and got["id"] == rid, (name, status, got)
        status, body = post(b"x" * (MAX_REQUEST_BYTES + 10))
        assert status == 413 and "over the limit" in json.loads(body)["error"]["message"]
        status, body = post(json.dumps(INIT).encode())
        assert status == 200 and b"result" in body
    finally:
        proc.terminate()
        proc.wait(timeout=10)
