"""MetaAgent: multi-turn write → static check → sandboxed smoke run → fix; invalid designs are
results, not crashes; prompts are domain-blind."""

from __future__ import annotations

import re

import pytest
from alma_doubles import GIVE_UP_DESIGN, INVALID_DESIGN, ROUTE_DESIGN, fenced

from atlas.alma.author import prompts
from atlas.alma.author.meta_agent import MetaAgent, copied_example_lines, extract_code, extract_name
from atlas.alma.sandbox.pool import WorkerPool
from atlas.envs.registry import get_env
from atlas.infra.llm import ScriptedLLM

RECALL_CRASH = GIVE_UP_DESIGN.replace('return "GIVE_UP: stop and only look around"', 'return task["nope"]')
# The parent words its advice differently from ROUTE_DESIGN, so a reply of ROUTE_DESIGN is a new design.
PARENT_SOURCE = ROUTE_DESIGN.replace('"Route: "', '"Known path: "')
PARENTS = [
    {
        "id": "d-0002",
        "name": "graph_seed",
        "source": PARENT_SOURCE,
        "collection_score": 0.6,
        "deployment_score": 0.7,
        "normalized_score": 0.1,
        "outcomes": "collection 2/2 solved",
    }
]


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(max_workers=2)
    yield p
    p.close()


@pytest.fixture
def agent_for(embedder, pool):
    env = get_env("graphworld", rooms=5)

    def make(llm, turns=3):
        return MetaAgent(llm, env=env, embedder=embedder, pool=pool, max_turns=turns, smoke_episodes=2)

    return make


def test_extract_code_and_name():
    reply = "Name: Route Map v2\nPlan: x\n```python\ndef update(m, e, t):\n    pass\n```\ntrailing"
    assert extract_code(reply).startswith("def update")
    assert extract_name(reply, "d") == "route_map_v2"
    assert extract_name("no name here", "design_g3") == "design_g3"
    two = "```python\nx = 1\n```\n```python\ndef recall(memory, task, tools):\n    return ''\n```"
    assert "def recall" in extract_code(two)
    assert "def recall" in extract_code("```python\ndef update(a,b,c): pass\ndef recall(a,b,c): return ''")
    assert extract_code("just words") is None


async def test_valid_design_on_first_turn(agent_for):
    llm = ScriptedLLM([fenced("route_map", ROUTE_DESIGN)])
    res = await agent_for(llm).generate(
        PARENTS, "ANALYSIS: x\nMANDATORY CONSTRAINTS:\n1. a\n2. b", generation=3, baseline=0.5
    )
    assert res.status == "ok" and res.turns == 1 and res.name == "route_map"
    assert "def recall" in res.source and "OK" in res.smoke_feedback
    system, user = llm.history[0].messages[0]["content"], llm.history[0].messages[1]["content"]
    assert '"observation"' in system  # the environment's context schema is shown
    assert "tools.find_similar" in system and "Allowed imports only: collections" in system
    assert "Generation 3." in user and "0.500" in user  # baseline
    assert "tools.graph_path(start, dest)" in user  # the parent's source
    assert "normalized +0.100" in user and "MANDATORY CONSTRAINTS" in user


async def test_static_check_errors_are_fed_back_and_fixed(agent_for):
    llm = ScriptedLLM([fenced("bad", INVALID_DESIGN), fenced("fixed", ROUTE_DESIGN)])
    res = await agent_for(llm).generate(PARENTS, None, generation=1)
    assert res.status == "ok" and res.turns == 2 and res.name == "fixed"
    feedback = llm.history[1].prompt
    assert "Static check problems" in feedback and "import of 'os' is not allowed" in feedback
    assert res.attempts[0]["problems"] and res.attempts[1]["smoke_ok"] is True


async def test_smoke_run_errors_are_fed_back(agent_for):
    llm = ScriptedLLM([fenced("crashy", RECALL_CRASH), fenced("fixed", ROUTE_DESIGN)])
    res = await agent_for(llm).generate(PARENTS, None, generation=1)
    assert res.status == "ok" and res.turns == 2
    feedback = llm.history[1].prompt
    assert "Smoke run report" in feedback and "KeyError" in feedback
    assert any("smoke run failed" in e for e in res.errors)


