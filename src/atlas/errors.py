"""The exceptions ATLAS raises.

Every error ATLAS raises on purpose derives from ``AtlasError``; third-party
exceptions are converted at the boundary with ``raise AtlasXError(...) from exc``.
Mistakes made by a model or a design (a reply that is not JSON, an invalid
action, a crashing design) are *data*: they are recorded and fed back, not raised.

    AtlasError
    ├── ConfigError            bad configuration, unknown name, missing file
    ├── InvalidInputError      input that fails validation (trajectory, messages, JSON)
    ├── LLMError
    │   ├── LLMConfigError     unknown model, missing API key, missing local model
    │   ├── LLMConnectionError endpoint unreachable, timeout after retries
    │   ├── LLMResponseError   reply not valid for the requested structure after repair + retries
    │   └── ScriptExhaustedError  a ScriptedLLM ran out of replies
    ├── EmbeddingError         the embedder cannot load or embed
    ├── StoreError             vector / record / graph store failure
    ├── EnvError               environment misuse or missing environment data
    ├── DesignError
    │   ├── DesignCheckError   a design fails the static check (carries the problems)
    │   └── SandboxError       the sandbox itself cannot run (not a design's fault)
    ├── ArchiveError           a corrupt or unreadable archive / run folder
    ├── SearchStopped          an ALMA search stopped early (a limit, or its models kept failing); resumable
    │   └── BudgetReached      it stopped at the --max-cost / --max-minutes the user set (not a failure)
    ├── ClusterError           the cluster cannot run the work (address does not answer, units lost past retries)
    └── ToolRefusal            a design's tool call failed or was refused (the design sees why)
"""

from __future__ import annotations


class AtlasError(Exception):
    """Base class of every error ATLAS raises on purpose."""


class ConfigError(AtlasError):
    """Configuration is invalid or incomplete."""


class InvalidInputError(AtlasError, ValueError):
    """Input failed validation; nothing was stored."""


class LLMError(AtlasError):
    """A language-model call failed."""


class LLMConfigError(LLMError):
    """The model cannot be used as configured (unknown name, missing key or file)."""


class LLMConnectionError(LLMError):
    """The model endpoint could not be reached or timed out after retries."""


class LLMResponseError(LLMError):
    """The model's reply could not be turned into the requested structure."""

    def __init__(self, message: str, raw: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw


class ScriptExhaustedError(LLMError):
    """A ScriptedLLM was called more times than it has replies."""


class EmbeddingError(AtlasError):
    """The embedder could not load or embed."""


class StoreError(AtlasError):
    """A vector, record or graph store failed."""


class EnvError(AtlasError):
    """An environment was misused or its data is missing."""


class DesignError(AtlasError):
    """A memory design could not be loaded or run."""


class DesignCheckError(DesignError):
    """A design failed the static check; ``problems`` lists each with its line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("design failed the static check:\n" + "\n".join(f"- {p}" for p in problems))
        self.problems = problems


class SandboxError(DesignError):
    """The sandbox could not start or talk to its worker (not the design's fault)."""


class ArchiveError(AtlasError):
    """An archive or run folder is corrupt or unreadable."""


class SearchStopped(AtlasError):
    """The search stopped early (its models kept failing); the archive is saved and can be resumed."""


class BudgetReached(SearchStopped):
    """The search stopped at the budget the user set (``--max-cost``, ``--max-minutes``): the outcome
    asked for, not a failure; the archive is saved and ``--resume`` with a larger budget continues."""


class ClusterError(AtlasError):
    """The cluster cannot run the work: its address does not answer, or a work unit was lost more
    times than the executor retries. The archive is saved; ``atlas run --resume`` continues."""


class ToolRefusal(AtlasError):
    """A design's tool call failed or was refused (raised by a tool handler); the design sees the
    message and the search goes on."""


__all__ = [
    "ArchiveError",
    "AtlasError",
    "BudgetReached",
    "ClusterError",
    "ConfigError",
    "DesignCheckError",
    "DesignError",
    "EmbeddingError",
    "EnvError",
    "InvalidInputError",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMError",
    "LLMResponseError",
    "SandboxError",
    "ScriptExhaustedError",
    "SearchStopped",
    "StoreError",
    "ToolRefusal",
]
