"""The coding-agent hooks' side of the MCP server (the Lite tier): plain JSON over HTTP next to
``/mcp`` on the streamable-HTTP transport, so a hook script needs nothing but the standard library.

- ``GET  /hooks/health``   → ``{"ok": true, "pending": N, "jobs_done": N, "last_jobs": [...]}``: what
  the latest ingest jobs saved, skipped as already learned, or failed (with the reason)
- ``POST /hooks/context``  ``{"prompt", "namespace", "k"?}`` → ``{"context": TEXT, "count": N}``: the
  guidelines relevant to a prompt (cosine retrieval, no LLM call; ``""`` when none is relevant).
- ``POST /hooks/ingest``   ``{"transcript_path", "namespace", "format"?}`` → ``{"queued": N, ...}``: the
  transcript is read now (a bad one is answered 400 with the reason) and its turns are recorded in
  the namespace's bank as queued; their tips are extracted in the background, one job at a time, so
  the hook returns at once (a server stopped before that leaves them to ``atlas guidelines
  reprocess``).

Jobs a hook could not deliver (the server was down) wait as JSON files in the pending folder
(``ATLAS_LITE_HOME``/pending, default ``~/.atlas/lite/pending``); the server takes them with its first hook request.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections import deque
from pathlib import Path
from typing import Any, Protocol

from atlas.errors import AtlasError, InvalidInputError
from atlas.memory.guidelines.bank import GuidelineBank
from atlas.memory.guidelines.config import check_namespace
from atlas.memory.guidelines.render import format_guidelines


class MemoryHub(Protocol):
    """What the hooks need of ``atlas.mcp_server.MemoryHub``: one guideline bank per namespace."""

    def bank(self, namespace: str, *, need_llm: bool = False) -> GuidelineBank: ...


log = logging.getLogger(__name__)

HOOK_PREFIX = "/hooks/"
MAX_BODY_BYTES = 1_000_000
MAX_PROMPT_CHARS = 4_000  # the part of a prompt used to find guidelines
MAX_ATTEMPTS = 3  # a turn whose extraction failed this often waits for `atlas guidelines reprocess`
LOOPBACK = ("127.0.0.1", "::1")
CONTEXT_HEADER = "Guidelines learned from earlier sessions in this project (apply those that fit):"


def lite_home() -> Path:
    """Where the Lite tier keeps its memory, logs and pending jobs (``$ATLAS_LITE_HOME``)."""
    return Path(os.environ.get("ATLAS_LITE_HOME") or Path.home() / ".atlas" / "lite")


def pending_dir() -> Path:
    return lite_home() / "pending"


class IngestQueue:
    """Saves transcripts' trajectories into their namespace's bank, one job at a time, in the
    server's event loop; a failed save is logged with its reason, never raised into a request."""

    def __init__(self, hub: MemoryHub) -> None:
        self.hub = hub
        self.queue: asyncio.Queue[tuple[str, list[Any]]] = asyncio.Queue()
        self.done: deque[dict[str, Any]] = deque(maxlen=100)  # the latest jobs' summaries
        self.finished = 0  # jobs done since the server started
        self._worker: asyncio.Task[None] | None = None

    def put(self, namespace: str, trajectories: list[Any]) -> None:
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._run())
        self.queue.put_nowait((namespace, trajectories))

    @property
    def pending(self) -> int:
        return self.queue.qsize()

    async def _run(self) -> None:
        while True:
            namespace, trajectories = await self.queue.get()
            summary: dict[str, Any] = {"namespace": namespace, "saved": 0, "duplicate": 0, "failed": []}
            try:
                bank = await asyncio.to_thread(self.hub.bank, namespace, need_llm=True)
                for traj in trajectories:
                    known = bank.store.trajectory(traj.id)
                    if (
                        known
                        and known.get("status") != "processed"
                        and int(known.get("attempts", 0)) >= MAX_ATTEMPTS
                    ):
                        summary["failed"].append(
                            {"id": traj.id, "reason": "gave up: run `atlas guidelines reprocess`"}
                        )
                        continue
                    result = await bank.asave(traj)
                    if result.status == "duplicate":
                        summary["duplicate"] += 1
                    elif result.status == "processed":
                        summary["saved"] += 1
                    else:
                        summary["failed"].append({"id": traj.id, "reason": result.reason})
            except AtlasError as exc:  # a store or model that cannot be opened: say so in the log
                log.warning("ingest into %s failed: %s", namespace, exc)
                summary["failed"].append({"id": None, "reason": str(exc)})
            finally:
                self.queue.task_done()
            self.done.append(summary)
            self.finished += 1

    async def join(self) -> None:
        """Wait until every queued job is saved (tests, and a server shutting down)."""
        await self.queue.join()


def read_job(body: dict[str, Any]) -> tuple[str, str, str]:
    """``(path, namespace, format)`` of an ingest request; InvalidInputError names a bad field."""
    path = body.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise InvalidInputError("transcript_path: missing (the hook input names the transcript file)")
    namespace = check_namespace(body.get("namespace", "default"))
    fmt = body.get("format", "auto")
    if not isinstance(fmt, str):
        raise InvalidInputError("format: must be a string")
    return path, namespace, fmt


