"""Lessons a coding session teaches that need no model to read (the Lite tier's no-LLM learner).

``RuleTipExtractor.extract(trajectory)`` reads one turn of a coding-agent transcript
(``transcripts.read_transcript``) and returns tips for three cases:

- **a correction**: the user's prompt tells the agent how things are done here ("No — tests must
  be run with `make test`, never bare pytest"): a sentence with a directive (must, never, always,
  don't, instead, use …) that names a command, a file, a flag or a version;
- **a failing command and the one that worked**: a shell command failed and the next related one
  succeeded with no file changed in between ("`pytest` fails here with …; use `make test`");
- **an error and the change that fixed it**: a command failed, files were edited, and the same
  command then passed.

Tips keep commands, paths inside the project, flags and versions as written (paths under the
session's working directory are made relative to it). The ids are derived from the trajectory and
the tip, so reading the same turn twice gives the same tips."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from typing import Any

from atlas.core.types import Guideline, Step, Trajectory
from atlas.memory.guidelines.generalize import COMMAND_WORDS, RuleGeneralizer

SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "local_shell_call", "local_shell", "run_command"})
EDIT_TOOLS = frozenset(
    {
        "edit",
        "write",
        "multiedit",
        "notebookedit",
        "apply_patch",
        "str_replace_based_edit_tool",
        "create_file",
    }
)
READ_ONLY = frozenset(
    {"ls", "cat", "grep", "rg", "find", "echo", "pwd", "head", "tail", "which", "sed", "wc", "cd"}
)
MAX_ERROR_CHARS = 140

_DIRECTIVE = re.compile(
    r"\b(must|never|always|don'?t|do not|instead|rather than|not bare|shouldn'?t|should not|should|"
    r"only use|please use|use|we use|make sure|remember)\b",
    re.I,
)
_INTERJECTION = re.compile(r"^\s*(?:(?:no+|nope|wrong|stop|wait|actually|please)\b[\s,.!:;—–-]*)+", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'])|\n+")
_CODE_HINT = re.compile(
    r"`[^`]+`|(?<![\w-])--?[A-Za-z][\w-]*|[\w.-]+(?:==|>=|<=|~=|!=|<|>)\d|(?:^|\s)\.{0,2}/?[\w.-]+/[\w./-]+"
)
_ERROR_NAMED = re.compile(r"\b\w*(?:Error|Exception)\b|\berror:|\[emerg\]|\bfatal:|\bE\s{2,}")
_ERRORISH = re.compile(r"error|exception|fail|not found|no such|denied|refused|cannot|can't|unknown", re.I)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (.+)$", re.M)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")


@dataclass
class _Shell:
    index: int
    command: str
    failed: bool
    error: str


def _command(step: Step) -> str | None:
    if (step.tool or "").lower() not in SHELL_TOOLS:
        return None
    args: dict[str, Any] = step.args or {}
    cmd = args.get("command", args.get("cmd", args.get("input")))
    if isinstance(cmd, list) and cmd:
        parts = [str(c) for c in cmd]
        cmd = parts[-1] if len(parts) >= 3 and parts[1] in ("-lc", "-c") else " ".join(parts)
    return " ".join(str(cmd).split()) if isinstance(cmd, str) and cmd.strip() else None


def _change(step: Step) -> str | None:
    """A one-line edit in words ("`old` → `new` in `file`"), when the edit is that small."""
    args: dict[str, Any] = step.args or {}
    old, new, path = args.get("old_string"), args.get("new_string"), args.get("file_path")
    if not all(isinstance(x, str) for x in (old, new, path)):
        return None
    old, new = str(old).strip(), str(new).strip()
    if not old or not new or "\n" in old or "\n" in new or len(old) > 60 or len(new) > 60 or "`" in old + new:
        return None
    return f"`{old}` → `{new}` in `{path}`"


def _edited(step: Step) -> list[str]:
    if (step.tool or "").lower() not in EDIT_TOOLS:
        return []
    args: dict[str, Any] = step.args or {}
    path = args.get("file_path") or args.get("path") or args.get("notebook_path")
    if isinstance(path, str) and path:
        return [path]
    text = args.get("input") if isinstance(args.get("input"), str) else ""
    return _PATCH_FILE.findall(str(text))


def _error_line(text: str) -> str:
    lines = [ln.strip() for ln in _ANSI.sub("", text).splitlines() if ln.strip()]
    if not lines:
        return ""
    hit = next(
        (ln for ln in reversed(lines) if _ERROR_NAMED.search(ln)),
        next((ln for ln in reversed(lines) if _ERRORISH.search(ln)), lines[-1]),
    )
    hit = re.sub(r"^E\s+", "", hit)
    hit = hit.replace("`", "'")
    return hit if len(hit) <= MAX_ERROR_CHARS else hit[: MAX_ERROR_CHARS - 1] + "…"


def _stems(text: str) -> set[str]:
    out = set()
    for w in _WORD.findall(text.lower()):
        for suffix in ("ing", "es", "s"):
            if len(w) > len(suffix) + 3 and w.endswith(suffix):
                w = w[: -len(suffix)]
                break
        out.add(w)
    return out


def _related(a: str, b: str) -> bool:
    first_a, first_b = a.split()[0], b.split()[0]
    if first_b in READ_ONLY:
        return False
    return first_a == first_b or bool((_stems(a) & _stems(b)) - {"run", "py", "sh"})


def _mentions_code(sentence: str) -> bool:
    if _CODE_HINT.search(sentence):
        return True
    return any(w.strip(",.;:()") in COMMAND_WORDS for w in sentence.split())


def tip_id(content: str) -> str:
    """A tip's id from its text (case and spacing aside): the same lesson learned again, in this
    session or a later one, is the same tip, so it gets one file."""
    key = " ".join(content.lower().split())
    return "tip-" + hashlib.sha1(key.encode()).hexdigest()[:12]


class RuleTipExtractor:
    """The no-LLM learner: corrections, failing → working commands, errors and their fixes."""

    def __init__(self, rules: RuleGeneralizer | None = None, max_tips: int = 4) -> None:
        self.rules = rules or RuleGeneralizer()
        self.max_tips = max_tips

    def extract(self, trajectory: Trajectory, project_root: str | None = None) -> list[Guideline]:
        root = project_root or str(trajectory.metadata.get("cwd") or "")
        found: list[tuple[str, str, str]] = []  # (category, content, trigger)
        found += self.corrections(trajectory.task.description)
        found += self.command_lessons(trajectory.steps)
        tips, seen = [], set()
        for category, content, trigger in found:
            content = self.rules.generalize_text(relative_paths(content, root))
            trigger = self.rules.generalize_text(relative_paths(trigger, root))
            if content.lower() in seen:
                continue
            seen.add(content.lower())
            tips.append(
                Guideline(
                    id=tip_id(content),
                    category=category,
                    content=content,
                    trigger=trigger,
                    task_category="coding",
                    priority="high" if category == "strategy" else "medium",
                    evidence="success",
                    source_trajectory_ids=[trajectory.id],
                    metadata={"learner": "rules", "task": trajectory.task.description[:300]},
                )
            )
        return tips[: self.max_tips]

    def corrections(self, prompt: str) -> list[tuple[str, str, str]]:
        """Sentences of the user's prompt that tell the agent how something is done here."""
        out = []
        for raw in _SENTENCE.split(prompt.strip()):
            sentence = " ".join(raw.split())
            m = _DIRECTIVE.search(sentence)
            if not m or not _mentions_code(sentence) or len(sentence) > 300:
                continue
            text = _INTERJECTION.sub("", sentence).strip(" ,;:—–-")
            if not text:
                continue
            text = text[0].upper() + text[1:]
            if text[-1] not in ".!?":
                text += "."
            subject = _DIRECTIVE.split(text, maxsplit=1)[0].strip(" ,;:").rstrip(".")
            if len(subject) > 60:
                subject = subject[:60].rsplit(" ", 1)[0]
            trigger = subject.lower() if subject else "working in this project"
            out.append(("strategy", text, trigger))
        return out

    def command_lessons(self, steps: list[Step]) -> list[tuple[str, str, str]]:
        """Failing command → the related one that worked; error → the edit that fixed it."""
        shells: list[_Shell] = []
        edits: dict[int, list[str]] = {}
        changes: dict[int, str] = {}
        for i, step in enumerate(steps):
            cmd = _command(step)
            if cmd:
                shells.append(_Shell(i, cmd, step.error is not None, _error_line(step.error or "")))
            elif _edited(step):
                edits[i] = _edited(step)
                change = _change(step)
                if change:
                    changes[i] = change
        out = []
        for n, a in enumerate(shells):
            if not a.failed:
                continue
            err = f" with `{a.error}`" if a.error else ""
            # the same command (or a related one) passing later, after files were changed
            later = next(
                (
                    b
                    for b in shells[n + 1 :]
                    if not b.failed
                    and (
                        b.command == a.command
                        or (b.command.split()[0] == a.command.split()[0] and _related(a.command, b.command))
                    )
                ),
                None,
            )
            changed = [p for i in range(a.index + 1, later.index) for p in edits.get(i, [])] if later else []
            if later and changed:
                small = [changes[i] for i in range(a.index + 1, later.index) if i in changes]
                what = "; ".join(small) if small else ", ".join(f"`{p}`" for p in dict.fromkeys(changed))
                out.append(
                    (
                        "recovery",
                        f"When `{a.command}` fails{err}, the fix was a change to {what}; "
                        f"then `{later.command}` passed.",
                        f"`{a.command}` fails",
                    )
                )
                continue
            b = shells[n + 1] if n + 1 < len(shells) else None
            between = b is not None and any(a.index < i < b.index for i in edits)
            if (
                b
                and not b.failed
                and not between
                and b.command != a.command
                and _related(a.command, b.command)
            ):
                out.append(
                    (
                        "recovery",
                        f"Use `{b.command}` rather than `{a.command}`: `{a.command}` failed here{err}.",
                        f"running `{a.command.split()[0]}`",
                    )
                )
        return out


def relative_paths(text: str, root: str) -> str:
    """Absolute paths under the project's folder written relative to it."""
    if not root or not os.path.isabs(root):
        return text
    root = root.rstrip("/") + "/"
    return text.replace(root, "")


__all__ = ["RuleTipExtractor", "relative_paths", "tip_id"]
