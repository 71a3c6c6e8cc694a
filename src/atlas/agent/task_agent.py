"""TaskAgent: plays one task with an LLM choosing one action per turn.

Two action formats. ``choice`` (the default where the environment enumerates its valid actions,
``candidate_actions``): the model picks one numbered action per turn in an append-only
conversation (see ``atlas.agent.choice``) — one short constrained reply per turn, and a local
model re-reads nothing it has already read. ``tools``: native tool calling where the client supports it (``llm.supports_tools``), otherwise a JSON
action ``{"thought", "tool", "args"}`` decoded under the tools' JSON schema (``json_schema=``,
so local models use constrained decoding). Replies that are not valid actions are shown to the
model as observations and recorded as error steps; they never raise. Turns are bounded.
Each turn the prompt is rebuilt from the goal, a rolling window of recent steps and the current
observation, so it stays small however long the episode runs. The agent keeps no state
between runs, so one instance may run many episodes concurrently (each on its own env clone).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from typing import Any, Literal

from atlas.agent import choice as ch
from atlas.agent.actions import InvalidAction, action_schema, parse_completion
from atlas.agent.advice_match import ADVICE_WEIGHT, SPENT, advice_now, match_advice
from atlas.agent.loops import Advances, Guard
from atlas.agent.prompts import system_prompt, turn_prompt
from atlas.core.types import Task, Trajectory
from atlas.envs.base import EpisodeRecorder, action_text, without_commands
from atlas.errors import ConfigError
from atlas.infra.aio import run_sync
from atlas.protocols.env import Action, EnumeratesActions, Environment, GivesTaskInstructions, StepsInThread
from atlas.protocols.llm import LLM, SupportsTools, Usage

ToolMode = Literal["auto", "native", "json"]
ActionFormat = Literal["auto", "choice", "tools"]
TurnAdvice = Literal["matched", "all", "none"]


def _accepts(fn: Any, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _threaded(env: Environment) -> bool:
    """Whether ``env``'s steps run in a worker thread (``StepsInThread``)."""
    return isinstance(env, StepsInThread) and bool(env.step_in_thread)


def _brief(observation_text: str) -> str:
    """An observation for the history window: without the command list (the current one is shown)."""
    return without_commands(observation_text)


