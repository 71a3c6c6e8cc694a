"""Hostile designs never stop the search: strings that cross the sandbox
boundary are made safe, a failure inside a tool is the design's error, tool work has budgets
(LLM calls, tokens, cost, characters, stored items, log records) and counts against the call's
wall-clock limit. Real sandbox, real embedder; models are ScriptedLLM doubles."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from alma_doubles import debug_policy, fenced, meta_policy, task_policy
from typer.testing import CliRunner

import atlas.alma
from atlas.alma.design import Design
from atlas.alma.evaluate.runlog import CallLog
from atlas.alma.evaluate.runner import MAX_TOOL_RECORDS, RECORD_CHARS, DesignRunner
from atlas.alma.evaluate.tools import DesignTools, ToolSettings
from atlas.alma.sandbox.clean import safe_data, safe_text
from atlas.alma.sandbox.pool import SandboxLimits, ToolRefusal, WorkerPool
from atlas.alma.search.loop import SearchStopped
from atlas.cli import app
from atlas.infra.embeddings import NGramEmbedder
from atlas.infra.llm import ScriptedLLM
from atlas.infra.llm.scripted import ScriptedBackend
from atlas.protocols.llm import Completion, Usage

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")

TASK = {"goal": "Bring the key to room_C.", "observation": {"location": "room_A"}}
EPISODE = {"task": TASK, "steps": [], "success": True, "score": 1.0, "steps_taken": 0}
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

SURROGATES = r"""
BAD = "x \ud800 y \x00 z \x1b[2J\x1b]0;pwned\x07 \u202e"


def update(memory, episode, tools):
    tools.store_obs(BAD, metadata={BAD: BAD}, collection=BAD)
    tools.find_similar(BAD)
    tools.graph_update([[BAD, "room_A"]])
    print(BAD)
    memory[BAD] = BAD


def recall(memory, task, tools):
    print("recall", BAD)
    tools.find_similar(BAD, k=2)
    return "advice " + BAD
