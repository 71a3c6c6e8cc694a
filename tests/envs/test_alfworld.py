"""ALFWorld: the offline generator (all six task types won by their gold plans), determinism,
the family property, the act tool, real-data layout loading, and the policies."""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("alfworld", reason="ALFWorld tests need the optional extra atlas-memory[alfworld]")
pytest.importorskip("textworld", reason="ALFWorld tests need textworld (extra atlas-memory[alfworld])")

from atlas.envs import ExplorerPolicy, episode_view, get_env, task_view
from atlas.envs.alfworld import TASK_TYPES, AlfWorldEnv
from atlas.envs.alfworld.households import build_household, build_task
from atlas.envs.alfworld.pddl import display_names
from atlas.errors import ConfigError, EnvError
from atlas.protocols.env import Action, Environment


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("alfworld-cache")


@pytest.mark.slow
@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_every_task_type_is_won_by_its_gold_plan(task_type, cache):
    env = AlfWorldEnv(task_types=[task_type], family_mode=False, cache_dir=cache)
    task = env.generate_tasks(1, seed=300)[0]
    assert task.metadata["task_type"] == task_type
    obs = env.reset(task)
    assert task.description in obs["text"] and "Your task is to:" in obs["text"]
    plan = env.gold_plan()
    assert plan and len(plan) <= env.max_steps
    for i, command in enumerate(plan):
        assert command in obs["admissible_commands"], (command, obs["admissible_commands"])
        r = env.step(Action("act", {"command": command}))
        obs = r.observation
        assert r.error is None
        assert r.done == (i == len(plan) - 1)
    assert env.success() and r.success
    assert env.score() == pytest.approx(max(0.5, 1 - len(plan) / 60))


def test_generation_is_deterministic_and_family_shares_the_household(cache):
    env = AlfWorldEnv(cache_dir=cache)
    a = env.generate_tasks(6, seed=42)
    b = AlfWorldEnv(cache_dir=cache).generate_tasks(6, seed=42)
    assert [t.model_dump() for t in a] == [t.model_dump() for t in b]
    assert {t.metadata["family"] for t in a} == {42}
    h1, h2 = build_household(42), build_household(42)
    assert h1 == h2
    specs = [build_task(h1, seed=s, task_types=TASK_TYPES) for s in range(42, 48)]
    assert len({json.dumps(s.placements, sort_keys=True) for s in specs}) == len(specs)  # placements differ
    assert len({(s.goal_text) for s in specs}) > 1
    other = [build_household(f) for f in range(10)]
    assert len({(h.kind, len(h.receptacles), len(h.items)) for h in other}) > 1
    free = AlfWorldEnv(cache_dir=cache, family_mode=False).generate_tasks(3, seed=42)
    assert [t.metadata["family"] for t in free] == [42, 43, 44]


def test_display_names_follow_alfworld_demangler():
    from types import SimpleNamespace

    from alfworld.agents.utils.misc import Demangler

    ids = [
        "cabinet_bar_01",
        "cabinet_bar_02",
        "cabinet_bar_03",
        "sink_bar_01_bar_sinkbasin",
        "apple_bar_01",
        "loc_bar_cabinet_bar_01",
        "AppleType",
    ]
    infos = {i: SimpleNamespace(id=i) for i in ids}
    d = Demangler(game_infos=infos)
    mine = display_names(ids)
    for i in ids[:5]:
        assert mine[i] == d.demangle_alfred_name(i)


def test_act_tool_and_invalid_commands(cache):
    env = AlfWorldEnv(task_types=["pick_and_place_simple"], cache_dir=cache)
    assert isinstance(env, Environment)
    assert "enum" not in env.tools()[0].parameters["properties"]["command"]
    task = env.generate_tasks(1, seed=5)[0]
    obs = env.reset(task)
    assert set(obs) == {"text", "admissible_commands", "steps_taken", "steps_left", "location", "inventory"}
    assert "help" not in obs["admissible_commands"]
    spec = env.tools()[0]
    assert (
        spec.name == "act" and spec.parameters["properties"]["command"]["enum"] == obs["admissible_commands"]
    )
    r = env.step(Action("act", {"command": "fly to the moon"}))
    assert r.error and "not an admissible command" in r.error and r.observation["text"] == "Nothing happens."
    assert env.steps_taken() == 1  # as in ALFWorld, a wasted turn
    r = env.step(Action("jump", {}))
    assert "unknown tool" in r.error and env.steps_taken() == 1
    r = env.step(Action("act", {"cmd": "look"}))
    assert "exactly one string argument" in r.error
    go = next(c for c in obs["admissible_commands"] if c.startswith("go to "))
    r = env.step(Action("act", {"command": "  " + go.upper() + " "}))  # case/space tolerant
    assert r.error is None and "You arrive at" in r.observation["text"]
    assert env.summarize_observation(r.observation).startswith("You arrive at")


