"""``local:`` models: a GGUF file run in process by llama-cpp-python (optional extra ``local``).

The model loads on first use. A llama context is not thread-safe, so generation runs in a worker
thread under a lock; a caller's timeout/cancellation sets a flag that a logits processor
checks after every token, so an abandoned generation stops instead of burning CPU.
The prompt is rendered with the chat template stored in the GGUF. ``json_schema`` becomes a
grammar (constrained decoding: the reply is valid JSON for the schema). Tools are described in
the system prompt in Qwen's ``<tool_call>`` convention; with ``tool_choice="required"`` the reply
is constrained to one call of one of the tools.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from atlas.errors import LLMConfigError, LLMError
from atlas.infra.llm.backend import LLMRequest
from atlas.infra.llm.jsonreply import parse_json_reply
from atlas.protocols.llm import Completion, Message, ToolCall, ToolSpec, Usage

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
DEFAULT_MAX_TOKENS = 1024


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise LLMConfigError(
            "local: models need llama-cpp-python, which is not installed: "
            "pip install 'atlas-memory[local]' (or run `make install`, which builds it)"
        ) from exc
    return llama_cpp


def tools_prompt(tools: list[ToolSpec]) -> str:
    """The tool section of the system prompt, in the format Qwen2.5 models were trained on."""
    specs = "\n".join(json.dumps(t.to_openai(), ensure_ascii=False) for t in tools)
    return (
        "# Tools\n\nYou may call one of the following functions to act:\n\n<tools>\n"
        f"{specs}\n</tools>\n\n"
        "To call a function, reply with a JSON object with the function name and arguments "
        "inside <tool_call></tool_call> XML tags:\n<tool_call>\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    )


def tool_call_schema(tools: list[ToolSpec]) -> dict[str, Any]:
    """JSON schema of exactly one call to one of ``tools`` (used as a grammar)."""
    options = [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": t.parameters or {"type": "object"}},
            "required": ["name", "arguments"],
        }
        for t in tools
    ]
    return options[0] if len(options) == 1 else {"anyOf": options}


def _plain_messages(messages: list[Message], tools: list[ToolSpec] | None) -> list[dict[str, str]]:
    """OpenAI-style history (assistant tool_calls, role "tool") → plain turns any template renders."""
    out: list[dict[str, str]] = []
    for m in messages:
        role = m.get("role", "user")
        content = m.get("content")
        if not isinstance(content, str):
            content = "" if content is None else json.dumps(content, ensure_ascii=False)
        if role == "assistant" and m.get("tool_calls"):
            parts = [content] if content else []
            for call in m["tool_calls"]:
                fn = call.get("function", call)
                args = fn.get("arguments", {})
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except ValueError:
                        pass
                parts.append(
                    "<tool_call>\n" + json.dumps({"name": fn.get("name"), "arguments": args}, ensure_ascii=False)
                    + "\n</tool_call>"
                )
            out.append({"role": "assistant", "content": "\n".join(parts)})
        elif role == "tool":
            out.append({"role": "user", "content": f"<tool_response>\n{content}\n</tool_response>"})
        else:
            out.append({"role": role, "content": content})
    if tools:
        section = tools_prompt(tools)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": out[0]["content"] + "\n\n" + section}
        else:
            out.insert(0, {"role": "system", "content": section})
    return out


def parse_tool_calls(text: str, tools: list[ToolSpec]) -> tuple[str, list[ToolCall]]:
    """Tool calls in a local model's reply (``<tool_call>`` blocks or a bare call object)."""
    names = {t.name for t in tools}
    blocks = _TOOL_CALL.findall(text)
    candidates = blocks or [text]
    calls: list[ToolCall] = []
    for i, block in enumerate(candidates):
        try:
            value = parse_json_reply(block)
        except LLMError:
            continue
        if isinstance(value, dict) and isinstance(value.get("name"), str) and (blocks or value["name"] in names):
            args = value.get("arguments", value.get("parameters", {}))
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    args = {"_raw_arguments": args}
            calls.append(ToolCall(name=value["name"], arguments=args if isinstance(args, dict) else {}, id=f"call_{i}"))
    rest = _TOOL_CALL.sub("", text).strip() if blocks else ("" if calls else text)
    return rest, calls


