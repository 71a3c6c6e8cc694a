"""The run viewer on a genome search: its JSON API over real HTTP (a design's genome, operator and
probe score; the run's operator table with the report's numbers), a run from before genomes, and
the page in headless Chromium (Debian's /usr/bin/chromium through Playwright; skipped without it,
like tests/trace/test_viewer.py). Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from viewer_helpers import EDIT, OLD_RUN, REPO, edit_archive

from atlas.alma.genome import parse_genome
from atlas.alma.genome.bandit import operator_stats
from atlas.alma.genome.representation import GENOME_OPERATORS
from atlas.alma.state.archive import Archive
from atlas.viewer.report import write_report
from atlas.viewer.run_reader import read_run
from atlas.viewer.server import ViewerThread

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


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=10) as res:
            return res.status, json.loads(res.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture(scope="module")
def genome_url(genome_run: Path):
    with ViewerThread(genome_run) as url:
        yield url


@pytest.fixture(scope="module")
def old_url():
    with ViewerThread(OLD_RUN) as url:
        yield url


def _by_operator(run_dir: Path, operator: str) -> Any:
    return next(e for e in Archive.load(run_dir).entries if e.search and e.search.operator == operator)


# ---------------------------------------------------------------------- API


def test_a_genome_designs_detail_has_its_genome_operator_and_probe_score(genome_run: Path, genome_url: str):
    child = _by_operator(genome_run, "llm_edit")
    status, d = get(genome_url + f"api/design/{child.id}")
    assert status == 200
    rec = child.search
    assert d["genome"] == rec.genome
    assert d["genome"]["encode"] == EDIT["encode"]  # the scripted meta model's edit was the child
    assert d["genome_lines"] == parse_genome(rec.genome).describe()
    assert d["genome_error"] is None
    assert d["operator"] == "llm_edit"
    assert d["probe_score"] == rec.probe_score
    assert d["beat_parent"] is rec.beat_parent
    assert d["candidates"] == [c.model_dump() for c in rec.candidates] and len(d["candidates"]) > 0
    assert d["operator_notes"] == []


def test_a_screened_out_child_and_a_baseline_show_their_genomes(genome_run: Path, genome_url: str):
    archive = Archive.load(genome_run)
    for e in archive.entries:
        _, d = get(genome_url + f"api/design/{e.id}")
        assert d["operator"] == (e.search.operator if e.search else None)
        assert (d["genome"] is None) == (e.search is None or e.search.genome is None), e.id
    baseline = next(e for e in archive.entries if e.name == "trajectory_retrieval")
    _, d = get(genome_url + f"api/design/{baseline.id}")
    assert d["genome_lines"] and d["operator"] is None


def test_the_agent_checks_games_are_listed_and_served_as_logs(genome_run: Path, genome_url: str):
    """Each genome the agent check measured is listed with its generation, and the task agent's
    collection games with it are served like a design's logs; an id no check names is not."""
    child = next(e for e in Archive.load(genome_run).entries if e.search and e.search.checked)
    _, d = get(genome_url + f"api/design/{child.id}")
    rows = child.search.checked
    assert [(c["agent_probe"], c["collection_reached"]) for c in d["checked"]] == [
        (r.agent_probe, r.collection_reached) for r in rows
    ]
    assert [c["logs_id"] for c in d["checked"]] == [r.logs.removeprefix("logs/") for r in rows]
    assert d["checked"][0]["parts"] == [u["part"] for u in rows[0].genome["retrieve"]]
    status, logs = get(genome_url + f"api/design/{d['checked'][0]['logs_id']}/logs")
    assert status == 200 and [e["label"] for e in logs["episodes"]] == ["C1", "C2"]
    assert any("recall" in line for line in logs["episodes"][1]["lines"])
    assert get(genome_url + f"api/design/{child.id}-check99/logs")[0] == 404


def test_the_test_phase_games_are_served_as_logs(genome_run: Path, genome_url: str):
    """Each tested design's and no memory's games on the held-out test tasks are served like a design's
    logs, a block per test task (after a design's collection games); a folder it does not name is not."""
    held = json.loads((genome_run / "archive.json").read_text())["held_out"]
    named = [d["logs"] for d in held["designs"]] + [held["no_memory_logs"]]
    assert len(named) >= 2 and all(n and n.endswith("-test") for n in named), named
    for path in named:
        status, logs = get(genome_url + f"api/design/{path.removeprefix('logs/')}/logs")
        played = [e["label"] for e in logs["episodes"] if e["label"].startswith("D")]
        assert status == 200 and len(played) == len(held["tasks"]), (path, logs)
    assert get(genome_url + "api/design/d-0099-test/logs")[0] == 404