"""


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(SandboxLimits(timeout_s=60.0), max_workers=2, spares=0)  # a busy machine must not time out
    yield p
    p.close()


def _runner(source: str, pool: WorkerPool, embedder, **kwargs) -> DesignRunner:
    return DesignRunner(
        Design(name="hostile", source=source, origin="meta"), embedder=embedder, pool=pool, **kwargs
    )


# ---- 3. strings crossing the boundary ---------------------------------------------------------------


def test_safe_text_and_safe_data():
    assert safe_text("a\ud800b\x00c\x1b[2Jd\u202e\n\te") == "a\ufffdb\ufffdc\ufffd[2Jd\ufffd\n\te"
    data = safe_data({"k\ud800": ["v\x00", {"x": "\udfff"}], "n": 1})
    assert data == {"k\ufffd": ["v", {"x": "\ufffd"}], "n": 1}
    json.dumps(data, ensure_ascii=False).encode("utf-8")


def test_lone_surrogates_and_escapes_from_a_design_are_made_safe(pool, embedder, tmp_path: Path):
    r = _runner(SURROGATES, pool, embedder)
    log = r.update_sync(EPISODE, label="C1")
    assert log.ok, log.error
    assert not [t.error for t in log.tool_calls if t.error]
    advice, rlog = r.recall_sync(TASK, label="D1")
    r.close()
    assert rlog.ok, rlog.error
    for text in [advice, *log.prints, *rlog.prints, json.dumps(r.memory, ensure_ascii=False)]:
        text.encode("utf-8")
        assert "\x1b" not in text and "\x00" not in text
    assert "\x1b" not in "\n".join(log.format_lines()) and "\u202e" not in advice
    (tmp_path / "log.txt").write_text("\n".join(log.format_lines() + rlog.format_lines()), encoding="utf-8")


def test_a_failing_tool_is_the_designs_error_not_the_hosts(embedder):
    class Broken:
        name, dim = "broken", 8

        def embed(self, texts):
            raise RuntimeError("the embedder choked")

    tools = DesignTools(Broken())
    with pytest.raises(ToolRefusal, match="store_obs failed: RuntimeError: the embedder choked"):
        tools.call("store_obs", {"text": "x"})


@pytest.mark.parametrize("name", ["surrogates", "llm_flood", "char_flood"])
def test_a_scripted_search_scores_a_hostile_design_and_finishes(tmp_path: Path, embedder, name):
    source = {"surrogates": SURROGATES, "llm_flood": LLM_FLOOD, "char_flood": CHAR_FLOOD}[name]
    meta = ScriptedLLM(meta_policy({1: [fenced(name, source)]}))
    archive, _ = atlas.alma.run(
        run_dir=tmp_path / "r",
        embedder=embedder,
        iterations=1,
        llm=ScriptedLLM(task_policy),
        meta_llm=meta,
        debug_llm=ScriptedLLM(debug_policy),
        **SETTINGS,
    )
    entry = next(e for e in archive if e.origin == "meta")
    if name == "char_flood" and entry.status == "invalid":
        # on a busy machine its flood of refused tool calls can pass the smoke run's timeout: the
        # MetaAgent then records it invalid, with the reason; the run still finishes
        assert entry.errors and len(archive.iterations) == 1
        return
    assert entry.status == "ok" and entry.normalized_score is not None, entry.errors
    text = (tmp_path / "r" / entry.logs_dir / "debug_log.txt").read_text(encoding="utf-8")
    assert "\x1b" not in text


@pytest.mark.parametrize("name", ["surrogates", "llm_flood", "char_flood"])
def test_design_check_reports_a_hostile_design(tmp_path: Path, name):
    f = tmp_path / "hostile.py"
    f.write_text({"surrogates": SURROGATES, "llm_flood": LLM_FLOOD, "char_flood": CHAR_FLOOD}[name])
    res = CliRunner().invoke(
        app, ["design", "check", str(f), "--episodes", "1", "--recall-tasks", "1", "--json"]
    )
    assert res.exit_code in (0, 1), (res.output, res.exception)
    report = json.loads(res.output)
    assert report


# ---- 4. LLM budgets -------------------------------------------------------------------------------


class PricedBackend(ScriptedBackend):
    """A scripted model that reports tokens and a cost per call, like a provider does."""

    async def complete(self, request):
        c = await super().complete(request)
        return Completion(
            text=c.text,
            usage=Usage(prompt_tokens=100, completion_tokens=20, cost_usd=0.01, calls=1),
            model="priced",
        )


def test_llm_tool_budgets_per_call_and_per_evaluation(embedder):
    llm = ScriptedLLM(default="ok")
    tools = DesignTools(embedder, llm, settings=ToolSettings(max_llm_calls_per_call=3, max_llm_calls=5))
    from atlas.alma.evaluate.tools import ToolUsage

    call = ToolUsage()
    for _ in range(3):
        tools.call("summarize", {"text": "t"}, call)
    with pytest.raises(ToolRefusal, match="at most 3 summarize/analyze calls per update/recall call"):
        tools.call("analyze", {"text": "t"}, call)
    tools.call("summarize", {"text": "t"}, ToolUsage())
    tools.call("summarize", {"text": "t"}, ToolUsage())
    with pytest.raises(ToolRefusal, match="budget of 5 summarize/analyze calls per evaluation"):
        tools.call("summarize", {"text": "t"}, ToolUsage())
    assert len(llm.history) == 5 and tools.usage.llm_calls == 5 and tools.usage.refused == 2
    with pytest.raises(ToolRefusal, match="over the limit of 8000 per model call"):
        DesignTools(embedder, llm).call("summarize", {"text": "x" * 9_000})


def test_llm_tool_token_and_cost_budgets(embedder):
    from atlas.infra.llm.client import LLMClient

    llm = LLMClient(PricedBackend(default="ok"), timeout=None)
    tools = DesignTools(embedder, llm, settings=ToolSettings(max_llm_cost_usd=0.03))
    for _ in range(3):
        tools.call("summarize", {"text": "t"})
    with pytest.raises(ToolRefusal, match=r"\$0.03 of model cost"):
        tools.call("summarize", {"text": "t"})
    assert tools.usage.llm_tokens == 360 and round(tools.usage.llm_cost_usd, 6) == 0.03
    tools = DesignTools(embedder, llm, settings=ToolSettings(max_llm_tokens=200))
    tools.call("summarize", {"text": "t"})
    tools.call("summarize", {"text": "t"})
    with pytest.raises(ToolRefusal, match="200 model tokens"):
        tools.call("summarize", {"text": "t"})


LLM_FLOOD = """
def update(memory, episode, tools):
    n = 0
    for i in range(200):
        try:
            tools.summarize("text " * 1000)
            n += 1
        except Exception as exc:
            memory["refused"] = str(exc)
    memory["ok_calls"] = n


