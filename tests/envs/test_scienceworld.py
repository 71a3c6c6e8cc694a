"""ScienceWorld on the real simulator (marker ``scienceworld``; skipped, saying why, without the
``[scienceworld]`` extra or a Java runtime). One simulator is shared by the module's env, so the
file runs in well under a few minutes."""

from __future__ import annotations

import importlib.util
import json
import shutil

import pytest

from atlas.alma.evaluate.advice_headroom import headroom_tasks
from atlas.alma.evaluate.harness import held_out_tasks, run_tasks
from atlas.alma.state.config import AlmaConfig
from atlas.envs.registry import get_env
from atlas.envs.scienceworld import catalog
from atlas.envs.scienceworld.actions import LIMIT, Choice
from atlas.envs.scienceworld.gold import find, parse
from atlas.envs.scienceworld.simulator import (
    SIMULATORS,
    JavaMissingError,
    check_runtime,
    live_pids,
    wait_gone,
)
from atlas.envs.views import task_view
from atlas.errors import ConfigError
from atlas.protocols.env import Action, EnumeratesActions, HasSplits, StepsInThread

MISSING = (
    "the [scienceworld] extra is not installed"
    if importlib.util.find_spec("scienceworld") is None
    else "no Java runtime on PATH (apt-get install openjdk-17-jre-headless)"
    if shutil.which("java") is None
    else None
)
real = [pytest.mark.scienceworld, pytest.mark.skipif(MISSING is not None, reason=str(MISSING))]


# --- without the simulator ----------------------------------------------------------------------


def test_the_opening_walk_is_rewalked_from_the_start_room_by_known_doors():
    from atlas.envs.scienceworld.advice import rewalked, walk
    from atlas.envs.scienceworld.scene import room_of

    doors = {
        "hall": {"kitchen", "den"},
        "kitchen": {"hall", "outside"},
        "den": {"hall"},
        "outside": {"kitchen"},
    }
    assert walk(doors, "den", "outside") == [
        "open door to hall",
        "go to hall",
        "open door to kitchen",
        "go to kitchen",
        "open door to outside",
        "go to outside",
    ]
    assert walk(doors, "outside", "outside") == [] and walk(doors, "attic", "outside") is None
    path = ["open door to outside", "go to outside", "focus on egg"]
    rooms = ["kitchen", "kitchen", "outside", "outside"]
    assert rewalked(path, rooms, "den", doors)[-3:] == [
        "open door to outside",
        "go to outside",
        "focus on egg",
    ]
    assert rewalked(path, rooms, "den", doors)[:2] == ["open door to hall", "go to hall"]
    assert rewalked(path, rooms, "outside", doors) == ["focus on egg"]
    assert rewalked(path, rooms, "attic", doors) == path  # no known way: the path as it was
    assert room_of("This outside location is called the outside. Here you see:") == "outside"
    assert room_of("You move to the kitchen.") == ""


def test_registered_with_capabilities_and_no_simulator_started():
    env = get_env("scienceworld", task_type="use-thermometer,find-plant")
    assert env.task_types == ("use-thermometer", "find-plant")
    assert (
        isinstance(env, EnumeratesActions) and isinstance(env, StepsInThread) and isinstance(env, HasSplits)
    )
    with pytest.raises(ConfigError, match="unknown ScienceWorld task type 'boiling'"):
        get_env("scienceworld", task_type="boiling")


def test_splits_never_overlap_and_seed_only_orders():
    env = get_env("scienceworld", task_type=",".join(catalog.SUPPORTED))
    seen: dict[str, set[str]] = {}
    for split in catalog.SPLITS:
        size = sum(len(catalog.variations(t, split)) for t in env.task_types)
        tasks = env.split_tasks(split, size, seed=3)
        assert {t.metadata["split"] for t in tasks} == {split}
        seen[split] = {t.id for t in tasks}
        assert len(seen[split]) == size  # every variation of the split, none twice
        again = env.split_tasks(split, 5, seed=4)
        assert {t.id for t in again} <= seen[split]
    assert not (seen["train"] & seen["dev"]) and not (seen["train"] & seen["test"])
    assert not (seen["dev"] & seen["test"])


