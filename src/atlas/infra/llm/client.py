"""``LLMClient``: retries, timeouts, caching, accounting and structured output over a backend.

The async methods are the implementation; ``complete`` and ``structured`` are thin wrappers
through ``atlas.infra.aio.run_sync`` so sync and async callers get the same behaviour.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ValidationError

from atlas.errors import InvalidInputError, LLMConnectionError, LLMResponseError
from atlas.infra.aio import run_sync
from atlas.infra.llm.backend import Backend, LLMRequest
from atlas.infra.llm.cache import ResponseCache, cache_key
from atlas.infra.llm.jsonreply import parse_json_reply
from atlas.protocols.llm import Completion, Message, ToolSpec, Usage

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff for retryable failures (LLMConnectionError: rate limits, timeouts,
    refused connections, 5xx). ``max_retries`` retries after the first attempt."""

    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = 0.25

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        base = min(self.max_delay, self.base_delay * (2**attempt))
        return base * (1 + self.jitter * random.random())


def match_choice(text: str, choices: list[str]) -> str | None:
    """The choice a free reply names: the whole reply, else the first choice that appears in it
    as a whole word (longest first, so "12" is not read as "1")."""
    reply = text.strip().strip("`'\".").strip()
    if reply in choices:
        return reply
    found: list[tuple[int, int, str]] = []
    for c in choices:
        m = re.search(rf"(?<![\w]){re.escape(c)}(?![\w])", text)
        if m:
            found.append((m.start(), -len(c), c))
    return min(found)[2] if found else None


def _check_messages(messages: list[Message]) -> None:
    if not isinstance(messages, list) or not messages:
        raise InvalidInputError("messages must be a non-empty list of {'role': ..., 'content': ...} dicts")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m:
            raise InvalidInputError(f"message {i} is not a dict with a 'role': {m!r}")


def _schema_of(schema: type[BaseModel] | dict[str, Any]) -> dict[str, Any]:
    if isinstance(schema, dict):
        return schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    raise InvalidInputError(f"schema must be a pydantic model class or a JSON-schema dict, not {schema!r}")


