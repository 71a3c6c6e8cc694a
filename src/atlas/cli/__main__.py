"""``python -m atlas.cli``: the ``atlas`` command without the console script (MCP clients, tests)."""

from atlas.cli import main

main()
