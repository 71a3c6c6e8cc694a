"""`atlas view` and `atlas report`: look at a run folder in the browser, or write its charts and a
Markdown summary to files."""

from __future__ import annotations

from pathlib import Path

import typer

VIEW_PORT = 8766  # atlas.viewer.server.VIEW_PORT (not imported here: `atlas --help` stays fast)


def register(app: typer.Typer) -> None:
    """Add view and report to the top-level app."""

    @app.command("view")
    def view(
        run_dir: Path = typer.Argument(
            ..., help="Run folder to show (runs/<name>/), finished or still running."
        ),
        port: int = typer.Option(
            VIEW_PORT,
            "--port",
            min=0,
            max=65535,
            help="Port on 127.0.0.1 to serve the page on (0 = any free port).",
        ),
        no_open: bool = typer.Option(
            False, "--no-open", help="Do not open a browser; just print the address."
        ),
    ) -> None:
        """Serve a local web page (127.0.0.1 only) showing a run: scores per generation, lineage,
        each design's source, diff, critique and runtime logs, usage. It refreshes while the run goes."""
        from atlas.errors import ArchiveError
        from atlas.viewer.run_reader import check_run_dir, read_run
        from atlas.viewer.server import ViewerHTTPServer

        try:
            root = check_run_dir(run_dir)
        except ArchiveError as exc:
            typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
            raise typer.Exit(2) from None
        try:
            snap = read_run(root)
            for w in snap.warnings:
                typer.secho(f"note: {w}", fg=typer.colors.YELLOW, err=True)
        except ArchiveError as exc:
            # Still serve: the page shows the same message and recovers if the run rewrites the file.
            typer.secho(f"warning: {exc}", fg=typer.colors.YELLOW, err=True)
        try:
            server = ViewerHTTPServer(root, port)
        except OSError as exc:
            typer.secho(
                f"error: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc} (pick another --port)",
                fg=typer.colors.RED,
                err=True,
            )
            raise typer.Exit(2) from None
        typer.echo(f"Viewing {root} at {server.url}  (Ctrl-C to stop)")
        if not no_open:
            import threading
            import webbrowser

            threading.Timer(0.3, webbrowser.open, args=(server.url,)).start()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            typer.echo("stopped")
        finally:
            server.server_close()

    @app.command("report")
    def report(
        run_dir: Path = typer.Argument(..., help="Run folder to summarize (runs/<name>/)."),
        out: Path | None = typer.Option(
            None, "--out", help="Folder to write the report into (default: RUN_DIR/report/)."
        ),
    ) -> None:
        """Write a run's charts (scores per generation and lineage, PNG + SVG) and report.md
        (best design, designs vs baselines, scores per generation, where the time went, usage)."""
        from atlas.errors import ArchiveError
        from atlas.viewer.report import write_report

        try:
            paths = write_report(run_dir, out)
        except ArchiveError as exc:
            typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
            raise typer.Exit(2) from None
        typer.echo(f"Report written to {paths.out_dir}")
        for p in paths.files():
            typer.echo(f"  {p}")
