"""ALFWorld seed design: where things were seen, and what worked before.

update() reads every observation for "On the X, you see ..." / "In it, you see ..." lines and
counts, per object type, the receptacles it was found in; after a success it stores the goal
and the action sequence. recall() parses the goal's object, lists the receptacles where that
kind of object was seen most often, and shows the actions of the most similar past success.
Allowed imports only; memory stays plain JSON.
"""

import re

SEEN = re.compile(r"(?:On the|In it, you see|The) ?([a-z]+ \d+)?[^.]*?you see ([^.]*)\.")
ARRIVE = re.compile(r"You (?:arrive at|open the) ([a-z]+ \d+)")
GOAL_OBJ = re.compile(
    r"(?:put|clean|heat|cool|find|look at|examine)(?: a| some| two| the)?(?: clean| hot| cool)? ([a-z]+)"
)


def _kind(name):
    return name.rsplit(" ", 1)[0] if name and name[-1].isdigit() else name


def _texts(episode):
    yield episode["task"]["observation"].get("text", "")
    for step in episode["steps"]:
        yield (step.get("observation") or {}).get("text", "")


def update(memory, episode, tools):
    where = memory.setdefault("where", {})
    here = ""
    for text in _texts(episode):
        m = ARRIVE.search(text)
        if m:
            here = m.group(1)
        if not here or "you see" not in text or "middle of a room" in text:
            continue
        seen = text.split("you see", 1)[1]
        for item in re.split(r", and |, | and ", seen.strip(" .")):
            item = re.sub(r"^(a|an|some) ", "", item.strip())
            if item and item != "nothing":
                counts = where.setdefault(_kind(item), {})
                counts[_kind(here)] = counts.get(_kind(here), 0) + 1
    memory["episodes"] = memory.get("episodes", 0) + 1
    if episode["success"]:
        actions = [
            s["action"]["args"].get("command", "") for s in episode["steps"] if s["action"]["tool"] == "act"
        ]
        tools.store_obs(
            episode["task"]["goal"] + " => " + "; ".join(actions),
            {"steps": episode["steps_taken"]},
            "successes",
        )
    print("object kinds mapped:", len(where))


def recall(memory, task, tools):
    goal = task["goal"]
    lines = []
    m = GOAL_OBJ.search(goal)
    if m:
        obj = m.group(1)
        counts = memory.get("where", {}).get(obj, {})
        if counts:
            ranked = sorted(counts.items(), key=lambda kv: -kv[1])[:4]
            lines.append(
                "A "
                + obj
                + " was found before in: "
                + ", ".join(r for r, _ in ranked)
                + ". Look there first."
            )
    similar = tools.find_similar(goal, 1, "successes")
    if similar and similar[0]["score"] > 0.5:
        lines.append("A similar task was solved with: " + similar[0]["text"])
    lines.append(
        "Open closed receptacles to see inside; heat with a microwave, cool with a fridge, clean with a sinkbasin."
    )
    return "\n".join(lines)
