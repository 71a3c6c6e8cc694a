#!/usr/bin/env python3
"""ATLAS hooks for Claude Code and Codex CLI (the Lite tier). Standard library only, so it starts fast.

    atlas_hook.py session-start   SessionStart: names the project's namespace; starts the server if down
    atlas_hook.py prompt          UserPromptSubmit: adds the guidelines relevant to the prompt, or nothing
    atlas_hook.py stop            Stop / SessionEnd: hands the transcript to the server, which learns
    atlas_hook.py session-end     tips from it in the background

The hook input is the JSON object the agent writes on stdin (session_id, transcript_path, cwd,
hook_event_name, prompt, ...). The server is ``atlas mcp --transport streamable-http`` at
$ATLAS_LITE_URL (default http://127.0.0.1:8765). The project's tips are markdown files in its
tips folder (default ``.atlas/tips/``); when no server answers in time the prompt hook reads them
itself and picks the relevant ones by their words. Whatever goes wrong (no server, a hung one, a
missing or malformed transcript, bad input, a read-only home) the hook prints at most one warning
line on stderr and exits 0: a hook must never block or break a coding session. Stop and SessionEnd
give the server under a second; a job it does not take waits in the pending folder.

Settings (environment): ATLAS_LITE_URL, ATLAS_LITE_NAMESPACE (default: one per project, from the
working directory), ATLAS_TIPS_DIR (the tips folder, absolute or relative to the project; default
.atlas/tips), ATLAS_LITE_K (tips per prompt, default 3), ATLAS_LITE_TIMEOUT (seconds the prompt
hook waits for the server before reading the files itself, default 0.3), ATLAS_LITE_END_BUDGET
(seconds from the hook process's start within which Stop/SessionEnd hand the transcript over or
keep it for later, default 0.7), ATLAS_LITE_HOME (default ~/.atlas/lite:
memory, server log, jobs kept while the server is down), ATLAS_LITE_AUTOSTART=0 (never start the
server), ATLAS_LITE_ATLAS_CMD (the command that runs atlas, default `atlas` on PATH),
ATLAS_LITE_MODEL (the model a server started by the hook learns with; see docs/coding-agents.md for
the learner order), ATLAS_LITE_DISABLE=1 (the hook does nothing: set for headless learner runs).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

STARTED = time.monotonic()
MAX_INPUT_BYTES = 10_000_000
MAX_TRANSCRIPT_BYTES = 32_000_000  # the server reads at most this much of a transcript, from its end
EVENTS = ("session-start", "prompt", "stop", "session-end")


class HookProblem(Exception):
    """Something the user should hear about in one line; the hook still exits 0."""


class ServerDown(HookProblem):
    """The server did not answer: the hook warns (and keeps a transcript for later)."""


def since_start() -> float:
    """Seconds since this process started (interpreter start-up included, where /proc tells)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        return max(time.monotonic() - STARTED, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return time.monotonic() - STARTED


def warn(message: str) -> None:
    print(f"atlas: {message}", file=sys.stderr)


def base_url() -> str:
    return os.environ.get("ATLAS_LITE_URL", "http://127.0.0.1:8765").rstrip("/")


def lite_home() -> Path:
    return Path(os.environ.get("ATLAS_LITE_HOME") or Path.home() / ".atlas" / "lite")


def tips_dir(cwd: str) -> str:
    """The project's tips folder: $ATLAS_TIPS_DIR (absolute, or relative to the project) or
    .atlas/tips in the project."""
    project = os.path.realpath(cwd or os.getcwd())
    return os.path.normpath(os.path.join(project, os.environ.get("ATLAS_TIPS_DIR") or ".atlas/tips"))


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# --- tips read from the files when no server answers (the format of atlas.memory.guidelines.tipfiles)
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "from",
        "with",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "how",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "i",
        "you",
        "we",
        "it",
        "this",
        "that",
        "these",
        "those",
        "my",
        "our",
        "your",
        "me",
        "us",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "not",
        "no",
        "yes",
        "please",
        "there",
        "here",
        "so",
        "as",
        "into",
        "about",
        "just",
        "get",
        "use",
        "make",
    ]
)  # "must", "use", "make" say how, not what: a tip and a prompt that share only them are unrelated
LEXICAL_FLOOR = 0.2


def parse_tip(text: str) -> dict[str, Any] | None:
    """A tip file's front matter and text, or None when it is not a tip file."""
    m = re.match(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)(.*)$", text, re.S)
    if not m or not m.group(2).strip():
        return None
    meta = {}
    for line in m.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep:
            meta[key.strip().lower()] = value.strip()
    if not meta.get("id"):
        return None
    return {**meta, "content": m.group(2).strip()}


def words(text: str) -> set[str]:
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        for suffix in ("ing", "es", "s", "ed"):
            if len(w) > len(suffix) + 3 and w.endswith(suffix):
                w = w[: -len(suffix)]
                break
        if len(w) > 1 and w not in STOP:
            out.add(w)
    return out


