"""The LiteLLM path, exercised offline against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from pydantic import BaseModel

from atlas.errors import LLMConfigError, LLMConnectionError
from atlas.infra.llm import RetryPolicy, make_llm
from atlas.protocols.llm import ToolSpec

MSG = [{"role": "user", "content": "hello"}]
FAST = RetryPolicy(max_retries=2, base_delay=0.0, jitter=0.0)


class _Handler(BaseHTTPRequestHandler):
    """Behaviour chosen by the model name: ok, json, tool, slow, fail (always 500), flaky (500 twice),
    auth (401)."""

    counts: ClassVar[Counter] = Counter()
    bodies: ClassVar[list] = []

    def log_message(self, *args):  # keep test output clean
        pass

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        try:
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        model = body["model"]
        self.counts[model] += 1
        self.bodies.append(body)
        if model == "slow":
            time.sleep(1.5)
        if model == "fail" or (model == "flaky" and self.counts[model] <= 2):
            return self._send(500, {"error": {"message": "boom", "type": "server_error"}})
        if model == "auth":
            return self._send(401, {"error": {"message": "bad key", "type": "invalid_request_error"}})
        message: dict = {"role": "assistant", "content": "hi there"}
        if model == "json":
            message["content"] = 'Here you go: {"goal": "key", "steps": ["look"]}'
        if model == "tool":
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "move_to", "arguments": '{"room": "room_B"}'},
                    }
                ],
            }
        self._send(
            200,
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
            },
        )


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def _llm(server, name, **kw):
    kw.setdefault("retry", FAST)
    return make_llm(f"openai/{name}", api_base=server, env={}, **kw)


def test_plain_completion_and_usage(server):
    llm = _llm(server, "ok")
    completion = llm.complete(MSG, temperature=0.0, max_tokens=5)
    assert completion.text == "hi there"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (12, 3)
    assert completion.usage.cost_usd == 0.0  # unknown self-hosted model: no price
    assert llm.usage.calls == 1
    sent = _Handler.bodies[-1]
    assert sent["messages"] == MSG and sent["temperature"] == 0.0 and sent["max_tokens"] == 5


def test_native_tool_calls(server):
    llm = _llm(server, "tool")
    tools = [ToolSpec("move_to", "Move", {"type": "object", "properties": {"room": {"type": "string"}}})]
    completion = llm.complete(MSG, tools=tools)
    assert completion.tool_calls[0].name == "move_to"
    assert completion.tool_calls[0].arguments == {"room": "room_B"}
    assert _Handler.bodies[-1]["tools"][0]["function"]["name"] == "move_to"


def test_structured_over_http(server):
    class Plan(BaseModel):
        goal: str
        steps: list[str]

    assert _llm(server, "json").structured(MSG, Plan) == Plan(goal="key", steps=["look"])


def test_server_error_is_retried_then_succeeds(server):
    assert _llm(server, "flaky").complete(MSG).text == "hi there"
    assert _Handler.counts["flaky"] == 3


def test_persistent_500_becomes_connection_error_after_retries(server):
    with pytest.raises(LLMConnectionError, match=r"gave up after 3 attempts"):
        _llm(server, "fail").complete(MSG)
    assert _Handler.counts["fail"] == 3  # no hidden retries inside litellm / the OpenAI SDK


def test_timeout_becomes_connection_error(server):
    with pytest.raises(LLMConnectionError, match=r"timed out|no reply within"):
        _llm(
            server, "slow", timeout=0.3, retry=RetryPolicy(max_retries=1, base_delay=0.0, jitter=0.0)
        ).complete(MSG)
    assert _Handler.counts["slow"] == 2  # the timeout was retried once


def test_bad_key_is_a_config_error_not_retried(server):
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        _llm(server, "auth").complete(MSG)
    assert _Handler.counts["auth"] == 1


def test_unreachable_endpoint_says_how_to_fix():
    llm = make_llm("openai/x", api_base="http://127.0.0.1:9/v1", env={}, retry=FAST, timeout=5)
    with pytest.raises(LLMConnectionError, match=r"cannot reach http://127\.0\.0\.1:9/v1"):
        llm.complete(MSG)
