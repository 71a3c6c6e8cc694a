"""GraphWorld: a pure-Python, seeded room-navigation environment (built in)."""

from atlas.envs.graphworld.env import GraphWorldEnv
from atlas.envs.graphworld.world import OBJECT_POOL, GraphWorldParams, World, build_world

__all__ = ["OBJECT_POOL", "GraphWorldEnv", "GraphWorldParams", "World", "build_world"]
