"""Shared fixtures. Real parts everywhere: real Chroma, real ONNX embedder, real sandbox;
LLM calls go through ScriptedLLM unless a test is marked ``local_llm``."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import pytest

import scripted_provider  # noqa: F401  (the test plug-in: registers the scripted:FILE model provider)


@pytest.fixture(scope="session")
def embedder():
    """The real default embedder (MiniLM on ONNX Runtime), loaded once per session."""
    from atlas.infra.embeddings import default_embedder

    return default_embedder()
