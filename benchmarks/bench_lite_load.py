"""Many coding sessions at once against one Lite server: prompts arriving while transcripts are
saved, and afterwards every saved lesson present exactly once.

    python benchmarks/bench_lite_load.py [--clients 1 8 32] [--seconds 10] [--save-every 8]

A real server (``atlas mcp --transport streamable-http`` on 127.0.0.1, the no-LLM learner, real
Chroma and the local MiniLM embedder). For each client count N, N threads (one coding session
each, each in its own project folder with 20 tip files, indexed on its first prompt) loop for ``--seconds`` (at most
``--max-requests`` each): every ``--save-every``-th request hands over a new transcript
(``/hooks/ingest``, what Stop and SessionEnd send; its correction names a command no other
transcript names), the others ask for the tips of a prompt (``/hooks/context``, what
UserPromptSubmit sends). Each request is a new connection, as a hook makes. The reference in the
same run is ``GET /hooks/health`` (no work) timed by one more thread under the same load.

Printed per N: requests/s, p50/p95 of prompt-time calls, of saves and of the reference, errors;
after the server has learned everything: transcripts saved, lessons lost (no tip file names the
command) and duplicated (more than one does). The run fails (exit 1) if anything is lost or
duplicated or a request failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SAMPLE = ROOT / "tests" / "fixtures" / "transcripts" / "make_test_correction.jsonl"
CORRECTION = "tests must be run with `make test`, never bare pytest"
PROMPTS = ["how do I run the tests?", "the tests fail with an import error", "write a haiku about rain"]
FILLER = [
    "Back up the database and run the migration on a copy first",
    "Ask before publishing a release; check the version and the changelog",
    "Read the changelog of a dependency's new version and pin it exactly",
    "Rerun a flaky test with a fixed seed to tell flakiness from a real failure",
    "Run the type checker on the changed files before the whole project",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def post(url: str, body: dict, timeout: float = 30) -> dict:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def get(url: str, timeout: float = 30) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read())


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ms = sorted(v * 1000 for v in values)
    return ms[min(len(ms) - 1, round(q * (len(ms) - 1)))]


@dataclass
class Tally:
    context: list[float] = field(default_factory=list)
    ingest: list[float] = field(default_factory=list)
    health: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    saved: list[str] = field(default_factory=list)  # the unique command of each transcript handed over
    lock: threading.Lock = field(default_factory=threading.Lock)


def transcript(folder: Path, command: str, session: str) -> Path:
    """The sample session with its own id and a correction naming ``command``."""
    path = folder / f"{session}.jsonl"
    text = SAMPLE.read_text().replace("`make test`, never bare pytest", f"`{command}`, never bare pytest")
    text = text.replace("7d0e2c41-1b6a-4f0e-9a57-2f4c3d1e0b11", session)
    path.write_text(text)
    return path


def seed(folder: Path) -> None:
    from atlas.memory.guidelines.tipfiles import TipFile, write_tip

    for i in range(20):
        write_tip(
            folder,
            TipFile(f"tip-seed{i:03d}", f"{FILLER[i % len(FILLER)]} (note {i})", trigger="this project"),
        )


def client(
    url: str, n: int, i: int, root: Path, deadline: float, args: argparse.Namespace, tally: Tally
) -> None:
    project = root / f"n{n}" / f"c{i}"
    tips_dir = project / ".atlas" / "tips"
    for k in range(args.max_requests):
        if time.monotonic() >= deadline:
            return
        start = time.perf_counter()
        try:
            if k % args.save_every == args.save_every - 1:
                command = f"make test-{n}-{i}-{k}"
                path = transcript(project, command, f"s-{n}-{i}-{k}")
                post(url + "/hooks/ingest", {"transcript_path": str(path), "namespace": f"load-{n}-{i}",
                                             "tips_dir": str(tips_dir), "cwd": str(project)})  # fmt: skip
                with tally.lock:
                    tally.ingest.append(time.perf_counter() - start)
                    tally.saved.append(command)
            else:
                post(url + "/hooks/context", {"prompt": PROMPTS[k % len(PROMPTS)], "namespace": f"load-{n}-{i}",
                                              "tips_dir": str(tips_dir), "k": 3})  # fmt: skip
                with tally.lock:
                    tally.context.append(time.perf_counter() - start)
        except (OSError, ValueError, urllib.error.HTTPError) as exc:
            with tally.lock:
                tally.errors.append(f"{type(exc).__name__}: {exc}")


def reference(url: str, deadline: float, tally: Tally) -> None:
    while time.monotonic() < deadline:
        start = time.perf_counter()
        try:
            get(url + "/hooks/health")
            tally.health.append(time.perf_counter() - start)
        except OSError as exc:
            tally.errors.append(f"health: {exc}")
        time.sleep(0.1)


def count_lessons(root: Path, commands: list[str]) -> tuple[int, int]:
    """(lost, duplicated): commands no tip file names, and commands more than one names."""
    from atlas.memory.guidelines.tipfiles import read_tips

    seen: dict[str, int] = {}
    for folder in root.glob("n*/c*/.atlas/tips"):
        for tip in read_tips(folder)[0]:
            for cmd in commands:
                if f"`{cmd}`" in tip.content:
                    seen[cmd] = seen.get(cmd, 0) + 1
    lost = sum(1 for c in commands if seen.get(c, 0) == 0)
    dup = sum(1 for c in commands if seen.get(c, 0) > 1)
    return lost, dup


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--seconds", type=float, default=10.0, help="load per client count (default 10)")
    parser.add_argument("--save-every", type=int, default=8, help="every K-th request saves a transcript")
    parser.add_argument("--max-requests", type=int, default=2000, help="bound per client per phase")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="atlas-bench-load-"))
    home = tmp / "lite"
    port = free_port()
    env = {**os.environ, "ATLAS_LITE_HOME": str(home), "ATLAS_LITE_LEARNER": "rules"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    server = subprocess.Popen(
        [sys.executable, "-m", "atlas.mcp_server", "--transport", "streamable-http", "--host", "127.0.0.1",
         "--port", str(port), "--path", str(home / "memory")],
        env=env, stdout=subprocess.DEVNULL, stderr=(tmp / "server.log").open("wb"),
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    failed = False
    try:
        for _ in range(600):
            try:
                get(url + "/hooks/health", timeout=0.5)
                break
            except OSError:
                time.sleep(0.2)
        print(
            f"server on 127.0.0.1 (no-LLM learner); {os.cpu_count()} cores; python {sys.version.split()[0]}"
        )
        print(f"{args.seconds:g} s per client count; every {args.save_every}th request saves a transcript\n")
        head = (f"{'clients':>7} {'req/s':>7} {'prompt p50':>11} {'p95':>7} {'save p50':>9} {'p95':>7}"
                f" {'ref p50':>8} {'p95':>7} {'errors':>6} {'saved':>6} {'lost':>5} {'dup':>4}")  # fmt: skip
        print(head)
        for n in args.clients:
            tally = Tally()
            done_before = get(url + "/hooks/health")["jobs_done"]
            for i in range(n):  # each session's project starts with 20 tips (indexed on its first prompt)
                seed(tmp / "projects" / f"n{n}" / f"c{i}" / ".atlas" / "tips")
            deadline = time.monotonic() + args.seconds
            threads = [threading.Thread(target=client, args=(url, n, i, tmp / "projects", deadline, args, tally))
                       for i in range(n)]  # fmt: skip
            threads.append(threading.Thread(target=reference, args=(url, deadline, tally)))
            start = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - start
            wait_until = time.monotonic() + 600  # the server learns what it was given
            while time.monotonic() < wait_until:
                health = get(url + "/hooks/health")
                if health["pending"] == 0 and health["jobs_done"] - done_before >= len(tally.saved):
                    break
                time.sleep(0.5)
            lost, dup = count_lessons(tmp / "projects", tally.saved)
            rate = (len(tally.context) + len(tally.ingest)) / elapsed
            print(f"{n:>7} {rate:>7.1f} {pct(tally.context, .5):>9.0f}ms {pct(tally.context, .95):>5.0f}ms"
                  f" {pct(tally.ingest, .5):>7.0f}ms {pct(tally.ingest, .95):>5.0f}ms"
                  f" {pct(tally.health, .5):>6.0f}ms {pct(tally.health, .95):>5.0f}ms"
                  f" {len(tally.errors):>6} {len(tally.saved):>6} {lost:>5} {dup:>4}")  # fmt: skip
            for e in tally.errors[:3]:
                print(f"        error: {e}")
            failed |= bool(lost or dup or tally.errors)
        print(
            "\nFAILED: something was lost, duplicated or refused"
            if failed
            else "\nevery saved lesson present exactly once"
        )
        return 1 if failed else 0
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
