"""Choices on the real local model: the KV-reusing path plays the same episode as a path that
re-reads every prompt, and interleaved episodes restore their own state, never another's."""

from __future__ import annotations

import asyncio

import pytest

from atlas.agent import TaskAgent
from atlas.envs.graphworld import GraphWorldEnv
from atlas.infra import local_models
from atlas.infra.llm.client import LLMClient

pytestmark = [pytest.mark.local_llm, pytest.mark.slow]


def _client(**options) -> LLMClient:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra [local])")
    if not local_models.is_verified("qwen2.5-coder-0.5b") and not local_models.verify("qwen2.5-coder-0.5b"):
        pytest.skip("local model not assembled: run `atlas models pull qwen2.5-coder-0.5b`")
    from atlas.infra.llm.llamacpp_backend import LlamaCppBackend

    path = local_models.resolve_local_model("qwen2.5-coder-0.5b")
    options.setdefault("n_ctx", 4096)
    return LLMClient(LlamaCppBackend(path, model="local:qwen2.5-coder-0.5b", **options))


@pytest.fixture(scope="module")
def cached() -> LLMClient:
    return _client()


@pytest.fixture(scope="module")
def tasks():
    env = GraphWorldEnv(rooms=5, max_steps=6)
    return env, env.generate_family_tasks(2, 42, 10_049)


def _actions(traj) -> list[str]:
    return [s.action for s in traj.steps]


def test_choice_is_one_of_the_choices_and_free_text_still_works(cached):
    msgs = [{"role": "user", "content": "Which is a fruit? Answer with one word."}]
    reply = cached.complete(msgs, choices=["car", "apple", "chair"], temperature=0)
    assert reply.text == "apple"
    # A free completion right after a choice on the same prompt reads fresh logits, not a label's.
    assert cached.complete(msgs, temperature=0, max_tokens=8).text.strip()


def test_reused_cache_chooses_as_rereading_does(cached, tasks):
    """The same conversations, turn after turn, asked of a client that reuses its KV cache and of one
    that re-reads every prompt. The cached prefix holds exactly the same tokens, but llama.cpp
    computes it in other batch splits, so logits differ in the last bits and a near-tie can flip:
    we require agreement on nearly every turn, not bit-identity."""
    from atlas.infra.llm import ScriptedLLM

    env, (task, _) = tasks
    script = ScriptedLLM(lambda messages, **kw: kw["choices"][-1])
    TaskAgent(script, max_turns=8, contrast_weight=0).run_sync(
        env.clone(), task, advice=env.oracle_advice(task, "learnable")
    )
    fresh = _client(kv_reuse=False)
    turns = [(c.messages, c.kwargs["choices"]) for c in script.history if len(c.kwargs["choices"]) > 1]
    same = sum(
        cached.complete(m, choices=c, temperature=0).text == fresh.complete(m, choices=c, temperature=0).text
        for m, c in turns
    )
    assert len(turns) >= 4 and same >= len(turns) - 1
    assert cached.backend.stats["prompt_tokens_reused"] > cached.backend.stats["prompt_tokens_evaluated"]
    assert fresh.backend.stats["prompt_tokens_reused"] == 0


def test_interleaved_episodes_equal_the_same_episodes_alone(cached, tasks):
    env, pair = tasks
    alone = [_actions(TaskAgent(cached).run_sync(env.clone(), t)) for t in pair]
    restored = cached.backend.stats["states_restored"]

    async def both():
        agent = TaskAgent(cached)
        return await asyncio.gather(*(agent.run(env.clone(), t) for t in pair))

    together = [_actions(t) for t in asyncio.run(both())]
    assert together == alone
    assert cached.backend.stats["states_restored"] > restored  # each episode got its own KV state back


def test_the_local_model_acts_on_advice_it_can_match(cached):
    """The default model with the full answer as situation → action rules solves 8-room tasks it
    cannot solve alone (a failure here means the agent lost the ability to use advice)."""
    env = GraphWorldEnv(rooms=8)
    tasks = env.generate_family_tasks(3, 42, 10_049)
    agent = TaskAgent(cached)
    solved = [
        asyncio.run(agent.run(env.clone(), t, advice=env.oracle_advice(t, "full"))).success for t in tasks
    ]
    assert sum(solved) >= 2, solved


