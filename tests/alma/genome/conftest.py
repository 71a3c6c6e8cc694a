"""Fixtures of the genome tests: one real sandbox pool per module, the built-in environments built
offline (ALFWorld / TextWorld into a session cache dir; skipped with the reason when their extra is
missing), and the smoke-run shorthand every module uses."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def pool():
    from atlas.alma.sandbox.pool import WorkerPool

    p = WorkerPool(max_workers=2)
    yield p
    p.close()


@pytest.fixture(scope="session")
def env_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("genome-env-cache")


@pytest.fixture(scope="session")
def make_env(env_cache):
    """``make_env(name)``: the built-in environment ``name``, built offline; pytest.skip naming the
    reason when it cannot be (its optional extra is not installed, or it needs files it cannot get
    offline); any other failure is a failure. Built once per session (runs play clones)."""
    from atlas.envs.registry import get_env

    built: dict[str, object] = {}

    def build(name: str):
        if name not in built:
            built[name] = _build(name)
        return built[name]

    def _build(name: str):
        if name == "graphworld":
            return get_env("graphworld")
        if name == "scienceworld":
            import shutil

            pytest.importorskip(
                "scienceworld", reason="scienceworld needs the extra atlas-memory[scienceworld]"
            )
            if shutil.which("java") is None:
                pytest.skip("no Java runtime on PATH (apt-get install openjdk-17-jre-headless)")
            return get_env("scienceworld")
        pytest.importorskip("textworld", reason=f"{name} needs textworld (extra atlas-memory[{name}])")
        if name == "alfworld":
            pytest.importorskip("alfworld", reason="alfworld needs the optional extra atlas-memory[alfworld]")
        try:
            if name == "textworld-fetch":  # the TextWorld challenge with a family structure to learn
                env = get_env("textworld", challenge="fetch", level=8, cache_dir=env_cache / name)
            else:
                env = get_env(name, cache_dir=env_cache / name)
            env.clone().reset(env.generate_tasks(1, 0)[0])  # generates its first game offline
        except (ImportError, OSError) as exc:  # a missing dependency or a download it cannot make offline
            pytest.skip(f"{name} cannot be constructed offline: {type(exc).__name__}: {exc}")
        return env

    return build


@pytest.fixture
def smoke(pool, embedder):
    """``smoke(design, env)``: the real smoke run (3 collection episodes, 3 deployment recalls)."""
    from atlas.alma.author.smoke import smoke_run

    def run(design, env, episodes=3, recall_tasks=3):
        return smoke_run(design, env, episodes, recall_tasks=recall_tasks, pool=pool, embedder=embedder)

    return run


@pytest.fixture
def ran_clean(make_env, smoke):
    """``ran_clean(name, genome, plug_ins)``: the environment ``name`` (a plug-in of ``tests/envs/`` when in
    ``plug_ins``), after the genome's design ran clean on it in the real smoke run with no part failing."""
    from atlas.alma.genome import genome_design
    from atlas.envs.registry import get_env

    def run(name, genome, plug_ins):
        if name in plug_ins:
            __import__(f"{name}_env")
        env = get_env(name) if name in plug_ins else make_env(name)
        report = smoke(genome_design(genome), env)
        assert report.ran_clean, report.to_feedback()
        assert not [p for c in report.calls for p in c.prints if " failed:" in p]
        return env

    return run


@pytest.fixture
def random_games():
    """``random_games(env, design)``: the design's memory from six random games of ``env`` (seed 3's tasks),
    the actions those games took (lower case), and the task view of a seventh task."""
    from atlas.envs.policies import WALKS
    from atlas.envs.views import episode_view, task_view

    def run(env, design, games=6):
        tasks = env.generate_tasks(games + 1, seed=3)
        memory: dict = {}
        taken: set[str] = set()
        play = env.clone()
        try:
            for i, t in enumerate(tasks[:games]):
                episode = episode_view(play, WALKS["random"](i).run(play, t))
                taken |= {s["action"]["text"].lower() for s in episode["steps"]}
                design["update"](memory, episode, None)
        finally:
            getattr(play, "close", lambda: None)()
        probe = env.clone()
        try:
            view = task_view(probe, tasks[games], probe.reset(tasks[games]))
        finally:
            getattr(probe, "close", lambda: None)()
        return memory, taken, view

    return run
