"""``atlas report``: a run's charts as PNG + SVG files and a Markdown summary.

Writes into ``RUN_DIR/report/`` (or ``out_dir``): ``scores_per_generation.{png,svg}``,
``lineage.{png,svg}``, ``operators.{png,svg}`` and ``report.md`` (best design and its genome,
designs vs baselines, scores per generation, the genome search's operators, usage). The charts show what the viewer shows, drawn with matplotlib (Agg backend,
no display needed); the lineage layout is the viewer's (:mod:`atlas.viewer.lineage`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from atlas.errors import ArchiveError
from atlas.viewer.lineage import lineage_layout
from atlas.viewer.run_reader import RunSnapshot, _inside, deployment_completion, read_run
from atlas.viewer.time_spent import time_section

SERIES = (
    ("collection", "Collection", "#4c8bf5"),
    ("deployment", "Deployment", "#e8590c"),
    ("normalized", "Normalized", "#7b3fb5"),
)
BASELINE_COLOR = "#495057"
TRIES_COLOR = "#4c8bf5"
WINS_COLOR = "#2b8a3e"
NO_OPERATORS = "No genome operators in this run."


@dataclass(frozen=True)
class ReportPaths:
    """Where :func:`write_report` put each file."""

    out_dir: Path
    scores_png: Path
    scores_svg: Path
    lineage_png: Path
    lineage_svg: Path
    operators_png: Path
    operators_svg: Path
    markdown: Path

    def files(self) -> list[Path]:
        return [
            self.scores_png,
            self.scores_svg,
            self.lineage_png,
            self.lineage_svg,
            self.operators_png,
            self.operators_svg,
            self.markdown,
        ]


def write_report(run_dir: str | Path, out_dir: str | Path | None = None) -> ReportPaths:
    """Read the run folder and write the charts and report.md. Raises ArchiveError when the run
    folder is missing or corrupt, or the output folder cannot be written."""
    run = read_run(run_dir)
    if out_dir is not None:
        out = Path(out_dir)
    else:  # inside the run: never through a link planted in a run folder someone shared
        inside = _inside(run.run_dir, "report")
        if inside is None or (run.run_dir / "report").is_symlink():
            raise ArchiveError(
                f"{run.run_dir / 'report'} points outside the run folder; remove it or pass --out"
            )
        out = inside
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArchiveError(f"cannot create the report folder {out}: {exc.strerror or exc}") from exc
    paths = ReportPaths(
        out_dir=out,
        scores_png=out / "scores_per_generation.png",
        scores_svg=out / "scores_per_generation.svg",
        lineage_png=out / "lineage.png",
        lineage_svg=out / "lineage.svg",
        operators_png=out / "operators.png",
        operators_svg=out / "operators.svg",
        markdown=out / "report.md",
    )
    try:
        for f in paths.files():
            if f.is_symlink():  # replace a link with the file, never write through it
                f.unlink()
        _save(scores_figure(run), paths.scores_png, paths.scores_svg)
        _save(lineage_figure(run), paths.lineage_png, paths.lineage_svg)
        _save(operators_figure(run), paths.operators_png, paths.operators_svg)
        paths.markdown.write_text(render_markdown(run, paths), encoding="utf-8")
    except OSError as exc:
        raise ArchiveError(f"cannot write the report into {out}: {exc.strerror or exc}") from exc
    return paths


# ---------------------------------------------------------------------- charts


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.hashsalt": "atlas-report",  # stable ids: the same run gives the same SVG
            "font.size": 10,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titleweight": "bold",
        }
    )
    return plt


def _save(fig: Any, png: Path, svg: Path) -> None:
    import matplotlib.pyplot as plt

    try:
        fig.savefig(png, dpi=150, bbox_inches="tight", metadata={"Software": None})
        fig.savefig(svg, bbox_inches="tight", metadata={"Date": None, "Creator": None})
    finally:
        plt.close(fig)


def _empty(ax: Any, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color="#6b6f7b")
    ax.set_xticks([])
    ax.set_yticks([])


def scores_figure(run: RunSnapshot) -> Any:
    """Best design of each generation: collection, deployment and normalized scores, with every
    design's deployment score as faint dots and the no-memory baseline as a dashed line."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    rows = run.generations()
    ax.set_title(f"Scores per generation — {run.name}", loc="left")
    if not any(r["deployment"] is not None for r in rows):
        _empty(ax, "no scored design yet")
        return fig
    gens = [r["generation"] for r in rows]
    scored = [e for e in run.entries if e["deployment_score"] is not None]
    ax.scatter(
        [e["generation"] for e in scored],
        [e["deployment_score"] for e in scored],
        s=22,
        color="#e8590c",
        alpha=0.22,
        zorder=2,
        label="every design (deployment)",
    )
    for key, label, color in SERIES:
        pts = [(r["generation"], r[key]) for r in rows if r[key] is not None]
        if pts:
            ax.plot(*zip(*pts, strict=True), marker="o", lw=2.2, ms=6, color=color, label=label, zorder=3)
    failed = [r["generation"] for r in rows if r["deployment"] is None]
    if failed:
        ax.scatter(
            failed, [0.0] * len(failed), marker="x", s=50, color="#c92a2a", zorder=3, label="no valid design"
        )
    base = run.baseline_score
    if base is not None:
        ax.axhline(
            base, color=BASELINE_COLOR, ls="--", lw=1.4, zorder=1, label=f"baseline (no memory) {base:.2f}"
        )
    ax.axhline(0, color="#adb5bd", lw=0.8, zorder=0)
    for r in rows:
        if r["deployment"] is not None:
            ax.annotate(
                r["design_name"],
                (r["generation"], r["deployment"]),
                textcoords="offset points",
                xytext=(0, 9),
                ha="center",
                fontsize=8,
                color="#343a40",
            )
    ax.set_xticks(gens)
    ax.set_xlabel("generation")
    ax.set_ylabel("score")
    ax.grid(axis="y", color="#eef0f4")
    ax.margins(x=0.08, y=0.15)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=9)
    return fig


