"""The run viewer's web server: static page + a small JSON API over one run folder.

Standard library only (``http.server``), bound to loopback. The page polls ``/api/status``
every few seconds; the API re-reads the run folder only when its fingerprint (sizes and
mtimes, see :func:`atlas.viewer.run_reader.fingerprint`) changes, so a live run is cheap to
watch.

API (all GET, JSON):
  /api/status                     {"ok", "stamp", "error"}: cheap change check
  /api/run                        the run summary (scores, lineage, usage, table rows, and the
                                  genome search's operators: the report's "Operators" numbers)
  /api/design/<id>[?parent=<id>]  one design: source, diff against a parent, critique, per-task;
                                  its genome (JSON and describe() lines), operator and probe score
  /api/design/<id>/logs           its runtime logs, per episode, and its DebugLog text (<id> may also
                                  name an agent check's collection games, <id>-check<n>, or
                                  games on the test tasks, <id>-test and no-memory-test)
An unreadable run answers ``{"error": ...}`` with status 503 (404 for an unknown design), never
a traceback.
"""

from __future__ import annotations

import json
import math
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from atlas.errors import ArchiveError
from atlas.viewer.run_reader import (
    RunSnapshot,
    design_detail,
    fingerprint,
    read_logs,
    read_run,
    valid_design_id,
)

VIEW_PORT = 8766  # not 8765: `atlas mcp --transport streamable-http` listens there by default

LOOPBACK = "127.0.0.1"
STATIC_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
_ALLOWED_HOSTS = {"127.0.0.1", "localhost"}


def _finite(obj: Any) -> Any:
    """``obj`` with NaN and infinite numbers replaced by None (JSON has no such numbers)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


class RunCache:
    """Holds the last snapshot of a run folder and re-reads it only when the folder changed."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self._lock = threading.Lock()
        self._stamp: str | None = None
        self._snapshot: RunSnapshot | None = None
        self._error: str | None = None

    def get(self) -> RunSnapshot:
        """The current snapshot; raises ArchiveError if the folder cannot be read right now."""
        stamp = fingerprint(self.run_dir)
        with self._lock:
            if stamp != self._stamp:
                self._stamp = stamp
                try:
                    self._snapshot, self._error = read_run(self.run_dir), None
                except ArchiveError as exc:
                    self._snapshot, self._error = None, str(exc)
            if self._snapshot is None:
                raise ArchiveError(self._error or f"cannot read {self.run_dir}")
            return self._snapshot


class _Handler(BaseHTTPRequestHandler):
    server: ViewerHTTPServer
    server_version = "atlas-viewer"

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    # ------------------------------------------------------------------ responses
    def _send(self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
        )
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        # ASCII-escaped (a lone surrogate from a damaged run stays sendable) and never NaN: a run
        # folder is data, and one bad number must not drop the connection.
        body = json.dumps(_finite(obj), ensure_ascii=True, allow_nan=False, default=str).encode("ascii")
        self._send(status, body, "application/json; charset=utf-8", extra)

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    # ------------------------------------------------------------------ routing
    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]")
        if host not in _ALLOWED_HOSTS:
            # DNS-rebinding guard: only pages opened on the loopback name may read the run.
            self._error(HTTPStatus.FORBIDDEN, f"host {host!r} not allowed; open http://127.0.0.1:<port>/")
            return
        url = urlsplit(self.path)
        path = unquote(url.path)
        if path in STATIC_FILES:
            name, ctype = STATIC_FILES[path]
            self._send(HTTPStatus.OK, _static(name), ctype)
            return
        if path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
            return
        if not path.startswith("/api/"):
            self._error(HTTPStatus.NOT_FOUND, f"no such page: {path}")
            return
        try:
            self._api(path, parse_qs(url.query))
        except ArchiveError as exc:
            self._error(HTTPStatus.SERVICE_UNAVAILABLE, str(exc))

    def _api(self, path: str, query: dict[str, list[str]]) -> None:
        cache = self.server.cache
        if path == "/api/status":
            try:
                snap = cache.get()
            except ArchiveError as exc:
                self._json(HTTPStatus.OK, {"ok": False, "stamp": None, "error": str(exc)})
                return
            self._json(HTTPStatus.OK, {"ok": True, "stamp": snap.stamp, "state": snap.state, "error": None})
            return
        snap = cache.get()
        if path == "/api/run":
            etag = f'"{snap.stamp}"'
            if self.headers.get("If-None-Match") == etag:
                self.send_response(HTTPStatus.NOT_MODIFIED)
                self.send_header("ETag", etag)
                self.end_headers()
                return
            self._json(HTTPStatus.OK, snap.summary(), {"ETag": etag})
            return
        parts = path.split("/")  # ['', 'api', 'design', '<id>', ('logs')]
        if len(parts) in (4, 5) and parts[2] == "design" and valid_design_id(parts[3]):
            design_id = parts[3]
            if len(parts) == 5 and parts[4] == "logs":
                logs = read_logs(snap, design_id)
                if logs is None:
                    self._error(HTTPStatus.NOT_FOUND, f"no design {design_id} in this run")
                    return
                self._json(HTTPStatus.OK, logs)
                return
            if len(parts) == 4:
                parents = query.get("parent")
                parent = parents[0] if parents else None
                detail = design_detail(snap, design_id, parent)
                if detail is None:
                    self._error(HTTPStatus.NOT_FOUND, f"no design {design_id} in this run")
                    return
                self._json(HTTPStatus.OK, detail)
                return
        self._error(HTTPStatus.NOT_FOUND, f"no such API route: {path}")


def _static(name: str) -> bytes:
    return resources.files("atlas.viewer").joinpath("static", name).read_bytes()


class ViewerHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server for one run folder, always on 127.0.0.1."""

    daemon_threads = True

    def __init__(self, run_dir: str | Path, port: int = VIEW_PORT, *, verbose: bool = False) -> None:
        self.cache = RunCache(run_dir)
        self.verbose = verbose
        super().__init__((LOOPBACK, port), _Handler)

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.server_address[1]}/"


class ViewerThread:
    """Runs a :class:`ViewerHTTPServer` in a background thread (tests, notebooks).

    ``with ViewerThread(run_dir) as url: ...`` serves on a free port and stops on exit."""

    def __init__(self, run_dir: str | Path, port: int = 0) -> None:
        self.server = ViewerHTTPServer(run_dir, port)
        self._thread = threading.Thread(target=self.server.serve_forever, name="atlas-viewer", daemon=True)

    @property
    def url(self) -> str:
        return self.server.url

    def start(self) -> str:
        self._thread.start()
        return self.url

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(run_dir: str | Path, port: int = VIEW_PORT, *, open_browser: bool = True) -> None:
    """Serve the viewer until Ctrl-C. Raises ArchiveError when the port is taken."""
    try:
        server = ViewerHTTPServer(run_dir, port)
    except OSError as exc:
        raise ArchiveError(f"cannot listen on {LOOPBACK}:{port}: {exc.strerror or exc} (try --port)") from exc
    if open_browser:
        import webbrowser

        threading.Timer(0.3, webbrowser.open, args=(server.url,)).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
