"""ALFWorld's context schema (shown to the meta-agent)."""

from __future__ import annotations

from typing import Any

from atlas.envs.textgame_schema import text_game_schema
from atlas.protocols.env import Environment


def context_schema(env: Environment) -> dict[str, Any]:
    return text_game_schema(
        env,
        summary=(
            "ALFWorld household tasks in text. One room (kitchen, living room, bedroom or bathroom) with "
            "numbered receptacles (cabinet 3, countertop 1, fridge 1...) holding objects. Six task types: put an "
            "object somewhere; the same after cleaning (sinkbasin), heating (microwave) or cooling (fridge) it; put "
            "two objects; look at an object under the desklamp. Closed receptacles must be opened to see inside. "
            "Tasks of a family share the household; objects tend to be in the same places but move between "
            "tasks. 30 commands max; score max(0.5, 1 - steps/60) on success, 0 on failure."
        ),
        goal_hint="e.g. 'put a hot mug in countertop', 'find two cd and put them in drawer', "
        "'look at book under the desklamp'",
        extra_keys={
            "location": "str — where the player is: 'the middle of the room' at the start, then the "
            "receptacle it last arrived at (e.g. 'countertop 1')",
            "inventory": "list[str] — the objects the player carries (e.g. ['apple 1'])",
        },
    )


__all__ = ["context_schema"]