async def test_never_valid_is_recorded_as_invalid(agent_for):
    llm = ScriptedLLM(default="I would store things, but here is no code.")
    res = await agent_for(llm, turns=2).generate(PARENTS, None, generation=2)
    assert res.status == "invalid" and res.turns == 2 and res.source is None
    assert len(res.errors) == 2 and all("no ```python fence" in e for e in res.errors)
    llm2 = ScriptedLLM(default=fenced("bad", INVALID_DESIGN))
    res2 = await agent_for(llm2, turns=2).generate(PARENTS, None, generation=2)
    assert res2.status == "invalid" and res2.source and "import os" in res2.source
    assert any("import of 'os'" in e for e in res2.errors)


def test_prompts_are_domain_blind():
    static = "\n".join(
        [
            prompts.META_SYSTEM,
            prompts.TOOLS_DOC,
            prompts.DESIGN_CONTRACT,
            prompts.DEBUG_SYSTEM,
            prompts.DEBUG_FINAL_REQUEST,
            prompts.meta_request([], None, None, 1),
            prompts.meta_feedback(["x"], "y"),
        ]
    )
    for word in ("room", "graphworld", "alfworld", "textworld", "kitchen", "household", "move_to", "pick_up"):
        assert not re.search(word, static, re.IGNORECASE), word


async def test_only_the_latest_attempt_stays_in_the_prompt(agent_for):
    llm = ScriptedLLM(
        [fenced("bad1", INVALID_DESIGN), fenced("bad2", INVALID_DESIGN), fenced("ok", ROUTE_DESIGN)]
    )
    res = await agent_for(llm, turns=3).generate(PARENTS, None, generation=1)
    assert res.status == "ok" and res.turns == 3
    assert len(llm.history[2].messages) == 4  # system, request, last attempt, its feedback


async def test_meta_model_failure_is_recorded(agent_for):
    from atlas.errors import LLMError

    llm = ScriptedLLM([LLMError("prompt longer than n_ctx")])
    res = await agent_for(llm).generate(PARENTS, None, generation=1)
    assert res.status == "error" and "n_ctx" in res.errors[0]


def test_extract_code_from_awkward_replies():
    src = "def update(memory, episode, tools):\n    pass\n\ndef recall(memory, task, tools):\n    return ''\n"
    assert extract_code(f"```python3\n{src}```") == src
    assert extract_code(f"~~~py\n{src}~~~") == src
    assert extract_code(f"Python code, mislabelled:\n```js\n{src}```\nthanks") == src
    assert extract_code(f"```javascript\nfunction recall() {{}}\n```\nand\n```python\n{src}```") == src
    assert (
        extract_code("  ```python\n" + "".join("    " + line + "\n" for line in src.splitlines()) + "  ```")
        == src
    )  # an indented block is dedented, not half-stripped
    assert extract_code("```js\nfunction update(m) {}\nfunction recall(m) { return '' }\n```") is None


async def test_code_in_the_wrong_language_is_named_in_the_feedback(agent_for):
    js = "Name: js\n```javascript\nfunction update(memory, episode) {}\nfunction recall() { return '' }\n```"
    llm = ScriptedLLM([js, fenced("fixed", ROUTE_DESIGN)])
    res = await agent_for(llm).generate(PARENTS, None, generation=1)
    assert res.status == "ok" and res.turns == 2
    assert "javascript, not Python" in res.errors[0] and "javascript, not Python" in llm.history[1].prompt


async def test_an_enormous_reply_does_not_blow_up_the_next_prompt(agent_for):
    from atlas.alma.author.meta_agent import MAX_ECHO_CHARS, MAX_SOURCE_CHARS

    prose = "I will think about memory. " * 40_000  # ~1 MB of prose, no code
    huge = fenced("huge", ROUTE_DESIGN + "\nTABLE = " + repr("x" * (MAX_SOURCE_CHARS + 10)) + "\n")
    llm = ScriptedLLM([prose, huge, fenced("fixed", ROUTE_DESIGN)])
    res = await agent_for(llm).generate(PARENTS, None, generation=1)
    assert res.status == "ok" and res.turns == 3
    assert all(len(m["content"]) < MAX_ECHO_CHARS + 200 for c in llm.history for m in c.messages[2:])
    assert "no ```python fence" in res.errors[0] and "keep it under" in res.errors[1]


