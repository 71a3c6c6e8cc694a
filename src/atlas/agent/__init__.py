"""atlas.agent — the task agent that plays an environment's tools with an LLM."""

from atlas.agent.actions import InvalidAction, ParsedAction, action_schema, parse_text_action
from atlas.agent.task_agent import TaskAgent, ToolMode

__all__ = ["InvalidAction", "ParsedAction", "TaskAgent", "ToolMode", "action_schema", "parse_text_action"]