def test_run_summary_has_the_operator_table_of_the_report(genome_run: Path, genome_url: str, tmp_path: Path):
    status, run = get(genome_url + "api/run")
    assert status == 200
    assert run["representation"] == "genome"
    ops = run["operators"]
    stats = operator_stats((e.search for e in Archive.load(genome_run)), list(GENOME_OPERATORS))
    assert [r["operator"] for r in ops["rows"]] == list(GENOME_OPERATORS)
    assert [(r["tries"], r["wins"]) for r in ops["rows"]] == [(s.tries, s.wins) for s in stats.values()]
    assert ops["total"]["tries"] == sum(s.tries for s in stats.values())
    assert ops == read_run(genome_run).operators()
    # The report's table is the same numbers.
    md = write_report(genome_run, tmp_path / "report").markdown.read_text()
    for r in ops["rows"]:
        per_child = f"{r['candidates_per_child']:.1f}" if r["candidates_per_child"] is not None else "—"
        line = (
            f"| `{r['operator']}` | {r['tries']} | {r['wins']} | {r['rate']:.3f} | {r['candidates']} | "
            f"{r['evaluated']} | {per_child} | {r['fallbacks']} |"
        )
        assert line in md
    # The summary stays light: genomes and candidates only come with a design's detail.
    assert all("genome" not in e and "candidates" not in e for e in run["entries"])
    assert {e["operator"] for e in run["entries"]} == {None, *GENOME_OPERATORS}


def test_a_run_from_before_genomes_is_served_without_errors(old_url: str):
    status, run = get(old_url + "api/run")
    assert status == 200
    assert run["operators"]["rows"] == [] and run["operators"]["notes"] == []
    assert run["representation"] is None
    for e in run["entries"]:
        status, d = get(old_url + f"api/design/{e['id']}")
        assert status == 200, d
        assert d["genome"] is None and d["genome_lines"] is None and d["candidates"] == []
        assert d["operator"] in (None, "write", "edit", "crossover")


def _edit_child_search(
    genome_run: Path, tmp_path: Path, change: Callable[[dict[str, Any]], None]
) -> tuple[Path, Any]:
    """A copy of the run whose ``llm_edit`` child's search record is edited by ``change``; every other
    entry is left as it was."""
    run_dir = tmp_path / "run"
    shutil.copytree(genome_run, run_dir)
    child = _by_operator(genome_run, "llm_edit")

    def edit(data: dict[str, Any]) -> None:
        for e in data["entries"]:
            if e["id"] == child.id:
                change(e["search"])

    edit_archive(run_dir, edit)
    return run_dir, child


def test_a_design_played_though_the_agent_check_refuted_it_says_so(genome_run: Path, tmp_path: Path):
    run_dir, child = _edit_child_search(genome_run, tmp_path, lambda s: s.update(played_refuted=True))
    with ViewerThread(run_dir) as url:
        views = {e.id: get(url + f"api/design/{e.id}")[1] for e in Archive.load(run_dir).entries}
    assert {i for i, d in views.items() if d["played_refuted"]} == {child.id}


def test_a_damaged_genome_and_metadata_are_shown_not_fatal(genome_run: Path, tmp_path: Path):
    def damage(search: dict[str, Any]) -> None:
        search["genome"]["render"] = {"part": "lines", "params": {"no_such": 1}}
        search["probe_score"] = "high"
        search["candidates"] = [1, {"key": "\ud800x"}]
        search["checked"] = [  # a logs path out of the run folder is not served
            "x",
            {"genome": "?", "logs": "logs/../../outside", "agent_probe": "?"},
            {"genome": {"retrieve": [{"part": "route"}, 3]}, "logs": "logs/x-check1", "agent_probe": 0.5},
        ]

    def spoil_mutate(data: dict[str, Any]) -> None:
        for e in data["entries"]:
            if (e["search"] or {}).get("operator") == "mutate":
                e["search"] = e["metadata"] = "not a dict"

    run_dir, child = _edit_child_search(genome_run, tmp_path, damage)
    edit_archive(run_dir, spoil_mutate)
    with ViewerThread(run_dir) as url:
        status, run = get(url + "api/run")
        assert status == 200
        rows = {r["operator"]: r for r in run["operators"]["rows"]}
        assert rows["mutate"]["tries"] == 0 and rows["llm_edit"]["candidates"] == 1
        status, d = get(url + f"api/design/{child.id}")
        assert get(url + "api/design/x-check1/logs")[0] == 200  # named, nothing written: no lines
    assert status == 200
    assert d["genome_lines"] is None and "no_such" in d["genome_error"]
    assert d["genome"]["render"]["params"] == {"no_such": 1}
    assert d["probe_score"] is None and d["candidates"] == [{"key": "\ufffdx"}]
    assert [(c["parts"], c["agent_probe"], c["logs_id"]) for c in d["checked"]] == [
        ([], None, None),
        (["route"], 0.5, "x-check1"),
    ]


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
    from playwright.sync_api import expect

    expect(page.locator(selector)).to_contain_text(text)