def local_tips(folder: str, prompt_text: str, k: int) -> list[dict[str, Any]]:
    """The tips of ``folder`` whose words overlap the prompt's most (cosine of word sets)."""
    query = words(prompt_text)
    if not query or not os.path.isdir(folder):
        return []
    scored = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".md") or name.startswith("."):
            continue
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                tip = parse_tip(fh.read(64_000))
        except (OSError, UnicodeDecodeError):
            continue
        if tip is None:
            continue
        body = words(tip["content"] + " " + tip.get("trigger", ""))
        shared = query & body
        score = len(shared) / math.sqrt(len(query) * len(body)) if body else 0.0
        if shared and score >= LEXICAL_FLOOR:
            scored.append((score, tip))
    scored.sort(key=lambda st: -st[0])
    return [tip for _, tip in scored[:k]]


def render_tips(tips: list[dict[str, Any]]) -> str:
    lines = ["Guidelines learned from earlier sessions in this project (apply those that fit):"]
    for i, tip in enumerate(tips, 1):
        lines.append(f"{i}. [{tip.get('kind') or 'strategy'}] {tip['content']}")
        if tip.get("trigger"):
            lines.append(f"  When: {tip['trigger']}")
    return "\n".join(lines)


def project_namespace(cwd: str) -> str:
    """One namespace per project: the folder's name and a hash of its full path (1-64 characters
    of letters, digits, '_' and '-', what ATLAS accepts)."""
    explicit = os.environ.get("ATLAS_LITE_NAMESPACE")
    if explicit:
        return explicit
    full = os.path.realpath(cwd or os.getcwd())
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", os.path.basename(full)).strip("-")[:40] or "project"
    return f"{name}-{hashlib.sha1(full.encode()).hexdigest()[:8]}"


def read_input() -> dict[str, Any]:
    raw = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    if len(raw) > MAX_INPUT_BYTES:
        raise HookProblem(f"hook input over {MAX_INPUT_BYTES} bytes; ignored")
    try:
        data = json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HookProblem(f"hook input is not JSON ({exc}); ignored") from exc
    if not isinstance(data, dict):
        raise HookProblem("hook input is not a JSON object; ignored")
    return data


