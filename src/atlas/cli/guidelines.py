"""`atlas guidelines`: learn tips from trajectories and read them back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from atlas.cli.exits import fail

app = typer.Typer(
    help="Guidelines: strategy, recovery and optimization tips learned from trajectories.",
    no_args_is_help=True,
)

DEFAULT_PATH = Path(".atlas") / "guidelines"

_PATH = typer.Option(
    DEFAULT_PATH,
    "--path",
    envvar="ATLAS_GUIDELINES_PATH",
    help="Guideline store directory (SQLite + Chroma).",
)
_NS = typer.Option("default", "--namespace", "-n", help="Namespace: one never sees another's memory.")
_MODEL = typer.Option(
    None,
    "--model",
    help="LLM (provider string, alias, local:PATH.gguf, or a plug-in provider's PREFIX:...). "
    "Default: the standard model resolution.",
)
_JSON = typer.Option(False, "--json", help="Print JSON instead of text.")


def _bank(
    path: Path, namespace: str, model: str | None = None, need_llm: bool = False, create: bool = False
) -> Any:
    """Open the bank (and the LLM only when needed); configuration errors exit with code 2. Only
    ``create=True`` (saving) makes a missing store: reading a path that holds none is an error."""
    from atlas.errors import AtlasError, ConfigError
    from atlas.infra.llm import make_llm
    from atlas.memory.guidelines import GuidelineBank
    from atlas.memory.guidelines.config import check_namespace

    try:
        check_namespace(namespace)
        if path.exists() and not path.is_dir():
            raise ConfigError(f"--path {path} is a file, not a guideline store directory")
        if not create and not (path / "guidelines.sqlite").is_file():
            raise ConfigError(
                f"no guideline store at {path} (save a trajectory first, or pass the right --path)"
            )
        llm = make_llm(model) if (need_llm or model) else None
        return GuidelineBank.open(path, namespace=namespace, llm=llm)
    except AtlasError as exc:
        fail(exc)


def _show(g: Any, as_json: bool) -> None:
    from atlas.memory.guidelines.render import format_guideline

    if as_json:
        typer.echo(g.model_dump_json(indent=2))
        return
    sim = f" sim={g.similarity:.2f}" if g.similarity is not None else ""
    typer.echo(f"{g.id}  [{g.category}, {g.priority}, support={g.support}, evidence={g.evidence}]{sim}")
    typer.echo("  " + format_guideline(g).replace("\n", "\n  "))


@app.command("save")
def save(
    file: Path = typer.Argument(
        ..., help="Trajectory JSON, or an OpenAI message list (or {'messages': [...]})."
    ),
    success: bool | None = typer.Option(
        None, "--success/--failure", help="Override the outcome of a message list."
    ),
    path: Path = _PATH,
    namespace: str = _NS,
    model: str | None = _MODEL,
    as_json: bool = _JSON,
) -> None:
    """Extract tips from one trajectory and store them (prints the ids added or updated)."""
    from atlas.errors import AtlasError, InvalidInputError
    from atlas.memory.guidelines.messages import parse_trajectory

    try:
        text = file.read_text(encoding="utf-8-sig")
    except OSError as exc:
        fail(InvalidInputError(f"FILE: cannot read {file}: {exc.strerror}"))
    except UnicodeDecodeError as exc:
        fail(InvalidInputError(f"FILE: {file} is not UTF-8 text ({exc.reason} at byte {exc.start})"))
    try:  # validate before opening anything: a bad file creates and stores nothing
        trajectory = parse_trajectory(text, success=success)
        result = _bank(path, namespace, model, need_llm=True, create=True).save(trajectory)
    except AtlasError as exc:
        fail(exc)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2, default=str))
    elif result.status == "not_processed":
        typer.echo(f"trajectory {result.trajectory_id} not processed: {result.reason}")
        typer.echo("run `atlas guidelines reprocess` to retry")
    else:
        typer.echo(f"trajectory {result.trajectory_id}: {result.status}, outcome {result.outcome}")
        for gid in result.guideline_ids:
            typer.echo(gid)
    if result.status == "not_processed":
        raise typer.Exit(1)


@app.command("ingest")
def ingest(
    file: Path = typer.Argument(
        ...,
        help="A Claude Code session (~/.claude/projects/*/SESSION.jsonl), a Codex CLI rollout "
        "(~/.codex/sessions/**/rollout-*.jsonl), or an OpenAI message list (JSON).",
    ),
    fmt: str = typer.Option("auto", "--format", help="auto (by content), claude-code, codex or openai."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show the trajectories the transcript yields; store nothing, call no LLM."
    ),
    project: Path | None = typer.Option(
        None,
        "--project",
        help="Use the namespace the Claude Code / Codex hooks use for the project in this folder "
        "(instead of --namespace), so hand-ingested sessions join what the hooks learned.",
    ),
    path: Path = _PATH,
    namespace: str = _NS,
    model: str | None = _MODEL,
    as_json: bool = _JSON,
) -> None:
    """Learn tips from a coding agent's transcript: each turn (a prompt and the tool calls that
    followed) becomes a trajectory with its tool calls, errors and outcome, and its tips are
    extracted and stored. Turns already learned are skipped, so running it twice is harmless."""
    from atlas.errors import AtlasError
    from atlas.memory.guidelines.transcripts import read_transcript

    try:
        transcript = read_transcript(file, fmt)
    except AtlasError as exc:
        fail(exc)
    if transcript.skipped_lines:
        typer.echo(f"warning: {transcript.skipped_lines} malformed line(s) skipped", err=True)
    for reason in transcript.skipped_turns:
        typer.echo(f"warning: skipped {reason}", err=True)
    if transcript.truncated:
        typer.echo("warning: the transcript is over the size limit; only its end was read", err=True)
    trajectories = transcript.trajectories
    if dry_run:
        if as_json:
            typer.echo(json.dumps([t.model_dump(mode="json") for t in trajectories], indent=2))
            return
        for t in trajectories:
            errors = sum(s.error is not None for s in t.steps)
            outcome = "success" if t.success else "failure"
            typer.echo(
                f"{t.id}  {outcome}, {len(t.steps)} tool call(s), {errors} error(s)  {t.task.description[:80]}"
            )
        typer.echo(f"{len(trajectories)} trajectory(ies) from a {transcript.format} transcript", err=True)
        return
    if not trajectories:
        typer.echo("no turn with a tool call in this transcript: nothing to learn", err=True)
        return
    if project is not None:
        from atlas.memory.guidelines.config import project_namespace

        namespace = project_namespace(str(project))
        typer.echo(f"namespace {namespace}", err=True)
    try:
        bank = _bank(path, namespace, model, need_llm=True, create=True)
        results = [bank.save(t) for t in trajectories]
    except AtlasError as exc:
        fail(exc)
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in results], indent=2, default=str))
    else:
        for r in results:
            typer.echo(f"{r.trajectory_id}: {r.status}" + (f" ({r.reason})" if r.reason else ""))
            for gid in r.guideline_ids:
                typer.echo(f"  {gid}")
    if any(r.status == "not_processed" for r in results):
        typer.echo("some turns were not processed: run `atlas guidelines reprocess` to retry", err=True)
        raise typer.Exit(1)


@app.command("get")
def get(
    task: str = typer.Argument(..., help="The task text to find guidelines for."),
    k: int = typer.Option(5, "--k", "-k", min=1, max=100, help="At most this many guidelines."),
    mode: str = typer.Option(
        "cosine", "--mode", help="'cosine' (threshold + top-k, no LLM) or 'llm' (one LLM call)."
    ),
    category: str | None = typer.Option(
        None, "--category", help="Only strategy, recovery or optimization tips."
    ),
    task_category: str | None = typer.Option(
        None, "--task-category", help="Only tips of this task category."
    ),
    path: Path = _PATH,
    namespace: str = _NS,
    model: str | None = _MODEL,
    as_json: bool = _JSON,
) -> None:
    """Guidelines relevant to a task, best first (nothing printed when none match)."""
    from atlas.errors import AtlasError

    filters = {n: v for n, v in (("category", category), ("task_category", task_category)) if v}
    try:
        bank = _bank(path, namespace, model, need_llm=(mode == "llm"))
        found = bank.get_guidelines(task, k=k, mode=mode, filters=filters or None)
    except AtlasError as exc:
        fail(exc)
    if as_json:
        typer.echo(json.dumps([g.model_dump(mode="json") for g in found], indent=2))
        return
    if not found:
        typer.echo("no guideline matches this task", err=True)
    for g in found:
        _show(g, False)


@app.command("list")
def list_(
    category: str | None = typer.Option(None, "--category", help="strategy, recovery or optimization."),
    limit: int | None = typer.Option(None, "--limit", min=1, max=100_000, help="Show at most this many."),
    path: Path = _PATH,
    namespace: str = _NS,
    as_json: bool = _JSON,
) -> None:
    """All stored guidelines, strongest first."""
    from atlas.errors import AtlasError

    try:
        items = _bank(path, namespace).list_guidelines(category=category, limit=limit)
    except AtlasError as exc:
        fail(exc)
    if as_json:
        typer.echo(json.dumps([g.model_dump(mode="json") for g in items], indent=2))
        return
    for g in items:
        typer.echo(f"{g.id}  [{g.category}, support={g.support}]  {g.content}")
    typer.echo(f"{len(items)} guideline(s)", err=True)


@app.command("show")
def show(
    guideline_id: str = typer.Argument(..., help="Guideline id."),
    path: Path = _PATH,
    namespace: str = _NS,
    as_json: bool = _JSON,
) -> None:
    """One guideline with every field and its provenance."""
    g = _bank(path, namespace).get(guideline_id)
    if g is None:
        typer.echo(f"error: no guideline {guideline_id} in namespace {namespace}", err=True)
        raise typer.Exit(1)
    if as_json:
        typer.echo(g.model_dump_json(indent=2))
        return
    _show(g, False)
    typer.echo(
        f"  Purpose: {g.purpose}\n  Context: {g.application_context}\n  Task category: {g.task_category}"
    )
    typer.echo(f"  Subtask: {g.subtask}\n  Sources: {', '.join(g.source_trajectory_ids)}")


@app.command("delete")
def delete(
    guideline_id: str = typer.Argument(..., help="Guideline id."),
    path: Path = _PATH,
    namespace: str = _NS,
) -> None:
    """Delete one guideline (logged as a DELETE decision)."""
    if not _bank(path, namespace).delete_guideline(guideline_id):
        typer.echo(f"error: no guideline {guideline_id} in namespace {namespace}", err=True)
        raise typer.Exit(1)
    typer.echo(f"deleted {guideline_id}")


@app.command("consolidate")
def consolidate(path: Path = _PATH, namespace: str = _NS, as_json: bool = _JSON) -> None:
    """Re-cluster, merge near-duplicates, cap clusters and decay failure-only tips (rule-based)."""
    from atlas.errors import AtlasError

    try:
        decisions = _bank(path, namespace).consolidate()
    except AtlasError as exc:
        fail(exc)
    if as_json:
        typer.echo(json.dumps(decisions, indent=2, default=str))
        return
    for d in decisions:
        typer.echo(f"{d['action']:<6} {d['guideline_id']}  {d['reason']}")
    typer.echo(f"{len(decisions)} decision(s)", err=True)


@app.command("forget-trajectory")
def forget_trajectory(
    trajectory_id: str = typer.Argument(..., help="Trajectory id."),
    path: Path = _PATH,
    namespace: str = _NS,
) -> None:
    """Remove a trajectory: tips learned only from it are deleted, the others demoted."""
    out = _bank(path, namespace).remove_trajectory(trajectory_id)
    typer.echo(f"deleted {len(out['deleted'])}, demoted {len(out['demoted'])}")


@app.command("reprocess")
def reprocess(path: Path = _PATH, namespace: str = _NS, model: str | None = _MODEL) -> None:
    """Retry trajectories recorded as not processed (an LLM stage failed)."""
    from atlas.errors import AtlasError

    try:
        results = _bank(path, namespace, model, need_llm=True).reprocess()
    except AtlasError as exc:
        fail(exc)
    for r in results:
        typer.echo(f"{r.trajectory_id}: {r.status}" + (f" ({r.reason})" if r.reason else ""))
    typer.echo(f"{len(results)} trajectory(ies) retried", err=True)


@app.command("stats")
def stats(path: Path = _PATH, namespace: str = _NS) -> None:
    """Counts: guidelines by category, trajectories by status, decisions."""
    typer.echo(json.dumps(_bank(path, namespace).stats(), indent=2))
