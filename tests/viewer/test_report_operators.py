"""`atlas report` on a genome search: the representation setting, the best design's genome, the
"Operators" section (the search's own bandit numbers) and its chart; a run from before genomes
still gets its report."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from viewer_helpers import OLD_RUN, edit_archive

from atlas.alma.genome import parse_genome
from atlas.alma.genome.bandit import operator_stats
from atlas.alma.genome.representation import GENOME_OPERATORS
from atlas.alma.genome.step import entry_genome
from atlas.alma.state.archive import Archive
from atlas.viewer.report import NO_OPERATORS, write_report
from atlas.viewer.run_reader import read_run

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
OPERATORS_HEADER = "| Operator | Tries |"


@pytest.fixture(scope="module")
def genome_report(genome_run: Path, tmp_path_factory: pytest.TempPathFactory):
    return write_report(genome_run, tmp_path_factory.mktemp("genome-report"))


def _table_rows(md: str, header_start: str) -> list[list[str]]:
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


def _section(md: str, title: str) -> str:
    return md.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path} is not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_operators_section_has_the_tries_and_wins_of_the_search_bandit(genome_run: Path, genome_report):
    md = genome_report.markdown.read_text()
    archive = Archive.load(genome_run)
    stats = operator_stats((e.search for e in archive), list(GENOME_OPERATORS))
    rows = _table_rows(_section(md, "Operators"), OPERATORS_HEADER)
    by_op = {r[0].strip("`"): r for r in rows[:-1]}
    assert list(by_op) == list(GENOME_OPERATORS)  # the bandit's order (from the trace)
    for op, s in stats.items():
        row = by_op[op]
        assert (int(row[1]), int(row[2]), row[3]) == (s.tries, s.wins, f"{s.rate:.3f}"), row
        made = [e for e in archive.entries if e.search and e.search.operator == op]
        screened = sum(len(e.search.candidates) for e in made)
        evaluated = sum(1 for e in made if e.deployment_score is not None)
        assert int(row[4]) == screened > 0
        assert int(row[5]) == evaluated
        assert row[6] == (f"{screened / evaluated:.1f}" if evaluated else "—")
        assert int(row[7]) == sum(len(e.search.operator_notes) for e in made)
    total = rows[-1]
    assert total[0] == "**total**" and total[1] == f"**{sum(s.tries for s in stats.values())}**"
    # The loop's own record of its bandit (written on each evaluated child) agrees.
    last = [e for e in archive.entries if e.search and e.search.operator_stats][-1]
    upto = archive.entries[: archive.entries.index(last) + 1]
    assert {r.operator: r.tries for r in last.search.operator_stats} == {
        op: s.tries for op, s in operator_stats((e.search for e in upto), list(GENOME_OPERATORS)).items()
    }
    assert "0 fallback notes" in _section(md, "Operators")
    assert "![Operators](operators.png)" in md


def test_operators_chart_is_written_as_png_and_svg(genome_report):
    assert genome_report.operators_png in genome_report.files()
    for p in genome_report.files():
        assert p.is_file() and p.stat().st_size > 0, p
    w, h = _png_size(genome_report.operators_png)
    assert w > 400 and h > 200
    root = ET.parse(genome_report.operators_svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("viewBox")


def test_settings_show_the_representation(genome_report):
    settings = _table_rows(genome_report.markdown.read_text(), "| Setting | Value |")
    assert ["representation", "genome"] in settings


def test_auto_representation_shows_what_it_resolved_to(genome_run: Path, tmp_path: Path):
    run = tmp_path / "run"
    shutil.copytree(genome_run, run)
    config = json.loads((run / "config.json").read_text())
    config["representation"] = "auto"
    (run / "config.json").write_text(json.dumps(config))
    settings = _table_rows(write_report(run, tmp_path / "out").markdown.read_text(), "| Setting | Value |")
    assert ["representation", "genome (auto)"] in settings


def test_best_design_section_shows_its_genome_or_says_it_is_code(genome_run: Path, genome_report):
    md = genome_report.markdown.read_text()
    best_section = _section(md, "Best design")
    best = read_run(genome_run).best()  # the report's best: the top deployment score
    assert best is not None and f"(`{best['id']}`" in best_section
    genome = entry_genome(Archive.load(genome_run).get(best["id"]))
    if genome is None:
        assert "This design is written as code (it has no genome)." in best_section
    else:
        assert "\n".join(genome.describe()) in best_section


def test_a_genome_design_that_is_best_shows_its_describe_lines(genome_best_run: Path, tmp_path: Path):
    md = write_report(genome_best_run, tmp_path / "out").markdown.read_text()
    best_section = _section(md, "Best design")
    data = json.loads((genome_best_run / "archive.json").read_text())
    child = next(e for e in data["entries"] if (e["search"] or {}).get("operator") == "llm_edit")
    assert f"(`{child['id']}`" in best_section
    lines = parse_genome(child["search"]["genome"]).describe()
    assert "```text\n" + "\n".join(lines) + "\n```" in best_section
    assert lines[0].startswith("encode   transitions(")
    assert "made by `llm_edit`" in best_section
    assert f"advice probe {child['search']['probe_score']:.3f}" in best_section
    assert "written as code" not in best_section


def test_fallback_notes_are_counted_and_listed(genome_run: Path, tmp_path: Path):
    run = tmp_path / "run"
    shutil.copytree(genome_run, run)
    note = "llm_edit reply unusable (reply is not JSON): mutation instead"

    def add_note(data: dict[str, Any]) -> None:
        child = next(e for e in data["entries"] if (e["search"] or {}).get("operator") == "llm_edit")
        child["search"]["operator_notes"] = [note]

    edit_archive(run, add_note)
    section = _section(write_report(run, tmp_path / "out").markdown.read_text(), "Operators")
    rows = {r[0]: r for r in _table_rows(section, OPERATORS_HEADER)}
    assert rows["`llm_edit`"][7] == "1" and rows["`mutate`"][7] == "0" and rows["**total**"][7] == "**1**"
    assert "1 fallback note (" in section and note in section


def test_a_genome_that_does_not_load_is_shown_as_recorded(genome_best_run: Path, tmp_path: Path):
    def damage(data: dict[str, Any]) -> None:
        child = next(e for e in data["entries"] if (e["search"] or {}).get("operator") == "llm_edit")
        child["search"]["genome"]["retrieve"] = [{"part": "no_such_part", "params": {}}]
        child["search"]["candidates"] = "not a list"
        child["search"]["operator_notes"] = [7, "kept"]

    edit_archive(genome_best_run, damage)
    md = write_report(genome_best_run, tmp_path / "out").markdown.read_text()
    best_section = _section(md, "Best design")
    assert "Its genome does not load (" in best_section and "no_such_part" in best_section
    assert "```json" in best_section
    rows = {r[0]: r for r in _table_rows(_section(md, "Operators"), OPERATORS_HEADER)}
    assert rows["`llm_edit`"][4] == "0" and rows["`llm_edit`"][7] == "1"


def test_a_run_from_before_genomes_still_gets_its_report(tmp_path: Path):
    paths = write_report(OLD_RUN, tmp_path / "out")
    md = paths.markdown.read_text()
    assert _section(md, "Operators").strip().startswith(NO_OPERATORS)
    assert NO_OPERATORS == "No genome operators in this run."
    assert "This design is written as code (it has no genome)." in _section(md, "Best design")
    assert "| representation |" not in md  # the run did not record one
    _png_size(paths.operators_png)
    assert paths.operators_svg.stat().st_size > 0
    assert not (OLD_RUN / "report" / "operators.png").exists()  # the committed folder is left alone


def test_a_best_design_played_though_the_agent_check_refuted_it_says_so(
    genome_best_run: Path, tmp_path: Path
):
    before = _section(write_report(genome_best_run, tmp_path / "before").markdown.read_text(), "Best design")
    assert "refuted" not in before

    def refuted(data: dict) -> None:
        child = next(e for e in data["entries"] if (e.get("search") or {}).get("operator") == "llm_edit")
        child["search"]["played_refuted"] = True

    edit_archive(genome_best_run, refuted)
    md = write_report(genome_best_run, tmp_path / "out").markdown.read_text()
    assert "(played though the agent check refuted it)" in _section(md, "Best design")
