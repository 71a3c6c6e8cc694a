"""The coding-agent hooks' side of the MCP server (the Lite tier): plain JSON over HTTP next to
``/mcp`` on the streamable-HTTP transport, so a hook script needs nothing but the standard library.

- ``GET  /hooks/health``   → ``{"ok": true, "pending": N, "jobs_done": N, "last_jobs": [...]}``: what
  the latest ingest jobs saved, skipped as already learned, or failed (with the reason)
- ``POST /hooks/context``  ``{"prompt", "namespace", "k"?, "tips_dir"?}`` → ``{"context": TEXT, "count": N}``:
  the tips relevant to a prompt (cosine retrieval, no LLM call; ``""`` when none is relevant). With
  ``tips_dir`` (the project's tip files, ``atlas.memory.guidelines.tipfiles``) the index is derived
  from those files and brought up to date first, so an edited or deleted file counts at once; a
  folder seen for the first time is indexed in the background and answered ``{"indexing": true}``
  (the hook then reads the files itself). Without ``tips_dir``, the namespace's bank answers.
- ``POST /hooks/ingest``   ``{"transcript_path", "namespace", "format"?, "tips_dir"?, "cwd"?}`` →
  ``{"queued": N, ...}``: the transcript is read now (a bad one is answered 400 with the reason),
  the job is written to the journal (``ATLAS_LITE_HOME``/jobs) and its turns are learned in the
  background, one job at a time (``atlas.memory.guidelines.lite_learn``), so the hook returns at once.

A server killed before a job is done finds it in the journal when it starts again and learns it
then; learning is idempotent, so each turn's tips are added once. Jobs a hook could not deliver
(the server was down or hung) wait as JSON files in the pending folder (``ATLAS_LITE_HOME``/pending,
default ``~/.atlas/lite/pending``). Both are taken up in the background with the first hook request.
The embedder and Chroma are loaded when the routes are added, before the server answers anything.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from atlas.errors import AtlasError, InvalidInputError
from atlas.memory.guidelines.bank import GuidelineBank
from atlas.memory.guidelines.config import check_namespace
from atlas.memory.guidelines.lite_learn import Learner, choose_learner, learn_turn
from atlas.memory.guidelines.render import format_guidelines
from atlas.memory.guidelines.tip_index import TipIndexes
from atlas.memory.guidelines.tipfiles import atomic_write, tip_paths


class MemoryHub(Protocol):
    """What the hooks need of ``atlas.mcp_server.MemoryHub``: one guideline bank per namespace, the
    embedder and the memory folder."""

    path: Path | None
    embedder: Any

    def bank(self, namespace: str, *, need_llm: bool = False) -> GuidelineBank: ...


log = logging.getLogger(__name__)

HOOK_PREFIX = "/hooks/"
MAX_BODY_BYTES = 1_000_000
MAX_PROMPT_CHARS = 4_000  # the part of a prompt used to find guidelines
MAX_ATTEMPTS = 3  # a turn whose extraction failed this often waits for `atlas guidelines reprocess`
LOOPBACK = ("127.0.0.1", "::1")
INGEST_ANSWER_S = 0.3  # an ingest not read by then is answered "accepted" and goes on in the background
CONTEXT_HEADER = "Guidelines learned from earlier sessions in this project (apply those that fit):"


def lite_home() -> Path:
    """Where the Lite tier keeps its memory, logs and pending jobs (``$ATLAS_LITE_HOME``)."""
    return Path(os.environ.get("ATLAS_LITE_HOME") or Path.home() / ".atlas" / "lite")


def pending_dir() -> Path:
    return lite_home() / "pending"


def journal_dir() -> Path:
    return lite_home() / "jobs"


@dataclass
class Job:
    """One transcript to learn: where it is, the namespace, the project's tips folder and folder."""

    transcript_path: str
    namespace: str
    format: str = "auto"
    tips_dir: str | None = None
    cwd: str | None = None
    journal: str | None = None  # the journal file that keeps the job until it is learned

    def body(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "journal" and v is not None}


