"""atlas.infra.records: real SQLite files, real threads."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from atlas.errors import InvalidInputError, StoreError
from atlas.infra.records import MIGRATIONS, RecordStore


@pytest.fixture(params=["memory", "file"])
def rs(request, tmp_path: Path):
    store = RecordStore(None if request.param == "memory" else tmp_path / "r.sqlite")
    yield store
    store.close()


def test_put_get_delete_all_count(rs: RecordStore) -> None:
    assert rs.get("g", "x") is None and rs.all("g") == [] and rs.count("g") == 0
    rs.put("g", "b", {"v": 2, "nested": {"l": [1, None, "ü"]}})
    rs.put("g", "a", {"v": 1})
    rs.put("other", "a", {"v": "other"})
    assert rs.get("g", "b") == {"v": 2, "nested": {"l": [1, None, "ü"]}}
    rs.put("g", "b", {"v": 3})  # replace keeps first-insertion order
    assert rs.all("g") == [{"v": 3}, {"v": 1}]
    assert rs.ids("g") == ["b", "a"] and rs.items("g")[1] == ("a", {"v": 1})
    assert rs.count("g") == 2 and rs.tables() == ["g", "other"]
    assert rs.delete("g", "a") is True and rs.delete("g", "a") is False
    assert rs.count("g") == 1 and rs.get("other", "a") == {"v": "other"}


def test_any_string_is_a_table_name(rs: RecordStore) -> None:
    rs.put("weird name; DROP TABLE records;--", "1", {"ok": True})
    assert rs.get("weird name; DROP TABLE records;--", "1") == {"ok": True}


def test_invalid_input_is_refused(rs: RecordStore) -> None:
    with pytest.raises(InvalidInputError):
        rs.put("t", "1", {"x": object()})
    with pytest.raises(InvalidInputError):
        rs.put("t", "1", ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        rs.put("", "1", {})
    with pytest.raises(InvalidInputError):
        rs.put("t", "1", {"x": float("nan")})
    assert rs.count("t") == 0


def test_update_is_atomic_read_modify_write(rs: RecordStore) -> None:
    assert rs.update("s", "c", lambda r: {**r, "n": r.get("n", 0) + 1}) == {"n": 1}
    assert rs.update("s", "c", lambda r: r.update(n=r["n"] + 1)) == {"n": 2}  # mutate + None
    with pytest.raises(ZeroDivisionError):
        rs.update("s", "c", lambda r: {"n": 1 / 0})
    assert rs.get("s", "c") == {"n": 2}


def test_eight_threads_times_two_hundred_writes_lose_nothing(tmp_path: Path) -> None:
    rs = RecordStore(tmp_path / "threads.sqlite")
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(200):
                rs.put("rows", f"{t}-{i}", {"t": t, "i": i})
                rs.update("stats", "counter", lambda r: {"n": r.get("n", 0) + 1})
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert rs.count("rows") == 1600
    assert rs.get("stats", "counter") == {"n": 1600}
    rs.close()
    reopened = RecordStore(tmp_path / "threads.sqlite")
    assert reopened.count("rows") == 1600
    assert {(r["t"], r["i"]) for r in reopened.all("rows")} == {(t, i) for t in range(8) for i in range(200)}
    reopened.close()


def test_two_store_objects_on_one_file_share_writes(tmp_path: Path) -> None:
    a, b = RecordStore(tmp_path / "x.sqlite"), RecordStore(tmp_path / "x.sqlite")

    def work(store: RecordStore, tag: str) -> None:
        for i in range(100):
            store.update("s", "n", lambda r: {"n": r.get("n", 0) + 1})
            store.put("rows", f"{tag}{i}", {})

    ts = [threading.Thread(target=work, args=(s, t)) for s, t in ((a, "a"), (b, "b"))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert a.get("s", "n") == {"n": 200} and b.count("rows") == 200
    a.close()
    b.close()


def test_transaction_commits_or_rolls_back_together(rs: RecordStore) -> None:
    with rs.transaction():
        rs.put("t", "1", {"a": 1})
        rs.put("t", "2", {"a": 2})
        rs.update("t", "1", lambda r: {"a": 10})
    assert rs.all("t") == [{"a": 10}, {"a": 2}]
    with pytest.raises(RuntimeError), rs.transaction():
        rs.put("t", "3", {"a": 3})
        rs.delete("t", "1")
        raise RuntimeError("boom")
    assert rs.all("t") == [{"a": 10}, {"a": 2}]


def test_nested_transaction_failure_undoes_only_the_inner_block(rs: RecordStore) -> None:
    with rs.transaction():
        rs.put("t", "outer", {})
        try:
            with rs.transaction():
                rs.put("t", "inner", {})
                raise KeyError("inner")
        except KeyError:
            pass
        rs.put("t", "after", {})
    assert rs.ids("t") == ["outer", "after"]


def test_transaction_blocks_other_threads_until_done(rs: RecordStore) -> None:
    seen: list[int] = []
    started = threading.Event()

    def reader() -> None:
        started.set()
        seen.append(rs.count("t"))

    with rs.transaction():
        rs.put("t", "1", {})
        th = threading.Thread(target=reader)
        th.start()
        started.wait()
        rs.put("t", "2", {})
    th.join()
    assert seen == [2]  # the reader never saw a half-done transaction


def test_migrations_are_named_and_applied_once(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    RecordStore(path).close()
    rs = RecordStore(path)
    assert rs.migrations() == [name for name, _ in MIGRATIONS]
    rs.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM _migrations").fetchone()[0] == len(MIGRATIONS)
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_closed_store_raises(tmp_path: Path) -> None:
    rs = RecordStore(tmp_path / "c.sqlite")
    rs.close()
    rs.close()
    with pytest.raises(StoreError, match="closed"):
        rs.get("t", "1")


def test_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "dir.sqlite").mkdir()
    with pytest.raises(StoreError):
        RecordStore(tmp_path / "dir.sqlite")


def test_public_api_is_pinned() -> None:
    import atlas.infra.records as mod

    assert sorted(mod.__all__) == ["MIGRATIONS", "RecordStore"]
