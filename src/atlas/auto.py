"""The low-code tier: wrap an existing agent's LLM client so it gets memory automatically.

    from openai import OpenAI
    import atlas.auto

    client = atlas.auto.wrap(OpenAI(), memory="exported/")          # an exported design
    client = atlas.auto.wrap(OpenAI(), memory=GuidelineBank.open(…))  # or learned guidelines
    completion = atlas.auto.wrap(litellm.completion, memory=memory_system)  # or experience memory

Per task — the first user message of a conversation is the task — the memory's advice is put into
the prompt (appended to the system message, or a system message of its own), once per task and the
same on every turn. When the model gives a final answer (a reply without tool calls) the finished
conversation is saved back to the memory, and the next call with that task starts a new episode.
Everything else passes through untouched, so any provider the client supports works.

A memory is any object with ``advise(task: str) -> str`` and ``learn(messages, success) -> None``;
``as_memory`` adapts a ``GuidelineBank``, a ``MemorySystem`` / experience memory, a ``ServedDesign``
or an export folder.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from atlas.errors import InvalidInputError

ADVICE_HEADER = "Advice from memory (learned from past tasks):"
MAX_OPEN_TASKS = 256  # tasks whose advice is kept while they run (oldest dropped first)


@runtime_checkable
class AutoMemory(Protocol):
    """What ``wrap`` needs from a memory."""

    def advise(self, task: str) -> str: ...

    def learn(self, messages: list[dict[str, Any]], success: bool | None) -> None: ...


class GuidelineMemory:
    """Guidelines (``GuidelineBank``): tips for the task; learns tips from the transcript."""

    def __init__(self, bank: Any, k: int = 5) -> None:
        self.bank, self.k = bank, k

    def advise(self, task: str) -> str:
        from atlas.memory.guidelines.render import format_guidelines

        return format_guidelines(self.bank.get_guidelines(task, k=self.k))

    def learn(self, messages: list[dict[str, Any]], success: bool | None) -> None:
        self.bank.save_trajectory(messages, success=success)


class ExperienceMemory:
    """Experience memory (a ``MemorySystem``): similar past episodes; stores the finished one."""

    def __init__(self, system: Any, k: int = 3) -> None:
        self.system, self.k = system, k

    def advise(self, task: str) -> str:
        from atlas.memory.system import format_advice

        return format_advice(self.system.query_sync(task, k=self.k))

    def learn(self, messages: list[dict[str, Any]], success: bool | None) -> None:
        from atlas.memory.guidelines.messages import parse_trajectory

        self.system.store(parse_trajectory(messages, success=success))


class DesignMemory:
    """An exported design (``ServedDesign``): its recall; its update when served with ``learn=True``.

    A design sees a task view; by default ``{"goal": task, "observation": {}, "domain": ""}``.
    ``view(task) -> dict`` builds a richer one (a design evolved on an environment may expect that
    environment's first observation)."""

    def __init__(self, served: Any, view: Callable[[str], dict[str, Any]] | None = None) -> None:
        self.served = served
        self.view = view

    def advise(self, task: str) -> str:
        return self.served.recall(self.view(task) if self.view else task)

    def learn(self, messages: list[dict[str, Any]], success: bool | None) -> None:
        if self.served.learn:
            episode = episode_from_messages(messages, success)
            if self.view:
                episode["task"] = self.view(episode["task"]["goal"])
            self.served.update(episode)


def as_memory(memory: Any) -> AutoMemory:
    """Adapt ``memory`` (see the module docstring); a clear error for anything else."""
    if isinstance(memory, str | Path):
        from atlas.alma.deploy.served import ServedDesign

        return DesignMemory(ServedDesign.open(memory))
    if isinstance(memory, AutoMemory):
        return memory
    if hasattr(memory, "get_guidelines") and hasattr(memory, "save_trajectory"):
        return GuidelineMemory(memory)
    if hasattr(memory, "query_sync") and hasattr(memory, "store"):
        return ExperienceMemory(memory)
    if hasattr(memory, "recall") and hasattr(memory, "exported"):
        return DesignMemory(memory)
    raise InvalidInputError(
        f"memory: cannot use a {type(memory).__name__}; give a GuidelineBank, a MemorySystem, "
        "a ServedDesign, an export folder, or an object with advise(task) and learn(messages, "
        "success)"
    )


def _content(message: Any) -> str:
    c = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
    if isinstance(c, list):  # content parts
        return " ".join(p.get("text", "") for p in c if isinstance(p, dict))
    return c or ""


def task_of(messages: list[Any]) -> str | None:
    """The task of a conversation: its first user message."""
    for m in messages:
        role = m.get("role") if isinstance(m, dict) else getattr(m, "role", None)
        if role == "user":
            return _content(m).strip() or None
    return None


def with_advice(messages: list[Any], advice: str) -> list[Any]:
    """A copy of ``messages`` with the advice in the system prompt (the caller's list is untouched)."""
    if not advice.strip():
        return list(messages)
    block = f"{ADVICE_HEADER}\n{advice.strip()}"
    out = list(messages)
    if (
        out
        and isinstance(out[0], dict)
        and out[0].get("role") == "system"
        and isinstance(out[0].get("content"), str)
    ):
        out[0] = {**out[0], "content": f"{out[0]['content']}\n\n{block}"}
    else:
        out.insert(0, {"role": "system", "content": block})
    return out


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def reply_message(response: Any) -> dict[str, Any] | None:
    """The assistant message of a chat completion (OpenAI SDK object, litellm ModelResponse or dict)."""
    choices = _get(response, "choices")
    if not choices:
        return None
    msg = _get(choices[0], "message")
    if msg is None:
        return None
    calls = []
    for c in _get(msg, "tool_calls") or []:
        fn = _get(c, "function")
        calls.append(
            {
                "id": _get(c, "id"),
                "type": "function",
                "function": {"name": _get(fn, "name"), "arguments": _get(fn, "arguments") or "{}"},
            }
        )
    out: dict[str, Any] = {"role": "assistant", "content": _get(msg, "content")}
    if calls:
        out["tool_calls"] = calls
    return out


def episode_from_messages(messages: list[dict[str, Any]], success: bool | None) -> dict[str, Any]:
    """A design's ``episode`` from an OpenAI-style transcript: the task, each tool call with its
    result as the observation, the outcome (unknown success counts as a failure, score 0)."""
    results = {m.get("tool_call_id"): _content(m) for m in messages if m.get("role") == "tool"}
    steps = []
    for m in messages:
        if m.get("role") != "assistant":
            continue
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except json.JSONDecodeError:
                args = {"raw": fn.get("arguments")}
            text = results.get(c.get("id"), "")
            steps.append(
                {
                    "action": {"tool": fn.get("name") or "", "args": args if isinstance(args, dict) else {}},
                    "observation": {"text": text},
                    "error": None,
                }
            )
    ok = bool(success)
    return {
        "task": {"goal": task_of(messages) or "", "observation": {}, "domain": ""},
        "steps": steps,
        "success": ok,
        "score": 1.0 if ok else 0.0,
        "steps_taken": len(steps),
    }


class AutoSession:
    """The per-task bookkeeping shared by every wrapper: advice once per task, save on a final reply."""

    def __init__(
        self,
        memory: AutoMemory,
        *,
        save: bool = True,
        success: Callable[[list[dict]], bool | None] | None = None,
    ) -> None:
        self.memory = memory
        self.save = save
        self.success = success
        self._advice: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self.saved = 0  # finished tasks saved back

    def prepare(self, messages: list[Any]) -> list[Any]:
        """The messages to send: with the task's advice (computed on the task's first call)."""
        task = task_of(messages)
        if task is None:
            return list(messages)
        with self._lock:
            advice = self._advice.get(task)
        if advice is None:
            advice = self.memory.advise(task) or ""
            with self._lock:
                self._advice[task] = advice
                while len(self._advice) > MAX_OPEN_TASKS:
                    self._advice.popitem(last=False)
        return with_advice(messages, advice)

    def finish(self, messages: list[Any], response: Any) -> None:
        """After a reply: a final answer ends the task and saves the conversation."""
        reply = reply_message(response)
        task = task_of(messages)
        if reply is None or task is None or reply.get("tool_calls"):
            return
        with self._lock:
            self._advice.pop(task, None)
        if self.save:
            transcript = [_plain(m) for m in messages] + [reply]
            self.memory.learn(transcript, self.success(transcript) if self.success else None)
            self.saved += 1


def _plain(m: Any) -> dict[str, Any]:
    if isinstance(m, dict):
        return m
    dump = getattr(m, "model_dump", None)
    return dump(exclude_none=True) if dump else dict(m)


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(inspect.unwrap(fn))


def _through_memory(
    session: AutoSession,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    messages: list[Any],
    kwargs: dict[str, Any],
) -> Any:
    """Call ``fn`` with the task's advice in ``messages`` and save the task when it ends. One path
    for sync and async callables: an async one gets a coroutine, with the memory's (blocking) work
    run in a thread so the event loop is never held."""
    stream = bool(kwargs.get("stream"))
    if _is_async(fn):

        async def call() -> Any:
            prepared = await asyncio.to_thread(session.prepare, messages)
            response = await fn(*args, messages=prepared, **kwargs)
            if not stream:
                await asyncio.to_thread(session.finish, messages, response)
            return response

        return call()
    response = fn(*args, messages=session.prepare(messages), **kwargs)
    if inspect.isawaitable(response):  # an async callable we could not recognise up front

        async def finish() -> Any:
            done = await response
            if not stream:
                await asyncio.to_thread(session.finish, messages, done)
            return done

        return finish()
    if not stream:
        session.finish(messages, response)
    return response


class _Completions:
    def __init__(self, inner: Any, session: AutoSession) -> None:
        self._inner, self._session = inner, session

    def create(self, *args: Any, messages: list[Any], **kwargs: Any) -> Any:
        return _through_memory(self._session, self._inner.create, args, messages, kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Chat:
    def __init__(self, inner: Any, session: AutoSession) -> None:
        self._inner = inner
        self.completions = _Completions(inner.completions, session)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class WrappedClient:
    """An OpenAI-SDK client whose ``chat.completions.create`` goes through memory; all else passes through."""

    def __init__(self, client: Any, session: AutoSession) -> None:
        self._client = client
        self.session = session
        self.chat = _Chat(client.chat, session)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def wrap(
    client: Any,
    memory: Any,
    *,
    save: bool = True,
    success: Callable[[list[dict[str, Any]]], bool | None] | None = None,
) -> Any:
    """Wrap an OpenAI-SDK client (anything with ``chat.completions.create``) or a completion function
    (``litellm.completion``-like: ``fn(model=..., messages=[...], ...)``) so every task gets the
    memory's advice and is saved back when it ends. ``success(transcript)`` may judge the outcome
    (default: unknown, left to the memory). Async clients (``AsyncOpenAI``, ``litellm.acompletion``)
    work the same way and return awaitables. Streaming calls get advice but are not saved."""
    session = AutoSession(as_memory(memory), save=save, success=success)
    if hasattr(client, "chat") and hasattr(client.chat, "completions"):
        return WrappedClient(client, session)
    if callable(client):

        def completion(*args: Any, messages: list[Any], **kwargs: Any) -> Any:
            return _through_memory(session, client, args, messages, kwargs)

        completion.session = session  # type: ignore[attr-defined]
        completion.__doc__ = f"{getattr(client, '__name__', 'completion')} with ATLAS memory"
        return completion
    raise InvalidInputError(
        f"client: expected an OpenAI-SDK client or a completion function, got {type(client).__name__}"
    )


__all__ = [
    "ADVICE_HEADER",
    "AutoMemory",
    "AutoSession",
    "DesignMemory",
    "ExperienceMemory",
    "GuidelineMemory",
    "WrappedClient",
    "as_memory",
    "episode_from_messages",
    "task_of",
    "with_advice",
    "wrap",
]
