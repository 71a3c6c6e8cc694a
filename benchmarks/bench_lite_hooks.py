"""How long the Lite tier's hooks hold up a coding session: the warm ``UserPromptSubmit`` hook (the
relevant guidelines added to a prompt) and the ``SessionEnd`` hook (the transcript handed over).

    python benchmarks/bench_lite_hooks.py [--runs 40] [--guidelines 60]

A real server (``atlas.mcp_server`` over streamable HTTP: real Chroma, the local MiniLM embedder)
holds ``--guidelines`` imported tips; the hook script runs as Claude Code runs it
(``python3 -S integrations/claude-code/hooks/atlas_hook.py EVENT``, the hook input JSON on stdin).
After one warm-up call, each hook runs ``--runs`` times; the median and p95 wall times are printed
with their ratio to a reference measured in the same run: ``python3 -S -c pass``, the start-up of
the interpreter, which every command hook in Python pays. Tip extraction after ``SessionEnd`` runs
in the server's background with a model that answers nothing useful (it is not what is measured).
Figures, not asserts: the budget for a warm prompt hook is a few hundred milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

HOOK = ROOT / "integrations" / "claude-code" / "hooks" / "atlas_hook.py"
SAMPLE = ROOT / "tests" / "fixtures" / "transcripts" / "claude_code_session.jsonl"
NULL_MODEL = (
    "from atlas.infra.llm import ScriptedLLM\n"
    "from atlas.infra.llm.providers import register_provider\n"
    "register_provider('benchnull', lambda rest: ScriptedLLM(lambda messages, **kw: '{}'))\n"
)
TOPICS = [
    ("a unit test fails", "Run the failing test alone first and read its error before editing code"),
    ("a database migration", "Back up the database and run the migration on a copy first"),
    ("a release is requested", "Ask before publishing; check the version and the changelog"),
    ("a dependency upgrade", "Read the changelog of the new version and pin it exactly"),
    ("a flaky test", "Rerun the test with a fixed seed to tell flakiness from a real failure"),
    ("a type error", "Run the type checker on the changed files before the whole project"),
]
RELATED = [
    "tests/test_cart.py::test_totals fails since yesterday, please fix it",
    "upgrade requests to the latest version",
    "write the migration that adds an index on orders.created_at",
    "publish version 1.4.0 to PyPI",
]
UNRELATED = ["write a haiku about autumn leaves", "what is the capital of Peru?"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def timed(argv: list[str], stdin: bytes = b"", env: dict[str, str] | None = None) -> tuple[float, bytes]:
    start = time.perf_counter()
    out = subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if out.returncode != 0 or out.stderr:
        raise SystemExit(f"{argv[-1]} failed: {out.stderr.decode()}")
    return elapsed, out.stdout


def summary(name: str, times: list[float], reference: float) -> None:
    ms = sorted(t * 1000 for t in times)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    med = statistics.median(ms)
    print(f"{name:<34} median {med:7.1f} ms   p95 {p95:7.1f} ms   {med / reference:5.1f}× the reference")


def seed(path: Path, namespace: str, n: int) -> None:
    from atlas.core.types import Guideline
    from atlas.memory.guidelines import GuidelineBank

    tips = [
        Guideline(
            category="strategy",
            content=f"{content} (variant {i})" if i >= len(TOPICS) else content,
            trigger=trigger,
            metadata={"task": trigger},
        )
        for i, (trigger, content) in ((i, TOPICS[i % len(TOPICS)]) for i in range(n))
    ]
    GuidelineBank.open(path, namespace=namespace).import_guidelines(tips)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="timed calls per hook (default 40)")
    parser.add_argument("--guidelines", type=int, default=60, help="tips in the store (default 60)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="atlas-bench-lite-"))
    project = tmp / "shop"
    project.mkdir()
    sys.path.insert(0, str(HOOK.parent))
    from atlas_hook import project_namespace  # the namespace the hook will use

    namespace = project_namespace(str(project))
    seed(tmp / "memory", namespace, args.guidelines)
    (tmp / "benchnull.py").write_text(NULL_MODEL)
    port = free_port()
    env = {**os.environ, "ATLAS_PLUGINS": "benchnull", "ATLAS_LITE_HOME": str(tmp)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(tmp), env.get("PYTHONPATH", "")])
    server = subprocess.Popen(
        [sys.executable, "-m", "atlas.mcp_server", "--transport", "streamable-http", "--port", str(port),
         "--path", str(tmp / "memory"), "--model", "benchnull:x"],
        env=env, stdout=subprocess.DEVNULL, stderr=(tmp / "server.log").open("wb"),
    )  # fmt: skip
    hook_env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp), "ATLAS_LITE_URL": f"http://127.0.0.1:{port}",
                "ATLAS_LITE_HOME": str(tmp), "ATLAS_LITE_AUTOSTART": "0", "ATLAS_LITE_TIMEOUT": "30"}  # fmt: skip
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/hooks/health", timeout=0.5).read()
                break
            except OSError:
                time.sleep(0.2)
        py = [sys.executable, "-S"]
        base = {"session_id": "bench", "cwd": str(project), "permission_mode": "default"}

        def prompt_input(text: str) -> bytes:
            return json.dumps({**base, "hook_event_name": "UserPromptSubmit", "prompt": text,
                               "transcript_path": str(project / "s.jsonl")}).encode()  # fmt: skip

        timed([*py, str(HOOK), "prompt"], prompt_input(RELATED[0]), hook_env)  # warm-up: loads the bank
        reference = statistics.median(timed([*py, "-c", "pass"])[0] for _ in range(args.runs)) * 1000
        related, unrelated, added = [], [], 0
        for i in range(args.runs):
            t, out = timed([*py, str(HOOK), "prompt"], prompt_input(RELATED[i % len(RELATED)]), hook_env)
            related.append(t)
            added += bool(out.strip())
            t, out = timed([*py, str(HOOK), "prompt"], prompt_input(UNRELATED[i % len(UNRELATED)]), hook_env)
            unrelated.append(t)
            if out.strip():
                raise SystemExit(f"guidelines were added to an unrelated prompt: {out.decode()[:200]}")

        transcript = project / "session.jsonl"
        shutil.copy(SAMPLE, transcript)
        big = project / "big.jsonl"
        with big.open("w") as fh:  # 300 sessions' worth of turns in one file
            for k in range(300):
                for line in SAMPLE.read_text().splitlines():
                    row = json.loads(line)
                    if "uuid" in row:
                        row["uuid"] = f"{row['uuid']}-{k}"
                    fh.write(json.dumps(row) + "\n")
        ends = {}
        for name, path in (
            ("session-end (sample, 2 turns)", transcript),
            ("session-end (big, 600 turns)", big),
        ):
            data = json.dumps({**base, "hook_event_name": "SessionEnd", "reason": "other",
                               "transcript_path": str(path)}).encode()  # fmt: skip
            ends[name] = [
                timed([*py, str(HOOK), "session-end"], data, hook_env)[0]
                for _ in range(max(5, args.runs // 4))
            ]

        print(
            f"store: {args.guidelines} guidelines; {args.runs} runs per hook; python {sys.version.split()[0]}"
        )
        print(f"{'reference: python3 -S -c pass':<34} median {reference:7.1f} ms")
        summary("UserPromptSubmit, relevant prompt", related, reference)
        summary("UserPromptSubmit, unrelated prompt", unrelated, reference)
        print(f"  guidelines added to {added}/{args.runs} relevant prompts, to 0/{args.runs} unrelated ones")
        for name, times in ends.items():
            summary(name, times, reference)
        print(
            f"  ({big.stat().st_size / 1e6:.1f} MB big transcript; tips are extracted after the hook returned)"
        )
    finally:
        server.terminate()
        server.wait(timeout=15)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
