"""One cache directory for ATLAS: $ATLAS_CACHE_DIR, then $XDG_CACHE_HOME/atlas, then ~/.cache/atlas."""

from __future__ import annotations

from pathlib import Path

from atlas.envs.alfworld.env import default_cache_dir as alfworld_cache
from atlas.envs.textworld.env import default_cache_dir as textworld_cache
from atlas.infra.fs import cache_dir
from atlas.infra.local_models import models_dir


def test_the_cache_directory_in_order_of_precedence(tmp_path):
    both = {"ATLAS_CACHE_DIR": str(tmp_path / "a"), "XDG_CACHE_HOME": str(tmp_path / "x")}
    assert cache_dir(env=both) == tmp_path / "a"
    assert cache_dir("models", env=both) == tmp_path / "a" / "models"
    assert (
        cache_dir("models", env={"XDG_CACHE_HOME": str(tmp_path / "x")})
        == tmp_path / "x" / "atlas" / "models"
    )
    assert cache_dir(env={"ATLAS_CACHE_DIR": "", "XDG_CACHE_HOME": ""}) == Path.home() / ".cache" / "atlas"
    assert cache_dir(env={"ATLAS_CACHE_DIR": "~/c"}) == Path.home() / "c"


def test_every_cache_user_asks_the_one_helper(tmp_path, monkeypatch):
    monkeypatch.delenv("ATLAS_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert models_dir() == tmp_path / "atlas" / "models"
    assert alfworld_cache() == tmp_path / "atlas" / "alfworld"
    assert textworld_cache() == tmp_path / "atlas" / "textworld"
    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path / "mine"))
    assert models_dir() == tmp_path / "mine" / "models"
    assert alfworld_cache() == tmp_path / "mine" / "alfworld"
    assert textworld_cache() == tmp_path / "mine" / "textworld"