def lineage_figure(run: RunSnapshot) -> Any:
    """The archive as a tree: one column per generation, parent → child arrows, nodes coloured
    by deployment score (viridis); hand-built designs dashed, failed designs grey."""
    plt = _pyplot()
    from matplotlib import colormaps
    from matplotlib.colors import Normalize
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.path import Path as MplPath

    lay = lineage_layout(run.entries)
    cols, rows = len(lay["columns"]), max(lay["rows"], 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 2.4 * cols + 1.5), max(3.2, 1.4 * rows + 1.4)))
    ax.set_title(f"Lineage — {run.name}", loc="left")
    if not lay["nodes"]:
        _empty(ax, "the archive is empty so far")
        return fig
    by_id = {e["id"]: e for e in run.entries}
    pos = {n["id"]: (float(n["col"]), -float(n["row"])) for n in lay["nodes"]}
    scores = [e["deployment_score"] for e in run.entries if e["deployment_score"] is not None]
    lo, hi = (min(scores), max(scores)) if scores else (0.0, 1.0)
    if hi - lo < 1e-6:
        lo, hi = lo - 0.05, hi + 0.05
    norm, cmap = Normalize(lo, hi), colormaps["viridis"]

    for parent, child in lay["edges"]:
        (x1, y1), (x2, y2) = pos[parent], pos[child]
        bend = _bend_around(pos, x1, y1, x2, y2)
        if bend:
            # A cubic curve that arcs around the node (and label) it would cross.
            dx = (x2 - x1) / 2
            path = MplPath(
                [(x1 + 0.12, y1), (x1 + dx, y1 + bend), (x2 - dx, y2 + bend), (x2 - 0.13, y2)],
                [MplPath.MOVETO, MplPath.CURVE4, MplPath.CURVE4, MplPath.CURVE4],
            )
            arrow = FancyArrowPatch(path=path, arrowstyle="-|>", mutation_scale=12, color="#a5abb8", lw=1.3)
        else:
            arrow = FancyArrowPatch(
                (x1, y1),
                (x2, y2),
                arrowstyle="-|>",
                mutation_scale=12,
                color="#a5abb8",
                lw=1.3,
                shrinkA=16,
                shrinkB=16,
                connectionstyle="arc3,rad=0.08",
            )
        arrow.set_zorder(1)
        ax.add_patch(arrow)
    best = run.best()
    for node in lay["nodes"]:
        e = by_id[node["id"]]
        x, y = pos[node["id"]]
        score = e["deployment_score"]
        face = cmap(norm(score)) if score is not None else "#d5d7de"
        edge, ls, lw = "white", "-", 1.5
        if e["kind"] == "baseline":
            edge, ls = "#343a40", "--"
        if score is None:
            edge, ls = "#c92a2a", "--"
        if best is not None and e["id"] == best["id"]:
            edge, ls, lw = "#e0a800", "-", 3
        ax.scatter([x], [y], s=720, c=[face], edgecolors=edge, linewidths=lw, linestyle=ls, zorder=2)
        if score is not None:
            r, g, b, _ = cmap(norm(score))
            ink = "#1b1b1f" if 0.299 * r + 0.587 * g + 0.114 * b > 0.6 else "white"
            ax.text(
                x,
                y,
                f"{score:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                fontweight="bold",
                color=ink,
                zorder=3,
            )
        else:
            ax.text(x, y, "✕", ha="center", va="center", fontsize=10, color="#6b6f7b", zorder=3)
        star = " ★" if best is not None and e["id"] == best["id"] else ""
        ax.text(x, y - 0.36, f"{e['name']}\n{e['id']}{star}", ha="center", va="top", fontsize=7.5, zorder=3)
    for c, g in enumerate(lay["columns"]):
        ax.text(c, 0.62, f"gen {g}", ha="center", va="bottom", fontsize=9, color="#6b6f7b", fontweight="bold")
    ax.set_xlim(-0.6, cols - 0.4)
    ax.set_ylim(-(rows - 1) - 0.95, 0.95)
    ax.axis("off")
    sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    bar = fig.colorbar(sm, ax=ax, fraction=0.03, pad=0.02, shrink=0.75)
    bar.set_label("deployment score")
    return fig


