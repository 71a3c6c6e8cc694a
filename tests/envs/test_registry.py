"""The environment registry and atlas.envs public API."""

from __future__ import annotations

import pytest

import atlas.envs
from atlas.envs import get_env, list_envs, register_env
from atlas.envs.graphworld import GraphWorldEnv
from atlas.errors import ConfigError


def test_builtins_registered_and_aliases():
    assert {"graphworld", "alfworld", "textworld"} <= set(list_envs())
    assert isinstance(get_env("graphworld"), GraphWorldEnv)
    assert isinstance(get_env("graph_world", rooms=5), GraphWorldEnv)
    assert get_env("GraphWorld", rooms=5).params.rooms == 5


def test_unknown_env_lists_known_ones():
    with pytest.raises(ConfigError, match="graphworld"):
        get_env("minecraft")


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
