"""ALFWorld: real data through the alfworld package, or offline-generated ALFWorld-style games
(optional extra ``atlas-memory[alfworld]``)."""

from atlas.envs.alfworld.env import AlfWorldEnv
from atlas.envs.alfworld.households import SCENE_KINDS, TASK_TYPES

__all__ = ["SCENE_KINDS", "TASK_TYPES", "AlfWorldEnv"]