def _validate(value: Any, schema: type[BaseModel] | dict[str, Any]) -> Any:
    """The validated value, or an exception whose message tells the model what to fix."""
    if isinstance(schema, dict):
        import jsonschema

        validator_cls = jsonschema.validators.validator_for(schema)
        errors = sorted(validator_cls(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
        if errors:
            lines = [f"at {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors[:5]]
            raise LLMResponseError("the JSON does not match the schema: " + "; ".join(lines))
        return value
    return schema.model_validate(value)


def _with_instruction(messages: list[Message], instruction: str) -> list[Message]:
    """Append the structured-output instruction to the last user turn (or add one)."""
    out = [dict(m) for m in messages]
    last = out[-1]
    if last.get("role") == "user" and isinstance(last.get("content"), str):
        last["content"] = f"{last['content']}\n\n{instruction}"
    else:
        out.append({"role": "user", "content": instruction})
    return out


class LLMClient:
    """The LLM protocol implementation every part of ATLAS uses (see ``make_llm``).

    ``usage`` is the running total over all calls (cache hits excluded: they cost nothing);
    ``cache_hits`` counts replies served from the on-disk cache. ``reusable_results``: whether a
    result measured with this client may be reused across runs by its model name (the no-memory
    baseline cache does); a double whose behaviour lives in code says False.
    """

    reusable_results: bool = True

    def __init__(
        self,
        backend: Backend,
        *,
        timeout: float | None = 120.0,
        retry: RetryPolicy | None = None,
        cache: ResponseCache | str | Path | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        reason: str = "",
    ) -> None:
        self.backend = backend
        self.model: str = backend.model
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.cache = cache if isinstance(cache, ResponseCache) or cache is None else ResponseCache(cache)
        self.default_temperature = temperature
        self.default_max_tokens = max_tokens
        self.reason = reason  # why this model was chosen (make_llm fills it in)
        self.usage = Usage()
        self.cache_hits = 0
        self._lock = threading.Lock()

    @property
    def supports_tools(self) -> bool:
        return bool(self.backend.supports_tools)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    # ---- completion -------------------------------------------------------------------------

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
    ) -> Completion:
        """One chat completion, retried on connection errors, served from the cache if enabled.

        ``tool_choice`` ("auto" | "required" | "none") is optional; backends that cannot honour
        it ignore it. ``choices``: the reply is one of these strings — decoded under that
        constraint where the backend can (local models), else the free reply is mapped onto the
        first choice it names; a reply that names none keeps its text (the caller decides).
        ``contrast`` (with ``choices``): the same conversation without the context under test; backends
        that score choices weigh it in (context-aware decoding), the others ignore it.
        ``choice_bias`` (with ``choices``): nats added to the named choices' scores by backends that
        score choices (a prior from outside the model, e.g. advice matched to the observation).
        """
        _check_messages(messages)
        request = LLMRequest(
            messages=messages,
            tools=list(tools) if tools else None,
            temperature=self.default_temperature if temperature is None else temperature,
            max_tokens=self.default_max_tokens if max_tokens is None else max_tokens,
            json_schema=json_schema,
            stop=list(stop) if stop else None,
            choices=list(choices) if choices else None,
            timeout=self.timeout,
            extra={
                **({"tool_choice": tool_choice} if tool_choice else {}),
                **(
                    {"contrast": contrast, "contrast_weight": contrast_weight} if contrast and choices else {}
                ),
                **({"choice_bias": dict(choice_bias)} if choice_bias and choices else {}),
            },
        )
        key = None
        if self.cache is not None and self.cache.accepts(request):
            key = cache_key(self.model, request)
            hit = self.cache.get(key, request)
            if hit is not None:
                with self._lock:
                    self.cache_hits += 1
                return hit
        completion = await self._call_with_retries(request)
        if choices and not getattr(self.backend, "supports_choices", False):
            completion.text = match_choice(completion.text, choices) or completion.text
        completion.usage.calls = 1
        completion.model = completion.model or self.model
        with self._lock:
            self.usage.add(completion.usage)
        if self.cache is not None and key is not None:
            self.cache.put(
                key, completion, request={"model": self.model, "messages": messages, **request.params()}
            )
        return completion

    async def _call_with_retries(self, request: LLMRequest) -> Completion:
        attempts = self.retry.max_retries + 1
        last: LLMConnectionError | None = None
        for attempt in range(attempts):
            try:
                if self.timeout:
                    return await asyncio.wait_for(self.backend.complete(request), self.timeout)
                return await self.backend.complete(request)
            except TimeoutError as exc:
                within = f"within {self.timeout:g} s" if self.timeout else "(the backend timed out)"
                last = LLMConnectionError(f"{self.model}: no reply {within}")
                last.__cause__ = exc
            except LLMConnectionError as exc:
                last = exc
            if attempt + 1 < attempts:
                delay = self.retry.delay(attempt)
                log.warning("%s; retry %d/%d in %.1f s", last, attempt + 1, attempts - 1, delay)
                await asyncio.sleep(delay)
        raise LLMConnectionError(f"{last} (gave up after {attempts} attempts)") from last

    def complete(self, messages: list[Message], **kwargs: Any) -> Completion:
        """Sync twin of ``acomplete``."""
        return run_sync(self.acomplete(messages, **kwargs))

    # ---- structured output ------------------------------------------------------------------

    @overload
    async def astructured(
        self,
        messages: list[Message],
        schema: type[M],
        *,
        retries: int = 2,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> M: ...
    @overload
    async def astructured(
        self,
        messages: list[Message],
        schema: dict[str, Any],
        *,
        retries: int = 2,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> dict[str, Any]: ...

    async def astructured(
        self,
        messages: list[Message],
        schema: type[BaseModel] | dict[str, Any],
        *,
        retries: int = 2,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Any:
        """Ask for JSON matching ``schema`` (pydantic model class → instance; JSON schema → value).

        The reply is parsed leniently (fences, prose, light repair); if it still is not valid, the
        model is re-asked up to ``retries`` times with the error; then LLMResponseError (``raw``
        holds the last reply).
        """
        schema_dict = _schema_of(schema)
        instruction = (
            "Reply with only one JSON value that matches this JSON schema (no prose, no code fences):\n"
            + json.dumps(schema_dict, ensure_ascii=False)
        )
        convo = _with_instruction(messages, instruction)
        last_text = ""
        error = ""
        for _ in range(retries + 1):
            completion = await self.acomplete(
                convo, json_schema=schema_dict, temperature=temperature, max_tokens=max_tokens
            )
            last_text = completion.text
            try:
                return _validate(parse_json_reply(last_text), schema)
            except LLMResponseError as exc:
                error = str(exc)
            except ValidationError as exc:
                error = "the JSON does not match the schema: " + "; ".join(
                    f"at {'/'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()[:5]
                )
            convo = [
                *convo,
                {"role": "assistant", "content": last_text},
                {
                    "role": "user",
                    "content": f"That reply was not valid: {error}\nReply again with only the corrected JSON.",
                },
            ]
        raise LLMResponseError(
            f"{self.model}: no valid structured reply after {retries + 1} attempts: {error}", raw=last_text
        )

    def structured(self, messages: list[Message], schema: Any, **kwargs: Any) -> Any:
        """Sync twin of ``astructured``."""
        return run_sync(self.astructured(messages, schema, **kwargs))


__all__ = ["LLMClient", "RetryPolicy", "match_choice"]
