"""Learnable headroom advice for generated ALFWorld-style games: where things usually are.

Objects of a household sit in their usual receptacle with probability ``habit``; a memory of
earlier games in the same household could learn those habits, but not this game's placements.
"""

from __future__ import annotations

from atlas.core.types import Task
from atlas.envs.alfworld.households import OPENABLE, build_household, build_task, kinds_supporting
from atlas.envs.alfworld.pddl import all_ids, display_names

_STEPS = {
    "pick_clean_then_place_in_recep": "clean it with the sinkbasin",
    "pick_heat_then_place_in_recep": "heat it with the microwave",
    "pick_cool_then_place_in_recep": "cool it with the fridge",
}


def household_advice(
    task: Task, task_types: tuple[str, ...], scene_kinds: tuple[str, ...], habit: float
) -> str:
    meta = task.metadata
    if meta.get("mode") != "generated":
        return ""
    params = meta.get("params", {})
    types = tuple(params.get("task_types", task_types))
    h = build_household(
        int(meta["family"]), kinds_supporting(types, tuple(params.get("scene_kinds", scene_kinds)))
    )
    spec = build_task(h, seed=int(meta["seed"]), task_types=types, habit=float(params.get("habit", habit)))
    names = display_names(all_ids(h))
    obj = spec.object_type.lower()
    lines = [
        f"In this house the {obj} is usually in {names[h.habits[spec.object_type]]}; "
        "if it is not there, open and check the other places that can hold it."
    ]
    if spec.task_type in _STEPS:
        lines.append(f"After you take the {obj}, {_STEPS[spec.task_type]}, then put it in place.")
    if spec.task_type == "look_at_obj_in_light" and h.lamp_holder:
        lines.append(
            f"The desklamp is on {names[h.lamp_holder]}: carry the {obj} there and use the desklamp."
        )
    if spec.receptacle_type:
        goal = sorted((r.id for r in h.receptacles if r.type == spec.receptacle_type), key=lambda x: names[x])
        opened = " (open it first)" if spec.receptacle_type in OPENABLE else ""
        lines.append(f"Put it in {names[goal[0]]}{opened}.")
    return "\n".join(lines)


__all__ = ["household_advice"]
