"""Where ATLAS keeps files outside a run folder: one cache directory for everything it can rebuild
(local models, compiled games, measured baselines, replayed model replies).

``$ATLAS_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/atlas``, else ``~/.cache/atlas``; each user of
the cache takes its own folder inside (``cache_dir("models")``). Nothing here creates a directory:
the caller does when it writes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CACHE_ENV_VAR = "ATLAS_CACHE_DIR"


def cache_dir(*parts: str, env: Mapping[str, str] | None = None) -> Path:
    """ATLAS's cache directory, or ``parts`` inside it (not created). ``env`` defaults to
    ``os.environ``."""
    env = os.environ if env is None else env
    if env.get(CACHE_ENV_VAR):
        root = Path(env[CACHE_ENV_VAR]).expanduser()
    else:
        xdg = env.get("XDG_CACHE_HOME")
        root = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "atlas"
    return root.joinpath(*parts)


__all__ = ["CACHE_ENV_VAR", "cache_dir"]
