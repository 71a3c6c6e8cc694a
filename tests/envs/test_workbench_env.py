"""The workbench plug-in (``tests/envs/workbench_env.py``): a procedure to learn, not a place: which
components a gadget takes and in which order. Random play almost never finishes, so memory has to learn
from the mounts that seated in failed episodes (with ``gadgets`` above 1, keyed on the exact goal:
every gadget has a recipe of its own)."""

from __future__ import annotations

import asyncio

import workbench_env  # registers "workbench"

from atlas.agent.advice_match import match_advice
from atlas.alma.author.smoke import asmoke_run, stub_llm
from atlas.alma.evaluate.runner import DesignRunner
from atlas.alma.genome import genome_design, parse_genome
from atlas.envs.base import action_label
from atlas.envs.policies import GoalWordPolicy, play_policy
from atlas.envs.registry import get_env
from atlas.envs.views import episode_view, task_view
from atlas.protocols.env import Action


def _genome(idle: str, match: str, prefer: str, form: str = "plan"):
    return parse_genome(
        {
            "name": f"workbench-{idle}-{match}-{prefer}-{form}",
            "encode": [{"part": "sequences", "params": {"successes_only": False, "idle": idle}}],
            "retrieve": [{"part": "replay", "params": {"match": match, "prefer": prefer, "form": form}}],
        }
    )


def _solved(genome, env, tasks, embedder, seed: int) -> int:
    report = asyncio.run(
        asmoke_run(
            genome_design(genome),
            env,
            tasks=(tasks[:16], tasks[16:28]),
            explorer_episodes=0,
            embedder=embedder,
            walks="advised",
            seed=seed,
        )
    )
    assert report.ran_clean, report.to_feedback()
    return sum(p["success"] for p in report.probes)


def test_a_mount_out_of_order_wastes_a_step_and_the_recipe_finishes_the_gadget():
    env = get_env("workbench")
    task = env.generate_family_tasks(1, 3, 0)[0]
    recipe = workbench_env.recipes(3)[task.metadata["gadget"]]
    obs = env.reset(task)
    wrong = next(c for c in obs["tray"] if c not in recipe)
    after = env.step(Action("mount", {"component": wrong}))
    assert after.observation["mounted"] == [] and env.steps_taken() == 1 and not after.done
    assert env.step(Action("mount", {"component": "nothing"})).error and env.steps_taken() == 1
    for component in recipe:
        result = env.step(Action("mount", {"component": component}))
    assert result.done and result.success and env.score() > 0.5
    assert ", ".join("mount " + c for c in recipe) in workbench_env.oracle(env, task, "full")


def test_memory_of_the_mounts_that_seated_for_this_gadget_learns_what_random_play_cannot(embedder):
    env = get_env("workbench")
    tasks = env.generate_family_tasks(28, 0, 100)
    walks = [GoalWordPolicy(i).run(env, t) for i, t in enumerate(tasks)]
    assert sum(w.success for w in walks) <= 3  # without memory the procedure is rarely found
    learned = _genome("drop", "goal", "most")  # progress kept from failures, per exact goal
    replayed = _genome("keep", "shape", "latest")  # the last attempt at any gadget, wasted mounts too
    seeds = (1, 2, 3, 4)  # the advised walk's draws: one seed's 12 probe tasks are noisy
    assert sum(_solved(learned, env, tasks, embedder, s) for s in seeds) >= 24  # of 48
    assert sum(_solved(replayed, env, tasks, embedder, s) for s in seeds) <= 8


def _advised(advice: str, env, obs) -> list[str]:
    labels = [action_label(a.tool, a.args) for a in env.candidate_actions(obs)]
    return sorted(match_advice(advice, env.summarize_observation(obs), labels).actions)


def test_two_mounts_that_seated_in_a_failed_attempt_are_advised_as_rules_the_agent_acts_on(embedder):
    """A failed attempt that seated two of three components: replayed as a plan its two steps are too
    short to be one (the agent's matcher reads plans from three steps), replayed as rules each step
    applies where the text shows the situation it changed ('Mounted nothing', then 'Mounted <first>')."""
    env = get_env("workbench")
    first, deploy = env.generate_family_tasks(2, 5, 0)
    recipe = workbench_env.recipes(5)[first.metadata["gadget"]]
    wrong = [c for c in workbench_env.COMPONENTS if c not in recipe]
    script = [wrong[0], recipe[0], wrong[1], recipe[1], *wrong[2:]]
    played = env.clone()
    trajectory = play_policy(
        played, first, lambda obs: Action("mount", {"component": script.pop(0)}), "scripted", None
    )
    assert not trajectory.success and played.mounted == recipe[:2]
    advice = {}
    for form in ("plan", "rules"):
        runner = DesignRunner(
            genome_design(_genome("drop", "goal", "most", form)), embedder=embedder, llm=stub_llm()
        )
        try:
            assert runner.update_sync(episode_view(played, trajectory), label="C1").ok
            board = env.clone()
            advice[form], log = runner.recall_sync(task_view(board, deploy, board.reset(deploy)))
            assert log.ok, log.error
        finally:
            runner.close()
    board = env.clone()
    start = board.reset(deploy)
    assert _advised(advice["plan"], board, start) == []
    assert _advised(advice["rules"], board, start) == ["mount " + recipe[0]]
    after = board.step(Action("mount", {"component": recipe[0]})).observation
    assert _advised(advice["rules"], board, after) == ["mount " + recipe[1]]
    after = board.step(Action("mount", {"component": recipe[1]})).observation
    assert _advised(advice["rules"], board, after) == []  # the third was never seen to seat
