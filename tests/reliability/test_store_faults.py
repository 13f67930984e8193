"""The durable record under faults: damaged files, locks held by other processes, a full
disk, and a writer killed with SIGKILL at random moments. Real SQLite files, real processes."""

from __future__ import annotations

import json
import random
import sqlite3
import time
from pathlib import Path

import pytest

from poppy_tui.agent.store import Status, Store, StoreError
from tests.reliability.support import (
    child,
    consistency_problems,
    fill_store,
    integrity,
    sha256,
    table_snapshot,
)

# ---- damaged files --------------------------------------------------------------------------------


def _damaged(kind: str, good: bytes) -> bytes:
    rng = random.Random(kind)
    if kind == "random-bytes":
        return bytes(rng.randrange(256) for _ in range(16384))
    if kind == "text-file":
        return b"this is not a database\n" * 100
    if kind == "header-overwritten":
        return b"\0" * 100 + good[100:]
    if kind == "magic-changed":
        return b"SQLite format 2\0" + good[16:]
    if kind == "truncated-half":
        return good[: len(good) // 2 + 123]
    if kind == "schema-page-garbled":
        return good[:100] + bytes(rng.randrange(256) for _ in range(4096 - 100)) + good[4096:]
    raise AssertionError(kind)


@pytest.fixture(scope="module")
def good_database(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("good") / "poppy.db"
    fill_store(path, 300).close()
    assert not Path(str(path) + "-wal").exists() or Path(str(path) + "-wal").stat().st_size == 0
    return path.read_bytes()


@pytest.mark.parametrize(
    "kind",
    [
        "random-bytes",
        "text-file",
        "header-overwritten",
        "magic-changed",
        "truncated-half",
        "schema-page-garbled",
    ],
)
def test_a_damaged_file_is_refused_with_a_clear_error_and_left_byte_for_byte(
    tmp_path, good_database, kind
):
    path = tmp_path / "poppy.db"
    path.write_bytes(_damaged(kind, good_database))
    before = sha256(path)
    failure = None
    try:
        store = Store.open(path)
    except StoreError as exc:
        failure = exc
    else:
        # Opening may succeed when the damage is past what opening reads; then the first use must
        # fail cleanly. (truncated-half can land here.)
        try:
            store.count_operations()
            store.list_operations(limit=1000)
        except StoreError as exc:
            failure = exc
        finally:
            store.close()
    assert failure is not None, f"{kind}: the damaged file was used as if it were fine"
    message = str(failure)
    assert str(path) in message and ("damaged" in message or "can't be used" in message), message
    assert sha256(path) == before, "the damaged file was modified"


def test_damage_in_any_single_page_is_reported_as_store_error_never_a_raw_sqlite_error(
    tmp_path, good_database
):
    """Was a bug: a damaged table page opened fine and a later read raised a raw
    sqlite3.DatabaseError. Every statement's sqlite error now surfaces as StoreError."""
    page = 4096
    raw_errors = []
    for number in range(1, len(good_database) // page):
        path = tmp_path / f"page{number}.db"
        data = bytearray(good_database)
        data[number * page : (number + 1) * page] = b"\x5a" * page
        path.write_bytes(data)
        try:
            store = Store.open(path)
        except StoreError:
            continue
        try:
            for row in store.list_operations(limit=1000):
                store.get_operation(row.id)
            store.count_operations()
        except StoreError:
            pass
        except sqlite3.DatabaseError as exc:
            raw_errors.append((number, str(exc)))
        finally:
            store.close()
    assert not raw_errors, f"pages whose damage surfaced as a raw sqlite3 error: {raw_errors}"


# ---- locks held by another process ---------------------------------------------------------------


@pytest.mark.slow
def test_a_write_lock_held_by_another_process_gives_a_clear_error_and_changes_nothing(tmp_path):
    path = tmp_path / "poppy.db"
    store = fill_store(path, 20)
    row = store.list_operations(statuses=[Status.PENDING], limit=1)[0]
    revision_id = store.get_operation(row.id).current.id
    before = table_snapshot(path)
    with child("store_writer.py", str(path), "lock") as holder:
        holder.expect("locked", 30)
        started = time.monotonic()
        with pytest.raises(StoreError) as failure:
            store.approve(row.id, revision_id, 0.0)
        waited = time.monotonic() - started
        assert "busy or locked" in str(failure.value) and "nothing was changed" in str(
            failure.value
        )
        assert waited >= 5, (
            "gave up before the busy timeout: another process's short write would fail us"
        )
        assert store.list_operations(limit=5), (
            "reads keep working while another process writes (WAL)"
        )
        holder.kill9()
    assert table_snapshot(path) == before
    record = store.approve(
        row.id, revision_id, 0.0
    )  # the lock is gone: the same decision now succeeds
    assert record.status == Status.APPROVED
    store.close()


@pytest.mark.slow
def test_an_exclusive_lock_makes_opening_fail_clearly_and_changes_nothing(tmp_path):
    path = tmp_path / "poppy.db"
    fill_store(path, 20).close()
    before = table_snapshot(path)
    with child("store_writer.py", str(path), "exclusive") as holder:
        holder.expect("locked", 30)
        with pytest.raises(StoreError) as failure:
            Store.open(path)
        assert "locked" in str(failure.value) and str(path) in str(failure.value)
        holder.kill9()
    assert table_snapshot(path) == before
    with Store.open(path) as store:
        assert store.count_operations() == 20


# ---- a full disk -----------------------------------------------------------------------------------


def _full_disk_run(tmp_path: Path, headroom: int):
    path = tmp_path / "poppy.db"
    store = fill_store(path, 30)
    store.close()
    before = table_snapshot(path)
    sizes = [p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists()]
    with child("store_writer.py", str(path), "full", str(max(sizes) + headroom)) as writer:
        writer.expect("done", 60)
        assert writer.wait(30) == 0, writer.stderr()
        lines = writer.lines
    acked = [line.split()[2] for line in lines if line.startswith("ack record")]
    errors = [json.loads(line[len("error ") :]) for line in lines if line.startswith("error ")]
    return path, before, acked, errors, lines


@pytest.mark.slow
@pytest.mark.parametrize("headroom", [0, 64 * 1024], ids=["no-growth-allowed", "fills-up"])
def test_a_full_disk_fails_the_write_clearly_and_earlier_records_survive(tmp_path, headroom):
    path, before, acked, errors, lines = _full_disk_run(tmp_path, headroom)
    assert errors, f"no write failed: {lines}"
    for error in errors:
        assert error["type"] == "StoreError", error  # never a raw sqlite3/OS error
        assert "nothing was changed" in error["message"] or "can't be used" in error["message"], (
            error
        )
    assert integrity(path) == "ok"
    assert not consistency_problems(path)
    with Store.open(path) as store:
        kept = {row.operation_id for row in store.list_operations(limit=10_000)}
        assert {f"op{i:06d}" for i in range(30)} <= kept, (
            "a record written before the disk filled was lost"
        )
        assert set(acked) <= kept, "a write reported as done was lost"
        failed = {e["call"].split()[1] for e in errors if e["call"].startswith("record")}
        assert not (failed & kept), "a write reported as failed is in the database"
        assert store.count_operations() == 30 + len(acked)
    after = table_snapshot(path)
    for table, rows in before.items():
        assert after[table][: len(rows)] == rows, f"{table}: earlier rows changed"


def test_a_new_database_on_a_full_disk_is_refused_clearly(tmp_path):
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (20000, resource.RLIM_INFINITY))\n"
        "from poppy_tui.agent.store import Store, StoreError\n"
        "try:\n"
        "    Store.open(sys.argv[1])\n"
        "except StoreError as exc:\n"
        "    print('StoreError', exc)\n"
        "else:\n"
        "    print('opened')\n"
    )
    import subprocess

    from tests.reliability.support import PYTHON, REPO, child_env

    done = subprocess.run(
        [PYTHON, "-c", code, str(tmp_path / "poppy.db")],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("StoreError"), done.stdout
    assert str(tmp_path / "poppy.db") in done.stdout


# ---- kill -9 of a writer -----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_writer_killed_at_random_moments_loses_no_acknowledged_change(tmp_path):
    rng = random.Random(7)
    path = tmp_path / "poppy.db"
    total_acked = 0
    unacked_extra = 0
    for trial in range(8):
        with child("store_writer.py", str(path), "loop") as writer:
            writer.expect("ready", 30)
            pause = rng.uniform(0.15, 0.6)
            time.sleep(pause)  # fixed-wait: the kill lands at a random moment of the writes
            writer.kill9()
            lines = writer.drain()
        acked = [line.split()[1:] for line in lines if line.startswith("ack ")]
        assert integrity(path) == "ok", f"trial {trial}"
        assert not consistency_problems(path), f"trial {trial}: {consistency_problems(path)}"
        with Store.open(path) as store:
            for kind, op_id in acked:
                record = store.find_operation(op_id)
                assert record is not None, (
                    f"trial {trial}: acknowledged {kind} of {op_id} is missing"
                )
                if kind == "decline":
                    assert record.status == Status.DECLINED
                elif kind == "approve":
                    assert record.status in (Status.APPROVED, Status.SENDING, Status.PERFORMED)
                elif kind == "attempt":
                    assert record.status in (Status.SENDING, Status.PERFORMED) and store.attempts(
                        record.id
                    )
                elif kind == "settle":
                    assert record.status == Status.PERFORMED
            recorded = [op_id for kind, op_id in acked if kind == "record"]
            total_acked += len(recorded)
            # SQLite may hold one more commit than the writer reported (killed between COMMIT and print).
            last = recorded[-1] if recorded else None
            newer = [
                r for r in store.list_operations(limit=5) if last is None or r.operation_id > last
            ]
            unacked_extra += len(newer)
            assert len(newer) <= 1
            # A leftover "sending" op (killed mid-send) is still resumable: its lease lapses.
            for row in store.list_operations(statuses=[Status.SENDING, Status.APPROVED], limit=10):
                store.get_operation(row.id)
        path.rename(tmp_path / f"trial{trial}.db")
        for suffix in ("-wal", "-shm"):
            leftover = Path(f"{path}{suffix}")
            if leftover.exists():
                leftover.rename(tmp_path / f"trial{trial}.db{suffix}")
    assert total_acked > 0
