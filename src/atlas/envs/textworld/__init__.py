"""TextWorld challenge games generated offline (optional extra ``atlas-memory[textworld]``)."""

from atlas.envs.textworld.env import CHALLENGES, TextWorldEnv

__all__ = ["CHALLENGES", "TextWorldEnv"]
