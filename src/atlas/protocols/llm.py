"""The LLM seam: one async method, ``acomplete``; everything else is built on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

# A chat message in OpenAI form: {"role": "system"|"user"|"assistant"|"tool", "content": str, ...}.
Message = dict[str, Any]


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: name, description and a JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    id: str = ""


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.calls += other.calls

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "calls": self.calls,
        }


@dataclass
class Completion:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    cached: bool = False


@runtime_checkable
class LLM(Protocol):
    """What every part of ATLAS needs from a model. ``atlas.infra.llm.LLMClient`` implements it
    (with retries, caching, accounting and structured output on top of a backend)."""

    model: str

    async def acomplete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
        stop: list[str] | None = None,
        tool_choice: str | None = None,
        choices: list[str] | None = None,
        contrast: list[Message] | None = None,
        contrast_weight: float | None = None,
        choice_bias: dict[str, float] | None = None,
    ) -> Completion: ...

    def complete(self, messages: list[Message], **kwargs: Any) -> Completion: ...


@runtime_checkable
class SupportsTools(Protocol):
    """Optional capability: the model says whether it takes native tool calls (``tools=``);
    ``atlas.infra.llm.LLMClient`` has it. A model without it gets JSON actions instead."""

    @property
    def supports_tools(self) -> bool: ...


@runtime_checkable
class CountsUsage(Protocol):
    """Optional capability: ``usage``, what the model has spent so far (``atlas.infra.llm.LLMClient``
    has it); a model without it counts as spending nothing."""

    @property
    def usage(self) -> Usage: ...


@runtime_checkable
class CountsCacheHits(Protocol):
    """Optional capability: ``cache_hits``, the replies served from a cache rather than the model."""

    @property
    def cache_hits(self) -> int: ...


@runtime_checkable
class ReusesResults(Protocol):
    """Optional capability: ``reusable_results``, whether results measured with this model can be reused
    by name (false for a client whose behaviour is in code, e.g. a scripted one); without it: true."""

    @property
    def reusable_results(self) -> bool: ...
