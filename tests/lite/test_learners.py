"""A session whose lesson is "run `make test`, not pytest" yields a tip with `make test` that is
added to "how do I run the tests?" and not to "write a haiku" — with a scripted model, with the
no-LLM extractor, and with `claude -p` where it is installed; and which learner is chosen when."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
from pathlib import Path

import pytest
from lite_helpers import SAMPLES

from atlas.memory.guidelines.lite_learn import RULES_NOTE, choose_learner, learn_turn
from atlas.memory.guidelines.rule_tips import RuleTipExtractor
from atlas.memory.guidelines.tipfiles import read_tips
from atlas.memory.guidelines.transcripts import read_transcript

MAKE_TEST = SAMPLES / "make_test_correction.jsonl"
RELATED = "how do I run the tests?"
UNRELATED = "write a haiku"


def hub_for(tmp_path: Path, embedder, llm=None):
    from atlas.mcp_server import MemoryHub

    return MemoryHub(tmp_path / "mem", llm=llm, embedder=embedder)


async def learn_file(learner, hub, transcript: Path, tips_dir: Path) -> list:
    bank = hub.bank("shop", need_llm=learner.kind == "model")
    return [await learn_turn(learner, bank, t, tips_dir) for t in read_transcript(transcript).trajectories]


async def injected(hub, tips_dir: Path, prompt: str) -> str:
    from atlas.mcp_hooks import context

    reply = await context(hub, {"prompt": prompt, "namespace": "shop", "tips_dir": str(tips_dir)})
    return reply["context"]


async def check_make_test(hub, tips_dir: Path) -> None:
    tips, problems = read_tips(tips_dir)
    assert problems == []
    assert any("make test" in t.content for t in tips), [t.content for t in tips]
    assert "make test" in await injected(hub, tips_dir, RELATED)
    assert await injected(hub, tips_dir, UNRELATED) == ""


async def test_no_llm_extractor_learns_the_correction(tmp_path, embedder):
    learner = choose_learner(None, env={"PATH": str(tmp_path / "empty-bin")}, home=tmp_path)
    assert learner.kind == "rules" and learner.note == RULES_NOTE
    assert "richer tips need a model" in learner.note and "\n" not in learner.note
    hub = hub_for(tmp_path, embedder)
    results = await learn_file(learner, hub, MAKE_TEST, tmp_path / "tips")
    assert [r.status for r in results] == ["learned", "learned"]
    await check_make_test(hub, tmp_path / "tips")
    (t,) = read_tips(tmp_path / "tips")[0]
    assert t.content == "Tests must be run with `make test`, never bare pytest."
    assert t.learner == "rules" and t.source == [results[1].trajectory_id]
    # learning the same session again adds nothing: each tip exactly once
    again = await learn_file(learner, hub, MAKE_TEST, tmp_path / "tips")
    assert [r.status for r in again] == ["duplicate", "duplicate"]
    assert len(read_tips(tmp_path / "tips")[0]) == 1
    # the MCP tools see the tip as well
    listed = hub.bank("shop").list_guidelines()
    assert [g.content for g in listed] == [t.content]


async def test_scripted_model_learns_the_correction(tmp_path, embedder):
    from atlas.infra.llm import ScriptedLLM
    from atlas.memory.guidelines.prompts import stage_of
    from guideline_doubles import auto_responder

    base = auto_responder(segments=1, tips=1)
    tip = {
        "category": "strategy",
        "content": "Run the tests with `make test`, never bare `pytest`: the Makefile sets PYTHONPATH",
        "trigger": "running the project's tests",
        "task_category": "testing",
    }

    other = {
        "category": "strategy",
        "content": "Read the Makefile first to see how this project builds and checks itself",
        "trigger": "a new project",
    }

    def respond(messages, **kw):
        if stage_of(messages) != "tips":
            return base(messages, **kw)
        text = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
        allowed = re.search(r"Allowed categories: ([a-z, ]+)", text).group(1).strip().split(", ")
        return json.dumps({"tips": [{**t, "category": allowed[0]} for t in (tip, other)]})

    hub = hub_for(tmp_path, embedder, llm=ScriptedLLM(respond))
    learner = choose_learner("scripted", env={}, home=tmp_path)
    assert learner.kind == "model"
    results = await learn_file(learner, hub, MAKE_TEST, tmp_path / "tips")
    assert {r.learner for r in results} == {"model"}
    await check_make_test(hub, tmp_path / "tips")
    assert all(t.learner == "model" for t in read_tips(tmp_path / "tips")[0])


def stand_in_agent(folder: Path, answer: dict, cost: float = 0.02) -> Path:
    """An executable named `claude` that answers as `claude -p --output-format json` does and
    records how it was called (a stand-in for the real CLI: its reply is scripted)."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "claude"
    record = folder / "calls.jsonl"
    exe.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"open({str(record)!r}, 'a').write(json.dumps({{'argv': sys.argv[1:], 'cwd': os.getcwd(),"
        " 'disabled': os.environ.get('ATLAS_LITE_DISABLE')}) + '\\n')\n"
        f"print(json.dumps({{'type': 'result', 'result': {json.dumps(json.dumps(answer))},"
        f" 'total_cost_usd': {cost}}}))\n"
    )
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return record


