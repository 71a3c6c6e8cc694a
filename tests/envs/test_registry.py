"""The environment registry and atlas.envs public API."""

from __future__ import annotations

import pytest
from toy_env import ToyLineEnv

import atlas.envs
from atlas.envs import get_env, list_envs, register_env
from atlas.envs.graphworld import GraphWorldEnv
from atlas.errors import ConfigError


def test_builtins_registered_and_aliases():
    assert {"graphworld", "alfworld", "textworld"} <= set(list_envs())
    assert isinstance(get_env("graphworld"), GraphWorldEnv)
    assert isinstance(get_env("graph_world", rooms=5), GraphWorldEnv)
    assert get_env("GraphWorld", rooms=5).params.rooms == 5


def test_unknown_env_lists_known_ones_and_says_how_a_plug_in_registers():
    with pytest.raises(ConfigError, match="graphworld") as err:
        get_env("minecraft")
    assert "$ATLAS_PLUGINS (ATLAS_PLUGINS=my_env" in str(err.value)
    assert "'atlas.plugins' entry point" in str(err.value)


def test_plugins_register_through_the_same_door():
    from atlas.envs import registry

    register_env("tiny_graph", lambda **kw: GraphWorldEnv(rooms=3, **kw))
    try:
        assert get_env("tiny_graph").params.rooms == 3 and "tiny_graph" in list_envs()
    finally:
        registry.unregister_env("tiny_graph")  # keep the process-wide registry as it was


def test_public_api_is_pinned():
    assert sorted(atlas.envs.__all__) == [
        "DEFAULT_ENV",
        "EnvParam",
        "EpisodeRecorder",
        "ExplorerPolicy",
        "RandomPolicy",
        "action_text",
        "check_action",
        "episode_view",
        "get_env",
        "list_envs",
        "register_env",
        "task_view",
        "validate_args",
    ]


def test_the_default_environment_is_named_once():
    """Every default is ``DEFAULT_ENV`` (AlmaConfig's literal too, until it reads the constant)."""
    import inspect

    from atlas.alma.author.smoke import asmoke_run, smoke_run
    from atlas.alma.evaluate.advice_headroom import headroom
    from atlas.alma.state.config import AlmaConfig

    assert atlas.envs.DEFAULT_ENV in list_envs()
    assert AlmaConfig.model_fields["env"].default == atlas.envs.DEFAULT_ENV
    for fn in (smoke_run, asmoke_run, headroom):
        assert inspect.signature(fn).parameters["env"].default == atlas.envs.DEFAULT_ENV


class _NoFamilyMode:
    """A plug-in constructor with no ``family_mode``: every task shares the family it is given."""

    def __init__(self, cells: int = 5) -> None:
        self.inner = ToyLineEnv(cells)


def test_a_plug_in_without_family_mode_is_built_and_no_family_is_refused_clearly():
    from atlas.alma.state.config import AlmaConfig
    from atlas.envs import registry

    register_env("no_family_line", _NoFamilyMode)
    try:
        config = AlmaConfig(env="no_family_line")
        assert "family_mode" not in config.env_kwargs()
        assert isinstance(get_env("no_family_line", **config.env_kwargs()), _NoFamilyMode)
        assert AlmaConfig(env="graphworld", use_family=False).env_kwargs()["family_mode"] is False
        with pytest.raises(ValueError, match=r"takes no family_mode.*family_mode: bool = True"):
            AlmaConfig(env="no_family_line", use_family=False)
    finally:
        registry.unregister_env("no_family_line")