async def ingest(queue: IngestQueue, body: dict[str, Any]) -> dict[str, Any]:
    """Read the transcript now (errors raise), queue its turns for saving; what was queued."""
    from atlas.memory.guidelines.transcripts import read_transcript

    path, namespace, fmt = read_job(body)
    transcript = await asyncio.to_thread(read_transcript, path, fmt)
    bank = await asyncio.to_thread(queue.hub.bank, namespace)
    for traj in transcript.trajectories:  # on disk now: a server stopped before extraction loses nothing
        bank.enqueue(traj)
    queue.put(namespace, transcript.trajectories)
    return {
        "queued": len(transcript.trajectories),
        "format": transcript.format,
        "session_id": transcript.session_id,
        "skipped_lines": transcript.skipped_lines,
        "skipped_turns": transcript.skipped_turns,
        "truncated": transcript.truncated,
    }


async def context(hub: MemoryHub, body: dict[str, Any]) -> dict[str, Any]:
    """The guidelines relevant to a prompt as one context block ("" when none is relevant)."""
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        raise InvalidInputError("prompt: missing (the UserPromptSubmit input carries it)")
    namespace = check_namespace(body.get("namespace", "default"))
    k = body.get("k", 3)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 20:
        raise InvalidInputError(f"k: must be an integer from 1 to 20, got {k!r}")
    if not prompt.strip():
        return {"context": "", "count": 0}
    bank = hub.bank(namespace)
    if not bank.store.count():
        return {"context": "", "count": 0}
    found = await bank.aget_guidelines(prompt[:MAX_PROMPT_CHARS], k=k, mode="cosine")
    if not found:
        return {"context": "", "count": 0}
    return {"context": format_guidelines(found, header=CONTEXT_HEADER), "count": len(found)}


async def drain_pending(queue: IngestQueue, folder: Path | None = None) -> int:
    """Queue the jobs hooks left while the server was down; each file is removed once read
    (a transcript that can no longer be read is logged and dropped). Returns the jobs taken."""
    folder = folder or pending_dir()
    if not folder.is_dir():
        return 0
    taken = 0
    for job in sorted(folder.glob("*.json")):
        try:
            body = json.loads(job.read_text(encoding="utf-8"))
            await ingest(queue, body if isinstance(body, dict) else {})
            taken += 1
        except (OSError, json.JSONDecodeError, AtlasError) as exc:
            log.warning("pending job %s dropped: %s", job.name, exc)
        job.unlink(missing_ok=True)
    return taken


def _refusal(request: Any) -> str | None:
    """Hooks run on this machine: a request from elsewhere, or one a web page could send without a
    CORS preflight (not ``application/json``), is refused, since ``/hooks/ingest`` reads a file."""
    host = request.client.host if request.client else ""
    if host not in LOOPBACK:
        return f"hook requests are accepted from this machine only, not from {host or 'an unknown client'}"
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return "hook requests must be sent with Content-Type: application/json"
    return None


def add_hook_routes(server: Any, hub: MemoryHub) -> IngestQueue:
    """Register the ``/hooks/*`` routes on a FastMCP server; returns the ingest queue they feed."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    queue = IngestQueue(hub)
    started = False

    async def body_of(request: Request) -> dict[str, Any]:
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY_BYTES:
                raise InvalidInputError(f"request body over {MAX_BODY_BYTES} bytes")
        try:
            data = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise InvalidInputError(f"request body is not JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise InvalidInputError("request body must be a JSON object")
        return data

    async def answer(request: Request, handler: Any) -> JSONResponse:
        nonlocal started
        refused = _refusal(request)
        if refused:
            return JSONResponse({"error": refused}, status_code=403)
        if not started:  # the event loop runs now: take what waited while the server was down
            started = True
            await drain_pending(queue)
        try:
            return JSONResponse(await handler(await body_of(request)))
        except InvalidInputError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except AtlasError as exc:
            return JSONResponse({"error": str(exc)}, status_code=500)

    @server.custom_route("/hooks/health", methods=["GET"])
    async def health(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "ok": True,
                "pending": queue.pending,
                "jobs_done": queue.finished,
                "last_jobs": list(queue.done)[-5:],
            }
        )

    @server.custom_route("/hooks/context", methods=["POST"])
    async def context_route(request: Request) -> JSONResponse:
        return await answer(request, lambda body: context(hub, body))

    @server.custom_route("/hooks/ingest", methods=["POST"])
    async def ingest_route(request: Request) -> JSONResponse:
        return await answer(request, lambda body: ingest(queue, body))

    return queue


__all__ = [
    "CONTEXT_HEADER",
    "HOOK_PREFIX",
    "IngestQueue",
    "add_hook_routes",
    "context",
    "drain_pending",
    "ingest",
    "lite_home",
    "pending_dir",
]
