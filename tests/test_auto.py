"""atlas.auto: an OpenAI-SDK client or a litellm completion function wrapped so each task gets the
memory's advice in its prompt and is saved back when it ends. The model behind the real SDK / litellm
is a ScriptedLLM behind an OpenAI-compatible endpoint on 127.0.0.1 (and, marked local_llm, the real
local model behind llama-cpp-python's server)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time

import pytest

import atlas.auto
from atlas.auto import ADVICE_HEADER, episode_from_messages, task_of, with_advice
from atlas.errors import InvalidInputError
from atlas.infra.llm import ScriptedLLM
from atlas.memory import build_memory_system
from openai_compat import ScriptedOpenAIServer


def agent_policy(messages, **kwargs):
    """One tool call, then a final answer once the tool result is in."""
    if any(m["content"].startswith("tool result:") for m in messages):
        return "The key was in room_B; it is now in room_C."
    return {"tool_calls": [{"name": "look", "arguments": {}}], "text": ""}


LOOK = {
    "type": "function",
    "function": {
        "name": "look",
        "description": "Look around.",
        "parameters": {"type": "object", "properties": {}},
    },
}


def run_task(create, task: str, **kwargs) -> list[dict]:
    """A minimal tool-using agent loop over ``create(messages=..., **kwargs)``."""
    messages = [
        {"role": "system", "content": "You are a household agent."},
        {"role": "user", "content": task},
    ]
    for _ in range(4):
        reply = create(messages=messages, tools=[LOOK], **kwargs).choices[0].message
        if not reply.tool_calls:
            messages.append({"role": "assistant", "content": reply.content})
            return messages
        messages.append(
            {
                "role": "assistant",
                "content": reply.content,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in reply.tool_calls
                ],
            }
        )
        messages += [
            {"role": "tool", "tool_call_id": c.id, "content": "You see a key."} for c in reply.tool_calls
        ]
    raise AssertionError("the agent did not finish")


@pytest.fixture
def memory(embedder):
    return build_memory_system(None, embedder=embedder)


def test_openai_client_gets_advice_per_task_and_saves_finished_tasks(memory):
    from openai import OpenAI

    with ScriptedOpenAIServer(ScriptedLLM(agent_policy)) as server:
        client = atlas.auto.wrap(OpenAI(base_url=server.base_url, api_key="unused"), memory)
        first = run_task(client.chat.completions.create, "bring the key to room_C", model="scripted")
        assert client.session.saved == 1 and len(server.requests) == 2
        assert ADVICE_HEADER not in server.task_prompts()[0]  # empty memory: no advice block
        assert memory.experience_memory.count() == 1
        run_task(client.chat.completions.create, "bring the key to room_D", model="scripted")
        second = server.task_prompts()[2:]
        assert second[0] == second[1]  # the same advice on every turn of a task
        assert second[0].startswith(ADVICE_HEADER) and second[0].endswith(
            "MEMORY>>>\n\nbring the key to room_D"
        )
        assert "bring the key to room_C" in second[0]  # the first task's experience, as framed data
        assert set(server.system_prompts()) == {"You are a household agent."}  # never in the system role
    assert first[0]["content"] == "You are a household agent."  # the caller's messages are not changed
    assert client.models is client._client.models  # everything else passes through


def test_litellm_completion_function_is_wrapped_the_same_way(memory):
    import litellm

    with ScriptedOpenAIServer(ScriptedLLM(agent_policy)) as server:
        completion = atlas.auto.wrap(litellm.completion, memory)
        run_task(
            completion,
            "bring the key to room_C",
            model="openai/scripted",
            api_base=server.base_url,
            api_key="unused",
        )
        run_task(
            completion,
            "bring the key to room_D",
            model="openai/scripted",
            api_base=server.base_url,
            api_key="unused",
        )
        assert completion.session.saved == 2 and memory.experience_memory.count() == 2
        assert "bring the key to room_C" in server.task_prompts()[2]


def test_guideline_bank_learns_tips_from_finished_tasks_and_gives_them_back(embedder):
    from openai import OpenAI

    from atlas.memory.guidelines import GuidelineBank
    from guideline_doubles import auto_responder

    bank = GuidelineBank.open(None, llm=ScriptedLLM(auto_responder()), embedder=embedder)
    with ScriptedOpenAIServer(ScriptedLLM(agent_policy)) as server:
        client = atlas.auto.wrap(OpenAI(base_url=server.base_url, api_key="unused"), bank)
        run_task(client.chat.completions.create, "bring the key to room_C", model="scripted")
        tips = bank.list_guidelines()
        assert tips and client.session.saved == 1
        run_task(client.chat.completions.create, "bring the key to room_C", model="scripted")
        advised = server.task_prompts()[2]
        assert ADVICE_HEADER in advised and any(t.content in advised for t in tips)


def test_helpers_and_bad_input():
    msgs = [{"role": "user", "content": "find the key"}]
    assert task_of(msgs) == "find the key" and task_of([{"role": "system", "content": "x"}]) is None
    assert with_advice(msgs, "  ") == msgs
    assert with_advice(msgs, "go north") == [
        {"role": "user", "content": f"{ADVICE_HEADER}\n<<<MEMORY\ngo north\nMEMORY>>>\n\nfind the key"}
    ]
    transcript = [
        *msgs,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "move", "arguments": '{"room": "B"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "1", "content": "You are in B."},
        {"role": "assistant", "content": "ok"},
    ]
    ep = episode_from_messages(transcript, True)
    assert ep["task"]["goal"] == "find the key" and ep["success"] is True and ep["score"] == 1.0
    assert ep["steps"] == [
        {
            "action": {"tool": "move", "args": {"room": "B"}},
            "observation": {"text": "You are in B."},
            "error": None,
        }
    ]
    with pytest.raises(InvalidInputError, match="memory: cannot use a int"):
        atlas.auto.wrap(lambda **kw: None, 3)
    with pytest.raises(InvalidInputError, match="client: expected"):
        atlas.auto.wrap(object(), build_memory_system(None))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.local_llm
@pytest.mark.slow
def test_litellm_path_against_the_local_model_behind_an_openai_compatible_server(memory, tmp_path):
    """The real thing: llama-cpp-python's OpenAI-compatible server with the 0.5B model on 127.0.0.1,
    called through litellm by the wrapped completion function (two short calls)."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra [local])")
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python's [server] extra is not installed")
    import litellm

    from atlas.infra import local_models

    if not local_models.verify("qwen2.5-coder-0.5b"):
        pytest.skip("local model not assembled: run `atlas models pull qwen2.5-coder-0.5b`")
    port = _free_port()
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(local_models.model_path("qwen2.5-coder-0.5b")),
            "--model_alias",
            "qwen",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
        env={**os.environ},
    )
    try:
        for _ in range(600):
            if proc.poll() is not None:
                pytest.fail("llama_cpp.server exited: " + (tmp_path / "server.log").read_text()[-2000:])
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.2)
        completion = atlas.auto.wrap(litellm.completion, memory)
        kw = dict(
            model="openai/qwen",
            api_base=f"http://127.0.0.1:{port}/v1",
            api_key="unused",
            max_tokens=16,
            temperature=0.0,
        )
        for task in ("Say the word apple.", "Say the word pear."):
            out = completion(messages=[{"role": "user", "content": task}], **kw)
            assert out.choices[0].message.content.strip()
        assert completion.session.saved == 2 and memory.experience_memory.count() == 2
        found = json.dumps(
            [e.task.description for e in memory.experience_memory.search("Say the word pear.", k=2)]
        )
        assert "Say the word apple." in found
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


