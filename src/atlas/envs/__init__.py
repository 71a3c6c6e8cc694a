"""atlas.envs — environments behind one protocol (``atlas.protocols.env.Environment``).

``register_env(name, factory, explorer=..., params=[EnvParam(...)], ...)`` adds an environment
(built-ins use it too); ``get_env("graphworld" | "alfworld" | "textworld", **params)`` builds one;
``task_view`` / ``episode_view`` are the information boundary for memory designs; ``RandomPolicy`` /
``ExplorerPolicy`` play episodes without an LLM.
"""

from atlas.envs.base import EpisodeRecorder, action_text, check_action, validate_args
from atlas.envs.policies import ExplorerPolicy, RandomPolicy
from atlas.envs.registry import DEFAULT_ENV, EnvParam, get_env, list_envs, register_env
from atlas.envs.views import episode_view, task_view

__all__ = [
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
