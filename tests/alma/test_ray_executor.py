"""`--executor ray` on a real Ray cluster started here: a head and one more node, each its own
processes (``ray.cluster_utils.Cluster``). A scripted search run on it gives the archive a local run
gives; a worker killed, or a node removed, mid-run costs recorded retries and nothing else; a resumed
run may switch executors; a design's tool budgets and the request-rate limit hold across the
workers; a local model plays one episode per ``llm`` slot; an address that does not answer (or is
no Ray head) is a clear error within seconds; without Ray installed the CLI says how to install the
extra, and the local executor never imports Ray. Select them with ``-m ray`` (1–1.5 minutes on 2
cores)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import cluster_doubles  # noqa: F401  (registers the cluster: models in this process too)
import pytest
from alma_doubles import GIVE_UP_DESIGN, debug_policy, fenced, meta_policy
from typer.testing import CliRunner

import atlas.alma
from atlas.errors import ClusterError
from atlas.infra.llm import ScriptedLLM

pytestmark = pytest.mark.ray

TESTS = Path(__file__).resolve().parents[1]
SETTINGS = dict(
    env="graphworld",
    episodes=2,
    rooms=5,
    deploy_seeds=2,
    seed=42,
    meta_turns=2,
    baselines=["trajectory_retrieval"],  # a host-side design too: its state travels as a snapshot
    quiet=True,
    stage_tasks=2,
    concurrency=4,
    baseline_cache=False,
)


def meta_models() -> tuple[ScriptedLLM, ScriptedLLM]:
    return ScriptedLLM(meta_policy({1: [fenced("give_up", GIVE_UP_DESIGN)]})), ScriptedLLM(debug_policy)


def search(run_dir: Path, model: str = "cluster:task", **settings: Any) -> Any:
    meta, debug = meta_models()
    archive, _ = atlas.alma.run(
        model=model, meta_llm=meta, debug_llm=debug, run_dir=run_dir, **{**SETTINGS, **settings}
    )
    return archive


def outcome(run_dir: Path, *, usage: bool = True) -> list[Any]:
    """What must not depend on where the episodes ran: every entry's scores, per-task results and
    usage (``usage=False``: a replayed run spends nothing), and every episode's advice and actions."""
    archive = json.loads((run_dir / "archive.json").read_text())
    out: list[Any] = [
        archive["baseline"],
        archive["iterations"] and [i["child_id"] for i in archive["iterations"]],
    ]
    for e in archive["entries"]:
        keep = ("id", "name", "status", "errors", "collection_score", "deployment_score", "normalized_score")
        spent = dict(e["usage"]) if usage else {}
        if e["origin"] == "meta" and usage:  # its prompts quote runtime logs (durations, pids): lengths vary
            spent = {k: spent[k] for k in ("calls", "completion_tokens")}
        out.append({k: e.get(k) for k in keep} | {"per_task": e["per_task"], "usage": spent})
        logs = run_dir / "logs" / e["id"] / "episodes.jsonl"
        if logs.exists():
            eps = [json.loads(x) for x in logs.read_text().splitlines()]
            out.append([(r["label"], r["advice"], r["actions"], r["score"]) for r in eps])
    return out


