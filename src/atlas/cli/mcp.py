"""`atlas mcp`: the MCP server over the memory library."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Add the mcp command to the top-level app."""

    @app.command("mcp")
    def mcp_command(
        transport: str = typer.Option(
            "stdio",
            "--transport",
            help="'stdio' (for an MCP client that spawns us) or 'streamable-http' (MCP at /mcp, and the "
            "Claude Code / Codex hooks of integrations/claude-code at /hooks/*: the Lite tier).",
        ),
        host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind for streamable-http."),
        port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port for streamable-http."),
        path: Path | None = typer.Option(
            None,
            "--path",
            envvar="ATLAS_MEMORY_PATH",
            help="Memory directory (SQLite + Chroma). Default: in memory, lost when the server exits. With "
            "--design --learn: where each namespace's learned memory is kept (<namespace>.json).",
        ),
        model: str | None = typer.Option(
            None,
            "--model",
            help="LLM used to extract tips (provider string, alias, local:PATH.gguf, or a plug-in "
            "provider's PREFIX:...). Default: the standard model resolution, loaded on first use. With --design: the "
            "LLM behind the design's summarize/analyze tools (default: none, those tools are refused).",
        ),
        design: Path | None = typer.Option(
            None,
            "--design",
            help="Serve an exported design (`atlas archive export ... --out DIR`): tools "
            "recall, update and memory_info instead of the memory library.",
        ),
        learn: bool = typer.Option(
            False,
            "--learn",
            help="With --design: allow update; each namespace learns on its own copy.",
        ),
    ) -> None:
        """Serve get_guidelines, save_trajectory, search_experiences, store_experience, list_guidelines
        and delete_guideline over MCP; every tool takes a namespace."""
        from atlas.errors import AtlasError
        from atlas.mcp_server import serve

        try:
            if design is not None:
                from atlas.mcp_design import serve_design

                serve_design(
                    design, transport=transport, host=host, port=port, learn=learn, model=model, state=path
                )
                return
            serve(transport=transport, host=host, port=port, path=path, model=model)
        except AtlasError as exc:
            from atlas.cli.exits import exit_code

            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exit_code(exc)) from exc