def test_headroom_plays_the_test_split():
    env = get_env("scienceworld", task_type="lifespan-longest-lived")
    tasks = headroom_tasks(env, tasks=6, seed=42, family=42, deployment_seeds=[1042, 2042])
    assert len({t.id for t in tasks}) == 6
    assert {t.metadata["split"] for t in tasks} == {"test"}


def test_a_search_collects_on_train_chooses_on_dev_and_reports_on_test():
    env = get_env("scienceworld", task_type="find-animal,lifespan-longest-lived")
    cfg = AlmaConfig.build(env="scienceworld", episodes=3, deploy_seeds=8)
    collection, deployment = run_tasks(cfg, env)
    test, source = held_out_tasks(cfg, env, collection + deployment)
    assert [{t.metadata["split"] for t in ts} for ts in (collection, deployment, test)] == [
        {"train"},
        {"dev"},
        {"test"},
    ]
    assert len(deployment) == 24 and len(test) == cfg.test_count and "test split" in source


def test_family_tasks_without_a_split_keep_collection_and_deployment_apart():
    env = get_env("scienceworld", task_type="find-animal")
    collection = env.generate_family_tasks(8, family=42, seed=42)
    deployment = env.generate_family_tasks(8, family=42, seed=1042)
    assert {t.metadata["split"] for t in collection} == {"train"}
    assert {t.metadata["split"] for t in deployment} == {"test"}


def test_missing_java_is_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no java here
    if importlib.util.find_spec("scienceworld") is None:
        with pytest.raises(ConfigError, match=r"atlas-memory\[scienceworld\]"):
            check_runtime()
        return
    with pytest.raises(JavaMissingError, match="apt-get install openjdk-17-jre-headless"):
        check_runtime()


def test_gold_commands_parse_every_way_the_separator_splits():
    readings = parse("move egg turtle egg in inventory to green box")
    assert (9, ["egg turtle egg in inventory", "green box"]) in readings
    assert parse("examine chocolate") == [(4, ["chocolate"])]
    assert parse("wait1") == [(18, [])]
    assert parse("sing a song") == []


# --- on the real simulator ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def env():
    if MISSING is not None:
        pytest.skip(MISSING)
    e = get_env("scienceworld", task_type=",".join(catalog.SUPPORTED), max_steps=200)
    yield e
    e.close()
    SIMULATORS.close()
    assert live_pids() == []


@pytest.mark.parametrize("split", catalog.SPLITS)
@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_split_sizes_match_the_simulator(env, split):
    sim = env._simulator()
    for task_type in ("use-thermometer", "boil", "find-plant"):
        sim.call(lambda s, t=task_type: s.load(t, 0, "", False))
        got = list(sim.call(lambda s, sp=split: getattr(s, f"getVariations{sp.capitalize()}")()))
        assert got == list(catalog.variations(task_type, split))


@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_reset_step_and_score(env):
    task = env.split_tasks("test", 1, seed=1)[0]
    obs = env.reset(task)
    assert obs["score"] == 0.0 and obs["steps_taken"] == 0
    assert "This room is called" in obs["text"] or "location is called" in obs["text"]
    assert 1 <= len(obs["actions"]) <= LIMIT
    assert "look around" in obs["actions"]
    assert env.format_goal(task).startswith("Your task is to")
    result = env.step(Action("act", {"command": "look around"}))
    assert result.error is None and env.steps_taken() == 1 and not result.done
    wrong = env.step(Action("act", {"command": "sing a song"}))
    assert wrong.error and "not a command" in wrong.error
    assert 0.0 <= env.score() <= 1.0


@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_a_task_shows_the_same_actions_whatever_order_the_simulator_lists_them_in(env):
    import dataclasses
    import random

    from atlas.envs.scienceworld.actions import short_list
    from atlas.envs.scienceworld.scene import in_order

    env.reset(env.split_tasks("train", 1, seed=3)[0])
    scene = env._scene
    assert scene.combos == in_order(scene.combos), "read in a fixed order"
    shown = [(c.label, c.command) for c in short_list(scene)]
    for seed in range(5):  # the simulator's order changes from one start of it to the next
        shuffled = list(scene.combos)
        random.Random(seed).shuffle(shuffled)
        again = dataclasses.replace(scene, combos=in_order(shuffled))
        assert [(c.label, c.command) for c in short_list(again)] == shown


