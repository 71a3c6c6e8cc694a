"""The run viewer: its JSON API over real HTTP, and the page driven in headless Chromium
(Debian's /usr/bin/chromium through Playwright). Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from atlas.cli import app
from atlas.viewer.server import ViewerHTTPServer, ViewerThread

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_run"
KNOWN_LINE = (
    "[D2:recall] SIMILARITY find_similar: label=LOW_QUALITY top=0.240 spread=0.040 k=3 n=3 "
    'query="Bring the key to room_G."'
)
REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "artifacts" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status, json.loads(res.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture
def run_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "run"
    shutil.copytree(SAMPLE, dst)
    return dst


@pytest.fixture(scope="module")
def sample_url():
    with ViewerThread(SAMPLE) as url:
        yield url


# ---------------------------------------------------------------------- API


def test_binds_to_loopback_only():
    server = ViewerHTTPServer(SAMPLE, 0)
    try:
        assert server.server_address[0] == "127.0.0.1"
        assert server.url.startswith("http://127.0.0.1:")
    finally:
        server.server_close()


def test_status_and_run_summary(sample_url):
    status, st = get(sample_url + "api/status")
    assert status == 200 and st["ok"] is True and st["state"] == "finished"
    status, run = get(sample_url + "api/run")
    assert status == 200
    assert run["stamp"] == st["stamp"]
    assert [e["id"] for e in run["entries"]] == ["d-0001", "d-0002", "d-0003", "d-0004", "d-0005", "d-0006"]
    assert [g["generation"] for g in run["generations"]] == [0, 1, 2]
    assert run["baseline_score"] == pytest.approx(0.41)
    assert run["best_id"] == "d-0006"


def test_run_summary_supports_etag(sample_url):
    with urllib.request.urlopen(sample_url + "api/run", timeout=10) as res:
        etag = res.headers["ETag"]
    host, port = sample_url.split("//")[1].strip("/").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("GET", "/api/run", headers={"If-None-Match": etag})
    assert conn.getresponse().status == 304
    conn.close()


def test_design_detail_and_logs(sample_url):
    status, d = get(sample_url + "api/design/d-0004")
    assert status == 200
    assert "dead_ends" in d["source"]
    assert d["diff"].startswith("--- d-0002.py\n+++ d-0004.py")
    status, d = get(sample_url + "api/design/d-0006?parent=d-0003")
    assert d["diff_parent"] == "d-0003"
    status, logs = get(sample_url + "api/design/d-0006/logs")
    assert status == 200
    assert [e["label"] for e in logs["episodes"]][:2] == ["C1", "C2"]


@pytest.mark.parametrize(
    "path",
    ["api/design/d-9999", "api/design/d-9999/logs", "api/design/..%2F..%2Fetc", "api/nope", "secret.py"],
)
def test_unknown_things_are_404_json(sample_url, path):
    status, body = get(sample_url + path)
    assert status == 404
    assert body["error"]


def test_other_host_names_are_refused(sample_url):
    """DNS-rebinding guard: a page served under another name cannot read the run."""
    status, body = get(sample_url + "api/run", headers={"Host": "evil.example:8765"})
    assert status == 403 and "not allowed" in body["error"]


def test_static_page_is_served_with_no_external_references(sample_url):
    for name in ("", "app.js", "style.css"):
        with urllib.request.urlopen(sample_url + name, timeout=10) as res:
            text = res.read().decode()
            assert res.status == 200
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
        assert "https://" not in text


def test_corrupt_run_is_reported_as_json_error(run_copy):
    (run_copy / "archive.json").write_text('{"entries": [')
    with ViewerThread(run_copy) as url:
        status, st = get(url + "api/status")
        assert status == 200 and st["ok"] is False and "corrupt" in st["error"]
        status, body = get(url + "api/run")
        assert status == 503 and "archive.json is corrupt" in body["error"]
        # The run rewrites the file: the viewer recovers without a restart.
        shutil.copy(SAMPLE / "archive.json", run_copy / "archive.json")
        status, st = get(url + "api/status")
        assert st["ok"] is True


def test_api_follows_a_live_run(run_copy):
    with ViewerThread(run_copy) as url:
        _, before = get(url + "api/status")
        _add_design(run_copy)
        _, after = get(url + "api/status")
        assert after["stamp"] != before["stamp"]
        _, run = get(url + "api/run")
        assert run["entries"][-1]["id"] == "d-0007"
        assert [g["generation"] for g in run["generations"]] == [0, 1, 2, 3]


def _add_design(run_dir: Path) -> None:
    """What the ALMA loop does after an iteration: a new source, then the archive (atomically)."""
    src = (run_dir / "designs" / "d-0006.py").read_text() + "\n\n# d-0007: shorter advice\n"
    (run_dir / "designs" / "d-0007.py").write_text(src)
    archive = json.loads((run_dir / "archive.json").read_text())
    archive["entries"].append(
        {
            "id": "d-0007",
            "name": "live_child",
            "origin": "meta",
            "generation": 3,
            "parent_ids": ["d-0006"],
            "source_path": "designs/d-0007.py",
            "status": "ok",
            "collection_score": 0.7,
            "deployment_score": 0.74,
            "normalized_score": 0.33,
        }
    )
    tmp = run_dir / "archive.json.tmp"
    tmp.write_text(json.dumps(archive))
    tmp.replace(run_dir / "archive.json")


def test_cli_view_on_a_missing_run_prints_a_message_not_a_traceback(tmp_path: Path):
    result = CliRunner().invoke(app, ["view", str(tmp_path / "nope"), "--no-open"])
    assert result.exit_code == 2
    assert "error: run folder not found" in result.output
    assert "Traceback" not in result.output


def test_cli_view_on_a_busy_port_prints_a_message(tmp_path: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        result = CliRunner().invoke(app, ["view", str(SAMPLE), "--no-open", "--port", str(port)])
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.output


# ---------------------------------------------------------------------- browser

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="Debian's chromium is not installed at /usr/bin/chromium (scripts/install_browser.sh installs it)",
)


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (dev extra) is not installed")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1440, "height": 1000}, device_scale_factor=1)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield pg
    ctx.close()
    assert errors == [], f"the page logged errors: {errors}"


def shot(page, name: str, *, full_page: bool = False) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page)


def expect_text(page, selector: str, text: str) -> None:
    """Wait until the element contains the text (Playwright's expect: no eval, so the page's
    Content-Security-Policy stays on)."""
    from playwright.sync_api import expect

    expect(page.locator(selector)).to_contain_text(text)


def open_run(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#lineage-chart .node")
    page.wait_for_selector("#source .cl")


@needs_chromium
@pytest.mark.browser
def test_page_loads_the_recorded_sample_run(page, sample_url):
    open_run(page, sample_url)
    assert page.locator("#run-name").inner_text() == "sample_run"
    assert page.locator("#run-state").inner_text() == "finished"
    rows = page.locator("#designs-table tbody tr[data-id]")
    assert rows.count() == 6
    assert sorted(rows.evaluate_all("rs => rs.map(r => r.dataset.id)")) == [f"d-000{i}" for i in range(1, 7)]
    assert page.locator("#lineage-chart .node").count() == 6
    assert page.locator("#lineage-chart .edge").count() == 4
    # The best design is selected first.
    assert "graph_paths_and_insights" in page.locator("#design-title").inner_text()
    assert page.locator("#error").is_hidden()
    shot(page, "viewer")
    shot(page, "viewer_full", full_page=True)


@needs_chromium
@pytest.mark.browser
def test_scores_chart_has_one_point_per_generation_and_a_baseline(page, sample_url):
    open_run(page, sample_url)
    _, run = get(sample_url + "api/run")
    generations = [g["generation"] for g in run["generations"]]
    for series in ("collection", "deployment", "normalized"):
        points = page.locator(f'#scores-chart circle.pt[data-series="{series}"]')
        assert points.count() == len(generations) == 3
        assert [int(g) for g in points.evaluate_all("ps => ps.map(p => p.dataset.generation)")] == generations
    assert page.locator('#scores-chart [data-testid="baseline-line"]').count() == 1
    assert "baseline 0.41" in page.locator("#scores-chart").inner_text()


@needs_chromium
@pytest.mark.browser
def test_clicking_a_node_shows_that_designs_source_and_diff(page, sample_url):
    open_run(page, sample_url)
    page.click('#lineage-chart .node[data-id="d-0004"]')
    expect_text(page, "#design-title", "d-0004")
    source = page.locator("#source").inner_text()
    assert "graph_with_failures: spatial_graph plus a list of dead ends." in source
    assert 'dead_ends = memory.setdefault("dead_ends", [])' in source
    assert (
        page.locator('#lineage-chart .node[data-id="d-0004"]').get_attribute("class").count("selected") == 1
    )
    page.click('#tabs button[data-tab="diff"]')
    added = page.locator("#diff .dl.add").all_inner_texts()
    assert '+    dead_ends = memory.setdefault("dead_ends", [])' in added
    assert page.locator("#diff .dl.file").first.inner_text() == "--- d-0002.py"
    shot(page, "viewer_diff")
    page.click('#tabs button[data-tab="critique"]')
    assert "Record rooms visited in failed episodes" in page.locator("#critique").inner_text()
    shot(page, "viewer_critique")
    # The table selects too, and the invalid design shows its errors.
    page.click('#designs-table tr[data-id="d-0005"]')
    expect_text(page, "#design-title", "d-0005")
    assert "import of 'os' is not allowed" in page.locator("#design-errors").inner_text()


@needs_chromium
@pytest.mark.browser
def test_log_search_finds_a_known_line(page, sample_url):
    open_run(page, sample_url)
    page.click('#lineage-chart .node[data-id="d-0006"]')
    page.click('#tabs button[data-tab="logs"]')
    lines = page.locator("#logs .logline")
    total = lines.count()
    assert total > 20
    page.fill("#log-search", "low_quality")
    assert lines.count() == 1
    assert lines.first.inner_text() == KNOWN_LINE
    assert page.locator("#logs mark").first.inner_text() == "LOW_QUALITY"
    assert page.locator("#log-count").inner_text() == f"1 of {total} lines match"
    shot(page, "viewer_logs")
    page.fill("#log-search", "no such text anywhere")
    assert lines.count() == 0
    assert "No line contains" in page.locator("#logs").inner_text()
    # Per-episode view and the DebugLog text.
    page.fill("#log-search", "")
    page.select_option("#log-episode", "ep:C2")
    c2 = lines.all_inner_texts()
    assert c2[0].startswith("--- EPISODE C2: ")
    assert all(t.startswith("[C2:") for t in c2[1:])
    page.select_option("#log-episode", "debug")
    page.fill("#log-search", "EPISODE C1")
    assert lines.first.inner_text().startswith("--- EPISODE C1: SUCCESS score 0.70")


@needs_chromium
@pytest.mark.browser
def test_page_refreshes_while_the_run_goes_on(page, run_copy):
    with ViewerThread(run_copy) as url:
        open_run(page, url)
        assert page.locator("#lineage-chart .node").count() == 6
        _add_design(run_copy)
        page.wait_for_selector('#lineage-chart .node[data-id="d-0007"]', timeout=20000)
        assert page.locator('#scores-chart circle.pt[data-series="deployment"]').count() == 4
        assert page.locator("#designs-table tbody tr[data-id]").count() == 7


@needs_chromium
@pytest.mark.browser
def test_corrupt_run_shows_a_clear_message_in_the_page(browser, run_copy):
    (run_copy / "archive.json").write_text('{"entries": [')
    ctx = browser.new_context(viewport={"width": 1200, "height": 700})
    pg = ctx.new_page()
    try:
        with ViewerThread(run_copy) as url:
            pg.goto(url)
            pg.wait_for_selector("#error:not([hidden])")
            text = pg.locator("#error").inner_text()
            assert "Cannot read this run" in text and "archive.json is corrupt" in text
            assert "Traceback" not in pg.content()
            shot(pg, "viewer_error")
    finally:
        ctx.close()
