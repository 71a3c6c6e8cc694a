"""The Lite tier's test helpers: the hook script run exactly as Claude Code runs it (a subprocess, the
hook input JSON on stdin), and a real ATLAS server (``atlas.mcp_server`` over streamable HTTP, real
Chroma and embedder, a scripted model) for it to talk to."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "integrations" / "claude-code"
HOOK = PLUGIN / "hooks" / "atlas_hook.py"
SAMPLES = ROOT / "tests" / "fixtures" / "transcripts"

FIX_TIP = "Run the failing test on its own first and read its error before editing any code"
CODEX_TIP = "Add a new command-line option next to the existing ones and run the cli tests after the change"
PUBLISH_TIP = "Ask the user before publishing a package or running any irreversible release command"

REPLIES = {
    "stages": {
        "segmentation": [
            {"segments": [{"description": "Reproduce and fix a failing unit test", "start": 0, "end": 3}]},
            {"segments": [{"description": "Publish a new release of the package", "start": 0, "end": 0}]},
            {"segments": [{"description": "Add an option to a command-line tool", "start": 0, "end": 2}]},
        ],
        "attribution": [
            {
                "failure_enabler": {"description": "edited nothing before reading the error", "step": 0},
                "recognition": {"description": "read the assertion in the test output", "step": 0},
                "corrective_action": {"description": "replaced the parser call", "step": 2},
                "why_it_worked": "the error named the unsupported suffix",
            },
            {
                "immediate_cause": {"description": "the upload was rejected by the user", "step": 0},
                "proximate_cause": {"description": "publishing without asking", "step": 0},
                "root_cause": {"description": "an irreversible command run unasked", "step": 0},
                "contributing_factors": [],
            },
            {
                "failure_enabler": {"description": "ran the tests before the option existed", "step": 0},
                "recognition": {"description": "read the unknown option error", "step": 0},
                "corrective_action": {"description": "patched the parser", "step": 1},
                "why_it_worked": "the test named the missing option",
            },
        ],
        "tips": [
            {
                "tips": [
                    {
                        "category": "recovery",
                        "content": FIX_TIP,
                        "trigger": "a unit test fails",
                        "task_category": "debugging",
                    },
                    {
                        "category": "strategy",
                        "content": "Keep the change to the parser small and rerun the whole test file afterwards",
                        "trigger": "always",
                    },
                ]
            },
            {
                "tips": [
                    {
                        "category": "recovery",
                        "content": PUBLISH_TIP,
                        "trigger": "a release or publish request",
                        "task_category": "release",
                    },
                    {
                        "category": "recovery",
                        "content": "Check the version number and the changelog before building a release",
                        "trigger": "always",
                    },
                ]
            },
            {
                "tips": [
                    {
                        "category": "strategy",
                        "content": CODEX_TIP,
                        "trigger": "a new command-line option is requested",
                        "task_category": "feature",
                    },
                    {
                        "category": "strategy",
                        "content": "Read the argument parser code before adding a flag so the style matches",
                        "trigger": "always",
                    },
                ]
            },
        ],
        "consolidate": {"decisions": [{"tip": 0, "action": "ADD"}, {"tip": 1, "action": "ADD"}]},
    }
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def load_hook_module() -> Any:
    spec = importlib.util.spec_from_file_location("atlas_hook", HOOK)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class HookRun:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def context(self) -> dict[str, Any]:
        """The additionalContext the hook gave, parsed from its JSON output."""
        return json.loads(self.stdout)["hookSpecificOutput"]


def run_hook(event: str, data: dict[str, Any] | bytes, env: dict[str, str]) -> HookRun:
    """Run the hook the way Claude Code does: ``python3 -S atlas_hook.py EVENT`` with the hook input
    on stdin (``-S``: no site-packages, so the hook must live on the standard library alone)."""
    payload = data if isinstance(data, bytes) else json.dumps(data).encode()
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-S", str(HOOK), event],
        input=payload,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    return HookRun(proc.returncode, proc.stdout.decode(), proc.stderr.decode(), time.perf_counter() - start)


def hook_input(event: str, cwd: Path, **extra: Any) -> dict[str, Any]:
    """A hook input as the documentation gives it: the common fields plus the event's own."""
    return {
        "session_id": "3f1c2a9e-5b7d-4c1e-9a2f-7e6d5c4b3a21",
        "transcript_path": extra.pop("transcript_path", str(cwd / "session.jsonl")),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": event,
        **extra,
    }


def get_json(url: str, timeout: float = 2.0) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read())


@dataclass
class Server:
    url: str
    home: Path
    proc: subprocess.Popen[bytes]

    def hook_env(self, **extra: str) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "ATLAS_LITE_URL": self.url,
            "ATLAS_LITE_HOME": str(self.home),
            "ATLAS_LITE_AUTOSTART": "0",
            # functional tests: a loaded test machine must not turn a slow answer into a warning
            # (the default waits are measured in benchmarks/bench_lite_hooks.py and the hung-server test)
            "ATLAS_LITE_TIMEOUT": "10",
            "ATLAS_LITE_END_BUDGET": "10",
            **extra,
        }

    def wait_jobs(self, n: int, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            health = get_json(self.url + "/hooks/health")
            if health["jobs_done"] >= n and health["pending"] == 0:
                return
            time.sleep(0.2)
        raise AssertionError(f"the server did not finish {n} ingest job(s) in {timeout}s")


def start_server(
    tmp: Path,
    extra_args: list[str] | None = None,
    *,
    scripted: bool = True,
    env_extra: dict[str, str] | None = None,
) -> Server:
    """A real server on 127.0.0.1 with its home in ``tmp/lite``; ``scripted=False`` gives it no
    model (it learns as configured by ``env_extra``, e.g. ATLAS_LITE_LEARNER=rules)."""
    from scripted_provider import subprocess_env

    replies = tmp / "replies.json"
    replies.write_text(json.dumps(REPLIES))
    port = free_port()
    home = tmp / "lite"
    home.mkdir(parents=True, exist_ok=True)
    env = subprocess_env(ATLAS_LITE_HOME=str(home), **(env_extra or {}))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    log = (tmp / "server.log").open("ab")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "atlas.mcp_server",
            "--transport",
            "streamable-http",
            "--port",
            str(port),
            "--path",
            str(home / "memory"),
            *(["--model", f"scripted:{replies}"] if scripted else []),
            *(extra_args or []),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError((tmp / "server.log").read_text())
        try:
            get_json(url + "/hooks/health", timeout=0.5)
            return Server(url, home, proc)
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("the ATLAS server did not start in 90 s")
