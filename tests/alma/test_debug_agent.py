"""DebugAgent: grep tools over the log, JSON actions, validated critique, skipping."""

from __future__ import annotations

import itertools
import json

import pytest

from atlas.alma.author.debug_agent import Critique, DebugAgent, LogTools
from atlas.infra.llm import ScriptedLLM

LOG = "\n".join(
    [
        "=== DESIGN d-0002 notes (meta) — collection 0.500, deployment 0.400, normalized -0.100 ===",
        "--- EPISODE D1: FAILED score 0.00 (20 steps) — Bring the key to room_C. ---",
        '[D1:recall] TOOL find_similar: k=3 query="key" -> []',
        '[D1:recall] SIMILARITY find_similar: label=NO_RESULTS top=- spread=- k=3 n=0 query="key"',
        '[D1:recall] RETURN: ""',
        "--- EPISODE C1: SUCCESS score 0.70 (12 steps) — Bring the book to room_A. ---",
        "[C1:update] ERROR: KeyError: 'steps' (design line 4)",
    ]
)
PARENTS = [
    {
        "id": "d-0002",
        "name": "notes",
        "collection_score": 0.5,
        "deployment_score": 0.4,
        "normalized_score": -0.1,
    }
]
FINAL = {
    "final": {
        "analysis": "recall found nothing: update crashed with KeyError so nothing was stored",
        "constraints": [
            "update must not index episode['steps'] without checking",
            "recall must return non-empty advice when the store is empty",
        ],
        "evidence": ["[C1:update] ERROR: KeyError: 'steps' (design line 4)"],
    }
}


def test_log_tools():
    t = LogTools(LOG)
    out = t.grep("NO_RESULTS")
    assert out.startswith("1 matching lines") and "4: [D1:recall] SIMILARITY" in out
    assert "3: " in t.grep("SIMILARITY", context=1) and "5: " in t.grep("SIMILARITY", context=1)
    assert t.grep("zzz") == "no lines match 'zzz'"
    assert t.grep("([").startswith("no lines")  # bad regex → literal search, not a crash
    assert t.count("EPISODE") == "2 lines match 'EPISODE'"
    assert t.head(2, 1) == "2: " + LOG.splitlines()[1]
    assert "unknown tool" in t.call("rm", {})
    assert "bad arguments" in t.call("head", {"n": "lots"})


async def test_grep_then_final_and_logs_reach_the_prompt():
    llm = ScriptedLLM(
        [
            '{"tool": "grep", "args": {"pattern": "ERROR", "context": 0}}',
            'Let me count.\n```json\n{"tool": "count", "args": {"pattern": "RETURN: \\"\\""}}\n```',
            json.dumps(FINAL),
        ]
    )
    res = await DebugAgent(llm, max_turns=5).analyze(LOG, PARENTS)
    assert res.critique is not None and not res.skipped
    assert res.turns == 3
    assert [c["tool"] for c in res.tool_calls] == ["grep", "count"]
    # the overview (with the head of the log) and the grep result reached the model
    first_prompt = llm.history[0].messages[1]["content"]
    assert "d-0002 notes" in first_prompt and "[D1:recall] TOOL find_similar" in first_prompt
    assert "[C1:update] ERROR: KeyError" in llm.history[1].prompt
    text = res.text
    assert "MANDATORY CONSTRAINTS:" in text and "1. update must not index" in text


async def test_invalid_final_is_fed_back_then_fixed():
    bad = {"final": {"analysis": "x", "constraints": ["only one"]}}
    llm = ScriptedLLM([json.dumps(bad), "not json at all", json.dumps(FINAL)])
    res = await DebugAgent(llm, max_turns=4).analyze(LOG, PARENTS)
    assert res.critique is not None
    assert "invalid" in llm.history[1].prompt
    assert "exactly one JSON object" in llm.history[2].prompt


async def test_turn_budget_then_structured_final():
    llm = ScriptedLLM(['{"tool": "head", "args": {}}'] * 2 + [json.dumps(FINAL["final"])])
    res = await DebugAgent(llm, max_turns=2).analyze(LOG, PARENTS)
    assert res.critique is not None and res.turns == 2
    assert len(llm.history) == 3  # 2 turns + one astructured call
    assert llm.history[2].kwargs["json_schema"] is not None