@pytest.fixture(scope="module")
def cluster():
    """A head and one more node (1 CPU each), their workers able to build the ``cluster:`` models."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    saved = {k: os.environ.get(k) for k in ("ATLAS_PLUGINS", "PYTHONPATH")}
    os.environ["ATLAS_PLUGINS"] = "cluster_doubles"
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(TESTS), str(TESTS / "alma"), *filter(None, [saved["PYTHONPATH"]])]
    )
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "resources": {"llm": 1}})
    c.add_node(num_cpus=1, resources={"llm": 1})
    try:
        yield c
    finally:
        if ray.is_initialized():
            ray.shutdown()
        c.shutdown()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def local_run(tmp_path_factory, cluster):
    run_dir = tmp_path_factory.mktemp("local") / "run"
    search(run_dir, iterations=1)
    return run_dir


def test_a_ray_run_equals_the_local_run(tmp_path_factory, cluster, local_run):
    events: list[tuple[str, dict]] = []
    run_dir = tmp_path_factory.mktemp("rayrn") / "run"  # a path as long as the local one's (prompts quote it)
    meta, debug = meta_models()
    atlas.alma.run(
        model="cluster:task",
        meta_llm=meta,
        debug_llm=debug,
        run_dir=run_dir,
        iterations=1,
        executor="ray",
        ray_address=cluster.address,
        callbacks=[lambda ev, f: events.append((ev, f))],
        **SETTINGS,
    )
    assert len(str(run_dir)) == len(str(local_run))
    assert outcome(run_dir) == outcome(local_run)
    config = json.loads((run_dir / "config.json").read_text())
    assert config["executor"] == "ray" and config["ray_address"] == cluster.address
    start = next(f for ev, f in events if ev == "run.start")
    assert start["executor"]["executor"] == "ray" and start["executor"]["nodes"] == 2
    assert len({w.rsplit(":", 1)[1] for w in start["executor"]["worker_names"]}) == 2  # two processes
    stop = next(f for ev, f in events if ev == "run.stop")
    assert stop["retries"] == 0
    entries = json.loads((run_dir / "archive.json").read_text())["entries"]
    assert all("retries" not in e["metadata"] for e in entries)
    import ray

    assert not ray.is_initialized()  # the executor left the cluster it joined


def test_a_worker_killed_mid_run_is_retried_and_nothing_counts_twice(tmp_path_factory, cluster, local_run):
    """The second deployment episode of the first design kills the worker playing the other ones;
    their units run again on a fresh worker, the retries are recorded, the archive is the local one."""
    killed: list[int] = []
    pids: list[int] = []

    def on_event(ev: str, fields: dict) -> None:
        if ev == "run.start":
            pids.extend(int(w.rsplit(":", 1)[1]) for w in fields["executor"]["worker_names"])

    class KillOnce:
        def __getattr__(self, name: str) -> Any:
            return lambda *a, **k: None

        def episode(self, rec: Any) -> None:
            if rec.label == "D1" and not killed:
                for pid in pids:
                    if pid != os.getpid():
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                        return

    run_dir = tmp_path_factory.mktemp("killr") / "run"
    meta, debug = meta_models()
    events: list[tuple[str, dict]] = []
    atlas.alma.run(
        model="cluster:slow",
        meta_llm=meta,
        debug_llm=debug,
        run_dir=run_dir,
        iterations=1,
        executor="ray",
        ray_address=cluster.address,
        progress=KillOnce(),
        callbacks=[on_event, lambda ev, f: events.append((ev, f))],
        **{**SETTINGS, "quiet": False},
    )
    assert killed
    retries = [f for ev, f in events if ev == "executor.retry"]
    assert retries and all(r["attempt"] == 1 for r in retries)
    entries = json.loads((run_dir / "archive.json").read_text())["entries"]
    recorded = [r for e in entries for r in e["metadata"].get("retries", [])]
    assert len(recorded) == len(retries)
    assert next(f for ev, f in events if ev == "run.stop")["retries"] == len(retries)
    from atlas.trace import read_trace

    traced = [e for e in read_trace(run_dir / "trace.jsonl") if e["event"] == "executor.retry"]
    assert [(e["unit"], e["attempt"]) for e in traced] == [(r["unit"], r["attempt"]) for r in retries]
    assert outcome(run_dir) == outcome(local_run)  # same episodes, each counted once
    # the viewer and the report say where it ran and how many units were played again
    from atlas.viewer.report import write_report
    from atlas.viewer.run_reader import read_run

    shown = read_run(run_dir).summary()["executor"]
    assert shown == {"name": "ray", "address": cluster.address, "retries": len(retries)}
    report = write_report(run_dir, tmp_path_factory.mktemp("report")).markdown.read_text()
    n = len(retries)
    assert f"| executor | ray at {cluster.address}, {n} {'retry' if n == 1 else 'retries'} |" in report
    local_report = write_report(local_run, tmp_path_factory.mktemp("report")).markdown.read_text()
    assert "| executor | local, 0 retries |" in local_report


def test_a_worker_killed_during_collection_is_retried_and_the_run_equals_the_local_run(
    tmp_path_factory, cluster, local_run
):
    """The worker playing the run's first work unit (the no-memory baseline's collection) kills
    itself at its first model call: the unit is played again on another worker, the archive, scores
    and per-task results are the local run's, and the retry is in trace.jsonl. (A worker killed
    during deployment: the test above.)"""
    from atlas.trace import read_trace

    marker = tmp_path_factory.mktemp("marker") / "killed"
    run_dir = tmp_path_factory.mktemp("colkl") / "run"  # a path as long as the local one's
    meta, debug = meta_models()
    atlas.alma.run(
        model=f"cluster:kill-once:{marker}:{os.getpid()}",
        meta_llm=meta,
        debug_llm=debug,
        run_dir=run_dir,
        iterations=1,
        executor="ray",
        ray_address=cluster.address,
        **SETTINGS,
    )
    assert marker.exists() and int(marker.read_text()) != os.getpid()  # a worker died, not the driver
    trace = read_trace(run_dir / "trace.jsonl")
    retries = [e for e in trace if e["event"] == "executor.retry"]
    assert len(retries) == 1 and retries[0]["unit"] == "C" and retries[0]["attempt"] == 1
    assert retries[0]["design_id"] == "d-0001"
    assert next(e for e in trace if e["event"] == "run.stop")["retries"] == 1
    assert outcome(run_dir) == outcome(local_run)  # the same archive, scores and per-task results


def test_resume_switches_executors(tmp_path_factory, cluster):
    """A run started locally goes on on the cluster, and the other way round: same archive as one run."""
    first = tmp_path_factory.mktemp("resum") / "run"
    search(first, iterations=0)
    meta, debug = meta_models()
    atlas.alma.run(
        model="cluster:task", meta_llm=meta, debug_llm=debug, resume=first, iterations=1,
        executor="ray", ray_address=cluster.address, quiet=True,
    )  # fmt: skip
    straight = tmp_path_factory.mktemp("strai") / "run"
    search(straight, iterations=1)
    assert outcome(first) == outcome(straight)
    assert json.loads((first / "config.json").read_text())["executor"] == "ray"


def test_an_address_that_does_not_answer_is_a_clear_error_in_seconds(tmp_path):
    pytest.importorskip("ray")
    t0 = time.perf_counter()
    with pytest.raises(ClusterError, match=r"no Ray cluster answers at 127\.0\.0\.1:9"):
        search(tmp_path / "run", iterations=0, executor="ray", ray_address="127.0.0.1:9")
    assert time.perf_counter() - t0 < 20


def test_an_address_that_answers_but_is_no_ray_head_is_a_clear_error_too():
    """A service that accepts connections and says nothing would keep ray.init waiting for minutes."""
    import socket

    from atlas.alma.cluster.connect import connect

    pytest.importorskip("ray")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        address = f"127.0.0.1:{server.getsockname()[1]}"
        t0 = time.perf_counter()
        with pytest.raises(ClusterError, match=address):
            connect(address, timeout_s=2)
        assert time.perf_counter() - t0 < 10


def test_without_ray_the_cli_says_how_to_install_the_extra(tmp_path, monkeypatch):
    from atlas.cli import app

    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without Ray gives: ImportError
    res = CliRunner().invoke(
        app,
        ["run", "--executor", "ray", "--model", "cluster:task", "--run-dir", str(tmp_path / "r"), "--quiet"],
        env={"COLUMNS": "200"},
    )
    assert res.exit_code == 2 and "pip install 'atlas-memory[ray]'" in res.output, res.output
    assert not (tmp_path / "r").exists()


def test_the_local_executor_never_imports_ray(tmp_path):
    code = (
        "import sys, atlas.alma\n"
        "from alma_doubles import task_policy\n"
        "from atlas.infra.llm import ScriptedLLM\n"
        f"atlas.alma.run(llm=ScriptedLLM(task_policy), run_dir={str(tmp_path / 'r')!r}, iterations=0, episodes=1,"
        " rooms=5, deploy_seeds=1, baselines=[], quiet=True, no_embed=True, baseline_cache=False)\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS / "alma"), os.environ.get("PYTHONPATH", "")]),
    }
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]


SUMMARIZING_DESIGN = """
def update(memory, episode, tools):
    for i in range(5):
        tools.summarize(episode["task"]["goal"] + " " + str(i))