def operators_figure(run: RunSnapshot) -> Any:
    """Tries and wins (children that beat their parent) per operator of the genome search's bandit,
    side by side; the empty-chart message in a run without genome operators."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    rows = run.operators()["rows"]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.3 * len(rows) + 2.5), 3.8))
    ax.set_title(f"Operators — {run.name}", loc="left")
    if not rows:
        _empty(ax, "no genome operators in this run")
        return fig
    xs = list(range(len(rows)))
    width = 0.38
    tries = ax.bar(
        [x - width / 2 for x in xs],
        [r["tries"] for r in rows],
        width,
        color=TRIES_COLOR,
        label="tries",
        zorder=2,
    )
    wins = ax.bar(
        [x + width / 2 for x in xs],
        [r["wins"] for r in rows],
        width,
        color=WINS_COLOR,
        label="beat their parent",
        zorder=2,
    )
    for bars in (tries, wins):
        ax.bar_label(bars, padding=2, fontsize=8, color="#343a40")
    ax.set_xticks(xs, [r["operator"] for r in rows])
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("children")
    ax.grid(axis="y", color="#eef0f4", zorder=0)
    ax.margins(y=0.15)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=9)
    return fig


def _bend_around(pos: dict[str, tuple[float, float]], x1: float, y1: float, x2: float, y2: float) -> float:
    """How far (in rows) an edge that skips columns must bend to pass a node or its label (drawn
    below the node) lying on the straight line; 0 when the way is clear."""
    for nx, ny in pos.values():
        if not x1 + 0.01 < nx < x2 - 0.01:
            continue
        ly = y1 + (y2 - y1) * (nx - x1) / (x2 - x1)
        if ny - 0.62 < ly < ny + 0.2:
            target = ny + 0.3 if ly >= ny - 0.2 else ny - 0.66
            return (target - ly) / 0.75
    return 0.0


# ---------------------------------------------------------------------- markdown


def _f(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "—"
    return f"{v:+.3f}" if signed else f"{v:.3f}"


def _pct(rate: dict[str, Any]) -> str:
    lo, hi = rate["ci95"]
    return f"**{rate['rate']:.0%}** [{lo:.0%}, {hi:.0%}] ({rate['successes']}/{rate['n']})"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[Any]], right: set[int] | None = None) -> list[str]:
    right = right or set()
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|")
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _executor(run: RunSnapshot) -> str:
    """Where the episodes ran and how many work units were played again after a lost worker."""
    ex = run.executor
    where = f"{ex['name']} at {ex['address']}" if ex["address"] else ex["name"]
    return f"{where}, {ex['retries']} {'retry' if ex['retries'] == 1 else 'retries'}"


def _representation(run: RunSnapshot) -> str:
    """The representation the run used; ``genome (auto)`` when ``auto`` chose it."""
    setting = run.config.get("representation")
    used = run.representation or "—"
    return f"{used} ({setting})" if isinstance(setting, str) and setting and setting != used else used


def _fenced(lines: list[str], lang: str = "text") -> list[str]:
    """A fenced code block longer than any run of backticks in the lines (they are data)."""
    longest = max((len(m) for line in lines for m in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + lang, *lines, fence]


def _genome_block(entry: dict[str, Any]) -> list[str]:
    """The design's genome as ``Genome.describe()`` lines, or that it is written as code."""
    if entry["genome"] is None:
        return ["This design is written as code (it has no genome).", ""]
    if entry["genome_lines"] is None:
        return [
            f"Its genome does not load ({_cell(entry['genome_error'])}); as recorded:",
            "",
            *_fenced(json.dumps(entry["genome"], indent=2, ensure_ascii=False).splitlines(), "json"),
            "",
        ]
    how = f", made by `{entry['operator']}`" if entry["operator"] else ""
    probe = f", advice probe {_f(entry['probe_score'])}" if entry["probe_score"] is not None else ""
    if entry.get("played_refuted"):
        probe += " (played though the agent check refuted it)"
    return [f"Its genome{how}{probe}, one line per part:", "", *_fenced(entry["genome_lines"]), ""]