def test_views_hide_the_answer(cache):
    env = AlfWorldEnv(cache_dir=cache)
    task = env.generate_tasks(1, seed=9)[0]
    traj = ExplorerPolicy(0, max_turns=4).run(env, task)
    ep = episode_view(env, traj)
    text = json.dumps(ep)
    for secret in (task.id, "walkthrough", "gamefile", "household", "task_type", '"seed"', '"family"'):
        assert secret not in text
    assert json.dumps(env.gold_plan()) not in text
    first = task_view(env, task, env.clone().reset(task))
    assert (
        set(first) == {"goal", "observation", "observation_text", "actions", "domain"}
        and first["domain"] == "alfworld"
    )
    assert "Admissible commands" not in first["observation_text"]  # the design reads actions from steps
    assert first["goal"] == task.description


@pytest.mark.slow
def test_explorer_and_gold_policies(cache):
    env = AlfWorldEnv(cache_dir=cache, family_mode=False)
    tasks = env.generate_tasks(4, seed=500)
    explorer = [ExplorerPolicy(0).run(env, t) for t in tasks]
    assert sum(t.success for t in explorer) >= 3
    gold = ExplorerPolicy(0, use_gold=True).run(env, tasks[0])
    assert gold.success and gold.metadata["policy"] == "gold"


def test_unsupported_combinations_and_names(cache):
    with pytest.raises(ConfigError):
        AlfWorldEnv(task_types=["make_coffee"])
    with pytest.raises(ConfigError):
        AlfWorldEnv(scene_kinds=["garage"])
    env = AlfWorldEnv(task_types=["pick_heat_then_place"], scene_kinds=["bathroom"], cache_dir=cache)
    with pytest.raises(ConfigError):
        env.generate_tasks(1, seed=0)
    assert get_env("alfworld", cache_dir=cache).name == "alfworld"


def test_real_data_layout(tmp_path, cache):
    """A directory in the alfworld-download layout is read as the real benchmark would be."""
    gen = AlfWorldEnv(task_types=["pick_and_place_simple"], cache_dir=cache, family_mode=False)
    root = tmp_path / "json_2.1.1" / "valid_seen"
    for i, task in enumerate(gen.generate_tasks(3, seed=70)):
        gen.reset(task)
        game = gen._write_generated(task)[0]
        trial = root / f"pick_and_place_simple-Mug-None-Desk-{301 + (i % 2)}" / f"trial_T{i}"
        trial.mkdir(parents=True)
        shutil.copy(game, trial / "game.tw-pddl")
    env = AlfWorldEnv(data_dir=tmp_path, split="valid_seen", cache_dir=cache)
    assert env.mode == "data"
    tasks = env.generate_tasks(2, seed=0)
    assert all(t.metadata["mode"] == "data" and t.metadata["family"] in (301, 302) for t in tasks)
    assert len({t.metadata["family"] for t in tasks}) == 1  # family mode: one floor plan
    fam = env.generate_family_tasks(4, family=302, seed=1)
    assert {t.metadata["family"] for t in fam} == {302}
    task = tasks[0]
    obs = env.reset(task)
    assert task.description in obs["text"]
    for command in env.gold_plan():
        env.step(Action("act", {"command": command}))
    assert env.success()
    with pytest.raises(EnvError):
        AlfWorldEnv(data_dir=tmp_path, split="train").generate_tasks(1, seed=0)


