"""atlas.envs — environments behind one protocol (``atlas.protocols.env.Environment``).

``get_env("graphworld" | "alfworld" | "textworld", **params)``; ``task_view`` / ``episode_view``
are the information boundary for memory designs; ``RandomPolicy`` / ``ExplorerPolicy`` play
episodes without an LLM.
"""

from atlas.envs.base import EpisodeRecorder, action_text, check_action, validate_args
from atlas.envs.policies import ExplorerPolicy, RandomPolicy, register_explorer
from atlas.envs.registry import get_env, list_envs, register_env
from atlas.envs.views import episode_view, task_view

__all__ = [
    "EpisodeRecorder",
    "ExplorerPolicy",
    "RandomPolicy",
    "action_text",
    "check_action",
    "episode_view",
    "get_env",
    "list_envs",
    "register_env",
    "register_explorer",
    "task_view",
    "validate_args",
]