async def test_more_than_four_constraints_are_cut():
    c = Critique(analysis="a", constraints=["1", "2", "3", "4", "5"])
    assert c.constraints == ["1", "2", "3", "4"]
    with pytest.raises(ValueError):
        Critique(analysis="a", constraints=["only"])


async def test_skipped_when_logs_say_nothing():
    llm = ScriptedLLM([])
    res = await DebugAgent(llm).analyze(LOG, PARENTS, informative=False)
    assert res.skipped and res.critique is None and res.text is None
    assert llm.history == []


async def test_no_valid_critique_is_data_not_a_crash():
    llm = ScriptedLLM(default="I refuse")
    res = await DebugAgent(llm, max_turns=1).analyze(LOG, PARENTS)
    assert res.critique is None and "no valid critique" in res.reason


async def test_long_investigations_keep_the_prompt_bounded():
    llm = ScriptedLLM(['{"tool": "grep", "args": {"pattern": "EPISODE"}}'] * 9 + [json.dumps(FINAL)])
    res = await DebugAgent(llm, max_turns=10).analyze(LOG, PARENTS)
    assert res.critique is not None
    last = llm.history[-1].messages
    assert len(last) <= 2 + 2 * 4 + 1
    assert "earlier tool exchanges omitted" in last[1]["content"]
    roles = [m["role"] for m in last[1:]]
    assert all(a != b for a, b in itertools.pairwise(roles))  # user/assistant alternate


async def test_model_failure_is_data():
    from atlas.errors import LLMConnectionError

    llm = ScriptedLLM(default=LLMConnectionError("endpoint down"))
    res = await DebugAgent(llm).analyze(LOG, PARENTS)
    assert res.critique is None and "endpoint down" in res.reason


def test_catastrophic_or_odd_tool_arguments_stay_fast_and_are_data():
    import time

    t = LogTools(LOG + "\n" + "a" * 60 + "!")
    t0 = time.perf_counter()
    assert t.grep("(a+)+$").startswith("no lines match")  # searched literally, not backtracked for ages
    assert t.count("(\\w+\\s?)+$") == "0 lines match '(\\\\w+\\\\s?)+$'"
    assert time.perf_counter() - t0 < 1.0
    assert t.grep("RETURN|ERROR").startswith("2 matching lines")  # ordinary regexes still work
    assert "bad arguments" in t.call("head", {"n": float("inf")})


async def test_replies_that_are_not_json_unknown_tools_and_bad_args_do_not_stop_the_analysis():
    llm = ScriptedLLM(
        [
            "I think the design is fine.",
            '{"tool": "rm", "args": {"path": "/"}}',
            '{"tool": "grep", "args": {"pattern": "(["}}',
            '{"tool": "head", "args": {"n": Infinity}}',
            '{"tool": "grep", "args": "ERROR"}',
            json.dumps(FINAL),
        ]
    )
    res = await DebugAgent(llm, max_turns=6).analyze(LOG, PARENTS)
    assert res.critique is not None and res.turns == 6
    prompts = [c.prompt for c in llm.history[1:]]
    assert "exactly one JSON object" in prompts[0] and "unknown tool 'rm'" in prompts[1]
    assert "no lines match '(['" in prompts[2] and "bad arguments for head" in prompts[3]


async def test_a_repeated_tool_call_is_not_rerun_and_the_model_is_told():
    grep = '{"tool": "grep", "args": {"pattern": "ERROR"}}'
    llm = ScriptedLLM([grep, grep, '{"tool": "grep", "args": {"pattern": "RETURN"}}', json.dumps(FINAL)])
    res = await DebugAgent(llm, max_turns=6).analyze(LOG, PARENTS)
    assert res.critique is not None
    assert [c.get("repeat", False) for c in res.tool_calls] == [False, True, False]
    assert "already ran grep" in llm.history[2].prompt
    assert "KeyError" not in llm.history[2].prompt  # the same output is not pasted again
    assert "RETURN" in llm.history[3].prompt


async def test_the_final_critique_has_room_to_finish():
    from atlas.alma.author.debug_agent import CRITIQUE_MAX_TOKENS

    llm = ScriptedLLM(['{"tool": "head", "args": {}}', json.dumps(FINAL["final"])])
    await DebugAgent(llm, max_turns=1).analyze(LOG, PARENTS)
    assert llm.history[-1].kwargs["max_tokens"] == CRITIQUE_MAX_TOKENS >= 2048
