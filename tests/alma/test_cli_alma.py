"""`atlas run/eval/demo --help`, `atlas archive show|best|export`, and the CLI's error paths."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from atlas.alma.state.archive import Archive, ArchiveEntry, TaskResult
from atlas.cli import app

runner = CliRunner()
SRC = "def update(memory, episode, tools):\n    pass\n\n\ndef recall(memory, task, tools):\n    return 'hi'\n"


@pytest.fixture
def run_dir(tmp_path):
    arch = Archive()
    arch.baseline = {"score": 0.5, "per_task": []}
    arch.add(
        ArchiveEntry(
            id="d-0001",
            name="no_memory",
            origin="baseline",
            collection_score=0.4,
            deployment_score=0.5,
            normalized_score=0.0,
            per_task=[TaskResult(task_id="t", phase="deployment", success=True, score=0.5, steps=20)],
        ),
        SRC.replace("'hi'", "''"),
    )
    arch.add(
        ArchiveEntry(
            id="d-0002",
            name="route_map",
            origin="meta",
            generation=1,
            parent_ids=["d-0001"],
            collection_score=0.6,
            deployment_score=0.7,
            normalized_score=0.2,
        ),
        SRC,
    )
    arch.add(
        ArchiveEntry(
            id="d-0003",
            name="broken",
            origin="meta",
            generation=2,
            status="invalid",
            errors=["line 1: syntax error"],
        ),
        "def (",
    )
    d = tmp_path / "run"
    arch.save(d / "archive.json")
    (d / "config.json").write_text("{}")
    return d


def test_help_lists_every_flag():
    out = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).output
    for flag in (
        "--env",
        "--iterations",
        "--episodes",
        "--rooms",
        "--seed",
        "--family",
        "--no-family",
        "--deploy-seeds",
        "--model",
        "--meta-model",
        "--embed-model",
        "--no-embed",
        "--no-trace",
        "--quiet",
        "--alfworld-data",
        "--run-dir",
        "--resume",
        "--concurrency",
        "--no-env-seed",
    ):
        assert flag in out, flag
    for cmd in (
        ["eval", "--help"],
        ["demo", "--help"],
        ["archive", "show", "--help"],
        ["archive", "best", "--help"],
        ["archive", "export", "--help"],
    ):
        res = runner.invoke(app, cmd)
        assert res.exit_code == 0, res.output


def test_archive_show_best_export(run_dir, tmp_path):
    res = runner.invoke(app, ["archive", "show", str(run_dir)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "route_map" in res.output and "broken" in res.output and "+0.200" in res.output
    res = runner.invoke(app, ["archive", "best", str(run_dir)])
    assert res.exit_code == 0 and "d-0002 route_map" in res.output and "return 'hi'" in res.output
    out = tmp_path / "export.json"
    res = runner.invoke(app, ["archive", "export", str(run_dir), "-o", str(out)])
    assert res.exit_code == 0
    data = json.loads(out.read_text())
    assert [e["source"] for e in data["entries"]][1] == SRC


def test_archive_errors_are_clear(tmp_path):
    res = runner.invoke(app, ["archive", "show", str(tmp_path)])
    assert res.exit_code == 2 and "no archive" in res.output
    (tmp_path / "archive.json").write_text("{ torn")
    res = runner.invoke(app, ["archive", "best", str(tmp_path)])
    assert res.exit_code == 2 and "corrupt" in res.output


def test_eval_refuses_an_invalid_design(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\ndef update(memory, episode, tools):\n    pass\n")
    res = runner.invoke(app, ["eval", str(bad)], env={"COLUMNS": "200"})
    assert res.exit_code == 2
    assert "import of 'os' is not allowed" in res.output and "missing top-level function" in res.output
    res = runner.invoke(app, ["eval", str(tmp_path / "missing.py")])
    assert res.exit_code == 2 and "no design file" in res.output
    res = runner.invoke(app, ["eval", "no_such_baseline"])
    assert res.exit_code == 2 and "unknown baseline" in res.output


def test_resume_of_a_missing_run_is_an_error(tmp_path):
    res = runner.invoke(app, ["run", "--resume", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "no config file" in res.output


def _no_traceback(res) -> None:
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)


def test_archive_commands_on_a_corrupt_archive_are_clear(run_dir, tmp_path):
    data = json.loads((run_dir / "archive.json").read_text())
    (run_dir / "archive.json").write_text(json.dumps({**data, "entries": 5}))
    for cmd in (["show"], ["best"], ["export", "-o", str(tmp_path / "x.json")]):
        res = runner.invoke(app, ["archive", cmd[0], str(run_dir), *cmd[1:]], env={"COLUMNS": "300"})
        _no_traceback(res)
        assert res.exit_code == 2 and "'entries' must be a list" in res.output, res.output


def test_archive_best_and_export_with_a_missing_design_file(run_dir, tmp_path):
    (run_dir / "designs" / "d-0003.py").unlink()  # not the best design
    res = runner.invoke(app, ["archive", "best", str(run_dir)])
    assert res.exit_code == 0 and "return 'hi'" in res.output
    res = runner.invoke(
        app, ["archive", "export", str(run_dir), "-o", str(tmp_path / "x.json")], env={"COLUMNS": "300"}
    )
    _no_traceback(res)
    assert res.exit_code == 2 and "d-0003" in res.output and "restore that file" in res.output
    (run_dir / "designs" / "d-0003.py").write_text("def (")
    res = runner.invoke(
        app, ["archive", "export", str(run_dir), "-o", str(tmp_path)]
    )  # a folder: cannot write
    _no_traceback(res)
    assert res.exit_code == 2 and "cannot write" in res.output


@pytest.fixture
def scripted_models():
    """`--model double:task`: a ScriptedLLM double, through the documented provider hook (no patching)."""
    from alma_doubles import debug_policy, task_policy

    from atlas.infra.llm import ScriptedLLM
    from atlas.infra.llm.providers import register_provider

    register_provider("double", lambda rest: ScriptedLLM(debug_policy if rest == "debug" else task_policy))
    return ["--model", "double:task"]


def test_run_creates_a_run_and_bad_flags_are_clear(tmp_path, scripted_models):
    args = [
        "run",
        "--episodes",
        "2",
        "--rooms",
        "5",
        "--deploy-seeds",
        "1",
        "--baselines",
        "none",
        "--no-embed",
        "--quiet",
        *scripted_models,
    ]
    res = runner.invoke(
        app, [*args, "--iterations", "0", "--run-dir", str(tmp_path / "r")], env={"COLUMNS": "200"}
    )
    _no_traceback(res)
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "r" / "config.json").read_text())["model"] == "double:task"
    assert "no_memory" in res.output
    for bad, field in ((["--episodes", "0"], "episodes"), (["--iterations", "-1"], "iterations")):
        res = runner.invoke(app, [*args, *bad, "--run-dir", str(tmp_path / "bad")], env={"COLUMNS": "200"})
        _no_traceback(res)
        assert res.exit_code == 2 and f"'--{field}'" in res.output, res.output  # refused by the parser
    res = runner.invoke(
        app, ["run", "--resume", str(tmp_path / "r"), "--iterations", "-1"], env={"COLUMNS": "200"}
    )
    _no_traceback(res)
    assert res.exit_code == 2 and "iterations" in res.output
    assert json.loads((tmp_path / "r" / "config.json").read_text())["iterations"] == 0  # not overwritten


def test_run_without_the_env_seed_starts_from_no_memory_and_the_baselines(tmp_path, scripted_models):
    args = ["run", "--episodes", "2", "--rooms", "5", "--deploy-seeds", "1", "--iterations", "0"]
    args += ["--baselines", "none", "--no-embed", "--quiet", "--no-env-seed", *scripted_models]
    res = runner.invoke(app, [*args, "--run-dir", str(tmp_path / "r")], env={"COLUMNS": "200"})
    _no_traceback(res)
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "r" / "config.json").read_text())["env_seed"] is False
    names = [e["name"] for e in json.loads((tmp_path / "r" / "archive.json").read_text())["entries"]]
    assert names == ["no_memory"]


@pytest.mark.parametrize("text", ["[]", '"hello"', "{ torn", '{"episodes": "three"}'])
def test_resume_with_a_badly_edited_config_is_clear(tmp_path, text):
    (tmp_path / "config.json").write_text(text)
    res = runner.invoke(app, ["run", "--resume", str(tmp_path)], env={"COLUMNS": "300"})
    _no_traceback(res)
    assert res.exit_code == 2 and "config.json" in res.output, res.output


def test_a_run_where_nothing_was_solved_says_why_and_what_helps(tmp_path):
    from atlas.alma.state.archive import Archive, ArchiveEntry, TaskResult
    from atlas.cli.output import nothing_solved_hint

    (tmp_path / "config.json").write_text(json.dumps({"task_model": "local:tiny"}))
    archive = Archive(tmp_path / "archive.json")
    failed = [TaskResult(task_id="t1", phase="collection"), TaskResult(task_id="t2", phase="deployment")]
    archive.add(ArchiveEntry(id="d-0001", name="no_memory", origin="baseline", per_task=failed))
    hint = nothing_solved_hint(archive)
    assert hint is not None and "local:tiny is too weak" in hint and "qwen2.5-coder-1.5b" in hint
    solved = TaskResult(task_id="t3", phase="deployment", success=True, score=0.8)
    archive.add(
        ArchiveEntry(id="d-0002", name="spatial_graph", origin="baseline", per_task=[*failed, solved])
    )
    assert nothing_solved_hint(archive) is None


def test_eval_json_pairs_the_design_with_no_memory(tmp_path, scripted_models):
    res = runner.invoke(
        app,
        [
            "eval",
            "spatial_graph",
            "--episodes",
            "2",
            "--rooms",
            "5",
            "--deploy-seeds",
            "2",
            "--no-embed",
            "--quiet",
            "--json",
            "--run-dir",
            str(tmp_path / "e"),
            *scripted_models,
        ],
    )
    _no_traceback(res)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    assert out["design"] == "spatial_graph" and out["status"] == "ok"
    assert set(out["scores"]) == set(out["no_memory_scores"]) and len(out["scores"]) == 4
    diffs = [out["scores"][t] - out["no_memory_scores"][t] for t in out["scores"]]
    assert out["normalized"]["mean"] == pytest.approx(sum(diffs) / len(diffs), abs=1e-6)
    lo, hi = out["normalized"]["ci95"]
    assert lo <= out["normalized"]["mean"] <= hi and out["normalized"]["n"] == 4
    assert out["settings"]["env_params"]["rooms"] == 5 and out["settings"]["deploy_seeds"] == 2
    # goal completion: all four tasks are one GraphWorld family (family mode), so one scenario
    gc = out["goal_completion"]["deployment"]
    assert gc["tgc"]["n"] == 4 and gc["sgc"]["n"] == 1
    assert gc["sgc"]["successes"] == int(gc["tgc"]["successes"] == 4)
    assert gc["tgc"]["ci95"][0] <= gc["tgc"]["rate"] <= gc["tgc"]["ci95"][1]
    assert out["goal_completion"]["no_memory"]["tgc"]["n"] == 4
    # how far episodes got: GraphWorld scores a task only when it ends, so the highest is the final score
    reached = out["highest_reached"]
    assert reached["difference"]["n"] == 4
    assert reached["deployment"] == pytest.approx(sum(out["scores"].values()) / 4, abs=1e-6)
    assert reached["no_memory"] == pytest.approx(sum(out["no_memory_scores"].values()) / 4, abs=1e-6)


def test_eval_text_says_how_far_episodes_got_beside_the_final_score(tmp_path, scripted_models):
    args = ["eval", "no_memory", "--episodes", "1", "--rooms", "4", "--deploy-seeds", "1", "--no-embed"]
    res = runner.invoke(app, [*args, "--quiet", "--run-dir", str(tmp_path / "e"), *scripted_models])
    _no_traceback(res)
    assert res.exit_code == 0, res.output
    lines = {line.split()[0]: line for line in res.output.splitlines() if line.strip()}
    assert {"deployment", "baseline", "normalized", "completion", "reached"} <= set(lines)
    assert "at most on the way, no memory" in lines["reached"] and "95% CI" in lines["reached"]


def test_headroom_json(scripted_models):
    res = runner.invoke(app, ["headroom", "--rooms", "5", "--tasks", "3", "--json", *scripted_models])
    _no_traceback(res)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    assert out["tasks"] == 3 and set(out["conditions"]) == {"none", "learnable", "full"}
    assert out["conditions"]["full"]["success_rate"] == 1.0  # the double follows the route it is given
    full = out["conditions"]["full"]
    assert full["tgc"] == {
        "rate": 1.0,
        "ci95": [pytest.approx(0.438503, abs=1e-6), 1.0],
        "successes": 3,
        "n": 3,
    }
    assert full["sgc"]["rate"] == 1.0 and full["sgc"]["n"] == 1  # three tasks of one family
    assert set(out["differences"]) == {"learnable-none", "full-none"}
    res = runner.invoke(app, ["headroom", "--tasks", "2", "--conditions", "none,psychic", *scripted_models])
    _no_traceback(res)
    assert res.exit_code != 0 and "psychic" in res.output


def _refused(args: list[str], *words: str) -> None:
    res = runner.invoke(app, args, env={"COLUMNS": "200"})
    _no_traceback(res)
    text = " ".join(res.output.split())
    assert res.exit_code == 2 and all(w in text for w in words), (args, res.output)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["run", "--concurrency", "0"], ["'--concurrency'"]),
        (["run", "--concurrency", "-2"], ["'--concurrency'"]),
        (["run", "--max-turns", "0"], ["'--max-turns'"]),
        (["eval", "no_memory", "--max-turns", "-1"], ["'--max-turns'"]),
        (["run", "--rooms", "1000000000"], ["'--rooms'"]),
        (["run", "--episodes", "1000000000"], ["'--episodes'"]),
        (["run", "--max-cost", "0"], ["--max-cost 0: must be more than 0"]),
        (["run", "--stage-rule", "bogus"], ["--stage-rule", "bound, ci"]),
        (["headroom", "--tasks", "1000000000"], ["'--tasks'"]),
        (["headroom", "--conditions", ","], ["--conditions", "none, learnable, full"]),
        (["headroom", "--conditions", "none,bogus"], ["--conditions"]),
        (["headroom", "--concurrency", "0"], ["'--concurrency'"]),
    ],
)
def test_every_flag_is_bounded_and_checked_before_any_work(tmp_path, args, words):
    """Refused by the parser or the command's first lines — no model is made
    (none is given: the default would be looked for), no run folder is written."""
    _refused([*args, "--run-dir", str(tmp_path / "r")] if args[0] in ("run", "eval") else args, *words)
    assert not (tmp_path / "r").exists()


def test_paths_that_cannot_work_are_refused_before_any_work(tmp_path, scripted_models):
    _refused(["headroom", "--episodes-out", str(tmp_path), *scripted_models], "--episodes-out", "is a folder")
    _refused(
        ["headroom", "--episodes-out", str(tmp_path / "no" / "e.jsonl"), *scripted_models], "does not exist"
    )
    _refused(["eval", str(tmp_path), *scripted_models], "not a regular file")


def test_resume_checks_flags_and_models_first_and_a_budget_stop_is_not_an_error(tmp_path, scripted_models):
    args = ["run", "--episodes", "2", "--rooms", "5", "--deploy-seeds", "1", "--baselines", "none"]
    args += ["--no-embed", "--quiet", "--iterations", "0", *scripted_models]
    res = runner.invoke(app, [*args, "--run-dir", str(tmp_path / "r")], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    _refused(["run", "--resume", str(tmp_path / "r"), "--stage-rule", "bogus"], "--stage-rule")
    # someone else's run never sends its prompts to the provider its config.json names unasked
    _refused(["run", "--resume", str(tmp_path / "r")], "names the model 'double:task'", "--model double:task")
    res = runner.invoke(
        app,
        [
            "run",
            "--resume",
            str(tmp_path / "r"),
            "--iterations",
            "2",
            "--max-minutes",
            "0.000001",
            *scripted_models,
        ],
        env={"COLUMNS": "200"},
    )
    _no_traceback(res)
    text = " ".join(res.output.split())
    assert res.exit_code == 0 and "stopped:" in text and "--max-minutes" in text and "error" not in text, (
        res.output
    )


def test_a_resumed_run_keeps_its_concurrency_unless_told_otherwise(tmp_path, scripted_models):
    run = tmp_path / "r"
    args = ["run", "--episodes", "2", "--rooms", "5", "--deploy-seeds", "1", "--baselines", "none"]
    args += ["--no-embed", "--quiet", "--iterations", "0", "--concurrency", "2", *scripted_models]
    assert runner.invoke(app, [*args, "--run-dir", str(run)]).exit_code == 0

    def resumed(*more: str) -> int:
        res = runner.invoke(app, ["run", "--resume", str(run), "--iterations", "0", *more, *scripted_models])
        assert res.exit_code == 0, res.output
        events = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
        return [e for e in events if e["event"] == "run.resume"][-1]["executor"]["concurrency"]

    assert resumed() == 2
    assert resumed("--concurrency", "3") == 3  # for this invocation: the run's own stays 2
    assert resumed() == 2


@pytest.mark.parametrize(
    "args",
    [
        ["design", "check", "x.py", "--timeout", "0"],
        ["design", "check", "x.py", "--episodes", "1000000000"],
        ["guidelines", "get", "a task", "--k", "0"],
        ["guidelines", "list", "--limit", "0"],
        ["memory", "query", "a task", "--k", "100000"],
        ["mcp", "--port", "70000"],
        ["view", ".", "--port", "-1"],
    ],
)
def test_the_other_commands_bound_their_numbers_too(args):
    res = runner.invoke(app, args, env={"COLUMNS": "200"})
    _no_traceback(res)
    assert res.exit_code == 2 and "Invalid value" in res.output, res.output


def test_archive_show_prints_a_large_archive_as_plain_aligned_text(tmp_path):
    """Above RICH_ROWS entries every row is still shown, as plain text (rich takes about a minute
    for 20,000 rows on 2 cores; benchmarks/bench_archive_show.py measures it); names stay safe."""
    from atlas.cli.archive import RICH_ROWS

    data = json.loads(
        json.dumps(
            {
                "version": 1,
                "baseline": {"score": 0.5, "per_task": []},
                "entries": [
                    {"id": f"d-{i:05d}", "name": "bell\x07name" if i == 7 else f"design_{i}", "origin": "meta",
                     "generation": i, "normalized_score": 0.001 * i, "deployment_score": 0.5,
                     "collection_score": 0.4, "parent_ids": [f"d-{i - 1:05d}"] if i else []}
                    for i in range(RICH_ROWS + 5)
                ],
            }
        )
    )  # fmt: skip
    (tmp_path / "archive.json").write_text(json.dumps(data))
    res = runner.invoke(app, ["archive", "show", str(tmp_path)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[1].split() == ["id", "name", "origin", "gen", "status", "parents", "collection",
                                "deployment", "normalized", "novelty", "sampled"]  # fmt: skip
    assert len(lines) == 3 + RICH_ROWS + 5 and set(lines[2]) == {"-", " "}
    assert lines[3 + 12].split()[:4] == ["d-00012", "design_12", "meta", "12"] and "+0.012" in lines[3 + 12]
    assert "\x07" not in res.output and "bell\ufffdname" in res.output


def test_a_killed_headroom_resumes_from_its_episodes_file(tmp_path, scripted_models):
    """Episodes are written as they end; --resume keeps them (a line a kill cut short is played again)
    and the result equals the uninterrupted measurement's."""
    out = tmp_path / "episodes.jsonl"
    args = [
        "headroom",
        "--rooms",
        "5",
        "--tasks",
        "3",
        "--json",
        "--episodes-out",
        str(out),
        *scripted_models,
    ]
    whole = runner.invoke(app, args)
    assert whole.exit_code == 0, whole.output
    lines = out.read_text().splitlines()
    assert len(lines) == 9
    out.write_text("\n".join(lines[:4]) + "\n" + lines[4][: len(lines[4]) // 2])  # killed mid-line
    resumed = runner.invoke(app, [*args, "--resume"])
    _no_traceback(resumed)
    assert resumed.exit_code == 0, resumed.output
    assert "resumed: 4 episodes kept" in resumed.output
    before, after = (json.loads(r.output.strip().splitlines()[-1]) for r in (whole, resumed))
    assert after["differences"] == before["differences"]
    assert {c: v["mean_score"] for c, v in after["conditions"].items()} == {
        c: v["mean_score"] for c, v in before["conditions"].items()
    }

    def played(text: str) -> list[str]:  # the seconds an episode took differ from run to run
        return sorted(json.dumps({**json.loads(line), "duration_s": 0}) for line in text.splitlines())

    assert played(out.read_text()) == played("\n".join(lines))
    # without --resume the file starts again
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and len(out.read_text().splitlines()) == 9


def test_headroom_resume_refuses_what_it_cannot_continue(tmp_path, scripted_models):
    _refused(["headroom", "--resume", *scripted_models], "--resume needs --episodes-out")
    bad = tmp_path / "e.jsonl"
    bad.write_text('{"task_id": "t"}\nnot json\n')
    _refused(
        ["headroom", "--resume", "--episodes-out", str(bad), *scripted_models], f"{bad}, line 1", "missing"
    )
    assert bad.read_text() == '{"task_id": "t"}\nnot json\n'  # a refused resume loses nothing
    bad.write_bytes(b"\xff\xfe\x00binary")
    _refused(["headroom", "--resume", "--episodes-out", str(bad), *scripted_models], "not a text file")
    assert bad.read_bytes() == b"\xff\xfe\x00binary"


@pytest.fixture
def small_rooms_env():
    """An environment registered after GraphWorld that declares GraphWorld's ``rooms`` with its own default."""
    from atlas.envs.registry import EnvParam, lazy, register_env, unregister_env

    register_env(
        "small_rooms",
        lazy("atlas.envs.graphworld:GraphWorldEnv"),
        params=[EnvParam("rooms", int, 3, "Rooms of the small world.", min=2, max=6)],
        aliases=["tiny-rooms"],
    )
    yield "small_rooms"
    unregister_env("small_rooms")


def test_an_option_two_environments_share_takes_the_chosen_one_s_default(small_rooms_env):
    from atlas.alma.state.config import AlmaConfig
    from atlas.cli.alma import with_env_options

    seen: dict[str, dict] = {}

    def show(env: str = typer.Option("graphworld", "--env"), env_settings: dict | None = None) -> None:
        seen[env] = AlmaConfig(env=env, **(env_settings or {})).env_kwargs()

    app = typer.Typer()
    app.command()(with_env_options(show))
    app.command("other")(lambda: None)  # two commands: typer keeps the command's name
    runner = CliRunner()
    for args in (["show", "--env", "small_rooms"], ["show"], ["show", "--env", "tiny-rooms", "--rooms", "5"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
    assert seen["small_rooms"]["rooms"] == 3  # its own default, not GraphWorld's 8
    assert seen["graphworld"]["rooms"] == 8
    assert seen["tiny-rooms"]["rooms"] == 5  # given through the alias, not dropped
    # the config file's form: a shared setting is filed under the chosen environment, by alias too
    assert AlmaConfig(env="tiny-rooms", rooms=4).env_params == {"rooms": 4}
    assert AlmaConfig(env="graphworld", rooms=4).env_params == {"rooms": 4}
    help_text = runner.invoke(app, ["show", "--help"], terminal_width=200).output
    assert "8 for graphworld" in help_text and "3 for small_rooms" in help_text
