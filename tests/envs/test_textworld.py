"""TextWorld challenge games: generated offline into a cache dir, played through act(command),
won by their walkthroughs; family mode shares the map."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("textworld", reason="TextWorld tests need the optional extra atlas-memory[textworld]")

from atlas.envs import ExplorerPolicy, episode_view, get_env
from atlas.envs.textworld import TextWorldEnv
from atlas.errors import ConfigError
from atlas.protocols.env import Action, Environment

# Jericho warns that generated games lack its per-game hints (score detection); irrelevant here.
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*(not fully supported|unsupported game|Unable to retrieve walkthrough)"
)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("textworld-cache")


def test_tasks_are_cheap_deterministic_and_configurable(cache):
    env = TextWorldEnv(challenge="coin_collector", level=3, cache_dir=cache)
    assert isinstance(env, Environment) and env.max_steps == 50
    a, b = env.generate_tasks(3, seed=4), env.clone().generate_tasks(3, seed=4)
    assert [t.model_dump() for t in a] == [t.model_dump() for t in b]
    assert {t.metadata["family"] for t in a} == {4} and [t.metadata["seed"] for t in a] == [4, 5, 6]
    assert not list(cache.iterdir())  # nothing compiled until a reset
    with pytest.raises(ConfigError):
        TextWorldEnv(challenge="zork")
    with pytest.raises(ConfigError):
        TextWorldEnv(challenge="cooking", level=9)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("challenge", "level"), [("tw-treasure_hunter", 3), ("tw-coin_collector", 4), ("tw-cooking", 1)]
)
def test_walkthrough_wins_and_observations_are_clean(challenge, level, cache):
    env = get_env("textworld", challenge=challenge, level=level, cache_dir=cache)
    task = env.generate_tasks(1, seed=21)[0]
    obs = env.reset(task)
    assert "$$" not in obs["text"] and obs["admissible_commands"]
    assert env.tools()[0].parameters["properties"]["command"]["enum"] == obs["admissible_commands"]
    assert all(p.suffix in (".z8", ".json") for p in cache.iterdir() if p.is_file())
    traj = ExplorerPolicy(0, use_gold=True).run(env, task)
    assert traj.success and traj.score > 0.5
    ep = episode_view(env, traj)
    assert "walkthrough" not in json.dumps(ep) and task.id not in json.dumps(ep)


@pytest.mark.slow
def test_family_shares_the_map(cache):
    import textworld

    env = TextWorldEnv(challenge="coin_collector", level=4, cache_dir=cache)
    t1, t2 = env.generate_family_tasks(2, family=8, seed=30)
    rooms = []
    for t in (t1, t2):
        game = textworld.Game.load(str(env.game_path(t).with_suffix(".json")))
        rooms.append(sorted(r.name for r in game.world.rooms))
    assert rooms[0] == rooms[1]


@pytest.mark.slow
def test_invalid_command_and_explorer(cache):
    env = TextWorldEnv(challenge="coin_collector", level=4, cache_dir=cache)
    task = env.generate_tasks(1, seed=21)[0]
    env.reset(task)
    r = env.step(Action("act", {"command": "xyzzy"}))
    assert "not an admissible command" in r.error and env.steps_taken() == 1
    traj = ExplorerPolicy(0).run(env, task)
    assert traj.metadata["steps_taken"] <= env.max_steps
    schema = env.context_schema()
    json.dumps(schema)
    assert schema["environment"] == "textworld" and env.seed_design().count("def ") >= 2