def open_run(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#lineage-chart .node")
    page.wait_for_selector("#design-title:not(:text('Select a design'))")


@needs_chromium
@pytest.mark.browser
def test_the_genome_block_and_operator_table_are_visible(page, genome_run: Path, genome_url: str):
    child = _by_operator(genome_run, "llm_edit")
    open_run(page, genome_url)
    rows = page.locator("#operators-table tbody tr[data-operator]")
    assert rows.count() == len(GENOME_OPERATORS)
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.operator)") == list(GENOME_OPERATORS)
    assert "total" in page.locator("#operators-table tr.total-row").inner_text()
    page.click(f'#lineage-chart .node[data-id="{child.id}"]')
    expect_text(page, "#design-title", child.id)
    page.wait_for_selector("#design-genome:not([hidden])")
    assert page.locator("#design-genome").is_visible()
    lines = page.locator("#genome-lines .gl").all_inner_texts()
    assert lines == parse_genome(child.search.genome).describe()
    assert "made by llm_edit" in page.locator("#genome-sub").inner_text()
    assert page.locator('#design-meta [data-testid="operator"]').inner_text() == "operator llm_edit"
    probe = page.locator('#design-meta [data-testid="probe"]').inner_text()
    assert probe == f"advice probe {child.search.probe_score:.3f}"
    page.click("#genome-json-box summary")
    assert json.loads(page.locator("#genome-json").inner_text()) == child.search.genome
    shot(page, "viewer_genome")
    # A design written as code has no genome block.
    page.click('#lineage-chart .node[data-id="d-0001"]')
    expect_text(page, "#design-title", "d-0001")
    assert page.locator("#design-genome").is_hidden()


@needs_chromium
@pytest.mark.browser
def test_an_agent_checks_games_open_in_the_logs_tab(page, genome_run: Path, genome_url: str):
    child = next(e for e in Archive.load(genome_run).entries if e.search and e.search.checked)
    logs_id = child.search.checked[0].logs.removeprefix("logs/")
    open_run(page, genome_url)
    page.click(f'#lineage-chart .node[data-id="{child.id}"]')
    expect_text(page, "#design-title", child.id)
    page.wait_for_selector("#genome-checks:not([hidden])")
    assert page.locator("#genome-checks tbody tr").count() == len(child.search.checked)
    page.click(f'#genome-checks tr[data-check="{logs_id}"] button')
    page.wait_for_selector('.tabpanel[data-panel="logs"]:not([hidden])')
    expect_text(page, "#logs", "EPISODE C1")
    assert page.locator("#log-episode").input_value() == "all"
    shot(page, "viewer_agent_check_games")


@needs_chromium
@pytest.mark.browser
def test_the_test_tasks_table_opens_each_designs_games_there(page, genome_run: Path, genome_url: str):
    held = json.loads((genome_run / "archive.json").read_text())["held_out"]
    open_run(page, genome_url)
    page.wait_for_selector("#test-tasks:not([hidden])")
    assert page.locator("#test-table tbody tr").count() == len(held["designs"]) + 1
    pick = next(d["id"] for d in held["designs"] if d["chosen"])
    assert "pick" in page.locator(f'#test-table tr[data-test="{pick}"]').inner_text()
    page.click('#test-table tr[data-test="no-memory"] button')
    page.wait_for_selector('.tabpanel[data-panel="logs"]:not([hidden])')
    expect_text(page, "#logs", "EPISODE")
    assert "no-memory-test" in page.locator("#log-episode").inner_text()
    shot(page, "viewer_test_tasks_games")


@needs_chromium
@pytest.mark.browser
def test_a_run_from_before_genomes_says_it_has_no_operators(page, old_url: str):
    open_run(page, old_url)
    expect_text(page, "#operators", "No genome operators in this run.")
    assert page.locator("#design-genome").is_hidden()