def recall(memory, task, tools):
    done = 0
    for i in range(5):
        try:
            tools.summarize(task["goal"] + " " + str(i))
            done += 1
        except Exception:
            pass
    return "summaries: " + str(done)
"""


async def test_a_designs_tool_budget_holds_across_the_cluster(cluster):
    """Collection spends 20 of the 60 summarize calls an evaluation may make; 12 deployment episodes
    on two workers would make 60 more. The ledger stops them at 60 in all, as one process does."""
    from alma_doubles import task_policy

    from atlas.agent import TaskAgent
    from atlas.alma.baselines import make_host_design
    from atlas.alma.cluster import RayExecutor, WorkerKit
    from atlas.alma.design import Design
    from atlas.alma.evaluate.executor import LocalExecutor
    from atlas.alma.evaluate.harness import Harness, make_tasks
    from atlas.alma.evaluate.tools import ToolSettings
    from atlas.envs.registry import get_env
    from atlas.infra.embeddings import make_embedder

    env, embedder, llm = get_env("graphworld", rooms=5), make_embedder("ngram"), ScriptedLLM(task_policy)
    col, dep = make_tasks(
        env, episodes=2, seed=42, family=42, deployment_seeds=[100_000 + k for k in range(6)]
    )
    design = Design(id="d-0009", name="summarizer", source=SUMMARIZING_DESIGN, origin="seed")
    limit = ToolSettings().max_llm_calls
    harness = Harness(env, TaskAgent(llm), embedder=embedder, design_llm=llm, concurrency=4)
    local = await LocalExecutor(harness).evaluate(design, col, dep)
    kit = WorkerKit(
        env="graphworld",
        env_kwargs={"rooms": 5},
        model="cluster:task",
        embedder_name="ngram",
        host_executor=make_host_design,
    )
    ray_exec = RayExecutor(kit, address=cluster.address, concurrency=4, embedder_name=embedder.name)
    try:
        remote = await ray_exec.evaluate(design, col, dep)
    finally:
        ray_exec.close()
    assert local.status == remote.status == "ok"
    assert local.stores["tool_usage"]["llm_calls"] == remote.stores["tool_usage"]["llm_calls"] == limit
    advice = [int(e.advice.split(": ")[1]) for e in remote.deployment]
    assert sum(advice) == limit - 20 and 0 in advice  # the later recalls were refused
    assert [e.score for e in local.episodes] == [e.score for e in remote.episodes]


async def test_the_request_rate_limit_holds_across_the_cluster(cluster):
    """--max-rpm paces every worker's task-model calls through one pacer: two workers together
    take at least (calls - 1) slots of 60/rpm seconds, not half of that."""
    from atlas.alma.baselines import get_baseline, make_host_design
    from atlas.alma.cluster import RayExecutor, WorkerKit
    from atlas.alma.evaluate.harness import make_tasks
    from atlas.envs.registry import get_env

    rpm = 1500  # 40 ms apart
    col, dep = make_tasks(
        get_env("graphworld", rooms=5), episodes=1, seed=42, family=42, deployment_seeds=[7, 8, 9, 10]
    )
    kit = WorkerKit(
        env="graphworld",
        env_kwargs={"rooms": 5},
        model="cluster:task",
        embedder_name="ngram",
        host_executor=make_host_design,
        max_rpm=rpm,
    )
    ex = RayExecutor(kit, address=cluster.address, concurrency=4, embedder_name="ngram")
    try:
        assert ex.describe()["workers"] == 2 and ex.describe()["max_rpm"] == rpm
        t0 = time.perf_counter()
        ev = await ex.evaluate(get_baseline("no_memory").model_copy(update={"id": "d-0001"}), col, dep)
        took = time.perf_counter() - t0
    finally:
        ex.close()
    assert ev.status == "ok" and len(ev.deployment) == 4
    calls = ex.usage.calls
    assert calls > 10 and took >= (calls - 1) * 60 / rpm * 0.95, (calls, took)


async def test_a_local_model_plays_one_episode_per_llm_slot(cluster):
    """With a local model each worker holds one `llm` slot and plays one episode at a time: the
    cluster declares two slots (one per node), so eight episodes in flight become two workers."""
    from atlas.alma.baselines import get_baseline, make_host_design
    from atlas.alma.cluster import RayExecutor, WorkerKit
    from atlas.alma.evaluate.harness import make_tasks
    from atlas.envs.registry import get_env

    col, dep = make_tasks(
        get_env("graphworld", rooms=5), episodes=1, seed=42, family=42, deployment_seeds=[7, 8]
    )
    kit = WorkerKit(
        env="graphworld",
        env_kwargs={"rooms": 5},
        model="cluster:task",
        embedder_name="ngram",
        host_executor=make_host_design,
    )
    ex = RayExecutor(kit, address=cluster.address, concurrency=8, local_model=True, embedder_name="ngram")
    try:
        shown = ex.describe()
        assert (shown["workers"], shown["per_worker"], shown["local_model"]) == (2, 1, True)
        ev = await ex.evaluate(get_baseline("no_memory").model_copy(update={"id": "d-0001"}), col, dep)
    finally:
        ex.close()
    assert ev.status == "ok" and [e.label for e in ev.deployment] == ["D1", "D2"]


@pytest.mark.local_llm
@pytest.mark.timeout(1200)
def test_with_the_local_model_and_the_replay_cache_a_ray_run_equals_the_local_run(tmp_path, cluster):
    """The real local model (one per worker process, one `llm` slot each): a local run fills its
    replay cache; a node holding that cache plays the same search on the cluster, with the same
    archive (the no-memory baseline is played again, not read from the baseline cache)."""
    import shutil

    from atlas.infra import local_models

    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra [local])")
    model = "qwen2.5-coder-0.5b"
    if not local_models.is_verified(model) and not local_models.verify(model):
        pytest.skip(f"local model not assembled: run `atlas models pull {model}`")
    settings = dict(
        env="graphworld", iterations=0, episodes=1, rooms=4, deploy_seeds=1, seed=7, max_turns=2,
        baselines=[], quiet=True, no_embed=True, concurrency=2,
    )  # fmt: skip
    runs = {}
    for name in ("local", "rayrn"):
        if name == "rayrn":  # what travels to a node by hand: its replay cache
            shutil.copytree(tmp_path / "local" / "replay", tmp_path / "rayrn" / "replay")
            settings |= {"executor": "ray", "ray_address": cluster.address}
        runs[name] = tmp_path / name / "run"
        atlas.alma.run(
            model=f"local:{model}",
            run_dir=runs[name],
            baseline_cache=tmp_path / name / "baselines",
            **settings,
        )
    assert outcome(runs["rayrn"], usage=False) == outcome(runs["local"], usage=False)
    entries = json.loads((runs["rayrn"] / "archive.json").read_text())["entries"]
    assert [e["name"] for e in entries] == ["no_memory", "graphworld_seed"]


def test_the_cli_runs_on_the_cluster(tmp_path, cluster):
    from atlas.cli import app

    args = ["run", "--executor", "ray", "--ray-address", cluster.address, "--model", "cluster:task"]
    args += [
        "--iterations",
        "0",
        "--episodes",
        "1",
        "--deploy-seeds",
        "1",
        "--rooms",
        "5",
        "--baselines",
        "none",
    ]
    args += ["--no-embed", "--quiet", "--run-dir", str(tmp_path / "r")]
    res = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert (config["executor"], config["ray_address"]) == ("ray", cluster.address)
    assert "no_memory" in res.output


def test_a_node_removed_mid_run_costs_retries_and_nothing_else(tmp_path_factory, cluster, local_run):
    """The second node is taken out of the cluster (its raylet and workers killed) while the first
    design's deployment episodes are in flight: they are played again on the head, the archive is the
    local one. Runs last: the module's cluster has one node afterwards."""
    import threading

    removed: list[float] = []

    class RemoveNode:
        def __getattr__(self, name: str) -> Any:
            return lambda *a, **k: None

        def episode(self, rec: Any) -> None:
            if rec.label == "C1" and not removed:
                removed.append(time.perf_counter())
                node = cluster.list_all_nodes()[-1]
                assert not node.head
                threading.Thread(
                    target=lambda: (time.sleep(0.3), cluster.remove_node(node, allow_graceful=False))
                ).start()

    run_dir = tmp_path_factory.mktemp("nodes") / "run"
    meta, debug = meta_models()
    events: list[tuple[str, dict]] = []
    atlas.alma.run(
        model="cluster:slow",
        meta_llm=meta,
        debug_llm=debug,
        run_dir=run_dir,
        iterations=1,
        executor="ray",
        ray_address=cluster.address,
        progress=RemoveNode(),
        callbacks=[lambda ev, f: events.append((ev, f))],
        **{**SETTINGS, "quiet": False},
    )
    start = next(f for ev, f in events if ev == "run.start")
    assert start["executor"]["worker_nodes"] == 2  # a worker on each node to begin with
    assert removed and len(cluster.list_all_nodes()) == 1
    retries = [f for ev, f in events if ev == "executor.retry"]
    assert retries and next(f for ev, f in events if ev == "run.stop")["retries"] == len(retries)
    assert outcome(run_dir) == outcome(local_run)