async def test_a_reply_cut_at_the_token_limit_is_named_in_the_feedback(agent_for):
    from atlas.alma.author.meta_agent import MAX_REPLY_TOKENS
    from atlas.protocols.llm import Completion, Usage

    whole = fenced("route_map", ROUTE_DESIGN)
    cut_at = whole.index("def recall")
    cut_at = whole.index("\n", whole.index(":", cut_at)) + 1  # ends after a line that opens a block
    cut = Completion(text=whole[:cut_at], usage=Usage(completion_tokens=MAX_REPLY_TOKENS))
    llm = ScriptedLLM([cut, whole])
    res = await agent_for(llm).generate(PARENTS, None, generation=1)
    assert res.status == "ok" and res.turns == 2
    assert llm.history[0].kwargs["max_tokens"] == MAX_REPLY_TOKENS >= 3000  # room for a whole module
    feedback = llm.history[1].prompt
    assert f"{MAX_REPLY_TOKENS}-token limit" in feedback and "syntax error" in feedback
    # a reply that merely has a syntax error (not at the limit) is not blamed on the limit
    short = Completion(text=whole[:cut_at], usage=Usage(completion_tokens=200))
    llm2 = ScriptedLLM([short, whole])
    await agent_for(llm2).generate(PARENTS, None, generation=1)
    assert "token limit" not in llm2.history[1].prompt


async def test_a_copy_of_a_parent_in_other_formatting_is_sent_back(agent_for):
    # same behaviour, other layout and comments: the smoke run's advice gives it away
    copy = "# reworded, same logic\n" + PARENT_SOURCE.replace("\n\n", "\n\n\n")
    llm = ScriptedLLM([fenced("route_again", copy), fenced("give_up", GIVE_UP_DESIGN)])
    res = await agent_for(llm).generate(PARENTS, None, generation=4)
    assert res.status == "ok" and res.turns == 2 and res.name == "give_up"
    assert res.attempts[0]["copy_of"] == 1
    assert "same advice as Parent 1" in llm.history[1].prompt
    only_copies = ScriptedLLM(default=fenced("route_again", copy))
    res2 = await agent_for(only_copies, turns=2).generate(PARENTS, None, generation=4)
    assert res2.status == "invalid" and all("copy of it" in e for e in res2.errors)


async def test_a_crossover_that_rebuilds_a_parent_is_not_a_new_design(agent_for):
    twins = [{**PARENTS[0], "id": "d-0002"}, {**PARENTS[0], "id": "d-0003", "name": "graph_seed_2"}]
    res = await agent_for(ScriptedLLM([])).crossover(twins, generation=3)
    assert res.status == "invalid" and any("a copy of Parent 1" in e for e in res.errors)


def test_name_and_plan_lines_inside_the_fence_are_dropped():
    reply = (
        "```python\nName: room_counter\nPlan: Count the visits to each room, then advise.\n\n"
        "def update(memory, episode, tools):\n    pass\n\n\ndef recall(memory, task, tools):\n    return ''\n```"
    )
    code = extract_code(reply)
    assert code.startswith("def update") and compile(code, "<design>", "exec")
    assert extract_name(reply, "d") == "room_counter"
    plain = "```python\nplan_a = 1\nname = 'x'\ndef update(m, e, t):\n    pass\ndef recall(m, t, tl):\n    return ''\n```"
    assert extract_code(plain).startswith("plan_a = 1")


EXAMPLE = (
    "Task: Bring the ring to room_F.\nAdvice:\n"
    "When the ring is here: pick_up ring.\n"
    "In room_D when you carry the ring: move_to room_F.\n"
    "In room_F when you carry the ring: put_down ring."
)
# What the 1.5B meta model wrote when shown the example: its advice, literally, for every task.
LITERAL = GIVE_UP_DESIGN.replace(
    'return "GIVE_UP: stop and only look around"',
    'return "In room_D when you carry the ring: move_to room_F. When the ring is here: pick_up ring."',
)


async def test_a_design_that_writes_the_example_advice_literally_is_sent_back(agent_for):
    llm = ScriptedLLM([fenced("literal", LITERAL), fenced("route_map", ROUTE_DESIGN)])
    res = await agent_for(llm).generate(PARENTS, None, generation=2, example=EXAMPLE)
    assert res.status == "ok" and res.turns == 2 and res.name == "route_map"
    feedback = llm.history[1].prompt
    assert "writes the example's advice literally (2 lines" in feedback and "compute its lines" in feedback
    assert res.attempts[0]["smoke_ok"] is None  # refused before the smoke run
    # one shared line is not a copy: the example's form is what designs are meant to learn
    one = LITERAL.replace(" When the ring is here: pick_up ring.", "")
    assert copied_example_lines(one, EXAMPLE) == []
    assert copied_example_lines(LITERAL, None) == []