def default_learner(hub: MemoryHub) -> Learner:
    """``choose_learner`` for a hub: a model given to it (``--model``, or an LLM passed in) counts
    as the user's choice."""
    given = getattr(hub, "model", None) or (
        "the hub's LLM" if getattr(hub, "_llm", None) is not None else None
    )
    return choose_learner(given, home=lite_home())


class IngestQueue:
    """Learns transcripts' turns into their namespace's bank and tips folder, one job at a time, in
    the server's event loop; a failed turn is logged with its reason, never raised into a request."""

    def __init__(
        self, hub: MemoryHub, learner: Learner | None = None, after: Callable[[Path], object] | None = None
    ) -> None:
        self.hub = hub
        self.learner = learner or default_learner(hub)
        self.after = after  # called (in a worker thread) with a job's tips folder once it is learned
        self.queue: asyncio.Queue[tuple[Job, list[Any]]] = asyncio.Queue()
        self.done: deque[dict[str, Any]] = deque(maxlen=100)  # the latest jobs' summaries
        self.finished = 0  # jobs done since the server started
        self._worker: asyncio.Task[None] | None = None
        self._busy = False  # a job is being learned

    def put(self, job: Job, trajectories: list[Any]) -> None:
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._run())
        self.queue.put_nowait((job, trajectories))

    @property
    def pending(self) -> int:
        return self.queue.qsize() + (1 if self._busy else 0)

    async def _run(self) -> None:
        while True:
            job, trajectories = await self.queue.get()
            self._busy = True
            summary: dict[str, Any] = {
                "namespace": job.namespace,
                "saved": 0,
                "duplicate": 0,
                "failed": [],
                "learner": self.learner.kind,
                "tips": [],
            }
            try:
                bank = await asyncio.to_thread(
                    self.hub.bank, job.namespace, need_llm=self.learner.kind == "model"
                )
                tips_dir = Path(job.tips_dir) if job.tips_dir else None
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
                    result = await learn_turn(self.learner, bank, traj, tips_dir, job.cwd)
                    summary["tips"] += result.tip_ids
                    if result.status == "duplicate":
                        summary["duplicate"] += 1
                    elif result.status == "learned":
                        summary["saved"] += 1
                        if result.reason:
                            summary["failed"].append({"id": traj.id, "reason": result.reason})
                    else:
                        summary["failed"].append({"id": traj.id, "reason": result.reason})
                if tips_dir is not None and self.after is not None:
                    await asyncio.to_thread(self.after, tips_dir)  # e.g. index the new tips now
                if job.journal:  # learned: the job leaves the journal
                    Path(job.journal).unlink(missing_ok=True)
            except (AtlasError, OSError) as exc:  # a store or model that cannot be opened: say so
                log.warning("ingest into %s failed: %s", job.namespace, exc)
                summary["failed"].append({"id": None, "reason": str(exc)})
            except (
                Exception
            ) as exc:  # a bug: logged with its trace; the worker goes on, the job stays journaled
                log.exception("ingest into %s raised %s", job.namespace, type(exc).__name__)
                summary["failed"].append({"id": None, "reason": f"{type(exc).__name__}: {exc}"})
            finally:
                self._busy = False
                self.queue.task_done()
            self.done.append(summary)
            self.finished += 1

    async def join(self) -> None:
        """Wait until every queued job is learned (tests, and a server shutting down)."""
        await self.queue.join()