@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_gold_paths_through_the_list_reach_full_score(env):
    """One test variation of every supported task type: the gold path, each step taken from the
    short list, scores 1.0; the list holds every gold step the full valid-action list holds but
    at most one."""
    for task_type in catalog.SUPPORTED:
        task = env._task_of(task_type, catalog.pick((task_type,), "test", 1, seed=5)[0][1])
        missed = []
        for command in env.gold_path(task):
            if env.done:
                break
            scene = env._scene
            listed = list(env._choices.values())
            assert len(listed) <= LIMIT
            entry = find(command, listed, scene)
            if entry is None:
                everything = [Choice(c.command, c.command, c.template, c.objects) for c in scene.combos]
                if find(command, everything, scene) is not None:
                    missed.append(command)
                continue
            env.step(Action("act", {"command": entry.label}))
        assert env.score() == 1.0 and env.success(), (task.id, missed)
        assert len(missed) <= 1, (task.id, missed)


@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_task_view_hides_the_gold_path(env):
    task = env._task_of("find-living-thing", 226)
    gold = env.gold_path(task)
    first = env.reset(task)
    view = task_view(env, task, first)
    assert set(view) == {"goal", "observation", "observation_text", "actions", "domain"}
    text = json.dumps(view)
    assert "226" not in text and task.id not in text and "variation" not in text
    # the thing the gold path focuses on lives in a room the agent has not seen yet
    target = next(c for c in gold if c.startswith("focus on ")).removeprefix("focus on ")
    assert target not in first["text"]
    assert target not in text
    assert "; ".join(gold) not in text


@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_oracle_advice_full_is_the_gold_path_learnable_comes_from_train(env):
    task = env._task_of("lifespan-longest-lived", 95)
    full = env.oracle_advice(task, "full")
    assert full.startswith("Do exactly these actions in order:") and "focus on" in full
    learnable = env.oracle_advice(task, "learnable")
    assert learnable.startswith("A solved task of this kind") and "focus on" in learnable
    with pytest.raises(ValueError):
        env.oracle_advice(task, "everything")


@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_learnable_advice_walks_from_this_variations_start_room(env):
    """v96 starts in the workshop, whose only door is the hallway's; the closest train variation's path
    starts next to the outside. The learnable advice walks there from the workshop, by the doors the
    train variations showed, then does what that path did."""
    from atlas.envs.scienceworld.scene import room_of

    task = env._task_of("lifespan-longest-lived", 96)
    probe = env.clone()
    first = probe.reset(task)["text"]
    probe.close()
    assert room_of(first) == "workshop" and "A door to the hallway" in first
    steps = [line.split(". ", 1)[1] for line in env.oracle_advice(task, "learnable").splitlines()[1:]]
    assert steps[:2] == ["open door to hallway", "go to hallway"]
    assert "go to outside" in steps and steps[-1].startswith("focus on")


@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_a_killed_simulator_is_replaced_and_the_episode_goes_on(env):
    task = env._task_of("find-living-thing", 226)
    gold = env.gold_path(task)
    env.reset(task)
    for command in gold[:2]:
        entry = find(command, list(env._choices.values()), env._scene)
        env.step(Action("act", {"command": entry.label}))
    before = env.score()
    pid = env.kill_simulator()
    assert pid is not None
    entry = find(gold[2], list(env._choices.values()), env._scene)
    result = env.step(Action("act", {"command": entry.label}))
    assert result.error is None and not result.done
    assert env.restarts == 1 and env.failure is None
    assert env.score() >= before and env.steps_taken() == 3
    assert wait_gone(pid)
    assert pid not in live_pids()


