"""The backend seam: one async method that turns an ``LLMRequest`` into a ``Completion``.

Backends do the provider-specific work and convert provider exceptions at the boundary:
``LLMConnectionError`` for anything worth retrying (rate limit, timeout, connection refused,
5xx), ``LLMConfigError`` for what only the user can fix (unknown model, bad key), ``LLMError``
for a request the provider rejects. Retries, caching, accounting and structured output live in
``LLMClient`` so every backend gets them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from atlas.protocols.llm import Completion, Message, ToolCall, ToolSpec, Usage


@dataclass(frozen=True)
class LLMRequest:
    """Everything a backend needs for one call (the client fills in defaults and the timeout)."""

    messages: list[Message]
    tools: list[ToolSpec] | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    json_schema: dict[str, Any] | None = None
    stop: list[str] | None = None
    # The reply must be exactly one of these strings (a choice among enumerated actions).
    # Backends with ``supports_choices`` decode under that constraint; for the others the
    # client maps the free reply onto a choice.
    choices: list[str] | None = None
    timeout: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def params(self) -> dict[str, Any]:
        """The parameters that change the reply (the cache key uses them; not the timeout)."""
        return {
            "tools": [t.to_openai() for t in self.tools] if self.tools else None,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_schema": self.json_schema,
            "stop": self.stop,
            **({"choices": self.choices} if self.choices else {}),
            **({"extra": self.extra} if self.extra else {}),
        }


@runtime_checkable
class Backend(Protocol):
    """A model provider. ``model`` is the resolved model string (used in cache keys and errors)."""

    model: str
    supports_tools: bool

    async def complete(self, request: LLMRequest) -> Completion: ...


def completion_to_dict(completion: Completion) -> dict[str, Any]:
    """JSON-safe form of a Completion (for the response cache and run records)."""
    return {
        "text": completion.text,
        "tool_calls": [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in completion.tool_calls],
        "usage": {
            "prompt_tokens": completion.usage.prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
            "cost_usd": completion.usage.cost_usd,
            "calls": completion.usage.calls,
        },
        "model": completion.model,
    }


def completion_from_dict(data: dict[str, Any], *, cached: bool = False) -> Completion:
    """Inverse of ``completion_to_dict``."""
    usage = data.get("usage") or {}
    return Completion(
        text=data.get("text") or "",
        tool_calls=[
            ToolCall(name=c["name"], arguments=dict(c.get("arguments") or {}), id=c.get("id", ""))
            for c in data.get("tool_calls") or []
        ],
        usage=Usage(
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            cost_usd=float(usage.get("cost_usd", 0.0)),
            calls=int(usage.get("calls", 1)),
        ),
        model=data.get("model", ""),
        cached=cached,
    )


__all__ = ["Backend", "LLMRequest", "completion_from_dict", "completion_to_dict"]
