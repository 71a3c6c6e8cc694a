"""Hosted and OpenAI-compatible models through litellm (``openai/…``, ``anthropic/…``,
``bedrock/…``, ``ollama/…``, any ``api_base``). litellm is imported on first use (it takes
seconds); its exceptions are converted here and nowhere else."""

from __future__ import annotations

import json
import logging
from typing import Any

from atlas.errors import LLMConfigError, LLMConnectionError, LLMError
from atlas.infra.llm.backend import LLMRequest
from atlas.infra.llm.jsonreply import parse_json_reply
from atlas.infra.llm.resolve import PROVIDER_KEYS
from atlas.protocols.llm import Completion, ToolCall, Usage

log = logging.getLogger(__name__)


def _litellm() -> Any:
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm


def _key_hint(provider: str) -> str:
    alternatives = PROVIDER_KEYS.get(provider)
    if not alternatives:
        return "check the API key for this provider"
    return "set " + " or ".join("+".join(names) for names in alternatives) + " to a valid key"


def _is_connection_failure(exc: BaseException) -> bool:
    """litellm reports a refused connection as InternalServerError("Connection error."): look at
    the message and the exception chain for the real cause."""
    import httpx
    import openai

    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            break
        if isinstance(
            seen, openai.APIConnectionError | httpx.ConnectError | httpx.ConnectTimeout | ConnectionError
        ) and not isinstance(seen, openai.APITimeoutError):
            return True
        seen = seen.__cause__ or seen.__context__
    return "Connection error" in str(exc)


class LiteLLMBackend:
    """One model string served by litellm. ``api_base``/``api_key`` override the environment."""

    def __init__(
        self,
        model: str,
        *,
        provider: str,
        api_base: str | None = None,
        api_key: str | None = None,
        supports_tools: bool | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.provider = provider
        self.api_base = api_base
        self.api_key = api_key
        self.extra = dict(extra or {})
        if supports_tools is None:
            supports_tools = self._lookup("supports_function_calling") or bool(api_base)
        self.supports_tools = supports_tools
        self.supports_schema = bool(self._lookup("supports_response_schema"))

    def _lookup(self, name: str) -> bool:
        try:
            return bool(getattr(_litellm(), name)(model=self.model))
        except Exception:
            return False

    def _where(self) -> str:
        return self.api_base or f"the {self.provider} API"

    def _convert(self, exc: Exception) -> LLMError:
        """Map a litellm/openai exception to our tree, with a message that says what to do."""
        litellm = _litellm()
        name = self.model
        status = getattr(exc, "status_code", None)
        if isinstance(exc, litellm.AuthenticationError) or status == 401:
            return LLMConfigError(
                f"{name}: the provider rejected the credentials: {_key_hint(self.provider)}"
            )
        if isinstance(exc, litellm.PermissionDeniedError) or status == 403:
            return LLMConfigError(
                f"{name}: permission denied by the provider; check the key's access to this model"
            )
        if isinstance(exc, litellm.NotFoundError):
            return LLMConfigError(
                f"{name}: the provider does not know this model (404); check the model name"
                + (f" and api_base {self.api_base}" if self.api_base else "")
            )
        if isinstance(exc, litellm.RateLimitError):
            return LLMConnectionError(
                f"{name}: rate limited by the provider ({exc.message if hasattr(exc, 'message') else exc})"
            )
        if isinstance(exc, litellm.Timeout):
            return LLMConnectionError(f"{name}: request to {self._where()} timed out")
        if isinstance(exc, litellm.APIConnectionError) or _is_connection_failure(exc):
            return LLMConnectionError(
                f"{name}: cannot reach {self._where()}: is the server running and the address right? "
                "(pass api_base=... / check network and proxy settings)"
            )
        if isinstance(
            exc, litellm.ServiceUnavailableError | litellm.InternalServerError | litellm.BadGatewayError
        ):
            return LLMConnectionError(f"{name}: server error from {self._where()}: {str(exc)[:200]}")
        if isinstance(exc, litellm.ContextWindowExceededError):
            return LLMError(f"{name}: the prompt is longer than the model's context window")
        if isinstance(exc, litellm.LiteLLMUnknownProvider):
            return LLMConfigError(f"{name}: unknown provider; use provider/model, e.g. openai/gpt-4.1-mini")
        if isinstance(exc, litellm.BadRequestError):
            return LLMError(f"{name}: the provider rejected the request: {str(exc)[:300]}")
        if isinstance(status, int) and status >= 500:
            return LLMConnectionError(f"{name}: server error {status} from {self._where()}")
        return LLMError(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")

    def _kwargs(self, request: LLMRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": request.messages,
            "num_retries": 0,  # LLMClient retries; no hidden second layer
            "max_retries": 0,
            **self.extra,
        }
        if request.timeout:
            kwargs["timeout"] = request.timeout
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.stop:
            kwargs["stop"] = request.stop
        if request.tools:
            kwargs["tools"] = [t.to_openai() for t in request.tools]
            choice = request.extra.get("tool_choice")
            if choice:
                kwargs["tool_choice"] = choice
        if request.json_schema is not None and self.supports_schema:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": request.json_schema, "strict": False},
            }
        return kwargs

    async def complete(self, request: LLMRequest) -> Completion:
        import httpx
        import openai

        litellm = _litellm()
        try:
            response = await litellm.acompletion(**self._kwargs(request))
        except (openai.OpenAIError, httpx.HTTPError) as exc:  # litellm's errors subclass openai's
            raise self._convert(exc) from exc
        return self._to_completion(response)

    def _to_completion(self, response: Any) -> Completion:
        choice = response.choices[0]
        message = choice.message
        calls = []
        for i, tc in enumerate(getattr(message, "tool_calls", None) or []):
            raw = tc.function.arguments or "{}"
            try:
                args = json.loads(raw) if isinstance(raw, str) else dict(raw)
            except ValueError:
                try:
                    args = parse_json_reply(raw)
                except LLMError:
                    # The model's mistake is data: keep the raw text so the caller can report it.
                    args = {"_raw_arguments": raw}
            if not isinstance(args, dict):
                args = {"_raw_arguments": raw}
            calls.append(ToolCall(name=tc.function.name or "", arguments=args, id=tc.id or f"call_{i}"))
        usage = getattr(response, "usage", None)
        cost = 0.0
        try:
            cost = float(_litellm().completion_cost(completion_response=response) or 0.0)
        except Exception:
            cost = 0.0
        return Completion(
            text=message.content or "",
            tool_calls=calls,
            usage=Usage(
                prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                cost_usd=cost,
                calls=1,
            ),
            model=self.model,
        )


__all__ = ["LiteLLMBackend"]
