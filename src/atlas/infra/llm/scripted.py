"""``ScriptedLLM``: a deterministic test double that replays replies and records every call.

Like simonw/llm's MockModel: ``enqueue`` replies, read ``history``. It is a real ``LLMClient``
(same structured output, caching and accounting code paths) over a ``ScriptedBackend``, so
tests exercise the client, not a mock of it.

A reply is a str, a ``Completion``, a dict ``{"tool_calls": [{"name": ..., "arguments": {...}}],
"text": ""}``, an exception instance (raised, to script failures), or a callable
``(messages, **kwargs) -> reply``. ``replies`` may also be a single callable used for every call.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from atlas.errors import InvalidInputError, ScriptExhaustedError
from atlas.infra.llm.backend import LLMRequest
from atlas.infra.llm.client import LLMClient, RetryPolicy
from atlas.protocols.llm import Completion, Message, ToolCall, Usage

Reply = str | Completion | dict[str, Any] | BaseException | Callable[..., Any]


@dataclass
class ScriptedCall:
    """One recorded call: the messages sent and the keyword arguments (tools, temperature, ...)."""

    messages: list[Message]
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        """The content of the last message (handy in asserts)."""
        content = self.messages[-1].get("content") if self.messages else ""
        return content if isinstance(content, str) else json.dumps(content)


def _rough_tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


def _to_completion(reply: Any) -> Completion:
    if isinstance(reply, Completion):
        return reply
    if isinstance(reply, str):
        return Completion(text=reply)
    if isinstance(reply, dict):
        calls = []
        for i, call in enumerate(reply.get("tool_calls") or []):
            args = call.get("arguments") or {}
            if isinstance(args, str):
                args = json.loads(args)
            calls.append(ToolCall(name=call["name"], arguments=dict(args), id=call.get("id") or f"call_{i}"))
        return Completion(text=reply.get("text") or "", tool_calls=calls)
    raise InvalidInputError(
        f"a scripted reply must be str, Completion, dict or callable, not {type(reply).__name__}"
    )


class ScriptedBackend:
    """Replays a queue of replies (or one callable); records each call."""

    model = "scripted"
    supports_tools = True

    def __init__(
        self, replies: Iterable[Reply] | Callable[..., Any] | None = None, *, default: Reply | None = None
    ):
        self._responder: Callable[..., Any] | None = None
        self._queue: deque[Reply] = deque()
        if callable(replies) and not isinstance(replies, list | tuple):
            self._responder = replies
        elif replies is not None:
            self._queue.extend(replies)
        self.default = default
        self.history: list[ScriptedCall] = []
        self._lock = threading.Lock()

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        return len(self._queue)

    async def complete(self, request: LLMRequest) -> Completion:
        kwargs: dict[str, Any] = {
            "tools": request.tools,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "json_schema": request.json_schema,
            "stop": request.stop,
            "choices": request.choices,
            **request.extra,
        }
        with self._lock:
            self.history.append(ScriptedCall(messages=[dict(m) for m in request.messages], kwargs=kwargs))
            if self._queue:
                reply: Any = self._queue.popleft()
            elif self._responder is not None:
                reply = self._responder
            elif self.default is not None:
                reply = self.default
            else:
                raise ScriptExhaustedError(
                    f"ScriptedLLM has no reply left for call #{len(self.history)}; "
                    f"last message: {str(request.messages[-1].get('content'))[:120]!r}"
                )
        if callable(reply) and not isinstance(reply, BaseException):
            reply = reply(request.messages, **kwargs)
        if isinstance(reply, BaseException):
            raise reply
        completion = _to_completion(reply)
        prompt = sum(_rough_tokens(str(m.get("content") or "")) for m in request.messages)
        out = _rough_tokens(completion.text) + sum(
            _rough_tokens(json.dumps(c.arguments)) for c in completion.tool_calls
        )
        given = completion.usage
        if given.prompt_tokens or given.completion_tokens:  # a scripted Completion states its own usage
            prompt, out = given.prompt_tokens or prompt, given.completion_tokens or out
        return Completion(
            text=completion.text,
            tool_calls=list(completion.tool_calls),
            usage=Usage(prompt_tokens=prompt, completion_tokens=out, cost_usd=0.0, calls=1),
            model="scripted",
        )


class ScriptedLLM(LLMClient):
    """``ScriptedLLM(replies=None, *, default=None)``; ``enqueue(*replies)``; ``history``.

    Exhausted script without a default → ScriptExhaustedError. Extra keyword arguments go to
    ``LLMClient`` (e.g. ``cache=dir``, ``retry=RetryPolicy(...)``).
    """

    reusable_results = False  # its behaviour is in code, not in its model name

    def __init__(
        self,
        replies: Iterable[Reply] | Callable[..., Any] | None = None,
        *,
        default: Reply | None = None,
        **client_options: Any,
    ) -> None:
        self.script = ScriptedBackend(replies, default=default)
        client_options.setdefault("timeout", None)
        client_options.setdefault(
            "retry", RetryPolicy(base_delay=0.0, jitter=0.0)
        )  # scripted failures: no waiting
        super().__init__(self.script, **client_options)

    def enqueue(self, *replies: Reply) -> ScriptedLLM:
        self.script.enqueue(*replies)
        return self

    @property
    def history(self) -> list[ScriptedCall]:
        return self.script.history

    @property
    def remaining(self) -> int:
        """Replies still queued."""
        return self.script.remaining


__all__ = ["Reply", "ScriptedBackend", "ScriptedCall", "ScriptedLLM"]