def call(path: str, body: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
    """POST ``body`` (GET when None) to the server; HookProblem with the reason on any failure."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base_url() + path, data=data, headers={"Content-Type": "application/json"})
    try:
        # no proxy: the server is on this machine, and a proxy from the environment would be asked instead
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(req, timeout=timeout) as resp:
            return json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        try:
            reason = json.loads(exc.read()).get("error") or exc.reason
        except (ValueError, AttributeError):
            reason = exc.reason
        raise HookProblem(f"the ATLAS server refused the request: {reason}") from exc
    except TimeoutError as exc:
        raise ServerDown(f"the ATLAS server at {base_url()} did not answer in {timeout:g} s") from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            raise ServerDown(f"the ATLAS server at {base_url()} did not answer in {timeout:g} s") from exc
        raise ServerDown(f"no ATLAS server at {base_url()} ({reason})") from exc


def port_state(timeout: float = 0.3) -> str:
    """'open' when something listens on the server's port, 'closed' when nothing does."""
    rest = base_url().split("://", 1)[-1].split("/", 1)[0]
    host, _, port = rest.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        with socket.create_connection((host, int(port or 80)), timeout=timeout):
            return "open"
    except (OSError, ValueError):
        return "closed"


def starting(lock: Path) -> bool:
    """Whether a server another hook started less than 30 s ago is still coming up."""
    try:
        if time.time() - lock.stat().st_mtime > 30:
            return False
        pid = int(lock.read_text(encoding="utf-8").strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    try:  # a process that exited but was not reaped yet is not coming up
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def start_server() -> str:
    """Start ``atlas mcp --transport streamable-http`` in the background (it outlives the hook);
    returns what was done, in words."""
    if os.environ.get("ATLAS_LITE_AUTOSTART", "1") == "0":
        return "start it with `atlas mcp --transport streamable-http --path ~/.atlas/lite/memory`"
    cmd = os.environ.get("ATLAS_LITE_ATLAS_CMD")
    argv = shlex.split(cmd) if cmd else ([shutil.which("atlas")] if shutil.which("atlas") else [])
    if not argv:
        return "`atlas` is not on PATH: install it (pip install atlas) or set ATLAS_LITE_ATLAS_CMD"
    if port_state() == "open":  # never a second server on a busy port
        return f"something listens on {base_url()} but does not answer; not starting another server there"
    port = base_url().rsplit(":", 1)[-1].split("/")[0]
    home = lite_home()
    try:
        home.mkdir(parents=True, exist_ok=True)
        lock = home / "server.starting"  # the pid of a server started in the last 30 s
        if starting(lock):
            return "another session is starting it; guidelines arrive from the next prompts"
        log = (home / "server.log").open("ab")
    except OSError as exc:
        return f"cannot write {home} ({exc.strerror or exc}): server not started; set ATLAS_LITE_HOME"
    args = [*argv, "mcp", "--transport", "streamable-http", "--port", port, "--path", str(home / "memory")]
    if os.environ.get("ATLAS_LITE_MODEL"):
        args += ["--model", os.environ["ATLAS_LITE_MODEL"]]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    with contextlib.suppress(OSError):
        write_atomic(lock, str(proc.pid))
    return f"starting it now (log: {home / 'server.log'}); guidelines arrive from the next prompts"


def session_start(data: dict[str, Any]) -> None:
    cwd = str(data.get("cwd") or "")
    namespace = project_namespace(cwd)
    emit(  # first: whatever happens to the server below, the session gets its context
        data,
        "SessionStart",
        f"ATLAS memory is on for this project: its namespace is `{namespace}`. Pass "
        f'namespace="{namespace}" to the atlas MCP tools (get_guidelines, list_guidelines, '
        f"save_trajectory). Learned tips are markdown files in {tips_dir(cwd)}: read, edit or delete them.",
    )
    try:
        health = call("/hooks/health", None, timeout=0.5)
    except ServerDown as exc:
        if port_state() == "open":
            raise HookProblem(f"{exc}; it listens but hangs, so no second server is started") from exc
        raise HookProblem(f"{exc}; {start_server()}") from exc
    if health.get("learner") == "rules" and health.get("learner_note"):
        raise HookProblem(str(health["learner_note"]))


def prompt(data: dict[str, Any]) -> None:
    text = data.get("prompt")
    if not isinstance(text, str) or not text.strip():
        return
    cwd = str(data.get("cwd") or "")
    k = int(os.environ.get("ATLAS_LITE_K", "3"))
    body = {"prompt": text[:4000], "namespace": project_namespace(cwd), "k": k, "tips_dir": tips_dir(cwd)}
    try:
        reply = call("/hooks/context", body, timeout=float(os.environ.get("ATLAS_LITE_TIMEOUT", "0.3")))
    except ServerDown:  # no server, or a slow one: the files answer
        reply = {"indexing": True}
    if reply.get("indexing"):  # the server is still building this folder's index
        found = local_tips(body["tips_dir"], text[:4000], k)
        if found:
            emit(data, "UserPromptSubmit", render_tips(found))
        return
    context = reply.get("context")
    if isinstance(context, str) and context:
        emit(data, "UserPromptSubmit", context)


def end(data: dict[str, Any]) -> None:
    path = data.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise HookProblem("the hook input names no transcript_path; nothing to learn from")
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise HookProblem(f"transcript {path} cannot be read ({exc.strerror}); nothing learned") from exc
    notes = []
    if size > MAX_TRANSCRIPT_BYTES:
        notes.append(
            f"transcript is {size // 1_000_000} MB: only its last {MAX_TRANSCRIPT_BYTES // 1_000_000} MB are read"
        )
    cwd = str(data.get("cwd") or "")
    body = {
        "transcript_path": os.path.abspath(path),
        "namespace": project_namespace(cwd),
        "tips_dir": tips_dir(cwd),
        "cwd": os.path.realpath(cwd or os.getcwd()),
    }
    try:
        budget = float(os.environ.get("ATLAS_LITE_END_BUDGET", "0.7"))
        wait = max(0.1, budget - since_start() - 0.05)  # 0.05 s to keep the job if need be
        reply = call("/hooks/ingest", body, timeout=round(wait, 2))
    except ServerDown as exc:
        folder = lite_home() / "pending"
        name = re.sub(r"[^A-Za-z0-9_-]+", "-", str(data.get("session_id") or "session"))[:60]
        try:
            write_atomic(folder / f"{name}-{time.time_ns()}.json", json.dumps(body))
        except OSError as err:
            raise HookProblem(
                f"{exc}; and the job cannot be kept in {folder} ({err.strerror or err})"
            ) from err
        notes.append(f"{exc}; the transcript waits in {folder} until the server takes it")
    except HookProblem as exc:
        notes.append(str(exc))
    else:
        if reply.get("skipped_lines"):
            notes.append(f"{reply['skipped_lines']} malformed line(s) skipped")
        if reply.get("skipped_turns"):
            notes.append(f"{len(reply['skipped_turns'])} turn(s) not stored: {reply['skipped_turns'][0]}")
    if notes:
        raise HookProblem("; ".join(notes))


def emit(data: dict[str, Any], event: str, context: str) -> None:
    """Add ``context`` for the model, in the documented JSON form of ``event``."""
    event = str(data.get("hook_event_name") or event)
    print(json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in EVENTS:
        print(__doc__, file=sys.stderr)
        warn(f"usage: atlas_hook.py {{{','.join(EVENTS)}}}")
        return 0
    if os.environ.get("ATLAS_LITE_DISABLE") == "1":  # a headless learner run: no hooks inside it
        return 0
    try:
        data = read_input()
        {"session-start": session_start, "prompt": prompt, "stop": end, "session-end": end}[argv[0]](data)
    except HookProblem as exc:
        warn(str(exc))
    except Exception as exc:  # a hook must not take a coding session down, whatever happened
        warn(f"unexpected {type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
