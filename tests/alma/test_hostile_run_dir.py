"""Hostile and damaged run folders: a run folder is data a user may
download or share, so no path in it reaches outside it, and damage gives a clear error or is
skipped — never a traceback, never a stuck run."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from alma_doubles import GIVE_UP_DESIGN, ROUTE_DESIGN, debug_policy, fenced, meta_policy, task_policy
from typer.testing import CliRunner

import atlas.alma
from atlas.alma import Archive
from atlas.alma.author.debug_log import DesignLogs
from atlas.alma.state.run_dir import RunDir
from atlas.cli import app
from atlas.errors import ArchiveError
from atlas.infra.llm import ScriptedLLM

SETTINGS = dict(
    env="graphworld",
    episodes=2,
    rooms=5,
    deploy_seeds=1,
    seed=7,
    meta_turns=2,
    baselines=[],
    quiet=True,
    trace=False,
)
SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_run"
cli = CliRunner()


def llms():
    meta = ScriptedLLM(
        meta_policy({1: [fenced("route_map", ROUTE_DESIGN)], 2: [fenced("give_up", GIVE_UP_DESIGN)]})
    )
    return dict(llm=ScriptedLLM(task_policy), meta_llm=meta, debug_llm=ScriptedLLM(debug_policy))


@pytest.fixture
def run(tmp_path: Path, embedder) -> Path:
    """A real run folder after one iteration."""
    atlas.alma.run(run_dir=tmp_path / "run", embedder=embedder, iterations=1, **llms(), **SETTINGS)
    return tmp_path / "run"


def _edit_archive(run: Path, fn) -> None:
    data = json.loads((run / "archive.json").read_text())
    fn(data)
    (run / "archive.json").write_text(json.dumps(data))


# ---- 1. a run folder cannot write outside itself ------------------------------------------------


@pytest.mark.parametrize("where", ["absolute", "dotdot"])
def test_resume_never_writes_an_inline_source_outside_the_run(run: Path, tmp_path: Path, embedder, where):
    target = tmp_path / "pwned.py"
    path = str(target) if where == "absolute" else "../pwned.py"

    def poison(data):
        data["entries"][0]["source_path"] = path
        data["entries"][0]["source"] = "print('owned')\n"

    _edit_archive(run, poison)
    with pytest.raises(ArchiveError, match="source_path"):
        atlas.alma.run(resume=run, embedder=embedder, iterations=2, **llms())
    assert not target.exists()


def test_save_does_not_write_through_a_symlinked_design_file(run: Path, tmp_path: Path):
    outside = tmp_path / "victim.txt"
    outside.write_text("precious")
    design = run / "designs" / "d-0001.py"
    design.unlink()
    design.symlink_to(outside)
    arch = Archive.load(run)
    arch.entries[0].source = "overwritten"
    with pytest.raises(ArchiveError, match="outside"):
        arch.save()
    assert outside.read_text() == "precious"


def test_entry_ids_cannot_name_paths(run: Path):
    _edit_archive(run, lambda d: d["entries"][0].update(id="../../evil"))
    with pytest.raises(ArchiveError, match="id"):
        Archive.load(run)


# ---- 2. a run folder cannot read outside itself -------------------------------------------------


@pytest.mark.parametrize("how", ["dotdot", "symlink"])
def test_archive_best_and_export_never_read_a_file_outside_the_run(run: Path, tmp_path: Path, how):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-TOKEN")
    best = Archive.load(run).best()
    assert best is not None
    if how == "dotdot":
        _edit_archive(
            run,
            lambda d: [
                e.update(source_path="designs/../../secret.txt") for e in d["entries"] if e["id"] == best.id
            ],
        )
    else:
        f = run / best.source_path
        f.unlink()
        f.symlink_to(secret)
    res = cli.invoke(app, ["archive", "best", str(run)])
    assert res.exit_code == 2 and "TOP-SECRET" not in res.output
    out = tmp_path / "export.json"
    res = cli.invoke(app, ["archive", "export", str(run), "-o", str(out)])
    assert res.exit_code == 2 and not out.exists()


def test_resume_never_sends_an_outside_file_to_the_meta_agent(run: Path, tmp_path: Path, embedder):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-TOKEN")
    (run / "designs" / "d-0001.py").unlink()
    (run / "designs" / "d-0001.py").symlink_to(secret)
    models = llms()
    with pytest.raises(ArchiveError):
        atlas.alma.run(resume=run, embedder=embedder, iterations=2, **models)
    prompts = [m["content"] for c in models["meta_llm"].history for m in c.messages]
    assert not any("TOP-SECRET" in p for p in prompts)


def test_parent_logs_are_confined_to_the_run(run: Path, tmp_path: Path):
    secret = tmp_path / "secret.jsonl"
    secret.write_text(
        json.dumps({"label": "C1", "goal": "TOP-SECRET-TOKEN", "score": 0.0, "steps": 1}) + "\n"
    )
    rd = RunDir.open(run)
    with pytest.raises(ArchiveError, match="outside"):
        rd.entry_logs("logs/../../", "d-0001")
    logs = rd.entry_logs(None, "d-0001")
    (logs / "episodes.jsonl").unlink()
    (logs / "episodes.jsonl").symlink_to(secret)
    read = DesignLogs.from_dir(logs, {"id": "d-0001", "name": "no_memory"})
    assert not any("TOP-SECRET" in json.dumps(e) for e in read.episodes) and read.damaged


# ---- 6. damaged run folders: clear errors, and resume goes on ------------------------------------


def test_damaged_parent_logs_do_not_stop_a_resume(run: Path, embedder):
    for d in (run / "logs").iterdir():
        (d / "calls.jsonl").write_bytes(b'{"phase": 7}\n[1, 2\n\xff\xfe not utf-8\n' + b"[" * 100_000 + b"\n")
        (d / "evaluation.json").write_text('{"stores": ')
        (d / "episodes.jsonl").write_text('{"label": 3}\n{"label": "C1", "score": "high"}\n')
    archive, _ = atlas.alma.run(resume=run, embedder=embedder, iterations=2, **llms())
    assert 2 in {e.generation for e in archive}


@pytest.mark.parametrize(
    "damage", [b"\xff\xfe{}", b"[" * 100_000, b'{"version": 1, "entries": ' + b"[" * 5000]
)
def test_damaged_archive_json_gives_a_clear_error_in_every_command(run: Path, damage: bytes):
    (run / "archive.json").write_bytes(damage)
    for args in (["archive", "show", str(run)], ["archive", "best", str(run)], ["report", str(run)]):
        res = cli.invoke(app, args)
        assert res.exit_code == 2, (args, res.output, res.exception)
        assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)


def test_non_utf8_config_gives_a_clear_error(run: Path):
    (run / "config.json").write_bytes(b"\xff\xfe\x00{")
    for args in (["report", str(run)], ["run", "--resume", str(run)]):
        res = cli.invoke(app, args)
        assert res.exit_code == 2 and "config.json" in res.output, (args, res.output, res.exception)


@pytest.mark.parametrize("damage", ["nan", "surrogate"])
def test_viewer_api_run_answers_with_a_nan_baseline_or_a_lone_surrogate(run: Path, damage: str):
    import urllib.request

    from atlas.viewer.server import ViewerThread

    text = (run / "archive.json").read_text()
    data = json.loads(text)
    if damage == "nan":
        data["baseline"]["score"] = float("nan")
        (run / "archive.json").write_text(json.dumps(data))  # json writes NaN, as a damaged file may hold
    else:
        data["entries"][0]["name"] = "\ud800x"
        (run / "archive.json").write_text(json.dumps(data))  # ASCII-escaped lone surrogate
    with ViewerThread(run) as url, urllib.request.urlopen(url + "api/run", timeout=10) as res:
        body = json.loads(res.read())
    assert res.status == 200 and body["entries"]
    if damage == "nan":
        assert body["baseline_score"] is None


# ---- 7. resume from any kill point ---------------------------------------------------------------


def test_resume_after_a_kill_during_the_first_archive_save(tmp_path: Path, embedder):
    full, _ = atlas.alma.run(run_dir=tmp_path / "full", embedder=embedder, iterations=1, **llms(), **SETTINGS)
    killed = tmp_path / "killed"
    shutil.copytree(tmp_path / "full", killed)
    # the state a kill leaves after the first save wrote designs/d-0001.py but before archive.json
    for f in ("archive.json", "archive.json.bak"):
        (killed / f).unlink(missing_ok=True)
    for f in (killed / "designs").glob("*.py"):
        if f.name != "d-0001.py":
            f.unlink()
    stale = killed / ".archive.json.abc123.tmp"
    stale.write_text('{"torn')
    (killed / "designs" / ".d-0002.py.x.tmp").write_text("torn")
    resumed, _ = atlas.alma.run(resume=killed, embedder=embedder, iterations=1, **llms())
    assert [e.id for e in resumed] == [e.id for e in full]
    assert [e.normalized_score for e in resumed] == [e.normalized_score for e in full]
    assert not stale.exists() and not list(killed.rglob("*.tmp"))


def test_a_new_run_has_an_archive_from_the_start(tmp_path: Path, embedder):
    rd = RunDir.create(tmp_path / "r")
    search = atlas.alma.search.loop.Search(
        atlas.alma.state.config.AlmaConfig.build(**SETTINGS, iterations=0),
        **{k: v for k, v in llms().items() if k != "debug_llm"},
        run_dir=rd,
        embedder=embedder,
        trace=False,
    )
    search._setup(resume=False)
    search.close()
    assert Archive.load(rd.path).entries == []


def test_resume_refusal_names_a_valid_way_to_resume(run: Path, embedder):
    other = llms()
    other["llm"].model = "openai/another-model"
    with pytest.raises(Exception, match="the same client from Python") as err:
        atlas.alma.run(resume=run, embedder=embedder, iterations=2, **other)
    assert "--model scripted" not in str(err.value)
    assert os.path.exists(run / "archive.json")


@pytest.mark.parametrize("baseline", [float("nan"), "0.5", True])
def test_a_bad_baseline_score_is_a_clear_archive_error(run: Path, baseline):
    _edit_archive(run, lambda d: d["baseline"].update(score=baseline))
    with pytest.raises(ArchiveError, match="baseline score"):
        Archive.load(run)


@pytest.mark.parametrize("params", [{"no_such_parameter": 1}, {"rooms": "many"}, {"rooms": -3}])
def test_bad_environment_settings_in_config_are_a_clear_error(run: Path, embedder, params):
    from atlas.errors import AtlasError

    data = json.loads((run / "config.json").read_text())
    data["env_params"] = params
    (run / "config.json").write_text(json.dumps(data))
    with pytest.raises(AtlasError, match=r"rooms|no_such_parameter"):
        atlas.alma.run(resume=run, embedder=embedder, iterations=2, **llms())


def test_a_lone_surrogate_from_a_model_does_not_break_the_archive_save(run: Path):
    arch = Archive.load(run).hydrate()
    arch.entries[-1].critique = "the design \ud800 failed"
    arch.save()
    back = Archive.load(run)
    assert back.entries[-1].critique == "the design \ud800 failed"


def test_report_and_viewer_show_a_run_with_hostile_strings_and_wrong_types(tmp_path: Path):
    import urllib.request

    from atlas.viewer.server import ViewerThread

    run = tmp_path / "run"
    shutil.copytree(SAMPLE, run)
    data = json.loads((run / "archive.json").read_text())
    data["entries"][1].update(name="evil\ud800\x1b[2J", critique="c\ud800", times_sampled="many")
    data["entries"][2]["errors"] = "not a list"
    data["iterations"].append({"generation": "x", "usage": "lots", "duration_s": "slow"})
    (run / "archive.json").write_text(json.dumps(data))
    config = json.loads((run / "config.json").read_text())
    config.update(model="m\ud800", episodes="many")
    (run / "config.json").write_text(json.dumps(config))
    res = cli.invoke(app, ["report", str(run), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, (res.output, res.exception)
    assert "\x1b" not in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    with ViewerThread(run) as url, urllib.request.urlopen(url + "api/run", timeout=10) as r:
        body = json.loads(r.read())
    assert r.status == 200 and any("evil" in e["name"] for e in body["entries"])


def test_archive_commands_print_no_escape_sequences_or_markup(run: Path):
    arch = Archive.load(run).hydrate()
    best = arch.best()
    best.name = "evil[red]x[/red]"
    best.source = best.source + "\n# \x1b[2J\x1b]0;owned\x07\n"
    best.learned, best.memory_path = None, None  # the edited source is another design: its memory is not
    arch.save()
    data = json.loads((run / "archive.json").read_text())
    for e in data["entries"]:
        if e["id"] == best.id:
            e["name"] = "evil\x1b[2J[red]x[/red]"
    (run / "archive.json").write_text(json.dumps(data))
    for args in (["archive", "show", str(run)], ["archive", "best", str(run)]):
        res = cli.invoke(app, args, env={"COLUMNS": "250"})
        assert res.exit_code == 0, res.output
        assert "\x1b" not in res.output and "\x07" not in res.output and "[red]" in res.output


@pytest.mark.parametrize("how", ["file", "symlink"])
def test_a_designs_folder_that_is_a_file_or_link_is_a_clear_error(run: Path, tmp_path: Path, embedder, how):
    shutil.rmtree(run / "designs")
    if how == "file":
        (run / "designs").write_text("x")
    else:
        (tmp_path / "elsewhere").mkdir()
        (run / "designs").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ArchiveError, match="designs"):
        atlas.alma.run(resume=run, embedder=embedder, iterations=2, **llms())
    assert not any((tmp_path / "elsewhere").iterdir()) if how == "symlink" else True


def test_resume_never_writes_logs_through_a_planted_symlink(run: Path, tmp_path: Path, embedder):
    target = tmp_path / "victim"
    target.mkdir()
    next_id = Archive.load(run).next_id()
    (run / "logs" / next_id).symlink_to(target)
    with pytest.raises(ArchiveError, match="logs"):
        atlas.alma.run(resume=run, embedder=embedder, iterations=2, **llms())
    assert not any(target.iterdir())


def test_resume_never_appends_to_a_file_a_trace_symlink_points_at(tmp_path: Path, embedder):
    atlas.alma.run(
        run_dir=tmp_path / "run", embedder=embedder, iterations=1, **llms(), **{**SETTINGS, "trace": True}
    )
    run = tmp_path / "run"
    victim = tmp_path / "bashrc"
    victim.write_text("precious\n")
    (run / "trace.jsonl").unlink()
    (run / "trace.jsonl").symlink_to(victim)
    with pytest.raises(ArchiveError, match="symbolic link"):
        atlas.alma.run(resume=run, embedder=embedder, iterations=2, **llms())
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("how", ["folder", "file"])
def test_report_never_writes_through_a_planted_symlink(tmp_path: Path, how):
    run = tmp_path / "run"
    shutil.copytree(SAMPLE, run)
    victim_dir = tmp_path / "victim"
    victim_dir.mkdir()
    victim = victim_dir / "bashrc"
    victim.write_text("precious\n")
    if how == "folder":
        (run / "report").symlink_to(victim_dir)
    else:
        (run / "report").mkdir()
        (run / "report" / "report.md").symlink_to(victim)
    res = cli.invoke(app, ["report", str(run)])
    assert res.exit_code in (0, 2), (res.output, res.exception)
    assert victim.read_text() == "precious\n" and sorted(p.name for p in victim_dir.iterdir()) == ["bashrc"]


def test_resume_refuses_a_design_file_swapped_after_the_run(run: Path, embedder):
    entry = next(
        e for e in json.loads((run / "archive.json").read_text())["entries"] if e["origin"] == "meta"
    )
    (run / "designs" / f"{entry['id']}.py").write_text(GIVE_UP_DESIGN)
    with pytest.raises(ArchiveError, match="the run evaluated"):
        atlas.alma.run(resume=run, embedder=embedder, iterations=2, **llms())
    res = cli.invoke(
        app, ["archive", "export", str(run), "--design", entry["id"], "--out", str(run.parent / "o")]
    )
    assert res.exit_code == 2 and "swapped after the run" in " ".join(res.output.split())


def test_run_dir_pointed_at_an_existing_run_is_refused_not_overwritten(run: Path, tmp_path: Path, embedder):
    """`--run-dir`: only `--resume` continues a run; a new run or an eval into it
    is refused before anything is written."""
    before = (run / "archive.json").read_bytes()
    with pytest.raises(ArchiveError, match=r"already holds a run .*atlas run --resume"):
        atlas.alma.run(run_dir=run, embedder=embedder, iterations=1, **llms(), **SETTINGS)
    design = tmp_path / "give_up.py"
    design.write_text(GIVE_UP_DESIGN)
    res = cli.invoke(app, ["eval", str(design), "--run-dir", str(run), "--episodes", "2", "--rooms", "5"])
    assert res.exit_code == 2 and "already holds a run" in " ".join(res.output.split()), res.output
    assert (run / "archive.json").read_bytes() == before


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["archive.json", "config.json"])
@pytest.mark.parametrize("how", ["fifo", "dev-zero"])
def test_a_run_file_that_is_a_fifo_or_a_device_is_refused_at_once(run: Path, name: str, how: str):
    """Someone else's run folder: `archive.json` or `config.json` as a FIFO (reading would wait
    forever) or a link to /dev/zero (reading would never end) is a clear error, not a hang."""
    (run / name).unlink()
    if how == "fifo":
        os.mkfifo(run / name)
    else:
        (run / name).symlink_to("/dev/zero")
    readers = {"archive.json": ["archive", "show"], "config.json": ["run", "--resume"]}
    for args in ([*readers[name], str(run)], ["report", str(run)]):
        res = cli.invoke(app, args)
        assert res.exit_code == 2 and "regular file" in " ".join(res.output.split()), (args, res.output)


# ---- a run's tasks: resumed on the tasks it started with, or not at all -------------------------


@pytest.mark.parametrize("changed", ["digest", "ids"])
def test_resume_refuses_a_run_whose_environment_now_makes_other_tasks(run: Path, embedder, changed):
    from atlas.errors import ConfigError

    config = json.loads((run / "config.json").read_text())
    assert len(config["task_digest"]) == 16
    if changed == "digest":  # same ids, other task content: an environment default changed
        config["task_digest"] = "0" * 16
    else:  # a run written before digests existed, whose ids no longer match
        del config["task_digest"]
        config["deployment_tasks"][0] += "-elsewhere"
    (run / "config.json").write_text(json.dumps(config))
    before = (run / "archive.json").read_bytes()
    with pytest.raises(ConfigError, match="other tasks than its settings make now"):
        atlas.alma.run(resume=run, embedder=embedder, iterations=2, **llms())
    assert (run / "archive.json").read_bytes() == before  # nothing played, nothing lost


def test_a_fetch_run_written_before_households_owned_fewer_things_resumes_on_its_own_tasks():
    from atlas.alma.evaluate.harness import run_tasks
    from atlas.alma.state.config import AlmaConfig
    from atlas.envs.registry import get_env

    folder = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "runs" / "fetch-ten-things"
    facts = json.loads((folder / "config.json").read_text())
    assert "task_digest" not in facts and "things" not in facts["env_params"]
    cfg = AlmaConfig.load(folder / "config.json")
    assert cfg.env_params["things"] == 10  # what every fetch house owned then
    collection, deployment = run_tasks(cfg, get_env(cfg.env, **cfg.env_kwargs()))
    assert [t.id for t in collection] == facts["collection_tasks"]
    assert {t.metadata["things"] for t in deployment} == {10}
    # the tasks its archive recorded are the ones its settings make again
    recorded = json.loads((folder / "archive.json").read_text())["entries"][0]["per_task"]
    assert [p["task_id"] for p in recorded if p["phase"] == "deployment"] == [t.id for t in deployment]


def test_a_fetch_run_written_before_things_had_their_place_resumes_on_its_own_tasks(tmp_path):
    from atlas.alma.evaluate.harness import run_tasks
    from atlas.alma.state.config import CONFIG_FORMAT, AlmaConfig, task_digest
    from atlas.envs.registry import get_env

    folder = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "runs" / "fetch-habit-075"
    facts = json.loads((folder / "config.json").read_text())
    assert "habit" not in facts["env_params"] and "config_format" not in facts
    cfg = AlmaConfig.load(folder / "config.json")
    assert cfg.env_params["habit"] == 0.75 and "things" not in cfg.env_params  # four things, as played
    collection, deployment = run_tasks(cfg, get_env(cfg.env, **cfg.env_kwargs()))
    assert task_digest([*collection, *deployment]) == facts["task_digest"]
    # a config.json of today's format that sets no habit played today's default
    (tmp_path / "config.json").write_text(json.dumps({**facts, "config_format": CONFIG_FORMAT}))
    today = AlmaConfig.load(tmp_path / "config.json")
    assert "habit" not in today.env_params and get_env(today.env, **today.env_kwargs()).habit == 1.0
