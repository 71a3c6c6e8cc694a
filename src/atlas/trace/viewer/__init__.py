"""The run viewer: ``atlas view RUN_DIR`` serves a local page (loopback only) over a run folder.

``server`` holds the HTTP server and JSON API; ``static/`` the page (vanilla JS, hand-written
SVG charts, no network)."""

from atlas.trace.viewer.server import ViewerHTTPServer, ViewerThread, serve

__all__ = ["ViewerHTTPServer", "ViewerThread", "serve"]
