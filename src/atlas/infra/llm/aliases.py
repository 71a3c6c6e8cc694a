"""The one alias table: short names people type → full model strings.

Keys are case-insensitive. Anything not here is passed through (a provider string such as
``openai/gpt-4.1`` or ``local:/path/model.gguf``) and validated by ``make_llm``.
"""

from __future__ import annotations

ALIASES: dict[str, str] = {
    # Anthropic
    "haiku": "anthropic/claude-haiku-4-5",
    "sonnet": "anthropic/claude-sonnet-4-5",
    "opus": "anthropic/claude-opus-4-5",
    "claude-haiku-4-5": "anthropic/claude-haiku-4-5",
    "claude-sonnet-4-5": "anthropic/claude-sonnet-4-5",
    "claude-opus-4-5": "anthropic/claude-opus-4-5",
    # OpenAI
    "gpt-4.1-mini": "openai/gpt-4.1-mini",
    "gpt-4.1-nano": "openai/gpt-4.1-nano",
    "gpt-4.1": "openai/gpt-4.1",
    "gpt-4o-mini": "openai/gpt-4o-mini",
    "4o-mini": "openai/gpt-4o-mini",
    "gpt-4o": "openai/gpt-4o",
    "4o": "openai/gpt-4o",
    "gpt-5-mini": "openai/gpt-5-mini",
    "o4-mini": "openai/o4-mini",
    # Google, others
    "gemini-flash": "gemini/gemini-2.5-flash",
    "gemini-pro": "gemini/gemini-2.5-pro",
    "deepseek": "deepseek/deepseek-chat",
    "mistral-small": "mistral/mistral-small-latest",
    "groq-llama": "groq/llama-3.3-70b-versatile",
    # Bedrock (AWS credentials from the environment)
    "bedrock-haiku": "bedrock/anthropic.claude-haiku-4-5-20251001-v1:0",
    # Local GGUF models (atlas models pull NAME)
    "qwen-0.5b": "local:qwen2.5-coder-0.5b",
    "qwen-1.5b": "local:qwen2.5-coder-1.5b",
    "qwen2.5-coder-0.5b": "local:qwen2.5-coder-0.5b",
    "qwen2.5-coder-1.5b": "local:qwen2.5-coder-1.5b",
    "local": "local:qwen2.5-coder-0.5b",
}


def resolve_alias(name: str) -> str:
    """The full model string for ``name`` (itself when it is not an alias)."""
    stripped = name.strip()
    return ALIASES.get(stripped.lower(), stripped)


__all__ = ["ALIASES", "resolve_alias"]