ROOM = (
    "This room is called the kitchen. In it, you see: a red wire, a blue wire, a battery, a light bulb, "
    "a sink, a fridge. You also see: A door to the hallway (that is closed). A door to the outside "
    "(that is open).\nGoal: turn on the light bulb by connecting it to the battery.\nActions:\n"
)
CHOICES = [
    "connect battery anode to red wire",
    "connect battery anode to blue wire",
    "connect battery cathode to red wire",
    "connect light bulb terminal 1 to red wire",
    "focus on light bulb",
    "focus on battery",
    "open door to hallway",
    "go to outside",
    "look around",
    "pick up red wire",
    "pick up blue wire",
    "wait",
]


def _menu(choices: list[str]) -> list[dict[str, str]]:
    return [{"role": "user", "content": ROOM + "\n".join(f"- {c}" for c in choices) + "\nYour action:"}]


def _scores(client: LLMClient, choices: list[str], menu: list[str] | None = None):
    import threading

    backend = client.backend
    messages = _menu(menu or choices)
    scores, _, read = backend._score_choices(backend._load(), messages, choices, threading.Event())
    return scores, read


def test_one_pass_over_the_choice_trie_scores_as_one_pass_per_choice(cached):
    """The trie shares the choices' common tokens in one decode; each choice must still see only the
    prompt and its own tokens. Kernels of other batch shapes round differently (about 0.1-0.3 nats on
    this model), while a choice reading another's tokens, or a missing end of turn, moves it by whole nats."""
    one_by_one = _client(choice_batch=0)
    assert one_by_one.backend.choice_batch == 0 and cached.backend.choice_batch > 1
    trie, read = _scores(cached, CHOICES)
    alone, scored = _scores(one_by_one, CHOICES)
    split, _ = _scores(_client(choice_batch=5), CHOICES)  # three decodes of at most five choices
    assert read < scored  # shared tokens are read once
    assert max(abs(trie - alone)) < 0.6 and max(abs(split - alone)) < 0.6
    assert CHOICES[int(trie.argmax())] == CHOICES[int(alone.argmax())]


def test_the_choices_leave_no_kv_cells_behind(cached):
    backend = cached.backend
    _scores(cached, CHOICES)
    llama = backend._load()
    lib = backend._llama_cpp.llama_cpp
    memory = llama._ctx.memory
    assert all(lib.llama_memory_seq_pos_max(memory, s) == -1 for s in range(1, backend.choice_batch + 1))
    assert lib.llama_memory_seq_pos_max(memory, 0) == llama.n_tokens - 1
    # and the same prompt still continues as free text from fresh logits
    reply = cached.complete([{"role": "user", "content": "Say yes."}], temperature=0, max_tokens=4)
    assert reply.text.strip()


def test_choices_that_outgrow_the_context_are_scored_in_parts_or_refused_clearly(cached):
    """The trie takes a KV cell per node: with few cells left after the prompt the choices are scored in
    several decodes; a choice that alone does not fit is an LLMError, not a crash."""
    from atlas.errors import LLMError
    from atlas.infra.llm.llamacpp_backend import _plain_messages

    many = [*CHOICES, *(f"move {x} to sink" for x in ("red wire", "blue wire", "battery", "light bulb"))]
    many += ["open fridge", "close fridge", "go to hallway", "open door to outside"]
    backend = cached.backend
    base = len(backend._prompt_tokens(backend._load(), _plain_messages(_menu(many), None)))
    tight = _client(n_ctx=base + 65)  # the least a prompt leaves: 64 cells for the trie
    llama = backend._load()
    assert sum(len(llama.tokenize(c.encode(), add_bos=False, special=False)) for c in many) > 64
    parts, _ = _scores(tight, many)
    whole, _ = _scores(cached, many)
    assert max(abs(parts - whole)) < 0.6
    long = "connect " + " and ".join(f"wire {i}" for i in range(40))
    with pytest.raises(LLMError, match="does not fit"):
        tight.complete(_menu(many), choices=[*many, long], temperature=0)


def test_an_empty_choice_scores_as_ending_the_turn(cached):
    scores, _ = _scores(cached, ["", "look around"], menu=CHOICES)
    assert all(abs(x) < 1e6 for x in scores) and scores[0] != scores[1]