def _operators_section(run: RunSnapshot, paths: ReportPaths) -> list[str]:
    """The genome search's operators: the bandit's tries and wins, what screening each child cost."""
    out = ["## Operators", ""]
    ops = run.operators()
    if not ops["rows"]:
        return [*out, NO_OPERATORS, "", f"![Operators]({paths.operators_png.name})", ""]
    out.append(
        "Each child's operator is chosen by a bandit (UCB1) rewarded when the child beats its parent. "
        "Candidates are genomes screened by the advice probe before any episode; an evaluated child is "
        "one the task agent played (it has a deployment score)."
    )
    out += ["", f"![Operators]({paths.operators_png.name})", ""]

    def row(r: dict[str, Any], bold: bool = False) -> list[Any]:
        cells = [
            r["tries"],
            r["wins"],
            f"{r['rate']:.3f}",
            r["candidates"],
            r["evaluated"],
            f"{r['candidates_per_child']:.1f}" if r["candidates_per_child"] is not None else "—",
            r["fallbacks"],
        ]
        if bold:
            return ["**total**", *(f"**{c}**" for c in cells)]
        return [f"`{r['operator']}`", *cells]

    out += _table(
        [
            "Operator",
            "Tries",
            "Beat parent",
            "Rate",
            "Candidates screened",
            "Evaluated children",
            "Candidates per evaluated child",
            "Fallbacks",
        ],
        [row(r) for r in ops["rows"]] + [row(ops["total"], bold=True)],
        right={1, 2, 3, 4, 5, 6, 7},
    )
    out.append("")
    notes = ops["notes"]
    if notes:
        out.append(
            f"{len(notes)} fallback note{'s' if len(notes) != 1 else ''} (an operator could not make "
            "its candidates and another stood in):"
        )
        out.append("")
        out += [f"- `{n['id']}` `{n['operator']}`: {_cell(n['note'])}" for n in notes]
    else:
        out.append("0 fallback notes: every operator made its own candidates.")
    out.append("")
    return out