def recall(memory, task, tools):
    return memory.get("refused", "")
"""


def test_a_design_flooding_the_llm_is_capped_and_still_scored(pool, embedder):
    llm = ScriptedLLM(default="summary")
    r = _runner(LLM_FLOOD, pool, embedder, llm=llm)
    log = r.update_sync(EPISODE)
    r.close()
    assert log.ok, log.error
    assert r.memory["ok_calls"] == 5 and "at most 5 summarize/analyze calls" in r.memory["refused"]
    assert len(llm.history) == 5 and r.tools.usage.refused == 195


def test_max_cost_stops_a_search_cleanly_and_resume_continues(tmp_path: Path, embedder):
    from atlas.infra.llm.client import LLMClient

    def priced(policy):
        return LLMClient(PricedBackend(policy), timeout=None)

    meta = meta_policy({1: [fenced("surrogates", SURROGATES)]})
    with pytest.raises(SearchStopped, match="--max-cost"):
        atlas.alma.run(
            run_dir=tmp_path / "r",
            embedder=embedder,
            iterations=2,
            llm=priced(task_policy),
            meta_llm=priced(meta),
            debug_llm=priced(debug_policy),
            max_cost_usd=0.01,
            **SETTINGS,
        )
    saved = atlas.alma.Archive.load(tmp_path / "r")  # the cap may be reached in the baseline (no cache)
    assert saved.iterations == [] and all(e.origin != "meta" for e in saved)
    resumed, _ = atlas.alma.run(
        resume=tmp_path / "r",
        embedder=embedder,
        iterations=1,
        llm=priced(task_policy),
        meta_llm=priced(meta),
        debug_llm=priced(debug_policy),
        max_cost_usd=100.0,
    )
    assert [it["generation"] for it in resumed.iterations] == [1]


def test_max_minutes_stops_a_search_before_the_next_generation_and_resume_continues(tmp_path: Path, embedder):
    from atlas.infra.llm.client import LLMClient

    def llm(policy):
        return LLMClient(ScriptedBackend(policy), timeout=None)

    meta = meta_policy({1: [fenced("surrogates", SURROGATES)]})
    with pytest.raises(SearchStopped, match="--max-minutes"):
        atlas.alma.run(
            run_dir=tmp_path / "r",
            embedder=embedder,
            iterations=2,
            llm=llm(task_policy),
            meta_llm=llm(meta),
            debug_llm=llm(debug_policy),
            max_minutes=1e-6,
            **{**SETTINGS, "seed": 3},  # a seed whose plain draw puts no_memory first
        )
    saved = atlas.alma.Archive.load(tmp_path / "r")  # the cap may be reached in the baseline (no cache)
    assert saved.iterations == [] and all(
        e.origin != "meta" for e in saved
    )  # the baseline and seeds are kept
    best = saved.best()
    assert best is not None and saved.clock.earlier_s > 0
    with pytest.raises(SearchStopped, match="resumed parts included"):  # the cap counts the run's own time
        atlas.alma.run(
            resume=tmp_path / "r",
            embedder=embedder,
            iterations=1,
            llm=llm(task_policy),
            meta_llm=llm(meta),
            debug_llm=llm(debug_policy),
        )
    resumed, _ = atlas.alma.run(
        resume=tmp_path / "r",
        embedder=embedder,
        iterations=1,
        llm=llm(task_policy),
        meta_llm=llm(meta),
        debug_llm=llm(debug_policy),
        max_minutes=600,
        exploit=1.0,  # a sampling knob that may change on resume: the best design is parent 1
    )
    assert [it["generation"] for it in resumed.iterations] == [1]
    child = next(e for e in resumed if e.generation == 1)
    assert child.parent_ids[0] == best.id
    again = atlas.alma.Archive.load(tmp_path / "r")
    assert again.clock.earlier_s >= saved.clock.earlier_s + resumed.iterations[0]["duration_s"]


# ---- 5. tool time counts; host work and logs are capped -------------------------------------------


class SlowEmbedder:
    """A real embedder that takes its time (a big model on a busy machine)."""

    def __init__(self):
        self.inner = NGramEmbedder()
        self.name, self.dim = self.inner.name, self.inner.dim

    def embed(self, texts):
        time.sleep(0.25)
        return self.inner.embed(texts)


SLOW_TOOLS = """
def update(memory, episode, tools):
    for i in range(100):
        tools.store_obs("observation %d" % i)


