"""`atlas headroom`: how much any memory could help the task agent on a configuration's tasks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from atlas.alma.evaluate import headroom_log
from atlas.cli.alma import (
    ADVICE_WEIGHT_OPTION,
    AS_JSON,
    CONCURRENCY,
    DEPLOY_SEEDS,
    ENV,
    EPISODES,
    FAMILY,
    MAX_TASKS,
    MAX_TURNS_OPTION,
    MODEL,
    NO_FAMILY,
    SEED,
    _make_client,
    check_output_file,
    with_env_options,
)
from atlas.cli.output import fail, headroom_table, make_console

if TYPE_CHECKING:
    from atlas.alma.evaluate.advice_headroom import HeadroomEpisode

CONDITIONS = ("none", "learnable", "full")


def _played(episodes_out: Path | None, resume: bool) -> list[HeadroomEpisode]:
    """The episodes --resume keeps; without --resume the file starts empty. Checked before any work."""
    from atlas.errors import AtlasError

    if episodes_out is None:
        if resume:
            fail("--resume needs --episodes-out: the file of the measurement to continue")
        return []
    check_output_file(episodes_out, "--episodes-out")
    try:
        played = headroom_log.read_episodes(episodes_out) if resume else []
    except AtlasError as exc:
        fail(f"--resume: {exc}")
    headroom_log.start(episodes_out, played)  # drops a line a kill cut short
    return played


def register(app: typer.Typer) -> None:
    """Add `atlas headroom` to the top-level app."""

    @app.command("headroom")
    @with_env_options
    def headroom_cmd(
        env: str = ENV(),
        tasks: int = typer.Option(
            12, "--tasks", min=1, max=MAX_TASKS, help="Deployment tasks played under each condition."
        ),
        episodes: int = EPISODES(
            help="Tasks per deployment seed in a search (sets which tasks are used, as in `atlas run`)."
        ),
        seed: int = SEED(help="Random seed of the tasks (as in `atlas run`)."),
        family: int | None = FAMILY(),
        no_family: bool = NO_FAMILY(),
        deploy_seeds: int = DEPLOY_SEEDS(default=3, help="Deployment seed offsets the tasks come from."),
        model: str | None = MODEL(),
        concurrency: int = CONCURRENCY(default=1, help="Episodes played at once."),
        max_turns: int | None = MAX_TURNS_OPTION(),
        advice_weight: float = ADVICE_WEIGHT_OPTION(),
        conditions: str = typer.Option(
            "none,learnable,full", "--conditions", help="Comma-separated subset of none, learnable, full."
        ),
        as_json: bool = AS_JSON(),
        episodes_out: Path | None = typer.Option(
            None,
            "--episodes-out",
            help="Also write every episode (advice, actions, outcome) to this JSONL file, a line as each "
            "episode ends.",
        ),
        resume: bool = typer.Option(
            False,
            "--resume",
            help="Keep the episodes already in --episodes-out (a killed measurement of the same command) "
            "and play only the rest.",
        ),
        env_settings: dict[str, Any] | None = None,
    ) -> None:
        """Measure how much any memory could help: the same deployment tasks played with no advice, with
        the advice a perfect memory of earlier episodes could give (learnable) and with the hidden answer
        (full), with paired differences and bootstrap 95% intervals over tasks."""
        import json

        from atlas.alma.evaluate.advice_headroom import headroom
        from atlas.cli.progress import episode_progress
        from atlas.errors import AtlasError

        console = make_console(stderr=as_json)
        wanted = tuple(c.strip() for c in conditions.split(",") if c.strip())
        unknown = [c for c in wanted if c not in CONDITIONS]
        if not wanted or unknown or len(set(wanted)) != len(wanted):
            fail(
                f"--conditions {conditions!r}: give a comma-separated subset of "
                f"{', '.join(CONDITIONS)}, each once"
            )
        played = _played(episodes_out, resume)
        llm = _make_client(model, "task model", console)
        if played:
            console.print(f"resumed: {len(played)} episodes kept from {episodes_out}")
        progress = episode_progress(console, max(0, tasks * len(wanted) - len(played)), stdout_ok=not as_json)

        def ended(episode: HeadroomEpisode) -> None:
            if episodes_out is not None:
                headroom_log.append_episode(episodes_out, episode)
            progress.advance(episode)

        try:
            with progress:
                result = headroom(
                    env=env,
                    tasks=tasks,
                    llm=llm,
                    conditions=wanted,
                    concurrency=concurrency,
                    on_episode=ended,
                    played=played,
                    episodes=episodes,
                    seed=seed,
                    family=family,
                    use_family=not no_family,
                    deploy_seeds=deploy_seeds,
                    model=model,
                    max_turns=max_turns,
                    advice_weight=advice_weight,
                    **(env_settings or {}),
                )
        except AtlasError as exc:
            fail(str(exc))
            raise
        if as_json:
            print(json.dumps(result.to_dict()))
            return
        console.print(headroom_table(result))
