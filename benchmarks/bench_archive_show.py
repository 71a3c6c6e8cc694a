"""`atlas archive show` on a large archive: 20,000 entries (≈39 MB of archive.json), built here from
the sample run's entries with new ids; the command is run as a user runs it (a subprocess, output
to a file), beside two references measured in the same run: Python start-up with the `atlas`
command imported (`atlas --help`), and `json.loads` of the same file.

    python benchmarks/bench_archive_show.py [--entries 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "fixtures" / "sample_run" / "archive.json"
ENTRY_BYTES = 1_950  # 20,000 entries of this size: the 39 MB archive a long shared run reached


def build_archive(folder: Path, entries: int) -> Path:
    """An archive.json of ``entries`` entries cycled from the sample run's, each padded to about
    ``ENTRY_BYTES`` with critique text (the field that makes real entries long)."""
    sample = json.loads(SAMPLE.read_text())
    templates = [e for e in sample["entries"] if e["origin"] != "baseline"]
    out = []
    for i in range(entries):
        e = json.loads(json.dumps(templates[i % len(templates)]))
        e["id"] = f"d-{i + 2:06d}"
        e["parent_ids"] = [f"d-{max(1, i):06d}"]
        e["generation"] = 1 + i // 10
        e["source_path"] = None  # show reads no source
        e["critique"] = ""
        pad = ENTRY_BYTES - len(json.dumps(e))
        e["critique"] = ("The design recalls the closest past episode; keep the dead-end list. " * 40)[
            : max(0, pad)
        ]
        out.append(e)
    base = next(e for e in sample["entries"] if e["origin"] == "baseline")
    archive = {**sample, "entries": [base, *out]}
    path = folder / "archive.json"
    path.write_text(json.dumps(archive))
    return path


CPU: dict[str, list[float]] = {}  # command -> CPU seconds (user + system) of each run


def timed(cmd: list[str], env: dict[str, str]) -> float:
    """Wall time of one run of ``cmd``; its CPU time goes to ``CPU`` (on a loaded machine the wall
    time is mostly waiting for a core, the CPU time is not)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(os.devnull, "w") as sink:
        subprocess.run(cmd, check=True, stdout=sink, stderr=subprocess.PIPE, env=env, timeout=600)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU.setdefault(" ".join(cmd[3:5]), []).append(cpu)
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--entries", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    atlas = [sys.executable, "-m", "atlas.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        path = build_archive(Path(tmp), args.entries)
        size_mb = path.stat().st_size / 1e6
        rows = {
            "atlas --help (start-up reference)": [timed([*atlas, "--help"], env) for _ in range(args.repeat)],
            "atlas archive show": [timed([*atlas, "archive", "show", tmp], env) for _ in range(args.repeat)],
        }
        parse = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            json.loads(path.read_text())
            parse.append(time.perf_counter() - t0)
        rows["json.loads of archive.json (reference)"] = parse
    print(
        f"archive: {args.entries} entries, {size_mb:.1f} MB; {args.repeat} runs each; load {os.getloadavg()}"
    )
    for name, times in rows.items():
        print(
            f"  {name:40s} median {statistics.median(times):6.2f} s   (min {min(times):.2f}, max {max(times):.2f})"
        )
    for name, cpu in CPU.items():
        label = f"CPU time (user + system) of atlas {name}"
        print(f"  {label:40s} median {statistics.median(cpu):6.2f} s")


if __name__ == "__main__":
    main()
