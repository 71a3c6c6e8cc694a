"""``local:`` models: a GGUF file run in process by llama-cpp-python (optional extra ``local``).

The model loads on first use. A llama context is not thread-safe, so generation runs in a worker
thread under a lock; a caller's timeout/cancellation sets a flag that a stopping criterion
checks after every token, so an abandoned generation stops instead of burning CPU.
The prompt is rendered with the chat template stored in the GGUF. ``json_schema`` becomes a
grammar (constrained decoding: the reply is valid JSON for the schema). Tools are described in
the system prompt in Qwen's ``<tool_call>`` convention; with ``tool_choice="required"`` the reply
is constrained to one call of one of the tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import itertools
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
CHOICE_SEQUENCES = 63  # choices scored per decode; more are scored in further decodes


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
                    with contextlib.suppress(ValueError):
                        args = json.loads(args)
                parts.append(
                    "<tool_call>\n"
                    + json.dumps({"name": fn.get("name"), "arguments": args}, ensure_ascii=False)
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
        if (
            isinstance(value, dict)
            and isinstance(value.get("name"), str)
            and (blocks or value["name"] in names)
        ):
            args = value.get("arguments", value.get("parameters", {}))
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    args = {"_raw_arguments": args}
            calls.append(
                ToolCall(name=value["name"], arguments=args if isinstance(args, dict) else {}, id=f"call_{i}")
            )
    rest = _TOOL_CALL.sub("", text).strip() if blocks else ("" if calls else text)
    return rest, calls


def _cancel_check(cancelled: threading.Event) -> Any:
    """A stopping criterion (checked in Python after every token) that ends a generation
    nobody waits for any more."""

    def check(_input_ids: Any, _logits: Any) -> bool:
        return cancelled.is_set()

    return check


def _json_watch(llama: Any, n_prompt: int) -> Any:
    """Stopping criterion for a free JSON attempt: stop when the reply starts with prose (the
    grammar pass will redo it) or when the first top-level JSON value has closed."""

    def check(input_ids: Any, _logits: Any) -> bool:
        text = llama.detokenize(list(input_ids[n_prompt:])).decode("utf-8", errors="ignore").lstrip()
        if not text:
            return False
        if text[0] not in "{[`<":
            return True
        start = text.find("{") if text[0] != "[" else 0
        if start < 0:
            return len(text) > 40  # a fence or tag that never opens a value
        depth, quote, escaped = 0, False, False
        for ch in text[start:]:
            if quote:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    quote = False
                continue
            if ch == '"':
                quote = True
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    return True
        return False

    return check


def _add_usage(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {k: int(a.get(k, 0)) + int(b.get(k, 0)) for k in ("prompt_tokens", "completion_tokens")}


def _fits(text: str, schema: dict[str, Any], tools: list[ToolSpec] | None) -> bool:
    """Does an unconstrained reply already satisfy ``schema``? With ``tools`` (a forced call),
    it must hold exactly one valid call."""
    import jsonschema

    if tools:
        _, calls = parse_tool_calls(text, tools)
        if len(calls) != 1:
            return False
        value: Any = {"name": calls[0].name, "arguments": calls[0].arguments}
    else:
        try:
            value = parse_json_reply(text)
        except LLMError:
            return False
    try:
        jsonschema.validate(value, schema)
    except (jsonschema.ValidationError, jsonschema.SchemaError):
        return False
    return True


def _log_softmax(x: Any) -> Any:
    import numpy as np

    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def common_prefix(a: Any, b: Any) -> int:
    """Length of the common prefix of two token sequences."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class LlamaCppBackend:
    """A GGUF model in process. ``n_threads`` (generation) defaults to cores - 1 (at least 1;
    ``$ATLAS_LLAMA_THREADS`` overrides); prompt processing uses every core.

    ``grammar``: "fallback" (default) generates freely first and re-generates under the JSON
    grammar only when the reply does not match the schema; "always" constrains from the start;
    "never" leaves validation to the client's repair / re-ask loop.
    """

    supports_tools = True  # prompted + parsed; grammar-forced with tool_choice="required"
    supports_choices = True  # a reply among ``choices`` is decoded token by token under a trie

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
        grammar: str = "fallback",
        state_slots: int = 6,
        kv_reuse: bool = True,
        choice_batch: int = CHOICE_SEQUENCES,
    ) -> None:
        self.path = Path(path)
        self.model = model or f"local:{self.path}"
        self.n_ctx = n_ctx
        cores = os.cpu_count() or 2
        env_threads = os.environ.get("ATLAS_LLAMA_THREADS")
        # Generation is memory-bound and llama.cpp's threads spin: on a busy 2-core machine two
        # generation threads ran 3.5x slower than one (2.6-3.3 vs 9.3-9.9 tok/s, measured here).
        # Prompt processing (batch) still uses every core.
        self.n_threads = n_threads or (int(env_threads) if env_threads else max(1, cores - 1))
        self.n_threads_batch = max(self.n_threads, cores)
        self.seed = seed
        self.verbose = verbose
        self.tool_choice = tool_choice
        if grammar not in ("always", "fallback", "never"):
            raise LLMConfigError(f"grammar must be 'always', 'fallback' or 'never', not {grammar!r}")
        self.grammar_mode = grammar
        self._llama: Any = None
        self._chat_formatter: Any = None
        self._lock = threading.Lock()
        # KV states of conversations another one displaced (concurrent episodes interleave in one
        # context): restored when that conversation continues, so none is read twice.
        self.state_slots = state_slots if kv_reuse else 0
        self.kv_reuse = kv_reuse  # False: every choice re-reads its whole prompt (the reference in tests)
        self._states: list[tuple[list[int], Any]] = []
        # Choices scored per model pass, as one token trie (0: one pass per choice, the reference).
        self.choice_batch = max(0, choice_batch)
        self.stats = {"prompt_tokens_evaluated": 0, "prompt_tokens_reused": 0, "states_restored": 0}
        self._llama_cpp = _import_llama_cpp()  # fail at construction, with the install hint

    def _load(self) -> Any:
        if self._llama is None:
            try:
                self._llama = self._llama_cpp.Llama(
                    model_path=str(self.path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads_batch,
                    seed=self.seed,
                    verbose=self.verbose,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise LLMConfigError(f"cannot load {self.path} with llama.cpp: {exc}") from exc
            if self.choice_batch:
                self._widen(self._llama)
        return self._llama

    def _widen(self, llama: Any) -> None:
        """Give the context one KV cache shared by several sequences, so one decode scores a turn's
        choices together. Llama() builds its context with a single sequence and takes no setting
        for more, so the context is made again from the same parameters."""
        lib = self._llama_cpp.llama_cpp
        seqs = min(self.choice_batch + 1, int(lib.llama_max_parallel_sequences()))
        params = llama.context_params
        params.n_seq_max, params.kv_unified = seqs, True
        try:
            ctx = self._llama_cpp._internals.LlamaContext(
                model=llama._model, params=params, verbose=self.verbose
            )
        except ValueError:  # no memory for it: keep the single-sequence context, score one by one
            self.choice_batch = 0
            return
        llama._ctx.close()
        llama._ctx = llama._stack.enter_context(contextlib.closing(ctx))
        self.choice_batch = seqs - 1

    def load(self) -> None:
        """Load the model now (otherwise it loads on the first call)."""
        with self._lock:
            self._load()

    def _formatter(self, llama: Any) -> Any:
        """The GGUF's own chat template (None if the file has none)."""
        if self._chat_formatter is None:
            template = llama.metadata.get("tokenizer.chat_template")
            if not template:
                return None
            model = llama._model  # the tokenizer's special tokens, as Llama.__init__ reads them
            eos_id, bos_id = llama.token_eos(), llama.token_bos()
            self._chat_formatter = self._llama_cpp.llama_chat_format.Jinja2ChatFormatter(
                template=template,
                eos_token=model.token_get_text(eos_id) if eos_id != -1 else "",
                bos_token=model.token_get_text(bos_id) if bos_id != -1 else "",
                stop_token_ids=[eos_id],
            )
        return self._chat_formatter

    def _run(
        self,
        llama: Any,
        messages: list[dict[str, str]],
        request: LLMRequest,
        grammar: Any,
        cancelled: threading.Event,
        watch_json: bool = False,
    ) -> tuple[str, dict[str, Any]]:
        """Render with the chat template and generate with create_completion, which (unlike
        create_chat_completion) takes our stopping criteria. ``watch_json``: a free attempt at
        a JSON reply stops as soon as the value is complete, or when it starts with prose."""
        temperature = 0.2 if request.temperature is None else request.temperature
        max_tokens = request.max_tokens or DEFAULT_MAX_TOKENS
        stop = list(request.stop or [])
        formatter = self._formatter(llama)
        if formatter is None:  # no template in the file: llama-cpp-python's own chat handling
            result = llama.create_chat_completion(
                messages=messages, max_tokens=max_tokens, temperature=temperature, stop=stop, grammar=grammar
            )
            return result["choices"][0]["message"].get("content") or "", result.get("usage") or {}
        rendered = formatter(messages=messages)
        prompt = llama.tokenize(
            rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True
        )
        criteria = [_cancel_check(cancelled), *(rendered.stopping_criteria or [])]
        if watch_json:
            criteria.append(_json_watch(llama, len(prompt)))
        rstop = rendered.stop if isinstance(rendered.stop, list) else [rendered.stop] if rendered.stop else []
        result = llama.create_completion(
            prompt=prompt,
            max_tokens=max_tokens,
            temperature=temperature,
            stop=stop + rstop,
            stopping_criteria=self._llama_cpp.StoppingCriteriaList(criteria),
            grammar=grammar,
        )
        return result["choices"][0]["text"] or "", result.get("usage") or {}

    async def complete(self, request: LLMRequest) -> Completion:
        cancelled = threading.Event()
        try:
            return await asyncio.to_thread(self._generate, request, cancelled)
        except asyncio.CancelledError:
            cancelled.set()  # the worker's stopping criterion sees this after the next token
            raise

    def _grammar(self, schema: dict[str, Any]) -> Any:
        grammar_cls = self._llama_cpp.LlamaGrammar
        try:
            return grammar_cls.from_json_schema(json.dumps(schema), verbose=self.verbose)
        except (ValueError, RuntimeError, KeyError, TypeError, NotImplementedError):
            # A schema feature llama.cpp cannot express: fall back to "any JSON" + validation.
            return grammar_cls.from_string(self._llama_cpp.llama_grammar.JSON_GBNF, verbose=self.verbose)

    # ---- choices: prefill with reuse, then constrained decoding of one label --------------------

    def _prompt_tokens(self, llama: Any, messages: list[dict[str, str]]) -> list[int]:
        formatter = self._formatter(llama)
        if formatter is None:
            text = "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant: "
            return list(llama.tokenize(text.encode("utf-8"), add_bos=True, special=False))
        rendered = formatter(messages=messages)
        return list(
            llama.tokenize(rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True)
        )

    def _prefill(self, llama: Any, tokens: list[int]) -> None:
        """Evaluate ``tokens`` reusing the longest prefix already in the KV cache (the live one, or
        a saved state of a displaced conversation); afterwards the last position's logits are fresh."""
        live = [int(t) for t in llama.input_ids[: llama.n_tokens]]
        reuse = common_prefix(live, tokens) if self.kv_reuse else 0
        best, best_state = reuse, None
        for saved, state in self._states:
            n = common_prefix(saved, tokens)
            if n > best:
                best, best_state = n, (saved, state)
        if self.state_slots and len(live) - reuse > 64:
            self._save_state(llama, live)  # the live conversation is about to be displaced
        if best_state is not None:
            self._load_state(llama, *best_state)
            self.stats["states_restored"] += 1
            reuse = best
        reuse = min(reuse, len(tokens) - 1)  # re-evaluate at least one token for fresh logits
        llama.n_tokens = reuse
        llama.eval(tokens[reuse:])
        self.stats["prompt_tokens_evaluated"] += len(tokens) - reuse
        self.stats["prompt_tokens_reused"] += reuse

    def _save_state(self, llama: Any, tokens: list[int]) -> None:
        """Copy the KV cells of sequence 0 (the only one used) — not the whole context."""
        lib = self._llama_cpp.llama_cpp
        size = lib.llama_state_seq_get_size(llama._ctx.ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        n = lib.llama_state_seq_get_data(llama._ctx.ctx, buf, size, 0)
        self._states = [(t, st) for t, st in self._states if common_prefix(t, tokens) < len(t)]
        self._states.append((tokens, bytes(buf)[:n]))
        del self._states[: max(0, len(self._states) - self.state_slots)]

    def _load_state(self, llama: Any, tokens: list[int], state: bytes) -> None:
        lib = self._llama_cpp.llama_cpp
        lib.llama_memory_seq_rm(lib.llama_get_memory(llama._ctx.ctx), 0, -1, -1)
        buf = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if lib.llama_state_seq_set_data(llama._ctx.ctx, buf, len(state), 0) == 0:
            raise LLMError(f"{self.model}: could not restore a saved KV state")
        llama.input_ids[: len(tokens)] = tokens
        llama.n_tokens = len(tokens)
        llama._requires_eval = True

    def _last_logits(self, llama: Any) -> Any:
        import numpy as np

        ptr = self._llama_cpp.llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(llama.n_vocab(),))

    def _eval_with_logits(self, llama: Any, tokens: list[int]) -> Any:
        """Evaluate ``tokens`` after the cache and return the logits after each of them."""
        import numpy as np

        n_past = llama.n_tokens
        llama._ctx.kv_cache_seq_rm(-1, n_past, -1)
        llama._batch.set_batch(batch=tokens, n_past=n_past, logits_all=True)
        llama._ctx.decode(llama._batch)
        llama.input_ids[n_past : n_past + len(tokens)] = tokens
        llama.n_tokens = n_past + len(tokens)
        get = self._llama_cpp.llama_cpp.llama_get_logits_ith
        return np.stack(
            [
                np.ctypeslib.as_array(get(llama._ctx.ctx, i), shape=(llama.n_vocab(),))
                for i in range(len(tokens))
            ]
        ).astype(np.float64)

    def _score_choices(
        self, llama: Any, messages: list[Message], choices: list[str], cancelled: threading.Event
    ) -> tuple[Any, int, int]:
        """Each choice's log-probability as the whole reply (its tokens, then end of turn), the
        prompt tokens evaluated, and the choice tokens scored."""
        import numpy as np

        tokens = self._prompt_tokens(llama, _plain_messages(messages, None))
        if len(tokens) >= self.n_ctx - 64:
            raise ValueError(f"prompt of {len(tokens)} tokens does not fit the context ({self.n_ctx})")
        evaluated = self.stats["prompt_tokens_evaluated"]
        self._prefill(llama, tokens)
        base = llama.n_tokens
        first = _log_softmax(self._last_logits(llama).astype(np.float64))
        end = llama.token_eos()
        if self.choice_batch:
            labels = [list(llama.tokenize(c.encode("utf-8"), add_bos=False, special=False)) for c in choices]
            values, scored = self._score_trie(llama, labels, first, end, cancelled)
            return values, self.stats["prompt_tokens_evaluated"] - evaluated, scored
        scores, scored = [], 0
        for label in choices:
            if cancelled.is_set():
                break
            seq = list(llama.tokenize(label.encode("utf-8"), add_bos=False, special=False))
            rows = _log_softmax(self._eval_with_logits(llama, seq))
            scored += len(seq)
            scores.append(first[seq[0]] + sum(rows[i, t] for i, t in enumerate([*seq[1:], end])))
            llama.n_tokens = base
        llama._ctx.kv_cache_seq_rm(-1, base, -1)
        llama._requires_eval = True  # the context's logits are a label's now, not the prompt's
        return np.asarray(scores), self.stats["prompt_tokens_evaluated"] - evaluated, scored

    def _score_trie(
        self, llama: Any, labels: list[list[int]], first: Any, end: int, cancelled: threading.Event
    ) -> tuple[Any, int]:
        """Each label's log-probability (its tokens, then ``end``) after the prompt in the cache,
        from decodes of the labels' token trie: choice ``k`` of a group is sequence ``k + 1``, which
        shares the prompt's KV cells with sequence 0. Returns the scores and the trie tokens read."""
        import numpy as np

        from atlas.infra.llm import choice_trie

        lib = self._llama_cpp.llama_cpp
        ctx, memory, base = llama._ctx.ctx, llama._ctx.memory, llama.n_tokens
        batch, room = llama._batch.batch, llama.n_batch
        scores, read = np.zeros(len(labels)), 0
        kept = [i for i, label in enumerate(labels) if label]
        scores[[i for i, label in enumerate(labels) if not label]] = first[end]  # "": the turn ends at once
        budget = self.n_ctx - base - 1
        for part in choice_trie.chunks([len(labels[i]) for i in kept], self.choice_batch, budget):
            group = [kept[i] for i in part]
            nodes, paths = choice_trie.build([labels[i] for i in group])
            wanted: list[set[int]] = [set() for _ in nodes]
            for path in paths:
                for a, b in itertools.pairwise(path):
                    wanted[a].add(nodes[b].token)
                wanted[path[-1]].add(end)
            logp: list[dict[int, float]] = []
            try:
                for k in range(len(group)):
                    lib.llama_memory_seq_cp(memory, 0, k + 1, 0, base)
                for start in range(0, len(nodes), room):
                    if cancelled.is_set():
                        break
                    piece = nodes[start : start + room]
                    batch.n_tokens = len(piece)
                    for i, node in enumerate(piece):
                        batch.token[i], batch.pos[i], batch.logits[i] = node.token, base + node.depth, True
                        batch.n_seq_id[i] = len(node.choices)
                        for j, choice in enumerate(node.choices):
                            batch.seq_id[i][j] = choice + 1
                    llama._ctx.decode(llama._batch)
                    for i in range(len(piece)):
                        row = np.ctypeslib.as_array(
                            lib.llama_get_logits_ith(ctx, i), shape=(llama.n_vocab(),)
                        )
                        top = float(row.max())
                        norm = top + float(np.log(np.exp(row - top, dtype=np.float64).sum()))
                        logp.append({t: float(row[t]) - norm for t in wanted[start + i]})
            finally:
                for k in range(len(group)):
                    lib.llama_memory_seq_rm(memory, k + 1, -1, -1)
            if cancelled.is_set():
                break
            read += len(nodes)
            for k, path in enumerate(paths):
                steps = zip(path, [*path[1:], None], strict=True)
                scores[group[k]] = first[nodes[path[0]].token] + sum(
                    logp[a][nodes[b].token if b is not None else end] for a, b in steps
                )
        llama._requires_eval = True  # the context's logits are a label's now, not the prompt's
        return scores, read

    def _choose(
        self, llama: Any, request: LLMRequest, cancelled: threading.Event
    ) -> tuple[str, dict[str, int]]:
        """The choice the model finds most likely as a whole reply (a first-token decision would let a
        shared word like "move" decide). With ``contrast`` (the same conversation without the context
        under test, e.g. without the memory's advice) the score is context-aware:
        ``(1 + w) * log p(choice | messages) - w * log p(choice | contrast)``, which makes a small
        model act on what the context adds instead of on its habits (Shi et al., 2023)."""
        import numpy as np

        choices = list(dict.fromkeys(request.choices or []))
        if len(choices) == 1:
            return choices[0], {"prompt_tokens": 0, "completion_tokens": 0}
        values, evaluated, scored = self._score_choices(llama, request.messages, choices, cancelled)
        weight = float(request.extra.get("contrast_weight", 1.0))
        contrast = request.extra.get("contrast")
        if contrast and weight and not cancelled.is_set():
            plain, more, more_scored = self._score_choices(llama, contrast, choices, cancelled)
            values = (1 + weight) * values - weight * plain
            evaluated, scored = evaluated + more, scored + more_scored
        bias = request.extra.get("choice_bias") or {}
        if bias and len(values) == len(choices):
            values = values + np.asarray([float(bias.get(c, 0.0)) for c in choices])
        self.stats["choice_tokens_scored"] = self.stats.get("choice_tokens_scored", 0) + scored
        temperature = request.temperature or 0.0
        if temperature > 0:
            p = np.exp((values - values.max()) / temperature)
            pick = int(np.random.default_rng(self.seed + evaluated).choice(len(values), p=p / p.sum()))
        else:
            pick = int(np.argmax(values))
        return choices[pick], {"prompt_tokens": evaluated, "completion_tokens": scored}

    def _generate(self, request: LLMRequest, cancelled: threading.Event) -> Completion:
        if request.choices:
            with self._lock:
                try:
                    text, usage = self._choose(self._load(), request, cancelled)
                except (ValueError, RuntimeError) as exc:  # too long for the context; a failed decode
                    raise LLMError(f"{self.model}: {exc}") from exc
            if cancelled.is_set():
                raise LLMError(f"{self.model}: generation cancelled")
            return Completion(
                text=text,
                usage=Usage(
                    prompt_tokens=usage["prompt_tokens"],
                    completion_tokens=usage["completion_tokens"],
                    calls=1,
                ),
                model=self.model,
            )
        tools = request.tools or None
        choice = request.extra.get("tool_choice") or self.tool_choice
        if choice == "none":
            tools = None
        schema = request.json_schema
        forced_tools = tools if schema is None and choice == "required" else None
        if forced_tools:
            schema = tool_call_schema(forced_tools)
        messages = _plain_messages(request.messages, tools)
        with self._lock:
            llama = self._load()
            try:
                text, usage = "", {}
                constrain = schema is not None and self.grammar_mode == "always"
                if not constrain:
                    text, usage = self._run(
                        llama, messages, request, None, cancelled, watch_json=schema is not None
                    )
                    # Grammar sampling checks the whole 151k-token vocabulary at every step (~10x
                    # slower here), so it is only paid for when the free reply does not fit.
                    constrain = (
                        schema is not None
                        and self.grammar_mode == "fallback"
                        and not _fits(text, schema, forced_tools)
                    )
                if constrain and schema is not None and not cancelled.is_set():
                    first = usage
                    text, usage = self._run(llama, messages, request, self._grammar(schema), cancelled)
                    usage = _add_usage(first, usage)
            except ValueError as exc:  # e.g. prompt longer than n_ctx
                raise LLMError(f"{self.model}: {exc}") from exc
        if cancelled.is_set():
            raise LLMError(f"{self.model}: generation cancelled")
        calls: list[ToolCall] = []
        if tools:
            text, calls = parse_tool_calls(text, tools)
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