class _Tools:
    """The design tool API in-process (the sandbox proxies the real one to the host)."""

    def __init__(self) -> None:
        self.stored: list[tuple[str, dict, str]] = []

    def store_obs(self, text, metadata=None, collection="default"):
        self.stored.append((text, metadata or {}, collection))
        return "ok"

    def find_similar(self, query, k=3, collection=None):
        words = set(query.split())
        scored = [
            {"score": len(words & set(t.split())) / max(1, len(words)), "text": t, "metadata": m}
            for t, m, c in self.stored
            if collection in (None, c)
        ]
        return sorted(scored, key=lambda r: -r["score"])[:k]


def test_seed_design_and_context_schema(cache):
    env = AlfWorldEnv(cache_dir=cache, scene_kinds=["bathroom"], task_types=["pick_and_place_simple"])
    ns: dict = {}
    exec(compile(env.seed_design(), "design_seed.py", "exec"), ns)
    memory: dict = {}
    tools = _Tools()
    tasks = env.generate_tasks(3, seed=11)
    for task in tasks[:2]:
        ns["update"](memory, episode_view(env, ExplorerPolicy(0).run(env, task)), tools)
    json.dumps(memory)
    assert memory["episodes"] == 2 and memory["where"]
    advice = ns["recall"](memory, task_view(env, tasks[2], env.clone().reset(tasks[2])), tools)
    assert isinstance(advice, str) and "receptacles" in advice
    schema = env.context_schema()
    json.dumps(schema)
    assert set(schema["episode"]["example"]) == {"task", "steps", "success", "score", "steps_taken"}
    assert schema["agent_tools"][0]["name"] == "act"


@pytest.mark.slow
async def test_task_agent_plays_alfworld_in_json_mode(cache):
    from atlas.agent import TaskAgent
    from atlas.infra.llm import ScriptedLLM

    env = AlfWorldEnv(task_types=["pick_heat_then_place"], cache_dir=cache)
    task = env.generate_tasks(1, seed=12)[0]
    probe = env.clone()
    probe.reset(task)
    plan = probe.gold_plan()
    replies = [json.dumps({"thought": "try", "tool": "act", "args": {"command": "teleport to fridge 1"}})]
    replies += [json.dumps({"thought": "next", "tool": "act", "args": {"command": c}}) for c in plan]
    llm = ScriptedLLM(replies)
    traj = await TaskAgent(llm, tool_mode="json", action_format="tools").run(
        env.clone(), task, advice="Microwaves heat things."
    )
    assert traj.success and traj.metadata["invalid_actions"] == 1
    first = llm.history[0]
    enum = first.kwargs["json_schema"]["properties"]["args"]["properties"]["command"]["enum"]
    assert "go to microwave 1" in enum
    assert "Admissible commands:" in first.messages[-1]["content"]
    assert (
        "Microwaves heat things." not in first.messages[0]["content"]
    )  # advice is data, not the system role
    assert "<notes>\nMicrowaves heat things.\n</notes>" in first.messages[-1]["content"]


def test_observations_say_where_the_player_is_and_what_it_carries(cache):
    """``location`` and ``inventory`` follow what the game printed ("You arrive at", "You pick up",
    "You move"), and the agent reads them in the observation text."""
    env = AlfWorldEnv(task_types=["pick_and_place_simple"], family_mode=False, cache_dir=cache)
    task = env.generate_tasks(1, seed=301)[0]
    obs = env.reset(task)
    assert (obs["location"], obs["inventory"]) == ("the middle of the room", [])
    assert "You are at the middle of the room. You carry: nothing." in env.summarize_observation(obs)
    plan = env.gold_plan()
    assert plan
    held: list[str] = []
    for command in plan:
        obs = env.step(Action("act", {"command": command})).observation
        if command.startswith("go to "):
            assert obs["location"] == command.removeprefix("go to ")
        if command.startswith("take "):
            held.append(command.split(" from ")[0].removeprefix("take "))
        if command.startswith(("move ", "put ")):
            held = []
        assert obs["inventory"] == held, (command, obs)
    assert env.success()
    text = env.summarize_observation(obs)
    assert f"You are at {obs['location']}." in text
    bad = env.step(Action("act", {"command": "fly away"}))  # refused: nothing moves
    assert bad.error and bad.observation["location"] == obs["location"]