async def test_the_headless_agent_learns_in_the_background_within_its_budget(tmp_path, embedder):
    answer = {"tips": [{"content": "Run `make test`, not pytest, in /home/dev/shop", "trigger": "tests"}]}
    record = stand_in_agent(tmp_path / "bin", answer)
    env = {"PATH": str(tmp_path / "bin"), "ATLAS_LITE_AGENT_MAX_USD": "0.03"}
    learner = choose_learner(None, env=env, home=tmp_path)
    assert learner.kind == "agent" and learner.agent is not None and learner.agent.agent == "claude"
    hub = hub_for(tmp_path, embedder)
    results = await learn_file(learner, hub, MAKE_TEST, tmp_path / "tips")
    assert [r.learner for r in results] == ["claude-cli", "claude-cli"]
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(calls) == 2
    for call in calls:
        assert call["argv"][:5] == ["-p", "--output-format", "json", "--max-turns", "1"]
        assert call["disabled"] == "1"  # the plugin's hooks stay off inside the learner's own session
        assert call["cwd"] != os.getcwd() and call["argv"][-1].startswith("You are reading one turn")
    assert "never bare pytest" in calls[1]["argv"][-1]  # the turn is in the prompt
    (t,) = read_tips(tmp_path / "tips")[0]  # both turns gave the same tip: one file
    assert t.content == "Run `make test`, not pytest, in a file path"  # a person's folder abstracted
    await check_make_test(hub, tmp_path / "tips")
    ledger = json.loads((tmp_path / "agent_budget.json").read_text())
    assert ledger["calls"] == 2 and ledger["usd"] == pytest.approx(0.04)

    # over the day's cap: the next turn is learned by the no-LLM extractor, and the reason is kept
    hub2 = hub_for(tmp_path / "second", embedder)
    results = await learn_file(learner, hub2, MAKE_TEST, tmp_path / "tips2")
    assert [r.learner for r in results] == ["rules", "rules"]
    assert "spent $0.04 today (cap $0.03)" in (results[0].reason or "")
    assert len(record.read_text().splitlines()) == 2  # not called again
    await check_make_test(hub2, tmp_path / "tips2")


def test_which_learner(tmp_path):
    empty = {"PATH": str(tmp_path)}
    assert choose_learner(None, env=empty).kind == "rules"  # never the local 0.5B by default
    assert choose_learner(None, env={**empty, "ATLAS_LITE_LEARNER": "local"}).kind == "model"
    assert choose_learner("local:qwen2.5-coder-0.5b", env=empty).kind == "model"  # chosen explicitly
    keyed = choose_learner(None, env={**empty, "ANTHROPIC_API_KEY": "k"})
    assert keyed.kind == "model" and "claude-haiku" in keyed.why
    stand_in_agent(tmp_path / "bin", {"tips": []})
    with_cli = {"PATH": str(tmp_path / "bin")}
    assert choose_learner(None, env=with_cli).kind == "agent"
    assert choose_learner(None, env={**with_cli, "OPENAI_API_KEY": "k"}).kind == "model"  # the key first
    assert choose_learner(None, env={**with_cli, "ATLAS_LITE_LEARNER": "rules"}).kind == "rules"
    with pytest.raises(Exception, match="ATLAS_LITE_LEARNER must be one of"):
        choose_learner(None, env={"ATLAS_LITE_LEARNER": "gpt"})


def test_the_no_llm_extractor_keeps_commands_paths_and_versions():
    x = RuleTipExtractor()
    tips = {
        name: [
            g.content for t in read_transcript(SAMPLES / f"{name}.jsonl").trajectories for g in x.extract(t)
        ]
        for name in ("make_test_correction", "nginx_fix", "numpy_pin")
    }
    assert tips["make_test_correction"] == ["Tests must be run with `make test`, never bare pytest."]
    (nginx,) = tips["nginx_fix"]
    assert "`sudo nginx -t`" in nginx and "`/etc/nginx/nginx.conf`" in nginx
    assert "`proxy_passs` → `proxy_pass`" in nginx and "PROJ-1234" not in nginx
    assert any("`numpy` → `numpy<2.0` in `requirements.txt`" in t for t in tips["numpy_pin"])
    assert any(t.startswith("Keep numpy<2.0 pinned in requirements.txt") for t in tips["numpy_pin"])
    # paths inside the session's folder are written relative to it
    (parser,) = [
        g.content
        for t in read_transcript(SAMPLES / "claude_code_session.jsonl").trajectories
        for g in x.extract(t)
    ]
    assert "`src/parser.py`" in parser and "/home/dev" not in parser
    # a ticket number in a correction is abstracted, the command kept
    from atlas.core.types import Task, Trajectory

    traj = Trajectory(
        task=Task(description="For PROJ-1234: always run `make lint` before committing."), steps=[]
    )
    (g,) = x.extract(traj)
    assert "`make lint`" in g.content and "PROJ-1234" not in g.content
    # a prompt without a directive or without a command teaches nothing here
    for prompt in ("fix the failing test", "Please always be careful.", "run make test"):
        assert x.extract(Trajectory(task=Task(description=prompt), steps=[])) == []


@pytest.mark.skipif(shutil.which("claude") is None, reason="the claude CLI is not installed here")
async def test_claude_p_learns_the_correction(tmp_path, embedder):  # pragma: no cover - needs Claude Code
    learner = choose_learner(None, env={**os.environ, "ATLAS_LITE_LEARNER": "claude"}, home=tmp_path)
    hub = hub_for(tmp_path, embedder)
    results = await learn_file(learner, hub, MAKE_TEST, tmp_path / "tips")
    assert any(r.learner == "claude-cli" for r in results), [r.reason for r in results]
    await check_make_test(hub, tmp_path / "tips")