def _abs_dir(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not os.path.isabs(value) or "\0" in value:
        raise InvalidInputError(f"{name}: must be an absolute path")
    return os.path.normpath(value)


def read_job(body: dict[str, Any]) -> Job:
    """The job of an ingest request; InvalidInputError names a bad field."""
    path = body.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise InvalidInputError("transcript_path: missing (the hook input names the transcript file)")
    namespace = check_namespace(body.get("namespace", "default"))
    fmt = body.get("format", "auto")
    if not isinstance(fmt, str):
        raise InvalidInputError("format: must be a string")
    return Job(path, namespace, fmt, _abs_dir(body, "tips_dir"), _abs_dir(body, "cwd"))


def _journal(job: Job) -> str | None:
    """Keep the job on disk until it is learned; None (and a log line) when that cannot be done."""
    key = hashlib.sha1(f"{job.transcript_path}\0{job.namespace}".encode()).hexdigest()[:16]
    path = journal_dir() / f"{key}-{time.time_ns()}.json"
    try:
        atomic_write(path, json.dumps(job.body()))
    except OSError as exc:
        log.warning("cannot keep the job in %s (%s): a crash before it is learned loses it", path, exc)
        return None
    return str(path)


async def ingest(queue: IngestQueue, body: dict[str, Any], journal: str | None = None) -> dict[str, Any]:
    """Read the transcript now (errors raise), keep the job in the journal, queue its turns."""
    from atlas.memory.guidelines.transcripts import read_transcript

    job = read_job(body)
    transcript = await asyncio.to_thread(read_transcript, job.transcript_path, job.format)
    bank = await asyncio.to_thread(queue.hub.bank, job.namespace)
    job.journal = journal or await asyncio.to_thread(_journal, job)
    for traj in transcript.trajectories:  # on disk now: a server stopped before learning loses nothing
        bank.enqueue(traj)
    queue.put(job, transcript.trajectories)
    return {
        "queued": len(transcript.trajectories),
        "format": transcript.format,
        "session_id": transcript.session_id,
        "skipped_lines": transcript.skipped_lines,
        "skipped_turns": transcript.skipped_turns,
        "truncated": transcript.truncated,
        "learner": queue.learner.kind,
    }


def _check_context(body: dict[str, Any]) -> tuple[str, str, int]:
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        raise InvalidInputError("prompt: missing (the UserPromptSubmit input carries it)")
    namespace = check_namespace(body.get("namespace", "default"))
    k = body.get("k", 3)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 20:
        raise InvalidInputError(f"k: must be an integer from 1 to 20, got {k!r}")
    return prompt, namespace, k


async def context(hub: MemoryHub, body: dict[str, Any], indexes: TipIndexes | None = None) -> dict[str, Any]:
    """The tips relevant to a prompt as one context block ("" when none is relevant). With the
    server's ``indexes``, a folder not indexed yet is indexed in the background (answer
    ``indexing``); without, it is indexed now."""
    prompt, namespace, k = _check_context(body)
    tips_dir = _abs_dir(body, "tips_dir")
    background = indexes is not None
    if not prompt.strip():
        return {"context": "", "count": 0}
    if tips_dir is not None:
        if not tip_paths(Path(tips_dir)):
            return {"context": "", "count": 0}
        indexes = indexes or TipIndexes(hub.path, hub.embedder)
        index = indexes.get(tips_dir)
        if (
            not index.built and background
        ):  # a new folder: indexed in the background, the hook reads the files
            indexes.build(index)
            return {"context": "", "count": 0, "indexing": True}
        hits = await index.asearch(prompt[:MAX_PROMPT_CHARS], k)
        if not hits:
            return {"context": "", "count": 0}
        indexes.uses.add([tip for tip, _ in hits])
        found = [tip.to_guideline() for tip, _ in hits]
        return {
            "context": format_guidelines(found, header=CONTEXT_HEADER),
            "count": len(found),
            "ids": [g.id for g in found],
        }
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


async def resume_journal(queue: IngestQueue, folder: Path | None = None) -> int:
    """Queue again the jobs a stopped server had not finished (their journal files stay until
    learned). Returns the jobs taken."""
    folder = folder or journal_dir()
    if not folder.is_dir():
        return 0
    taken = 0
    for path in sorted(folder.glob("*.json")):
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
            await ingest(queue, body if isinstance(body, dict) else {}, journal=str(path))
            taken += 1
        except (OSError, json.JSONDecodeError, AtlasError) as exc:
            log.warning("unfinished job %s dropped: %s", path.name, exc)
            path.unlink(missing_ok=True)
    return taken


def warm_up(hub: MemoryHub) -> None:
    """Load the embedder and Chroma before the server answers, so that no hook's time is spent on
    it (in a worker thread, the imports would hold up the event loop instead)."""
    try:
        hub.embedder.embed(["warm up"])
        import chromadb  # noqa: F401
    except Exception as exc:  # a warm-up that fails costs only speed; the log says why
        log.warning("warm-up failed: %s", exc)


async def start_up(queue: IngestQueue) -> None:
    """What the first hook request starts in the background: the jobs left by a stopped server,
    then those of hooks that could not reach one."""
    await resume_journal(queue)
    await drain_pending(queue)


def _log_late_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("ingest refused after its reply: %s", task.exception())


def _refusal(request: Any) -> str | None:
    """Hooks run on this machine: a request from elsewhere, or one a web page could send without a
    CORS preflight (not ``application/json``), is refused, since ``/hooks/ingest`` reads a file."""
    host = request.client.host if request.client else ""
    if host not in LOOPBACK:
        return f"hook requests are accepted from this machine only, not from {host or 'an unknown client'}"
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return "hook requests must be sent with Content-Type: application/json"
    return None


def add_hook_routes(server: Any, hub: MemoryHub, learner: Learner | None = None) -> IngestQueue:
    """Register the ``/hooks/*`` routes on a FastMCP server; returns the ingest queue they feed.
    ``learner`` defaults to ``choose_learner`` with the hub's explicit model (``hub.model``)."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    indexes = TipIndexes(getattr(hub, "path", None), hub.embedder)
    queue = IngestQueue(hub, learner, after=lambda folder: indexes.get(str(folder)).sync())
    learner = queue.learner
    warm_up(hub)
    log.warning("atlas hooks: %s", learner.note)
    startup: list[asyncio.Task[None]] = []

    def start() -> None:
        if not startup:  # the event loop runs now: warm up and take what waited, in the background
            startup.append(asyncio.get_running_loop().create_task(start_up(queue)))

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
        refused = _refusal(request)
        if refused:
            return JSONResponse({"error": refused}, status_code=403)
        start()
        try:
            return JSONResponse(await handler(await body_of(request)))
        except InvalidInputError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except AtlasError as exc:
            return JSONResponse({"error": str(exc)}, status_code=500)

    @server.custom_route("/hooks/health", methods=["GET"])
    async def health(request: Request) -> JSONResponse:
        if request.client and request.client.host in LOOPBACK:
            start()
        return JSONResponse(
            {
                "ok": True,
                "pending": queue.pending,
                "jobs_done": queue.finished,
                "last_jobs": list(queue.done)[-5:],
                "learner": learner.kind,
                "learner_note": learner.note,
                "started": bool(startup) and startup[0].done(),
            }
        )

    @server.custom_route("/hooks/context", methods=["POST"])
    async def context_route(request: Request) -> JSONResponse:
        return await answer(request, lambda body: context(hub, body, indexes))

    async def ingest_in_time(body: dict[str, Any]) -> dict[str, Any]:
        """The ingest's reply if it is read within INGEST_ANSWER_S, else "accepted": a hook's
        time is not spent waiting on a store that is still opening or a long transcript."""
        task = asyncio.get_running_loop().create_task(ingest(queue, body))
        done, _ = await asyncio.wait({task}, timeout=INGEST_ANSWER_S)
        if done:
            return task.result()
        task.add_done_callback(_log_late_failure)
        return {"accepted": True, "queued": None, "learner": learner.kind}

    @server.custom_route("/hooks/ingest", methods=["POST"])
    async def ingest_route(request: Request) -> JSONResponse:
        return await answer(request, ingest_in_time)

    return queue


__all__ = [
    "CONTEXT_HEADER",
    "HOOK_PREFIX",
    "IngestQueue",
    "Job",
    "add_hook_routes",
    "context",
    "drain_pending",
    "ingest",
    "journal_dir",
    "lite_home",
    "pending_dir",
    "resume_journal",
]