def _observation_text(env: Environment, result: Any) -> str:
    """What the model reads after a step: the observation, led by the error when it does not say it."""
    text = env.summarize_observation(result.observation)
    return f"Error: {result.error}\n{text}" if result.error and result.error not in text else text


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TaskAgent:
    """Runs one task: ``await TaskAgent(llm).run(env, task, advice)`` → ``Trajectory``.

    ``max_turns`` defaults to ``env.max_steps + extra_turns`` (room for free looks and invalid
    replies). ``history_window`` recent steps are shown each turn, each clipped to
    ``step_chars`` characters.
    """

    def __init__(
        self,
        llm: LLM,
        *,
        max_turns: int | None = None,
        tool_mode: ToolMode = "auto",
        history_window: int = 8,
        step_chars: int = 240,
        extra_turns: int = 8,
        temperature: float | None = 0.0,
        max_tokens: int | None = 256,
        advice_chars: int = 2000,
        tool_choice: str | None = "required",
        loop_guard: bool = True,
        nudge_temperature: float = 0.7,
        action_format: ActionFormat = "auto",
        max_chars: int = 12000,
        turn_advice: TurnAdvice = "matched",
        contrast_weight: float = 0.0,
        advice_weight: float = ADVICE_WEIGHT,
    ) -> None:
        if tool_mode not in ("auto", "native", "json"):
            raise ConfigError(f"tool_mode must be 'auto', 'native' or 'json', got {tool_mode!r}")
        if action_format not in ("auto", "choice", "tools"):
            raise ConfigError(f"action_format must be 'auto', 'choice' or 'tools', got {action_format!r}")
        self.action_format = action_format
        self.max_chars = max_chars
        if turn_advice not in ("matched", "all", "none"):
            raise ConfigError(f"turn_advice must be 'matched', 'all' or 'none', got {turn_advice!r}")
        # Small models attend to what sits next to the question, so advice is repeated in each turn's
        # message (choice format): "matched" repeats only the lines that apply to what the agent sees
        # now (atlas.agent.advice_match), "all" the whole advice (its tokens are paid every turn:
        # 3.7x slower episodes, measured with `atlas headroom`), "none" nothing. The whole advice is
        # always in the first message.
        self.turn_advice = turn_advice
        # Context-aware choice (local models): score each action with and without the advice and
        # favour what the advice adds; 0 turns it off. Without advice it costs nothing.
        self.contrast_weight = contrast_weight
        # Local models (choice scoring): the actions that the advice lines best matching the
        # observation name get this many nats on top of the model's score (atlas.agent.advice_match).
        self.advice_weight = advice_weight
        self.llm = llm
        self.max_turns = max_turns
        self.tool_mode = tool_mode
        self.history_window = history_window
        self.step_chars = step_chars
        self.extra_turns = extra_turns
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.advice_chars = advice_chars
        # A proposal that would continue a loop is asked for once more, with a note and some
        # sampling (see atlas.agent.loops); the same for every design, so comparisons stay fair.
        self.loop_guard = loop_guard
        self.nudge_temperature = nudge_temperature
        # Every turn must be exactly one tool call: ask for it where the client can force it
        # (LLMClient passes it to providers; local models then decode under a tool-call grammar).
        self.tool_choice = tool_choice if tool_choice and _accepts(llm.acomplete, "tool_choice") else None

    def _native(self) -> bool:
        """auto: native tool calls where the client supports them, except in-process local models
        (``local:``), where a JSON action under a grammar is as reliable with half the prompt
        (the tool specs are not pasted into it) — measured 3.5x faster on the 0.5B model."""
        if self.tool_mode == "auto":
            local = str(self.llm.model).startswith("local:")
            return isinstance(self.llm, SupportsTools) and bool(self.llm.supports_tools) and not local
        return self.tool_mode == "native"

    def format_for(self, env: Environment) -> str:
        """``choice`` where the environment enumerates its valid actions (unless ``tools`` was asked)."""
        if self.action_format == "auto":
            return "choice" if isinstance(env, EnumeratesActions) else "tools"
        if self.action_format == "choice" and not isinstance(env, EnumeratesActions):
            raise ConfigError(f"action_format='choice' needs {env.name}.candidate_actions(observation)")
        return self.action_format

    async def run(self, env: Environment, task: Task, advice: str = "") -> Trajectory:
        if self.format_for(env) == "choice":
            return await self._run_choice(env, task, advice)
        return await self._run_tools(env, task, advice)

    async def _run_choice(self, env: Environment, task: Task, advice: str) -> Trajectory:
        threaded = _threaded(env)
        obs = await asyncio.to_thread(env.reset, task) if threaded else env.reset(task)
        rec = EpisodeRecorder(env, task, obs)
        goal = env.format_goal(task)
        limit = self.max_turns if self.max_turns is not None else env.max_steps + self.extra_turns
        if not isinstance(env, EnumeratesActions):
            raise ConfigError(f"action_format='choice' needs {env.name}.candidate_actions(observation)")
        candidates = env.candidate_actions
        usage = Usage()
        turns = invalid = rejected = 0
        done = False
        actions: list[Action] = candidates(obs)
        system = ch.system_message(
            env.name, env.task_instructions() if isinstance(env, GivesTaskInstructions) else ""
        )
        first = env.summarize_observation(obs)
        seen = first
        advice = (advice or "").strip()
        contrast = bool(advice) and self.contrast_weight > 0
        messages: list[Any] = [system, ch.first_message(goal, first, actions, advice, self.advice_chars)]
        plain: list[Any] = [system, ch.first_message(goal, first, actions, "", self.advice_chars)]
        guard = Guard(obs)
        chosen: list[str] = []  # the labels of the actions taken, in order
        advances = Advances(float(env.score()))

        def notes(observation: str, now: list[Action]) -> str:
            if not advice or self.turn_advice == "none":
                return ""
            if self.turn_advice == "all":
                return advice[: self.advice_chars]
            return "\n".join(
                advice_now(advice, observation, ch.labels(now), chosen, goal, advances.actions)[1]
            )

        nudges = 0
        while not done and turns < limit and actions:
            turns += 1
            labels = ch.labels(actions)
            # The loop guard, free in this format: actions that would repeat a failure, bounce
            # between two actions, repeat one three times or go round a cycle are taken off the
            # choices (the menu the model reads is unchanged, so the conversation stays append-only).
            # Where every choice would loop, those least taken from this state stay (the way on);
            # where all that is left is what the advice rules out here (lowered by SPENT: a drop
            # outside the goal room), the rest.
            texts = {label: action_text(a.tool, a.args) for a, label in zip(actions, labels, strict=True)}
            options = guard.open(obs, texts) if self.loop_guard else labels
            looping = set(labels) - set(options)
            if advice and self.advice_weight and looping:  # a repeat costs a step; a ruled-out action more
                told = match_advice(advice, seen, labels, done=chosen, goal=goal, advanced=advances.actions)
                ruled_out = {label for label, m in told.actions.items() if m <= -SPENT}
                if set(options) <= ruled_out:
                    options = [label for label in labels if label not in ruled_out] or options
            nudges += len(options) < len(labels)
            messages, plain = ch.fold(messages, self.max_chars), ch.fold(plain, self.max_chars)
            extra: dict[str, Any] = (
                {"contrast": list(plain), "contrast_weight": self.contrast_weight} if contrast else {}
            )
            asked = messages
            if advice and self.advice_weight:
                match = match_advice(advice, seen, options, done=chosen, goal=goal, advanced=advances.actions)
                if match.actions:
                    extra["choice_bias"] = {
                        label: self.advice_weight * m for label, m in match.actions.items()
                    }
                elif match.yielded:
                    # a search plan would lead away from what the goal names: decide as without memory
                    # (advice about moving made the 0.5B take the fetched object 0.14 of the time, not 0.40)
                    asked, extra = plain, {}
            completion = await self.llm.acomplete(
                asked, choices=options, temperature=self.temperature, max_tokens=32, **extra
            )
            usage.add(completion.usage)
            reply = completion.text.strip()
            messages.append({"role": "assistant", "content": reply})
            plain.append({"role": "assistant", "content": reply})
            if reply not in options:
                invalid += 1
                message = (
                    f"{reply} would repeat a loop; choose a different action."
                    if reply in looping
                    else f"Invalid reply {_clip(reply, 40)!r}: answer with one of the listed actions, exactly."
                )
                rec.record(None, None, None, error=message, raw=_clip(reply, 200))
                now = seen = env.summarize_observation(env.observe())
                messages.append(ch.turn_message(goal, now, actions, message, advice=notes(now, actions)))
                plain.append(ch.turn_message(goal, now, actions, message))
                continue
            action = actions[labels.index(reply)]
            chosen.append(reply)
            result = await asyncio.to_thread(env.step, action) if threaded else env.step(action)
            advances.after(reply, rec.record(action.tool, action.args, result).score)
            guard.after(texts[reply], obs, result)
            obs = result.observation
            if result.error:
                rejected += 1
            done = result.done
            observation_text = seen = _observation_text(env, result)
            actions = [] if done else candidates(result.observation)
            messages.append(
                ch.turn_message(goal, observation_text, actions, advice=notes(observation_text, actions))
            )
            plain.append(ch.turn_message(goal, observation_text, actions))
        return rec.finish(
            turns=turns,
            invalid_actions=invalid,
            rejected_actions=rejected,
            loop_nudges=nudges,
            usage=usage.to_dict(),
            tool_mode="choice",
            model=self.llm.model,
            out_of_turns=not done and turns >= limit,
        )

    async def _run_tools(self, env: Environment, task: Task, advice: str) -> Trajectory:
        native = self._native()
        notes = ch.advice_block(advice, self.advice_chars)
        threaded = _threaded(env)  # slow engines: keep the event loop free
        obs = await asyncio.to_thread(env.reset, task) if threaded else env.reset(task)
        rec = EpisodeRecorder(env, task, obs)
        goal = env.format_goal(task)
        limit = self.max_turns if self.max_turns is not None else env.max_steps + self.extra_turns
        usage = Usage()
        history: list[str] = []
        turns = invalid = rejected = nudges = 0
        guard = Guard(obs)
        done = False
        observation_text = env.summarize_observation(obs)
        while not done and turns < limit:
            turns += 1
            tools = env.tools()  # may change per turn (ALFWorld narrows to admissible commands)
            messages = [
                # The advice is a memory design's text: data in the user turn, never the system role.
                {"role": "system", "content": system_prompt(env.name, tools, "", json_mode=not native)},
                {
                    "role": "user",
                    "content": notes
                    + turn_prompt(
                        goal,
                        history[-self.history_window :],
                        max(0, len(history) - self.history_window),
                        observation_text,
                    ),
                },
            ]
            kwargs: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
            if native:
                kwargs["tools"] = tools
                if self.tool_choice:
                    kwargs["tool_choice"] = self.tool_choice
            else:
                kwargs["json_schema"] = action_schema(tools)
            completion = await self.llm.acomplete(messages, **kwargs)
            usage.add(completion.usage)
            try:
                parsed = parse_completion(completion, tools, native=native)
            except InvalidAction as exc:
                invalid += 1
                message = f"Invalid action: {exc}"
                raw = _clip(completion.text or str([c.name for c in completion.tool_calls]), 200)
                rec.record(None, None, None, error=message, raw=raw)
                history.append(f"{len(history) + 1}. (invalid reply) -> {_clip(message, self.step_chars)}")
                observation_text = f"{message}\n{env.summarize_observation(env.observe())}"
                continue
            proposed = action_text(parsed.tool, parsed.args)
            note = guard.note(proposed, obs) if self.loop_guard else None
            if note is not None:
                nudges += 1
                retry = [
                    *messages[:-1],
                    {"role": "user", "content": f"{messages[-1]['content']}\nNote: {note}"},
                ]
                again = await self.llm.acomplete(retry, **{**kwargs, "temperature": self.nudge_temperature})
                usage.add(again.usage)
                with contextlib.suppress(InvalidAction):  # a bad retry keeps the first proposal
                    parsed = parse_completion(again, tools, native=native)
            action = Action(parsed.tool, parsed.args)
            result = await asyncio.to_thread(env.step, action) if threaded else env.step(action)
            rec.record(parsed.tool, parsed.args, result, thought=parsed.thought)
            guard.after(action_text(parsed.tool, parsed.args), obs, result)
            obs = result.observation
            if result.error:
                rejected += 1
            observation_text = _observation_text(env, result)
            history.append(
                f"{len(history) + 1}. {action_text(parsed.tool, parsed.args)} -> "
                f"{_clip(result.error or _brief(observation_text), self.step_chars)}"
            )
            done = result.done
        return rec.finish(
            turns=turns,
            invalid_actions=invalid,
            rejected_actions=rejected,
            loop_nudges=nudges,
            usage=usage.to_dict(),
            tool_mode="native" if native else "json",
            model=self.llm.model,
            out_of_turns=not done and turns >= limit,
        )

    def run_sync(self, env: Environment, task: Task, advice: str = "") -> Trajectory:
        """``run`` from synchronous code."""
        return run_sync(self.run(env, task, advice))


__all__ = ["ActionFormat", "TaskAgent", "ToolMode", "TurnAdvice"]
