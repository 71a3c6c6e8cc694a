"""ScienceWorld (optional extra ``atlas-memory[scienceworld]``; needs a Java runtime)."""

from atlas.envs.scienceworld.env import ScienceWorldEnv

__all__ = ["ScienceWorldEnv"]
