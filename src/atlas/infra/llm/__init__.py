"""One LLM client for every provider.

    make_llm(model=None, **options) -> LLMClient
        model: alias (haiku, sonnet, gpt-4.1-mini, qwen-0.5b, ...), provider string handled by
        litellm (openai/..., anthropic/..., bedrock/..., ollama/..., any api_base), or
        local:NAME / local:PATH.gguf (llama.cpp in process). None → resolve_default_model.
    LLMClient      acomplete/complete, astructured/structured, usage, supports_tools
    ScriptedLLM    deterministic test double: enqueue(*replies), history
    parse_json_reply(text) -> Any

Modules: backend (the one-method seam), client (retries, cache, usage, structured output),
litellm_backend, llamacpp_backend, scripted, aliases, resolve, cache, jsonreply, messages.
"""

from __future__ import annotations

from atlas.infra.llm.aliases import ALIASES, resolve_alias
from atlas.infra.llm.backend import Backend, LLMRequest, completion_from_dict, completion_to_dict
from atlas.infra.llm.cache import ResponseCache, cache_key
from atlas.infra.llm.client import LLMClient, RetryPolicy
from atlas.infra.llm.factory import make_llm
from atlas.infra.llm.jsonreply import parse_json_reply, repair_json
from atlas.infra.llm.messages import assistant_message, tool_message
from atlas.infra.llm.resolve import LOCAL_DEFAULT, missing_keys, resolve_default_model
from atlas.infra.llm.scripted import ScriptedBackend, ScriptedCall, ScriptedLLM

__all__ = [
    "ALIASES",
    "LOCAL_DEFAULT",
    "Backend",
    "LLMClient",
    "LLMRequest",
    "ResponseCache",
    "RetryPolicy",
    "ScriptedBackend",
    "ScriptedCall",
    "ScriptedLLM",
    "assistant_message",
    "cache_key",
    "completion_from_dict",
    "completion_to_dict",
    "make_llm",
    "missing_keys",
    "parse_json_reply",
    "repair_json",
    "resolve_alias",
    "resolve_default_model",
    "tool_message",
]
