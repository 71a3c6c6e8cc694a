"""A durable JSON record store on SQLite.

The ATLAS seed suggests TinyDB; we use SQLite for crash safety (WAL journal, atomic commits) and
safe concurrent use from threads (and processes, through SQLite's own locking).

Records are JSON objects addressed by (table, id). "Tables" are logical: they live in one SQL table
keyed by (tbl, id), so any string is a valid table name and a table exists once something is put in
it. The internal schema changes only through named, append-only migrations recorded in
``_migrations``; never edit or reorder an applied migration, add a new one at the end.

Concurrency: one connection guarded by a re-entrant lock; every public method holds it for its
whole read or write, ``update`` holds it across read-modify-write, and ``transaction()`` holds it
(and an open SQLite transaction) for the whole block. Callers must not do slow I/O — in particular
embedding — inside ``update``'s function or a ``transaction()`` block.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from atlas.errors import InvalidInputError, StoreError

__all__ = ["MIGRATIONS", "RecordStore"]

#: (name, SQL) applied in order, each once per database. Append only.
MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_records",
        "CREATE TABLE records ("
        " tbl TEXT NOT NULL,"
        " id TEXT NOT NULL,"
        " data TEXT NOT NULL,"
        " created_at REAL NOT NULL,"
        " updated_at REAL NOT NULL,"
        " PRIMARY KEY (tbl, id))",
    ),
    ("0002_records_by_table", "CREATE INDEX records_by_table ON records (tbl, created_at)"),
]


def _dump(record: Mapping[str, Any]) -> str:
    if not isinstance(record, Mapping):
        raise InvalidInputError(f"a record must be a dict, got {type(record).__name__}")
    try:
        return json.dumps(dict(record), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"record is not JSON-serializable: {exc}") from exc


def _check_key(table: str, id: str) -> None:
    if not isinstance(table, str) or not table:
        raise InvalidInputError(f"table must be a non-empty string, got {table!r}")
    if not isinstance(id, str) or not id:
        raise InvalidInputError(f"id must be a non-empty string, got {id!r}")


class RecordStore:
    """JSON records in SQLite: ``put/get/delete/all/count``, atomic ``update``, ``transaction()``.

    ``path=None`` keeps the database in memory (lost on ``close``). A file database uses WAL and a
    30 s busy timeout so several processes can share it.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = None if path is None else Path(path)
        self._lock = threading.RLock()
        self._depth = 0  # nesting level of transaction() in the thread holding the lock
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            target = ":memory:" if self.path is None else str(self.path)
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, so transactions are explicit.
            self._conn: sqlite3.Connection | None = sqlite3.connect(
                target, timeout=30.0, check_same_thread=False, isolation_level=None
            )
            self._conn.execute("PRAGMA busy_timeout = 30000")
            if self.path is not None:
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the record store at {self.path or ':memory:'}: {exc}") from exc

    # -- internals ------------------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError("the record store is closed")
        return self._conn

    def _migrate(self) -> None:
        db = self._db()
        db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
        with self._lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
                for name, sql in MIGRATIONS:
                    if name not in done:
                        db.execute(sql)
                        db.execute(
                            "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, time.time())
                        )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """Hold the lock and, unless already inside ``transaction()``, commit or roll back on exit."""
        with self._lock:
            db = self._db()
            if self._depth:
                try:
                    yield db
                except sqlite3.Error as exc:
                    raise StoreError(f"record store write failed: {exc}") from exc
                return
            try:
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"record store write failed to start: {exc}") from exc
            try:
                yield db
            except sqlite3.Error as exc:
                db.execute("ROLLBACK")
                raise StoreError(f"record store write failed: {exc}") from exc
            except BaseException:
                db.execute("ROLLBACK")
                raise
            else:
                try:
                    db.execute("COMMIT")
                except sqlite3.Error as exc:
                    db.execute("ROLLBACK")
                    raise StoreError(f"record store commit failed: {exc}") from exc

    def _read(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._db().execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"record store read failed: {exc}") from exc

    @staticmethod
    def _put(db: sqlite3.Connection, table: str, id: str, data: str) -> None:
        now = time.time()
        db.execute(
            "INSERT INTO records (tbl, id, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (tbl, id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at",
            (table, id, data, now, now),
        )

    # -- public API -----------------------------------------------------------------------------

    def put(self, table: str, id: str, record: Mapping[str, Any]) -> None:
        """Insert or replace one record."""
        _check_key(table, id)
        data = _dump(record)
        with self._write() as db:
            self._put(db, table, id, data)

    def get(self, table: str, id: str) -> dict[str, Any] | None:
        """The record, or None when there is none."""
        _check_key(table, id)
        rows = self._read("SELECT data FROM records WHERE tbl = ? AND id = ?", (table, id))
        return json.loads(rows[0][0]) if rows else None

    def delete(self, table: str, id: str) -> bool:
        """Remove one record; True when it existed."""
        _check_key(table, id)
        with self._write() as db:
            return db.execute("DELETE FROM records WHERE tbl = ? AND id = ?", (table, id)).rowcount > 0

    def all(self, table: str) -> list[dict[str, Any]]:
        """Every record of ``table`` in first-insertion order."""
        return [
            json.loads(d)
            for (d,) in self._read("SELECT data FROM records WHERE tbl = ? ORDER BY rowid", (table,))
        ]

    def items(self, table: str) -> list[tuple[str, dict[str, Any]]]:
        """``(id, record)`` pairs of ``table`` in first-insertion order."""
        return [
            (i, json.loads(d))
            for i, d in self._read("SELECT id, data FROM records WHERE tbl = ? ORDER BY rowid", (table,))
        ]

    def ids(self, table: str) -> list[str]:
        """Ids of ``table`` in first-insertion order."""
        return [i for (i,) in self._read("SELECT id FROM records WHERE tbl = ? ORDER BY rowid", (table,))]

    def count(self, table: str) -> int:
        return int(self._read("SELECT COUNT(*) FROM records WHERE tbl = ?", (table,))[0][0])

    def tables(self) -> list[str]:
        """Names of the tables that hold at least one record, sorted."""
        return [t for (t,) in self._read("SELECT DISTINCT tbl FROM records ORDER BY tbl", ())]

    def update(
        self, table: str, id: str, fn: Callable[[dict[str, Any]], Mapping[str, Any] | None]
    ) -> dict[str, Any]:
        """Atomic read-modify-write: ``fn`` gets the current record (``{}`` if missing) and returns the
        new one, or mutates its argument and returns None. Returns the stored record. If ``fn``
        raises, nothing changes and the exception propagates."""
        _check_key(table, id)
        with self._write() as db:
            row = db.execute("SELECT data FROM records WHERE tbl = ? AND id = ?", (table, id)).fetchone()
            current: dict[str, Any] = json.loads(row[0]) if row else {}
            result = fn(current)
            new = current if result is None else dict(result)
            self._put(db, table, id, _dump(new))
            return json.loads(_dump(new))

    @contextmanager
    def transaction(self) -> Iterator[RecordStore]:
        """All writes inside the block commit together, or none do if it raises. Other threads wait
        until the block ends. Nested blocks use savepoints (an inner failure undoes only the inner block
        if the outer block catches it)."""
        with self._lock:
            db = self._db()
            outer = self._depth == 0
            name = f"sp{self._depth}"
            try:
                db.execute("BEGIN IMMEDIATE" if outer else f"SAVEPOINT {name}")
            except sqlite3.Error as exc:
                raise StoreError(f"record store transaction failed to start: {exc}") from exc
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                db.execute("ROLLBACK" if outer else f"ROLLBACK TO {name}")
                if not outer:
                    db.execute(f"RELEASE {name}")
                raise
            self._depth -= 1
            try:
                db.execute("COMMIT" if outer else f"RELEASE {name}")
            except sqlite3.Error as exc:
                if outer:
                    db.execute("ROLLBACK")
                raise StoreError(f"record store commit failed: {exc}") from exc

    def migrations(self) -> list[str]:
        """Names of the applied migrations, in order."""
        return [n for (n,) in self._read("SELECT name FROM _migrations ORDER BY rowid", ())]

    def close(self) -> None:
        """Close the connection (idempotent); later calls raise StoreError."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> RecordStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