async def test_async_clients_behave_like_the_sync_ones(embedder):
    """AsyncOpenAI and litellm.acompletion: the same advice and saves as their sync twins."""
    import litellm
    from openai import AsyncOpenAI, OpenAI

    def transcript_prompts(make_create, kwargs) -> tuple[list[str], int]:
        memory = build_memory_system(None, embedder=embedder)
        with ScriptedOpenAIServer(ScriptedLLM(agent_policy)) as server:
            create, session = make_create(memory, server)
            for task in ("bring the key to room_C", "bring the key to room_D"):
                run_task(create, task, **{k: v(server) if callable(v) else v for k, v in kwargs.items()})
            return server.task_prompts(), session.saved

    def sync_client(memory, server):
        c = atlas.auto.wrap(OpenAI(base_url=server.base_url, api_key="unused"), memory)
        return c.chat.completions.create, c.session

    loop = asyncio.get_running_loop()

    def async_client(memory, server):
        c = atlas.auto.wrap(AsyncOpenAI(base_url=server.base_url, api_key="unused"), memory)
        return (
            lambda **kw: asyncio.run_coroutine_threadsafe(c.chat.completions.create(**kw), loop).result()
        ), c.session

    def async_litellm(memory, server):
        f = atlas.auto.wrap(litellm.acompletion, memory)
        return (lambda **kw: asyncio.run_coroutine_threadsafe(f(**kw), loop).result()), f.session

    want = await asyncio.to_thread(transcript_prompts, sync_client, {"model": "scripted"})
    assert want[1] == 2 and ADVICE_HEADER in want[0][2]
    assert await asyncio.to_thread(transcript_prompts, async_client, {"model": "scripted"}) == want
    got = await asyncio.to_thread(
        transcript_prompts,
        async_litellm,
        {"model": "openai/scripted", "api_base": lambda s: s.base_url, "api_key": "unused"},
    )
    assert got == want
