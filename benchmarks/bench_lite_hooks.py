"""How long the Lite tier's hooks hold up a coding session, and what the tips it learns keep.

    python benchmarks/bench_lite_hooks.py [--runs 30] [--tips 60] [--cold 10]

Every hook runs as Claude Code runs it (``python3 -S integrations/claude-code/hooks/atlas_hook.py
EVENT``, the hook input JSON on stdin); each figure is printed beside a reference measured in the
same run, ``python3 -S -c pass`` (the start-up every Python command hook pays).

1. ``UserPromptSubmit`` without a server (nothing listens on the port): cold = the first prompt in
   a new project whose tips folder holds ``--tips`` files, ``--cold`` projects; warm = ``--runs``
   more prompts in one of them.
2. The same with a real server (``atlas mcp --transport streamable-http``, no model: the no-LLM
   learner; real Chroma, the local MiniLM embedder): cold = the first prompt on a new tips folder
   (the server indexes it in the background and the hook reads the files meanwhile); warm = the
   next ones, answered by the server's index.
3. ``Stop`` / ``SessionEnd`` return time: with the server, with no server, and with a hung server
   (a listener on 127.0.0.1 that accepts and never answers).
4. Tip quality on the small set of coding-session transcripts in tests/fixtures/transcripts: the
   no-LLM extractor's tips, whether each keeps the command / path / version the lesson is about
   (beside the reference: the same tips through the generalization that rewrote every code span),
   and whether it is added to a related prompt and not to an unrelated one — by the server's
   index and by the hook's own reading of the files.
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
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

HOOK = ROOT / "integrations" / "claude-code" / "hooks" / "atlas_hook.py"
SAMPLES = ROOT / "tests" / "fixtures" / "transcripts"
PY = [sys.executable, "-S"]

# (transcript, what the tip must keep, a related prompt, an unrelated prompt)
QUALITY = [
    ("make_test_correction", ["make test"], "how do I run the tests?", "write a haiku"),
    ("nginx_fix", ["sudo nginx -t", "/etc/nginx/nginx.conf"], "nginx fails its config test after my edit",
     "summarize this article about birds"),
    ("numpy_pin", ["numpy<2.0"], "importing pandas fails with a numpy error", "draft an email to my landlord"),
    ("claude_code_session", ["src/parser.py", "pytest -q tests/test_parser.py"],
     "test_dates in the parser tests fails", "what is the capital of Peru?"),
    ("codex_rollout", ["pytest -q tests/test_cli.py", "src/cli.py"], "the cli tests fail after adding an option",
     "plan a birthday party"),
]  # fmt: skip
FILLER = [
    "Back up the database and run the migration on a copy first",
    "Ask before publishing a release; check the version and the changelog",
    "Read the changelog of a dependency's new version and pin it exactly",
    "Rerun a flaky test with a fixed seed to tell flakiness from a real failure",
    "Run the type checker on the changed files before the whole project",
    "Keep commits small and run the linter before each one",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_hook(event: str, data: dict, env: dict[str, str]) -> tuple[float, str, str]:
    start = time.perf_counter()
    out = subprocess.run([*PY, str(HOOK), event], input=json.dumps(data).encode(), capture_output=True,
                         env=env, check=False)  # fmt: skip
    return time.perf_counter() - start, out.stdout.decode(), out.stderr.decode()


def stats(times: list[float]) -> tuple[float, float]:
    ms = sorted(t * 1000 for t in times)
    return statistics.median(ms), ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]


def line(name: str, times: list[float], reference: float) -> None:
    med, p95 = stats(times)
    print(
        f"  {name:<46} median {med:7.1f} ms   p95 {p95:7.1f} ms   ({len(times)} runs, {med / reference:4.1f}× ref)"
    )


def write_tips(folder: Path, n: int) -> None:
    from atlas.memory.guidelines.tipfiles import TipFile, write_tip

    write_tip(
        folder,
        TipFile("tip-maketest", "Tests must be run with `make test`, never bare pytest.", trigger="tests"),
    )
    for i in range(n - 1):
        text = FILLER[i % len(FILLER)] + (f" (variant {i})" if i >= len(FILLER) else "")
        write_tip(folder, TipFile(f"tip-filler{i:04d}", text, trigger="working in this project"))


def prompt_input(project: Path, text: str) -> dict:
    return {"session_id": "bench", "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": text,
            "transcript_path": str(project / "s.jsonl"), "permission_mode": "default"}  # fmt: skip


def start_server(tmp: Path, home: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "ATLAS_LITE_HOME": str(home), "ATLAS_LITE_LEARNER": "rules"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [sys.executable, "-m", "atlas.mcp_server", "--transport", "streamable-http", "--port", str(port),
         "--path", str(home / "memory")],
        env=env, stdout=subprocess.DEVNULL, stderr=(tmp / "server.log").open("ab"),
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(url + "/hooks/health", timeout=0.5).read()
            return proc, url
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not start")


class Hung:
    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                return


def quality(tmp: Path, url: str | None) -> None:
    from atlas.memory.guidelines.generalize import RuleGeneralizer
    from atlas.memory.guidelines.rule_tips import RuleTipExtractor
    from atlas.memory.guidelines.tipfiles import TipFile, write_tip
    from atlas.memory.guidelines.transcripts import read_transcript

    rules, x = RuleGeneralizer(), RuleTipExtractor()
    kept = kept_ref = related_srv = unrelated_srv = related_files = unrelated_files = 0
    print("\n4. tip quality (no-LLM extractor) on", len(QUALITY), "transcripts")
    for name, keep, related, unrelated in QUALITY:
        tips = [g for t in read_transcript(SAMPLES / f"{name}.jsonl").trajectories for g in x.extract(t)]
        text = " ".join(g.content for g in tips)
        ok = bool(tips) and all(k in text for k in keep)
        # the reference: the same tips through the old rule pass (every code span, path and number rewritten)
        ref = " ".join(rules._entities(g.content) for g in tips)
        ok_ref = bool(tips) and all(k in ref for k in keep)
        project = tmp / "quality" / name
        folder = project / ".atlas" / "tips"
        for g in tips:
            write_tip(folder, TipFile.from_guideline(g, "rules"))
        marks = []
        for source, env in (
            ("server", {"ATLAS_LITE_URL": url or ""}),
            ("files", {"ATLAS_LITE_URL": f"http://127.0.0.1:{free_port()}"}),
        ):
            if source == "server" and url is None:
                continue
            hook_env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp), "ATLAS_LITE_HOME": str(tmp / "qhome"),
                        "ATLAS_LITE_AUTOSTART": "0", "ATLAS_LITE_TIMEOUT": "5", **env}  # fmt: skip
            hit = any(k in run_hook("prompt", prompt_input(project, related), hook_env)[1] for k in keep)
            miss = run_hook("prompt", prompt_input(project, unrelated), hook_env)[1].strip() == ""
            marks.append(
                f"{source}: related {'yes' if hit else 'NO '} unrelated {'none' if miss else 'ADDED'}"
            )
            if source == "server":
                related_srv += hit
                unrelated_srv += miss
            else:
                related_files += hit
                unrelated_files += miss
        kept += ok
        kept_ref += ok_ref
        print(f"  {name:<22} keeps {'/'.join(keep)[:40]:<40} {'yes' if ok else 'NO '} (reference {'yes' if ok_ref else 'no'})  "
              + "; ".join(marks))  # fmt: skip
    n = len(QUALITY)
    print(f"  kept the command/path/version: {kept}/{n}   reference (code spans rewritten): {kept_ref}/{n}")
    print(f"  added to the related prompt: server {related_srv}/{n}, files {related_files}/{n};"
          f" kept off the unrelated one: server {unrelated_srv}/{n}, files {unrelated_files}/{n}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="warm calls per hook (default 30)")
    parser.add_argument("--tips", type=int, default=60, help="tip files per project (default 60)")
    parser.add_argument("--cold", type=int, default=10, help="new projects for the cold figures (default 10)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="atlas-bench-lite-"))
    home = tmp / "lite"
    reference = statistics.median(_time([*PY, "-c", "pass"]) for _ in range(args.runs)) * 1000
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {args.tips} tip files per project")
    print(f"reference: python3 -S -c pass   median {reference:.1f} ms")
    down = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp), "ATLAS_LITE_HOME": str(home),
            "ATLAS_LITE_AUTOSTART": "0", "ATLAS_LITE_URL": f"http://127.0.0.1:{free_port()}"}  # fmt: skip
    proc = None
    try:
        print("\n1. UserPromptSubmit without a server (the hook reads the tip files)")
        cold, warm, added = [], [], 0
        for i in range(args.cold):
            project = tmp / "down" / f"p{i}"
            write_tips(project / ".atlas" / "tips", args.tips)
            t, out, _ = run_hook("prompt", prompt_input(project, "how do I run the tests?"), down)
            cold.append(t)
            added += "make test" in out
        for _ in range(args.runs):
            t, out, _ = run_hook("prompt", prompt_input(tmp / "down" / "p0", "how do I run the tests?"), down)
            warm.append(t)
        line("cold (first prompt, new project)", cold, reference)
        line("warm", warm, reference)
        print(f"  `make test` tip added to {added}/{args.cold} cold prompts")

        proc, url = start_server(tmp, home)
        up = {**down, "ATLAS_LITE_URL": url}
        print(
            "\n2. UserPromptSubmit with the server (a new folder is indexed in the background; the hook reads the files meanwhile)"
        )
        cold, warm, via_server = [], [], 0
        for i in range(args.cold):
            project = tmp / "up" / f"p{i}"
            write_tips(project / ".atlas" / "tips", args.tips)
            t, out, _ = run_hook("prompt", prompt_input(project, "how do I run the tests?"), up)
            cold.append(t)
        for _ in range(args.runs):
            body = json.dumps({"prompt": "how do I run the tests?", "namespace": "x",
                               "tips_dir": str(tmp / "up" / "p0" / ".atlas" / "tips")}).encode()  # fmt: skip
            t, out, _ = run_hook("prompt", prompt_input(tmp / "up" / "p0", "how do I run the tests?"), up)
            warm.append(t)
            req = urllib.request.Request(
                url + "/hooks/context", data=body, headers={"Content-Type": "application/json"}
            )
            via_server += bool(json.loads(urllib.request.urlopen(req, timeout=10).read())["count"])
        line("cold (first prompt on a new tips folder)", cold, reference)
        line("warm", warm, reference)
        print(f"  the server itself answered with the tip {via_server}/{args.runs} times")

        print("\n3. Stop / SessionEnd return time")
        transcript = tmp / "session.jsonl"
        shutil.copy(SAMPLES / "make_test_correction.jsonl", transcript)
        hung = Hung()
        for label, env in (("server up", up), ("no server", down),
                           ("server hung", {**down, "ATLAS_LITE_URL": f"http://127.0.0.1:{hung.port}"})):  # fmt: skip
            for event in ("stop", "session-end"):
                times = []
                for k in range(max(5, args.runs // 3)):
                    data = {"session_id": f"s{k}", "cwd": str(tmp / "up" / "p0"), "transcript_path": str(transcript),
                            "hook_event_name": "Stop" if event == "stop" else "SessionEnd"}  # fmt: skip
                    times.append(run_hook(event, data, env)[0])
                line(f"{event:<12} {label}", times, reference)
        quality(tmp, url)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=15)
        shutil.rmtree(tmp, ignore_errors=True)


def _time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