def _held_out_section(held: dict[str, Any] | None) -> list[str]:
    """The run's result: each tested design's gain over no memory on the held-out test tasks."""
    out = ["## Result on held-out test tasks", ""]
    if not held or not isinstance(held.get("designs"), list):
        return [*out, "Not measured: the search has not ended, or ran with `--test-seeds 0`.", ""]
    out.append(
        f"{len(held.get('tasks') or [])} test tasks ({_cell(held.get('source'))}) that neither the screening nor "
        f"the choice of the best design saw; no memory scores {_f(_mean(held.get('no_memory')))} there. The pick "
        "is the design the search chose on its deployment tasks; the others show how much that choice was luck."
    )
    out.append("")

    def ci(v: Any) -> str:
        if not isinstance(v, dict) or not isinstance(v.get("ci95"), list):
            return "—"
        return f"{_f(v.get('mean'), True)} [{_f(v['ci95'][0], True)}, {_f(v['ci95'][1], True)}]"

    rows = [
        [
            ("**pick** " if d.get("chosen") else "") + f"`{_cell(d.get('id'))}` {_cell(d.get('name'))}",
            d.get("origin"),
            ci(d.get("validation")),
            _f(d.get("test_score"))
            if d.get("status") == "ok"
            else f"{'skipped' if d.get('status') == 'skipped' else 'failed'}: {_cell('; '.join(d.get('errors') or []))}",
            ci(d.get("vs_no_memory")),
        ]
        for d in held["designs"]
        if isinstance(d, dict)
    ]
    out += _table(
        [
            "Design",
            "Origin",
            "vs no memory where chosen (95% CI)",
            "Test score",
            "vs no memory on test (95% CI)",
        ],
        rows,
    )
    return [*out, ""]


def _mean(scores: Any) -> float | None:
    vals = (
        [v for v in (scores or {}).values() if isinstance(v, int | float)] if isinstance(scores, dict) else []
    )
    return sum(vals) / len(vals) if vals else None


