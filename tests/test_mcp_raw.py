"""The MCP server under raw malformed messages: every request gets a JSON-RPC
reply — an error naming the problem — and the server keeps serving. A real server process over
stdio; lines are written by hand, as a broken or hostile client would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from atlas.mcp_stdio import MAX_REQUEST_BYTES, check_message
from mcp_raw_client import INIT, MALFORMED, SRC, RawServer, exchange_malformed


@pytest.mark.parametrize(("name", "line", "rid"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_check_message_answers_every_malformed_request(name, line, rid):
    msg, reply = check_message(line)
    assert msg is None and reply is not None and reply["id"] == rid and reply["error"]["message"]


def test_valid_messages_pass():
    assert check_message(json.dumps(INIT).encode())[0] == INIT
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert check_message(json.dumps(note).encode()) == (note, None)


def test_every_raw_malformed_request_gets_a_reply_and_the_server_keeps_serving(tmp_path: Path):
    server = RawServer("--path", str(tmp_path / "mem"))
    try:
        exchange_malformed(server)
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
