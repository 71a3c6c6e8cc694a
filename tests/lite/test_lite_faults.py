"""The hooks when things go wrong around them: a home that cannot be written, a server that accepts
connections and never answers, a Chroma folder that cannot be opened."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from pathlib import Path

import pytest
from lite_helpers import free_port, hook_input, run_hook

from atlas.memory.guidelines.tipfiles import TipFile, write_tip

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path) -> Path:
    p = tmp_path / "shop"
    p.mkdir()
    return p


def fake_atlas(tmp_path: Path) -> tuple[str, Path]:
    """An `atlas` command that only records that it was started."""
    record = tmp_path / "started.json"
    fake = tmp_path / "fake_atlas.py"
    fake.write_text(f"import json, sys\nopen({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n")
    return f"{sys.executable} {fake}", record


def test_a_home_that_cannot_be_written_still_gets_the_context(tmp_path, project):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the home's parent should be")
    cmd, record = fake_atlas(tmp_path)
    env = {
        "PATH": "",
        "HOME": str(blocker / "home"),  # nothing can be created under a file
        "ATLAS_LITE_URL": f"http://127.0.0.1:{free_port()}",
        "ATLAS_LITE_ATLAS_CMD": cmd,
    }
    run = run_hook("session-start", hook_input("SessionStart", project, source="startup"), env)
    assert run.returncode == 0
    assert "namespace" in run.context()["additionalContext"]
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("atlas: ") and "cannot write" in line and "server not started" in line
    assert not record.exists()

    # Stop with no server and no writable home: one warning, nothing raised
    (project / "session.jsonl").write_text("{}\n")
    run = run_hook("stop", hook_input("Stop", project), env)
    assert run.returncode == 0 and run.stdout == ""
    (line,) = run.stderr.strip().splitlines()
    assert "cannot be kept" in line


class HungServer:
    """A listener on 127.0.0.1 that accepts connections and never answers (a hung server)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
                self.held.append(conn)
            except OSError:
                continue

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        for c in self.held:
            c.close()
        self.sock.close()


@pytest.fixture
def hung():
    server = HungServer()
    yield server
    server.close()


def test_a_hung_server_costs_the_hooks_under_a_second_and_is_not_doubled(tmp_path, project, hung):
    home = tmp_path / "home"
    cmd, record = fake_atlas(tmp_path)
    env = {
        "PATH": "",
        "HOME": str(home),
        "ATLAS_LITE_HOME": str(home / "lite"),
        "ATLAS_LITE_URL": f"http://127.0.0.1:{hung.port}",
        "ATLAS_LITE_ATLAS_CMD": cmd,
    }
    (project / "session.jsonl").write_text('{"type": "user"}\n')
    for event in ("stop", "session-end"):
        run = run_hook(event, hook_input("Stop", project), env)
        assert run.returncode == 0 and run.stdout == ""
        (line,) = run.stderr.strip().splitlines()
        assert "did not answer in 0." in line and "waits in" in line
        assert run.seconds < 5  # a bound the hook keeps whatever the server does (waiting 10 s would fail)
    jobs = sorted((home / "lite" / "pending").glob("*.json"))
    assert len(jobs) == 2 and json.loads(jobs[0].read_text())["tips_dir"] == str(project / ".atlas" / "tips")

    # session-start: the port is busy, so no second server is started on it
    run = run_hook("session-start", hook_input("SessionStart", project, source="resume"), env)
    assert run.returncode == 0 and "namespace" in run.context()["additionalContext"]
    assert "listens but hangs, so no second server is started" in run.stderr
    time.sleep(0.5)
    assert not record.exists()

    # the prompt hook answers from the tip files after its wait
    write_tip(
        project / ".atlas" / "tips",
        TipFile("tip-1", "Tests must be run with `make test`, never bare pytest.", trigger="tests"),
    )
    run = run_hook("prompt", hook_input("UserPromptSubmit", project, prompt="how do I run the tests?"), env)
    assert run.returncode == 0 and run.stderr == ""
    assert "`make test`" in run.context()["additionalContext"]


def test_a_chroma_folder_that_cannot_be_opened_says_why_every_time(tmp_path):
    from atlas.errors import StoreError
    from atlas.infra.vector_index import ChromaVectorStore

    folder = tmp_path / "chroma"
    (folder / "chroma.sqlite3").mkdir(parents=True)  # where Chroma's database file should be
    for _ in range(
        2
    ):  # a second attempt must not say "'RustBindingsAPI' object has no attribute 'bindings'" instead
        with pytest.raises(StoreError) as err:
            ChromaVectorStore.persistent(folder, "tips")
        assert "unable to open database file" in str(err.value)
        assert "RustBindingsAPI" not in str(err.value)