def render_markdown(run: RunSnapshot, paths: ReportPaths) -> str:
    """The report's Markdown text (charts referenced by relative file name)."""
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    out: list[str] = [f"# ALMA run report: {run.name}", ""]
    out.append(f"Run folder `{run.run_dir}` · state: **{run.state}** · written {now}.")
    out.append("")
    cfg_keys = [
        k
        for k in (
            "env",
            "iterations",
            "episodes",
            "rooms",  # runs from before environment parameters moved into env_params
            "seed",
            "deploy_seeds",
            "model",
            "meta_model",
            "embed_model",
            "representation",
        )
        if k in run.config
    ]
    resolved = {"model": "task_model", "meta_model": "meta_model_resolved", "embed_model": "embedder"}
    if cfg_keys:  # a model left to the default resolution shows what it resolved to
        env_params = run.config.get("env_params") or {}
        out += _table(
            ["Setting", "Value"],
            [
                [
                    k,
                    _representation(run)
                    if k == "representation"
                    else run.config[k]
                    if run.config[k] is not None
                    else run.config.get(resolved.get(k, k)),
                ]
                for k in cfg_keys
            ]
            + [[k, v] for k, v in env_params.items() if k not in run.config]
            + [["executor", _executor(run)]],
        )
        out.append("")

    out += _held_out_section(run.held_out)
    best = run.best()
    base = run.baseline_score
    out += ["## Best design", "", "The best on the deployment tasks, where the search chose it.", ""]
    if best is None:
        out += ["No design has a deployment score yet.", ""]
    else:
        parents = ", ".join(f"`{p}`" for p in best["parent_ids"]) or "none (hand-built)"
        out.append(
            f"**{_cell(best['name'])}** (`{best['id']}`, {best['origin']}, generation {best['generation']}, "
            f"parents {parents}): deployment **{_f(best['deployment_score'])}**, collection "
            f"{_f(best['collection_score'])}, normalized **{_f(best['normalized_score'], True)}** "
            f"against the no-memory baseline {_f(base)}. Source: `{best['source_path']}`."
        )
        completion = deployment_completion(best)
        if completion is not None:
            tgc, sgc = completion["tgc"], completion["sgc"]
            out += [
                "",
                f"Deployment goal completion: tasks {_pct(tgc)}, scenarios {_pct(sgc)} (a scenario counts "
                "only when every one of its tasks is solved; 95% Wilson intervals).",
            ]
        out.append("")
        out += _genome_block(best)
        if best["critique"]:
            out.append("Critique it was given:")
            out.append("")
            out += ["> " + line if line else ">" for line in best["critique"].splitlines()]
            out.append("")

    out += ["## Scores per generation", "", f"![Scores per generation]({paths.scores_png.name})", ""]
    gens = run.generations()
    if gens:
        out += _table(
            [
                "Generation",
                "Best design",
                "Collection",
                "Deployment",
                "Normalized",
                "Best so far",
                "Designs (failed)",
            ],
            [
                [
                    r["generation"],
                    f"{r['design_name']} (`{r['design_id']}`)" if r["design_id"] else "no valid design",
                    _f(r["collection"]),
                    _f(r["deployment"]),
                    _f(r["normalized"], True),
                    _f(r["best_so_far"]),
                    f"{r['designs']} ({r['failed']})",
                ]
                for r in gens
            ],
            right={2, 3, 4, 5},
        )
    else:
        out.append("No scored design yet.")
    out.append("")

    out += ["## Designs and baselines", ""]
    out.append(
        "Normalized = deployment − baseline. Deployment (unseen tasks, frozen memory) is fitness; "
        "hand-built designs (baseline, seed, host) are evaluated at generation 0."
    )
    out.append("")
    table_rows: list[list[Any]] = []
    if base is not None:
        table_rows.append(
            ["baseline (no memory)", "—", "baseline", "—", "—", "—", "—", _f(base), _f(0.0, True)]
        )
    for kind in ("baseline", "evolved"):
        for e in (e for e in run.entries if e["kind"] == kind):
            mark = " ★" if best is not None and e["id"] == best["id"] else ""
            table_rows.append(
                [
                    f"{e['name']}{mark}",
                    f"`{e['id']}`",
                    e["origin"],
                    e["generation"],
                    ", ".join(e["parent_ids"]) or "—",
                    e["status"] + (f": {e['errors'][0]}" if e["errors"] else ""),
                    _f(e["collection_score"]),
                    _f(e["deployment_score"]),
                    _f(e["normalized_score"], True),
                ]
            )
    out += _table(
        ["Design", "ID", "Origin", "Gen", "Parents", "Status", "Collection", "Deployment", "Normalized"],
        table_rows,
        right={6, 7, 8},
    )
    out.append("")

    out += ["## Lineage", "", f"![Lineage]({paths.lineage_png.name})", ""]

    out += _operators_section(run, paths)

    out += time_section(run)

    out += ["## Usage", ""]
    usage = run.usage_rows()
    if usage:
        tot = run.usage_total()
        rows = [
            [
                u["iteration"],
                u["generation"],
                f"`{u['child_id']}`" if u["child_id"] else "—",
                u["status"] or "—",
                f"{int(u['prompt_tokens']):,}",
                f"{int(u['completion_tokens']):,}",
                f"{int(u['total_tokens']):,}",
                f"${u['cost_usd']:.4f}",
                int(u["calls"]),
                f"{u['duration_s']:.1f}" if u["duration_s"] is not None else "—",
            ]
            for u in usage
        ]
        durations = [u["duration_s"] for u in usage if u["duration_s"] is not None]
        rows.append(
            [
                "**total**",
                "",
                "",
                "",
                f"{int(tot['prompt_tokens']):,}",
                f"{int(tot['completion_tokens']):,}",
                f"**{int(tot['total_tokens']):,}**",
                f"**${tot['cost_usd']:.4f}**",
                int(tot["calls"]),
                f"{sum(durations):.1f}" if durations else "—",
            ]
        )
        out += _table(
            [
                "Iteration",
                "Generation",
                "Child",
                "Status",
                "Prompt tokens",
                "Completion tokens",
                "Total tokens",
                "Cost",
                "Calls",
                "Seconds",
            ],
            rows,
            right={4, 5, 6, 7, 8, 9},
        )
    else:
        out.append("No iteration has finished yet.")
    if run.run_time_s:
        out += ["", f"The run's own time, resumed parts included: {run.run_time_s / 60:.1f} minutes."]
    out.append("")
    if run.warnings:
        out += ["## Notes from reading the run folder", ""]
        out += [f"- {w}" for w in run.warnings]
        out.append("")
    return "\n".join(out)
