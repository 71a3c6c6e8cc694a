"""``make_llm``: model string (or None) → a ready ``LLMClient``.

Resolution: a plug-in provider's ``PREFIX:`` (``atlas.infra.llm.providers``) → default model →
alias table → ``local:`` (llama.cpp) or a litellm provider string. Problems the user must fix (unknown model, missing API key, missing local model or
llama-cpp-python) raise LLMConfigError here, before any call is made.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from atlas.errors import LLMConfigError
from atlas.infra.llm.aliases import ALIASES
from atlas.infra.llm.client import LLMClient, RetryPolicy
from atlas.infra.llm.providers import provider_for
from atlas.infra.llm.resolve import missing_keys, resolve_default_model

log = logging.getLogger(__name__)

PROVIDER_TIMEOUT = 120.0
LOCAL_TIMEOUT = 600.0

_HOW_TO_PICK = (
    "use an alias ({aliases}), a provider string such as openai/gpt-4.1-mini, "
    "anthropic/claude-haiku-4-5, bedrock/<model-id>, ollama/llama3.2 (or any OpenAI-compatible "
    "server: openai/<name> with api_base=...), or local:qwen2.5-coder-0.5b / local:/path/model.gguf"
)


def _how_to_pick() -> str:
    return _HOW_TO_PICK.format(
        aliases=", ".join(sorted(k for k in ALIASES if "." not in k or "-" in k)[:12]) + ", ..."
    )


def _provider_of(model: str, api_base: str | None) -> tuple[str, str]:
    """(litellm model string, provider) or LLMConfigError."""
    from atlas.infra.llm.litellm_backend import _litellm

    litellm = _litellm()
    prefix, sep, rest = model.partition("/")
    if sep and rest and prefix in litellm.provider_list:
        return model, prefix
    if not sep and api_base:
        return f"openai/{model}", "openai"  # any OpenAI-compatible server
    try:
        _, provider, _, _ = litellm.get_llm_provider(model=model)
    except (litellm.exceptions.BadRequestError, ValueError, KeyError) as exc:
        raise LLMConfigError(f"unknown model {model!r}: {_how_to_pick()}") from exc
    return model, provider


def _plugged_client(model: str | None, factory: Any, rest: str) -> Any:
    """What a plug-in provider's factory builds; a factory that raises (someone else's code) becomes
    one ``LLMConfigError`` naming the provider, never a traceback."""
    prefix = str(model).partition(":")[0]
    try:
        return factory(rest)
    except Exception as exc:  # third-party code: converted at the boundary
        where = getattr(factory, "__module__", None) or "a plug-in"
        raise LLMConfigError(
            f"the model provider {prefix!r} (registered by {where}) could not build {model!r}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def make_llm(
    model: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    api_base: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    retry: RetryPolicy | None = None,
    cache: str | os.PathLike[str] | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    supports_tools: bool | None = None,
    n_ctx: int = 8192,
    n_threads: int | None = None,
    tool_choice: str = "auto",
    grammar: str = "fallback",
    verbose: bool = False,
    **extra: Any,
) -> LLMClient:
    """Build the client for ``model`` (None → ``resolve_default_model``; the reason is in
    ``client.reason``). ``cache`` (or ``$ATLAS_LLM_CACHE``) enables the on-disk response cache.
    ``timeout`` (seconds per call) defaults to 120 for providers and 600 for local models (a
    2-core CPU generating 1k tokens); 0 disables it. ``extra`` keyword arguments go to litellm unchanged.
    A model ``PREFIX:REST`` whose prefix a plug-in registered is built by that provider's factory."""
    plugged = provider_for(model)
    if plugged is not None:
        factory, rest = plugged
        return _plugged_client(model, factory, rest)
    env = os.environ if env is None else env
    resolved, reason = resolve_default_model(model, env)
    log.info("model %s: %s", resolved, reason)
    if retry is None and max_retries is not None:
        retry = RetryPolicy(max_retries=max_retries)
    cache = cache if cache is not None else (env.get("ATLAS_LLM_CACHE") or None)
    is_local = resolved.startswith("local:")
    client_options: dict[str, Any] = {
        "timeout": timeout if timeout is not None else (LOCAL_TIMEOUT if is_local else PROVIDER_TIMEOUT),
        "retry": retry,
        "cache": cache,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "reason": reason,
    }
    if is_local:
        from atlas.infra.llm.llamacpp_backend import LlamaCppBackend
        from atlas.infra.local_models import resolve_local_model

        path = resolve_local_model(resolved.removeprefix("local:"), env)
        backend: Any = LlamaCppBackend(
            path,
            model=resolved,
            n_ctx=n_ctx,
            n_threads=n_threads,
            verbose=verbose,
            tool_choice=tool_choice,
            grammar=grammar,
        )
        return LLMClient(backend, **client_options)

    from atlas.infra.llm.litellm_backend import LiteLLMBackend

    litellm_model, provider = _provider_of(resolved, api_base)
    if api_base is None and provider == "ollama":
        api_base = env.get("OLLAMA_API_BASE") or None
    if api_key is None:
        if api_base and provider == "openai" and not env.get("OPENAI_API_KEY"):
            api_key = "no-key"  # self-hosted OpenAI-compatible servers ignore it; the SDK requires one
        elif not api_base:
            missing = missing_keys(provider, env)
            if missing:
                raise LLMConfigError(
                    f"{resolved} needs {' and '.join(missing)} in the environment: "
                    f"export {missing[0]}=... (or pass api_key=...), or choose another model with --model "
                    "(with no key at all, local:qwen2.5-coder-0.5b runs offline)"
                )
    backend = LiteLLMBackend(
        litellm_model,
        provider=provider,
        api_base=api_base,
        api_key=api_key,
        supports_tools=supports_tools,
        extra=extra,
    )
    return LLMClient(backend, **client_options)


__all__ = ["make_llm"]