class _Cancelled(Exception):
    """Raised inside the sampler to stop a generation nobody waits for any more."""


def _cancel_check(cancelled: threading.Event) -> Any:
    def check(_input_ids: Any, scores: Any) -> Any:
        if cancelled.is_set():
            raise _Cancelled
        return scores

    return check


class LlamaCppBackend:
    """A GGUF model in process. ``n_threads`` defaults to the machine's cores."""

    supports_tools = True  # prompted + parsed; grammar-forced with tool_choice="required"

    def __init__(
        self,
        path: str | Path,
        *,
        model: str | None = None,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        seed: int = 0,
        verbose: bool = False,
        tool_choice: str = "auto",
    ) -> None:
        self.path = Path(path)
        self.model = model or f"local:{self.path}"
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 2
        self.seed = seed
        self.verbose = verbose
        self.tool_choice = tool_choice
        self._llama: Any = None
        self._lock = threading.Lock()
        self._llama_cpp = _import_llama_cpp()  # fail at construction, with the install hint

    def _load(self) -> Any:
        if self._llama is None:
            try:
                self._llama = self._llama_cpp.Llama(
                    model_path=str(self.path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    seed=self.seed,
                    verbose=self.verbose,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise LLMConfigError(f"cannot load {self.path} with llama.cpp: {exc}") from exc
        return self._llama

    def load(self) -> None:
        """Load the model now (otherwise it loads on the first call)."""
        with self._lock:
            self._load()

    async def complete(self, request: LLMRequest) -> Completion:
        cancelled = threading.Event()
        try:
            return await asyncio.to_thread(self._generate, request, cancelled)
        except asyncio.CancelledError:
            cancelled.set()  # the worker's logits processor sees this before the next token
            raise

    def _grammar(self, schema: dict[str, Any]) -> Any:
        grammar_cls = self._llama_cpp.LlamaGrammar
        try:
            return grammar_cls.from_json_schema(json.dumps(schema), verbose=self.verbose)
        except (ValueError, RuntimeError, KeyError, TypeError, NotImplementedError):
            # A schema feature llama.cpp cannot express: fall back to "any JSON" + validation.
            return grammar_cls.from_string(self._llama_cpp.llama_grammar.JSON_GBNF, verbose=self.verbose)

    def _generate(self, request: LLMRequest, cancelled: threading.Event) -> Completion:
        tools = request.tools or None
        choice = request.extra.get("tool_choice") or self.tool_choice
        if choice == "none":
            tools = None
        schema = request.json_schema
        if tools and schema is None and choice == "required":
            schema = tool_call_schema(tools)
        kwargs: dict[str, Any] = {
            "messages": _plain_messages(request.messages, tools),
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "temperature": 0.2 if request.temperature is None else request.temperature,
            "stop": request.stop or [],
            # Called by llama.cpp's sampler before every token: the only hook create_chat_completion
            # offers that can end a generation whose caller gave up (timeout / cancellation).
            "logits_processor": self._llama_cpp.LogitsProcessorList([_cancel_check(cancelled)]),
        }
        with self._lock:
            llama = self._load()
            if schema is not None:
                kwargs["grammar"] = self._grammar(schema)
            try:
                result = llama.create_chat_completion(**kwargs)
            except _Cancelled as exc:
                raise LLMError(f"{self.model}: generation cancelled") from exc
            except ValueError as exc:  # e.g. prompt longer than n_ctx
                raise LLMError(f"{self.model}: {exc}") from exc
        text = result["choices"][0]["message"].get("content") or ""
        calls: list[ToolCall] = []
        if tools:
            text, calls = parse_tool_calls(text, tools)
        usage = result.get("usage") or {}
        return Completion(
            text=text,
            tool_calls=calls,
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
                cost_usd=0.0,
                calls=1,
            ),
            model=self.model,
        )


__all__ = ["LlamaCppBackend", "parse_tool_calls", "tool_call_schema", "tools_prompt"]
