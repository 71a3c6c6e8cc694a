#!/usr/bin/env python3
"""ATLAS hooks for Claude Code and Codex CLI (the Lite tier). Standard library only, so it starts fast.

    atlas_hook.py session-start   SessionStart: names the project's namespace; starts the server if down
    atlas_hook.py prompt          UserPromptSubmit: adds the guidelines relevant to the prompt, or nothing
    atlas_hook.py stop            Stop / SessionEnd: hands the transcript to the server, which learns
    atlas_hook.py session-end     tips from it in the background

The hook input is the JSON object the agent writes on stdin (session_id, transcript_path, cwd,
hook_event_name, prompt, ...). The server is ``atlas mcp --transport streamable-http`` at
$ATLAS_LITE_URL (default http://127.0.0.1:8765). Whatever goes wrong (no server, a missing or
malformed transcript, bad input) the hook prints one warning line on stderr and exits 0: a hook
must never block or break a coding session.

Settings (environment): ATLAS_LITE_URL, ATLAS_LITE_NAMESPACE (default: one per project, from the
working directory), ATLAS_LITE_K (guidelines per prompt, default 3), ATLAS_LITE_TIMEOUT (seconds
to wait for guidelines, default 2), ATLAS_LITE_HOME (default ~/.atlas/lite: memory, server log,
jobs kept while the server is down), ATLAS_LITE_AUTOSTART=0 (never start the server),
ATLAS_LITE_ATLAS_CMD (the command that runs atlas, default `atlas` on PATH), ATLAS_LITE_MODEL (the
model a server started by the hook extracts tips with, default ATLAS's standard model resolution).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

MAX_INPUT_BYTES = 10_000_000
MAX_TRANSCRIPT_BYTES = 32_000_000  # the server reads at most this much of a transcript, from its end
EVENTS = ("session-start", "prompt", "stop", "session-end")


class HookProblem(Exception):
    """Something the user should hear about in one line; the hook still exits 0."""


class ServerDown(HookProblem):
    """The server did not answer: the hook warns (and keeps a transcript for later)."""


def warn(message: str) -> None:
    print(f"atlas: {message}", file=sys.stderr)


def base_url() -> str:
    return os.environ.get("ATLAS_LITE_URL", "http://127.0.0.1:8765").rstrip("/")


def lite_home() -> Path:
    return Path(os.environ.get("ATLAS_LITE_HOME") or Path.home() / ".atlas" / "lite")


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
        with urllib.request.urlopen(req, timeout=timeout) as resp:
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


def start_server() -> str:
    """Start ``atlas mcp --transport streamable-http`` in the background (it outlives the hook);
    returns what was done, in words."""
    if os.environ.get("ATLAS_LITE_AUTOSTART", "1") == "0":
        return "start it with `atlas mcp --transport streamable-http --path ~/.atlas/lite/memory`"
    cmd = os.environ.get("ATLAS_LITE_ATLAS_CMD")
    argv = shlex.split(cmd) if cmd else ([shutil.which("atlas")] if shutil.which("atlas") else [])
    if not argv:
        return "`atlas` is not on PATH: install it (pip install atlas) or set ATLAS_LITE_ATLAS_CMD"
    port = base_url().rsplit(":", 1)[-1].split("/")[0]
    home = lite_home()
    home.mkdir(parents=True, exist_ok=True)
    log = (home / "server.log").open("ab")
    args = [*argv, "mcp", "--transport", "streamable-http", "--port", port, "--path", str(home / "memory")]
    if os.environ.get("ATLAS_LITE_MODEL"):
        args += ["--model", os.environ["ATLAS_LITE_MODEL"]]
    subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    return f"starting it now (log: {home / 'server.log'}); guidelines arrive from the next prompts"


def session_start(data: dict[str, Any]) -> None:
    namespace = project_namespace(str(data.get("cwd") or ""))
    try:
        call("/hooks/health", None, timeout=0.5)
    except ServerDown as exc:
        warn(f"{exc}; {start_server()}")
    emit(
        data,
        "SessionStart",
        f"ATLAS memory is on for this project: its namespace is `{namespace}`. Pass "
        f'namespace="{namespace}" to the atlas MCP tools (get_guidelines, list_guidelines, '
        "save_trajectory).",
    )


def prompt(data: dict[str, Any]) -> None:
    text = data.get("prompt")
    if not isinstance(text, str) or not text.strip():
        return
    body = {
        "prompt": text[:4000],
        "namespace": project_namespace(str(data.get("cwd") or "")),
        "k": int(os.environ.get("ATLAS_LITE_K", "3")),
    }
    reply = call("/hooks/context", body, timeout=float(os.environ.get("ATLAS_LITE_TIMEOUT", "2")))
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
    body = {
        "transcript_path": os.path.abspath(path),
        "namespace": project_namespace(str(data.get("cwd") or "")),
    }
    try:
        reply = call("/hooks/ingest", body, timeout=10)
    except ServerDown as exc:
        folder = lite_home() / "pending"
        folder.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_-]+", "-", str(data.get("session_id") or time.time_ns()))[:80]
        (folder / f"{name}.json").write_text(json.dumps(body), encoding="utf-8")
        notes.append(f"{exc}; the transcript waits in {folder} until the server runs")
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
