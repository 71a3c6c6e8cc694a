"""An OpenAI-compatible chat-completions endpoint on 127.0.0.1 that answers with a ScriptedLLM, so the
real OpenAI SDK and litellm can be driven end to end without a provider."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _flatten(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The conversation as plain role/content turns for the scripted double."""
    out = []
    for m in messages:
        content = m.get("content") or ""
        if m.get("role") == "tool":
            out.append({"role": "user", "content": f"tool result: {content}"})
        elif m.get("tool_calls"):
            out.append({"role": "assistant", "content": f"called {m['tool_calls'][0]['function']['name']}"})
        else:
            out.append({"role": m["role"], "content": content})
    return out


class ScriptedOpenAIServer:
    """``with ScriptedOpenAIServer(llm) as server:`` → ``server.base_url`` (…/v1), ``server.requests``."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                done = outer.llm.complete(_flatten(body["messages"]), tools=None)
                calls = [
                    {
                        "id": f"call_{len(outer.requests)}_{i}",
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for i, c in enumerate(done.tool_calls)
                ]
                message: dict[str, Any] = {"role": "assistant", "content": done.text or None}
                if calls:
                    message["tool_calls"] = calls
                reply = json.dumps(
                    {
                        "id": f"chatcmpl-{len(outer.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "scripted"),
                        "choices": [
                            {
                                "index": 0,
                                "message": message,
                                "finish_reason": "tool_calls" if calls else "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def system_prompts(self) -> list[str]:
        return [
            next((m["content"] for m in r["messages"] if m["role"] == "system"), "") for r in self.requests
        ]

    def task_prompts(self) -> list[str]:
        """The first user message of each request (where atlas.auto puts the advice)."""
        return [next((m["content"] for m in r["messages"] if m["role"] == "user"), "") for r in self.requests]