@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_a_simulator_that_hangs_twice_ends_the_episode_as_failed(env):
    """A step timeout far below a step's time makes every call 'hang': the simulator is killed, the
    replay's simulator too, and the episode ends failed with the reason; no java is left."""
    task = env._task_of("find-living-thing", 227)
    env.reset(task)
    pid = env._sim.pid
    env.step_timeout = 1e-6
    try:
        result = env.step(Action("act", {"command": "look around"}))
    finally:
        env.step_timeout = 60.0
    assert result.done and not result.success and env.score() == 0.0
    assert result.error and "simulator failure" in result.error
    assert env.failure and "hung" in env.failure
    assert wait_gone(pid)
    assert env.candidate_actions(result.observation) == []
    env.reset(env._task_of("find-living-thing", 228))  # the next episode gets a fresh simulator
    assert env.failure is None and env.observe()["actions"]


@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_java_objects_freed_after_a_kill_log_nothing(caplog):
    """A Java object collected after its simulator was killed (at the end of a run, say) must not
    make py4j dial the dead JVM and log a "Connection refused" traceback."""
    import gc
    import logging

    from atlas.envs.scienceworld.simulator import Simulator

    sim = Simulator()
    names = sim.call(lambda server: server.getTaskNames())
    assert len(names) > 10
    with caplog.at_level(logging.DEBUG, logger="py4j"):
        sim.kill("test")
        del names
        gc.collect()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


def _java_children() -> set[int]:
    """Process ids of this process's child processes that run ``java`` (Linux ``/proc``)."""
    import os
    from pathlib import Path

    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmd = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z" and b"java" in cmd:
            out.add(int(stat.parent.name))
    return out


@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_a_simulator_that_starts_after_its_timeout_is_ended():
    """Under load a JVM can come up after its start timed out; nothing holds it then, and it is ended as
    soon as it is up (the simulator object's own close), not left running until the interpreter exits."""
    import time

    from atlas.envs.scienceworld.simulator import Simulator, SimulatorDied

    before = _java_children()
    with pytest.raises(SimulatorDied, match="did not start within"):
        Simulator(start_timeout=0.01)
    deadline = time.monotonic() + 60
    while not (late := _java_children() - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert late, "the JVM never started"
    deadline = time.monotonic() + 90
    while _java_children() & late and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _java_children() & late, f"the late JVM {late} is still running"


@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_context_schema_example_is_a_real_explorer_episode(env):
    from atlas.envs.registry import spec_of

    schema = spec_of(env).context_schema(env)
    assert schema["environment"] == "scienceworld"
    example = schema["episode"]["example"]
    assert example["steps"] and 0.0 <= example["score"] <= 1.0
    assert all(s["action"]["tool"] == "act" for s in example["steps"])
    assert "score" in schema["observation"]["keys"]


@pytest.mark.scienceworld
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_the_probe_credits_what_the_advice_reached_before_its_own_rule_lost_it(env):
    """ScienceWorld scores a wrong ``focus on`` 0. Advice that walks to the animals and stops hands the
    probe's rule a partial score, which the screening credits though the rule's focus then loses it;
    advice that itself focuses wrongly keeps its final 0."""
    from atlas.alma.author.advice_probe import follow_advice
    from atlas.alma.genome.step import _credited

    task = env._task_of("lifespan-longest-lived", 96)
    gold = [line.split(". ", 1)[1] for line in env.oracle_advice(task, "full").splitlines()[1:]]
    walk = gold[: next(i for i, a in enumerate(gold) if a.startswith("focus on"))]

    def probe(advice: list[str]):
        play = env.clone()
        try:
            return follow_advice(play, task, "\n".join(advice), unadvised="goal_words")
        finally:
            play.close()

    handed = probe(walk)
    assert handed.unadvised and 0 < handed.advised_score < 1
    assert _credited(handed.to_dict()) >= handed.advised_score
    if handed.score < handed.advised_score:  # the rule's focus lost it
        assert _credited(handed.to_dict()) == handed.advised_score
    play = env.clone()
    obs = play.reset(task)
    for action in walk:
        obs = play.step(Action("act", {"command": action})).observation
    labels = [a.args["command"] for a in play.candidate_actions(obs)]
    play.close()
    wrong = next(lb for lb in labels if lb.startswith("focus on") and lb != gold[len(walk)])
    failed = probe([*walk, wrong])
    assert not failed.success and failed.unadvised == 0
    assert failed.advised_score == 0 and _credited(failed.to_dict()) == failed.score == 0
