"""Which model to use when none is given, and which API keys a provider needs.

``resolve_default_model``: an explicit model wins; else the first provider key found in the
environment picks that provider's default; else the local GGUF model (no key, no network).
``missing_keys`` is checked before any provider call so a missing key fails fast with the name
of the variable to set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from atlas.infra.llm.aliases import resolve_alias

LOCAL_DEFAULT = "local:qwen2.5-coder-0.5b"

# (environment variable, default model), in order of preference.
PROVIDER_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("ANTHROPIC_API_KEY", "anthropic/claude-haiku-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-4.1-mini"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-flash"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
    ("MISTRAL_API_KEY", "mistral/mistral-small-latest"),
    ("GROQ_API_KEY", "groq/llama-3.3-70b-versatile"),
)

# provider prefix → alternatives, each a tuple of variables that must all be set.
PROVIDER_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {
    "openai": (("OPENAI_API_KEY",),),
    "anthropic": (("ANTHROPIC_API_KEY",), ("ANTHROPIC_AUTH_TOKEN",)),
    "gemini": (("GEMINI_API_KEY",), ("GOOGLE_API_KEY",)),
    "deepseek": (("DEEPSEEK_API_KEY",),),
    "mistral": (("MISTRAL_API_KEY",),),
    "groq": (("GROQ_API_KEY",),),
    "openrouter": (("OPENROUTER_API_KEY",),),
    "together_ai": (("TOGETHERAI_API_KEY",), ("TOGETHER_API_KEY",)),
    "xai": (("XAI_API_KEY",),),
    "cohere": (("COHERE_API_KEY",),),
    "fireworks_ai": (("FIREWORKS_API_KEY",), ("FIREWORKS_AI_API_KEY",)),
    "bedrock": (
        ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
        ("AWS_PROFILE",),
        ("AWS_BEARER_TOKEN_BEDROCK",),
    ),
    "azure": (("AZURE_API_KEY", "AZURE_API_BASE"),),
}


def resolve_default_model(explicit: str | None, env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """Return ``(model, reason)``; ``reason`` is a sentence to print ("why this model")."""
    env = os.environ if env is None else env
    if explicit:
        resolved = resolve_alias(explicit)
        via = f" (alias of {resolved})" if resolved != explicit.strip() else ""
        return resolved, f"--model {explicit!r} given explicitly{via}"
    if env.get("ATLAS_MODEL"):
        return resolve_alias(env["ATLAS_MODEL"]), f"ATLAS_MODEL={env['ATLAS_MODEL']} is set"
    for var, model in PROVIDER_DEFAULTS:
        if env.get(var):
            return model, f"{var} is set, so {model.split('/')[0]}'s default {model} is used"
    return LOCAL_DEFAULT, (
        "no --model and no provider API key (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...) in the "
        f"environment, so the local model {LOCAL_DEFAULT} is used (offline, llama.cpp)"
    )


def missing_keys(provider: str, env: Mapping[str, str] | None = None) -> list[str] | None:
    """None when the provider's credentials are present (or it needs none); else the variables
    of its first credential alternative."""
    env = os.environ if env is None else env
    alternatives = PROVIDER_KEYS.get(provider)
    if not alternatives:
        return None
    for names in alternatives:
        if all(env.get(n) for n in names):
            return None
    return list(alternatives[0])


__all__ = ["LOCAL_DEFAULT", "PROVIDER_DEFAULTS", "PROVIDER_KEYS", "missing_keys", "resolve_default_model"]
