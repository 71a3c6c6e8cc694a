"""The schema of an export's ``design.json``: data, checked field by field before anything uses it.

An export is a folder someone may have downloaded, so its manifest is never an instruction: it
cannot choose a model provider or a network embedder (``served.embedder_for`` loads only local
ones), its text never becomes the MCP server's instructions, and a design in it always runs in the
sandbox (``origin`` may not be ``host``). Wrong shapes (a string where an object belongs, ``dims:
"abc"``, a list for ``files``) are one ``ArchiveError`` naming the field.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from atlas.errors import ArchiveError

EXPORT_FORMAT = "atlas-design-export"
EXPORT_VERSION = 1
FILES = ("design.py", "memory.json", "advice.jsonl")
MAX_EMBEDDING_DIM = 8192  # no embedder ATLAS loads from an export makes wider vectors
_SHA = r"^[0-9a-f]{64}$"


class _Data(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class DesignInfo(_Data):
    id: str = Field(pattern=r"^[A-Za-z0-9._-]{1,100}$")
    name: str = Field(min_length=1, max_length=200)
    # "host" (a trusted in-process adapter) cannot be exported: a design from an export always runs
    # in the sandbox, whatever its manifest says
    origin: Literal["seed", "baseline", "meta"] = "meta"
    generation: int = Field(default=0, ge=0, le=1_000_000)
    parent_ids: list[str] = Field(default_factory=list, max_length=100)
    source_sha256: str | None = Field(default=None, pattern=_SHA)


class EmbedderInfo(_Data):
    name: str | None = Field(default=None, max_length=100)
    dims: list[int] = Field(default_factory=list, max_length=8)

    @field_validator("dims")
    @classmethod
    def _dims(cls, v: list[int]) -> list[int]:
        if any(not 1 <= d <= MAX_EMBEDDING_DIM for d in v):
            raise ValueError(f"each dimension must be between 1 and {MAX_EMBEDDING_DIM}")
        return v


class FileInfo(_Data):
    sha256: str = Field(pattern=_SHA)
    bytes: int = Field(ge=0)


class Manifest(_Data):
    format: Literal["atlas-design-export"]
    version: Literal[1]
    exported_at: str | None = None
    from_run: str | None = None
    design: DesignInfo
    embedder: EmbedderInfo = Field(default_factory=EmbedderInfo)
    environment: dict[str, Any] = Field(default_factory=dict)
    models: dict[str, Any] = Field(default_factory=dict)  # what the run used: shown, never loaded
    sandbox_limits: dict[str, Any] = Field(default_factory=dict)
    scores: dict[str, Any] | None = None
    files: dict[str, FileInfo]

    @field_validator("files")
    @classmethod
    def _all_files(cls, v: dict[str, FileInfo]) -> dict[str, FileInfo]:
        missing = [name for name in FILES if name not in v]
        if missing:
            raise ValueError(f"no checksum for {', '.join(missing)}")
        return v


def parse_manifest(data: Any, where: str) -> dict[str, Any]:
    """The manifest ``data`` checked against the schema (unknown keys dropped), as plain JSON data;
    ``ArchiveError`` naming the first wrong field otherwise."""
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise ArchiveError(f"{where} is not an ATLAS design export manifest")
    if data.get("version") != EXPORT_VERSION:
        raise ArchiveError(f"{where}: unsupported export version {str(data.get('version'))[:40]!r}")
    try:
        return Manifest.model_validate(data).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(x) for x in first.get("loc", ())) or "(top level)"
        raise ArchiveError(
            f"{where}: {field}: {first.get('msg')} ({exc.error_count()} problem(s)); "
            "the manifest is not valid: export the design again"
        ) from None


__all__ = ["EXPORT_FORMAT", "EXPORT_VERSION", "FILES", "MAX_EMBEDDING_DIM", "Manifest", "parse_manifest"]