def recall(memory, task, tools):
    return ""
"""


def test_time_in_tool_calls_counts_against_the_design_timeout(embedder):
    with WorkerPool(SandboxLimits(timeout_s=2.0), max_workers=1, spares=0) as p:
        r = _runner(SLOW_TOOLS, p, SlowEmbedder())
        log = r.update_sync(EPISODE)
        r.close()
    assert log.error_kind == "timeout", (log.error, log.duration_s)


CHAR_FLOOD = """
def update(memory, episode, tools):
    big = "word " * 3999
    refused = 0
    for i in range(40):
        try:
            tools.store_obs(big + str(i), metadata={"i": i})
        except Exception:
            refused += 1
    for i in range(150):
        try:
            tools.find_similar(big, k=50)
        except Exception:
            refused += 1
    memory["refused"] = refused


def recall(memory, task, tools):
    return ""
"""


def test_host_tool_work_and_log_records_are_capped_per_call(embedder):
    with WorkerPool(SandboxLimits(timeout_s=120.0), max_workers=1, spares=0) as p:  # caps, not time
        r = _runner(CHAR_FLOOD, p, NGramEmbedder())
        log = r.update_sync(EPISODE)
        r.close()
    assert log.ok, log.error
    assert r.memory["refused"] > 150  # past 200,000 argument characters every call is refused
    assert r.tools.usage.chars <= ToolSettings().max_tool_chars_per_call
    assert len(log.tool_calls) <= MAX_TOOL_RECORDS and log.tool_calls_dropped > 0
    for t in log.tool_calls:
        assert isinstance(t.args, dict)  # still name=value pairs: the DebugAgent's log renders them
        assert len(json.dumps(t.args, ensure_ascii=False)) <= RECORD_CHARS + 100
        assert len(json.dumps(t.result, ensure_ascii=False, default=str)) <= RECORD_CHARS + 2
    assert len(json.dumps(log.to_dict(), default=str)) < 200_000
    assert 'TOOL store_obs: collection="default" metadata={' in "\n".join(log.format_lines("C1"))
    old = log.to_dict()  # a log written before arguments stayed a mapping still renders
    old["tool_calls"][0]["args"] = "a flat string"
    assert 'args="a flat string"' in "\n".join(CallLog.from_dict(old).format_lines("C1"))


def test_max_cost_is_checked_after_every_episode_not_only_between_generations(tmp_path: Path, embedder):
    """$0.56 was spent against a $0.50 cap because the cap was read only before a
    generation. Now the search stops at the first episode that reaches it: the overrun is at most
    the episodes already under way."""
    from atlas.errors import BudgetReached
    from atlas.infra.llm.client import LLMClient

    task = LLMClient(PricedBackend(task_policy), timeout=None)
    meta = LLMClient(PricedBackend(meta_policy({1: [fenced("surrogates", SURROGATES)]})), timeout=None)
    debug = LLMClient(PricedBackend(debug_policy), timeout=None)
    cap, max_turns = 0.05, 6
    with pytest.raises(BudgetReached, match="stopped during a generation"):
        atlas.alma.run(
            run_dir=tmp_path / "r",
            embedder=embedder,
            iterations=2,
            llm=task,
            meta_llm=meta,
            debug_llm=debug,
            max_cost_usd=cap,
            baseline_cache=False,
            concurrency=1,
            max_turns=max_turns,
            **SETTINGS,
        )
    spent = sum(c.usage.cost_usd for c in (task, meta, debug))
    assert cap <= spent <= cap + 0.01 * max_turns  # at most one episode's calls past the cap
    resumed, _ = atlas.alma.run(
        resume=tmp_path / "r",
        embedder=embedder,
        iterations=1,
        llm=LLMClient(PricedBackend(task_policy), timeout=None),
        meta_llm=LLMClient(PricedBackend(meta_policy({1: [fenced("surrogates", SURROGATES)]})), timeout=None),
        debug_llm=LLMClient(PricedBackend(debug_policy), timeout=None),
        max_cost_usd=100.0,
    )
    assert resumed.baseline is not None and [it["generation"] for it in resumed.iterations] == [1]
