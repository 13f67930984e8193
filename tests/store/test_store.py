"""The durable store: every transition, cross-connection atomicity, and files it must not destroy."""

import os
import sqlite3
import stat
import threading
from datetime import datetime, timedelta, UTC

import pytest

from poppy_tui.agent.store import StateError, Status, Store, StoreError
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest

FUTURE = "2099-01-01T00:00:00Z"


def company_doc():
    return parse_poppy_json(
        {
            "protocol_version": "0.4",
            "organization": {"name": "Manzanita Outfitters", "domain": "127.0.0.1:9"},
            "apis": [{"type": "openapi", "url": "http://127.0.0.1:9/openapi.json"}],
            "extensions": {"operations": [{"version": "2"}]},
        },
        "127.0.0.1:9",
        allow_loopback_http=True,
    )


def op(revision="r1", summary="Exchange for $70.00 more", expires=FUTURE, **extra):
    return parse_operation(
        {
            "operation_id": "exc_5Rt2",
            "revision": revision,
            "summary": summary,
            "expires_at": expires,
            **extra,
        }
    )


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "poppy.db") as s:
        yield s


@pytest.fixture
def seeded(store):
    company = store.upsert_company("http://127.0.0.1:9", company_doc())
    request_id = store.add_request(
        company.id, ApiRequest("POST", "http://127.0.0.1:9/api/x", {"a": 1}), "cli"
    )
    result = store.record_operation(company.id, request_id, company.session_id, op())
    return store, company, request_id, result


def test_file_is_private_and_wal(tmp_path):
    path = tmp_path / "sub" / "poppy.db"
    with Store.open(path) as s:
        s.upsert_company("http://127.0.0.1:9", company_doc())
        assert s._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert (
            s._db.execute("PRAGMA synchronous").fetchone()[0] == 1
        )  # NORMAL; FULL around NOW commits
    for name in ("poppy.db", "poppy.db-wal"):
        if (path.parent / name).exists():
            assert stat.S_IMODE(os.stat(path.parent / name).st_mode) == 0o600


def test_company_gets_a_stable_pairwise_user_and_session(store):
    first = store.upsert_company("http://127.0.0.1:9", company_doc())
    again = store.upsert_company("http://127.0.0.1:9", company_doc())
    assert (
        first.id == again.id
        and first.user_id == again.user_id
        and first.session_id == again.session_id
    )
    assert store.find_company("manzanita outfitters").id == first.id
    assert store.find_company("127.0.0.1:9").id == first.id
    renewed = store.new_session(first.id)
    assert renewed.session_id != first.session_id and renewed.user_id == first.user_id


def test_new_operation_is_pending_with_its_request(seeded):
    store, company, request_id, result = seeded
    assert result.new_operation and result.status == Status.PENDING
    record = store.get_operation(result.operation_row)
    assert record.request == ApiRequest("POST", "http://127.0.0.1:9/api/x", {"a": 1})
    assert record.current.revision == "r1"
    assert store.count_operations([Status.PENDING]) == 1


def test_the_same_revision_again_adds_nothing(seeded):
    store, company, request_id, result = seeded
    again = store.record_operation(company.id, request_id, company.session_id, op())
    assert not again.new_revision and again.revision_id == result.revision_id
    assert len(store.revisions(result.operation_row)) == 1


def test_approve_commits_decision_and_key_before_anything(seeded):
    store, _, _, result = seeded
    record = store.approve(result.operation_row, result.revision_id, grace_seconds=5)
    assert record.status == Status.APPROVED and record.idempotency_key
    assert [d.decision for d in store.decisions(result.operation_row)] == ["approved"]
    # Another connection sees it committed, exactly as approve() returned it (which it builds
    # from what it read and wrote, without reading it again).
    with Store.open(store.path) as other:
        assert other.get_operation(result.operation_row) == record


def test_an_approval_whose_terms_expired_is_never_claimed(store):
    """An unsent approval past its revision's expiry is not due (the claim itself checks), so no
    dispatcher sends it, even before expire_due records it as expired."""
    company = store.upsert_company("http://127.0.0.1:9", company_doc())
    request_id = store.add_request(
        company.id, ApiRequest("POST", "http://127.0.0.1:9/api/x", {"a": 1}), "cli"
    )
    soon = (datetime.now(UTC) + timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    result = store.record_operation(company.id, request_id, company.session_id, op(expires=soon))
    store.approve(result.operation_row, result.revision_id, grace_seconds=0)
    later = datetime.now(UTC) + timedelta(seconds=31)
    assert store.claim_due("a", 30, now=later) is None
    assert store.get_operation(result.operation_row).status == Status.APPROVED
    assert store.claim_due("a", 30).id == result.operation_row  # before its expiry it is due
    store.release_lease(result.operation_row, "a")
    assert store.expire_due(now=later) == [result.operation_row]
    assert store.get_operation(result.operation_row).status == Status.EXPIRED


def test_nothing_is_due_during_the_grace_period(seeded):
    store, _, _, result = seeded
    store.approve(result.operation_row, result.revision_id, grace_seconds=60)
    assert store.claim_due("a", 30) is None
    later = datetime.now(UTC) + timedelta(seconds=61)
    assert store.claim_due("a", 30, now=later).id == result.operation_row


def test_withdraw_until_the_first_attempt(seeded):
    store, _, _, result = seeded
    store.approve(result.operation_row, result.revision_id, grace_seconds=0)
    record = store.withdraw(result.operation_row)
    assert record.status == Status.WITHDRAWN and record.approved_revision_id is None
    assert store.claim_due("a", 30) is None
    store.approve(result.operation_row, result.revision_id, grace_seconds=0)
    claimed = store.claim_due("a", 30)
    store.start_attempt(claimed.id, "a")
    with pytest.raises(StateError, match="sending"):
        store.withdraw(result.operation_row)


def test_send_now_ends_only_a_running_grace_period(seeded):
    store, _, _, result = seeded
    row = result.operation_row
    store.approve(row, result.revision_id, grace_seconds=3600)
    assert store.claim_due("a", 30) is None  # in its grace period
    assert store.send_now([row]) == [row]
    assert store.send_now([row]) == []  # already due: nothing more to end
    assert [e.detail for e in store.events(row) if e.kind == "grace_ended"] == ["send now, by tui"]
    assert store.get_operation(row).status == Status.APPROVED
    claimed = store.claim_due("a", 30)
    assert claimed is not None and claimed.id == row
    store.start_attempt(row, "a")
    assert store.send_now([row]) == []  # sending: left alone
    assert store.get_operation(row).status == Status.SENDING


def test_declined_is_never_due(seeded):
    store, _, _, result = seeded
    store.decline(result.operation_row, result.revision_id)
    assert store.get_operation(result.operation_row).status == Status.DECLINED
    assert store.claim_due("a", 30, now=datetime.now(UTC) + timedelta(days=1)) is None
    with pytest.raises(StateError):
        store.approve(result.operation_row, result.revision_id, 0)


def test_expired_revision_cannot_be_approved_and_expires(seeded):
    store, company, request_id, result = seeded
    past = store.record_operation(
        company.id, request_id, company.session_id, op("r2", expires="2020-01-01T00:00:00Z")
    )
    with pytest.raises(StateError, match="expired"):
        store.approve(past.operation_row, past.revision_id, 0)
    assert store.expire_due() == [past.operation_row]
    assert store.get_operation(past.operation_row).status == Status.EXPIRED


def test_a_new_revision_supersedes_an_unsent_approval(seeded):
    store, company, request_id, result = seeded
    store.approve(result.operation_row, result.revision_id, grace_seconds=60)
    newer = store.record_operation(
        company.id, request_id, company.session_id, op("r2", "Exchange for $90.00 more")
    )
    assert newer.new_revision and newer.status == Status.PENDING
    record = store.get_operation(result.operation_row)
    assert record.approved_revision_id is None and record.current.revision == "r2"
    assert "superseded" in [e.kind for e in store.events(result.operation_row)]
    with pytest.raises(StateError, match="newer revision"):
        store.approve(result.operation_row, result.revision_id, 0)
    assert store.previous_seen_revision(result.operation_row, newer.revision_id).revision == "r1"


def test_a_new_revision_while_sending_leaves_the_decision_to_the_engine(seeded):
    store, company, request_id, result = seeded
    store.approve(result.operation_row, result.revision_id, 0)
    store.claim_due("a", 30)
    store.start_attempt(result.operation_row, "a")
    newer = store.record_operation(company.id, request_id, company.session_id, op("r2"))
    assert newer.status == Status.SENDING


def test_only_one_of_many_claimers_wins(seeded, tmp_path):
    store, _, _, result = seeded
    store.approve(result.operation_row, result.revision_id, 0)
    winners = []
    barrier = threading.Barrier(8)

    def claim(name):
        with Store.open(store.path) as mine:
            barrier.wait()
            if mine.claim_due(name, 30) is not None:
                winners.append(name)

    threads = [threading.Thread(target=claim, args=(f"w{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1


def test_attempt_lifecycle_and_lapsed_lease_resumes(seeded):
    store, _, _, result = seeded
    record = store.approve(result.operation_row, result.revision_id, 0)
    store.claim_due("dead", lease_seconds=0.01)
    attempt = store.start_attempt(result.operation_row, "dead")
    assert (
        attempt.number == 1
        and attempt.idempotency_key == record.idempotency_key
        and attempt.outcome is None
    )
    with pytest.raises(StateError, match="another sender"):
        store.start_attempt(result.operation_row, "other")
    later = datetime.now(UTC) + timedelta(seconds=1)
    resumed = store.claim_due("alive", 30, now=later)
    assert resumed.id == result.operation_row and resumed.status == Status.SENDING
    second = store.start_attempt(result.operation_row, "alive")
    assert second.number == 2 and second.idempotency_key == attempt.idempotency_key
    store.finish_attempt(second.id, "performed", 200, {"ok": True})
    with pytest.raises(StateError):
        store.settle(result.operation_row, "dead", Status.PERFORMED)
    store.settle(result.operation_row, "alive", Status.PERFORMED, {"ok": True})
    final = store.get_operation(result.operation_row)
    assert final.status == Status.PERFORMED and final.outcome == {"ok": True}
    assert [a.outcome for a in store.attempts(result.operation_row)] == [None, "performed"]


def test_retry_schedule_blocks_claims_until_due(seeded):
    store, _, _, result = seeded
    store.approve(result.operation_row, result.revision_id, 0)
    store.claim_due("a", 30)
    store.start_attempt(result.operation_row, "a")
    store.schedule_retry(result.operation_row, "a", 30, "HTTP 503")
    assert store.claim_due("b", 30) is None
    assert store.claim_due("b", 30, now=datetime.now(UTC) + timedelta(seconds=31)) is not None


def test_resolving_an_unknown_outcome(seeded):
    store, company, request_id, result = seeded
    store.approve(result.operation_row, result.revision_id, 0)
    store.claim_due("a", 30)
    store.start_attempt(result.operation_row, "a")
    store.record_operation(company.id, request_id, company.session_id, op("r2"))
    store.settle(
        result.operation_row, "a", Status.OUTCOME_UNKNOWN, detail="new revision after a timeout"
    )
    with pytest.raises(StateError):
        store.approve(result.operation_row, store.get_operation(result.operation_row).current.id, 0)
    record = store.resolve_unknown(result.operation_row, performed=False)
    assert record.status == Status.PENDING  # the newer revision may now be decided on
    assert store.decisions(result.operation_row)[-1].decision == "resolved_not_performed"


def test_history_filters_and_paging(store):
    company = store.upsert_company("http://127.0.0.1:9", company_doc())
    rid = store.add_request(company.id, ApiRequest("GET", "http://127.0.0.1:9/x"), "cli")
    for i in range(30):
        store.record_operation(
            company.id,
            rid,
            company.session_id,
            parse_operation(
                {
                    "operation_id": f"op_{i}",
                    "revision": "r",
                    "summary": f"Item {i} 100%_off",
                    "expires_at": FUTURE,
                }
            ),
        )
    assert store.count_operations() == 30
    page = store.list_operations(limit=10, offset=10)
    assert len(page) == 10 and page[0].operation_id == "op_19"
    assert [r.operation_id for r in store.list_operations(text="Item 7 ")] == ["op_7"]
    assert store.count_operations(text="100%_") == 30
    assert store.count_operations(text="100%x") == 0
    assert store.count_operations([Status.DECLINED]) == 0
    assert store.count_operations(company_id=company.id + 1) == 0


def test_damaged_file_is_reported_and_left_untouched(tmp_path):
    path = tmp_path / "poppy.db"
    path.write_bytes(b"this is not a database" * 100)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="damaged"):
        Store.open(path)
    assert path.read_bytes() == before


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "poppy.db"
    Store.open(path).close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=99")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer poppy-tui"):
        Store.open(path)


def test_locked_database_is_a_clear_error_and_changes_nothing(seeded):
    store, _, _, result = seeded
    blocker = sqlite3.connect(store.path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    store._db.execute("PRAGMA busy_timeout=100")
    try:
        with pytest.raises(StoreError, match="busy or locked"):
            store.approve(result.operation_row, result.revision_id, 0)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert store.get_operation(result.operation_row).status == Status.PENDING


def test_conversation_messages_are_kept_once(store):
    company = store.upsert_company("http://127.0.0.1:9", company_doc())
    row = store.upsert_conversation(company.id, "http://127.0.0.1:9/poppy/conversations", "cnv_1")
    assert (
        store.upsert_conversation(
            company.id, "http://127.0.0.1:9/poppy/conversations", "cnv_1", "c2"
        )
        == row
    )
    assert store.add_message(row, {"id": "msg_1", "text": "hi"}, "user")
    assert not store.add_message(row, {"id": "msg_1", "text": "hi"}, "user")
    assert store.messages(row) == [("msg_1", "user", "hi", {"id": "msg_1", "text": "hi"})]
    assert store.latest_conversation(company.id) == (
        row,
        "http://127.0.0.1:9/poppy/conversations",
        "cnv_1",
        "c2",
    )


def test_integrity_check_is_available_on_demand(store):
    assert store.check_integrity() == ["ok"]


def test_damage_met_by_a_read_is_a_store_error_and_our_own_bugs_are_not(store):
    with pytest.raises(sqlite3.OperationalError):
        store._db._connection.execute("SELECT nonsense FROM nowhere")
    with pytest.raises(StoreError, match="can't be used"):
        store._db.execute("SELECT nonsense FROM nowhere")
    company = store.upsert_company("http://127.0.0.1:9", company_doc())
    with pytest.raises(sqlite3.IntegrityError):  # a constraint we broke is a bug, never hidden
        store._db.execute(
            "INSERT INTO requests (company_id, interface, request_json, origin, created_at) VALUES (?,?,?,?,?)",
            (company.id, "carrier-pigeon", "{}", "cli", "now"),
        )


def commits_under(store, action):
    """Run `action`; return the synchronous mode each of its COMMITs ran under, from SQLite's own
    statement trace, and what it reported to the background flusher (SOON commits)."""
    statements: list[str] = []
    store._db._connection.set_trace_callback(statements.append)
    before = store._flusher.soon_commits
    try:
        action()
    finally:
        store._db._connection.set_trace_callback(None)
    mode, modes, in_transaction = "NORMAL", [], False
    for statement in statements:
        if statement.startswith("PRAGMA synchronous="):
            mode = statement.split("=", 1)[1]
        elif statement.startswith("BEGIN"):
            in_transaction = True
        elif statement == "COMMIT":
            modes.append(mode)
            in_transaction = False
        elif not in_transaction and statement.split(None, 1)[0] in ("INSERT", "UPDATE", "DELETE"):
            modes.append(mode)  # a statement on its own is its own transaction
    return modes, store._flusher.soon_commits - before


def test_commits_that_stop_or_guard_a_send_are_fsynced_before_they_return(seeded):
    store, company, request_id, result = seeded
    row, revision = result.operation_row, result.revision_id
    assert commits_under(store, lambda: store.approve(row, revision, 60)) == (["NORMAL"], 1)  # SOON
    assert commits_under(store, lambda: store.withdraw(row)) == (["FULL"], 0)
    assert (
        store._flusher.pending == 0
    )  # a FULL commit fsyncs the log: every earlier commit is on disk too
    assert commits_under(store, lambda: store.approve(row, revision, 0)) == (["NORMAL"], 1)
    assert commits_under(store, lambda: store.decline(row, revision)) == (["FULL"], 0)
    assert (
        store._db.execute("PRAGMA synchronous").fetchone()[0] == 1
    )  # back to NORMAL between commits


def test_an_attempt_is_fsynced_before_it_leaves_and_an_outcome_soon_after(seeded):
    store, _, _, result = seeded
    row = result.operation_row
    store.approve(row, result.revision_id, 0)
    claimed = []
    assert commits_under(store, lambda: claimed.append(store.claim_due("a", 30))) == (
        ["NORMAL"],
        0,
    )  # LAZY
    with Store.open(store.path) as other:  # the lease is committed and visible to other processes
        assert other.claim_due("b", 30) is None
    attempt = []
    assert commits_under(store, lambda: attempt.append(store.start_attempt(row, "a"))) == (
        ["FULL"],
        0,
    )
    assert store._flusher.pending == 0
    finished = (attempt[0].id, "performed", 200, {"ok": True}, "performed")
    assert commits_under(
        store, lambda: store.finish_and_settle(finished, row, "a", Status.PERFORMED)
    ) == (["NORMAL"], 1)
    assert store.flush(5)  # the background flusher fsyncs it
    assert store._flusher.pending == 0 and store._flusher.failures == 0


def test_a_new_revision_that_supersedes_an_approval_is_on_disk_before_it_returns(seeded):
    store, company, request_id, result = seeded
    store.approve(result.operation_row, result.revision_id, 60)
    new = store.record_operation(
        company.id, request_id, company.session_id, op("r2", "Exchange for $80.00 more")
    )
    assert new.status == Status.PENDING
    assert store._flusher.pending == 0  # synced inline, no waiting for the flusher


def test_closing_the_store_flushes_what_is_pending(tmp_path):
    store = Store.open(tmp_path / "poppy.db")
    store.upsert_company("http://127.0.0.1:9", company_doc())
    flusher = store._flusher
    assert flusher.soon_commits == 1
    store.close()
    assert flusher.pending == 0 and flusher.failures == 0


def test_a_write_that_changes_nothing_claims_no_durability(seeded, monkeypatch):
    """SQLite neither writes nor fsyncs a transaction that changed nothing, so such a commit must
    not count as having made earlier SOON commits durable."""
    store, _, _, result = seeded
    told = []
    monkeypatch.setattr(store._flusher, "committed_now", lambda: told.append("now"))
    monkeypatch.setattr(store._flusher, "committed_soon", lambda: told.append("soon"))
    with store._write():
        pass
    with store._write() as db:
        db.execute("UPDATE operations SET status = status WHERE id = -1")
    assert told == []
    with pytest.raises(StateError):
        store.withdraw(result.operation_row)  # pending, not approved: refused, nothing written
    assert told == []
    store.approve(result.operation_row, result.revision_id, 60)
    store.withdraw(result.operation_row)
    assert told == ["soon", "now"]


def test_a_company_is_found_by_the_unique_start_of_its_name(store):
    manzanita = store.upsert_company("http://127.0.0.1:9", company_doc())
    assert store.find_company("manzanita").id == manzanita.id
    assert store.find_company("MANZ").id == manzanita.id
    other = parse_poppy_json(
        {
            "protocol_version": "0.4",
            "organization": {"name": "Manzanilla Tea", "domain": "127.0.0.1:10"},
            "apis": [{"type": "openapi", "url": "http://127.0.0.1:10/openapi.json"}],
        },
        "127.0.0.1:10",
        allow_loopback_http=True,
    )
    store.upsert_company("http://127.0.0.1:10", other)
    assert store.find_company("manza") is None  # two Companies start that way: no guessing
    assert store.find_company("manzanit").id == manzanita.id
    assert store.find_company("  ") is None


def test_an_idle_flusher_thread_ends_and_the_next_commit_starts_another(seeded, monkeypatch):
    from poppy_tui.agent.store import durability

    store, _, _, result = seeded
    monkeypatch.setattr(durability, "IDLE_SECONDS", 0.05)
    store.approve(result.operation_row, result.revision_id, 60)
    assert store.flush(5)
    first = store._flusher._thread
    assert first is not None
    first.join(5)  # nothing more to do: it ends by itself
    assert not first.is_alive() and store._flusher._thread is None
    store.withdraw(result.operation_row)
    store.approve(
        result.operation_row, result.revision_id, 60
    )  # SOON again: a new thread flushes it
    assert store.flush(5) and store._flusher.pending == 0


def _approved_operations(store, count, grace_seconds=0):
    company = store.upsert_company("http://127.0.0.1:9", company_doc())
    rows = []
    for n in range(count):
        request_id = store.add_request(
            company.id, ApiRequest("POST", f"http://127.0.0.1:9/api/{n}", {}), "cli"
        )
        result = store.record_operation(
            company.id,
            request_id,
            company.session_id,
            parse_operation(
                {"operation_id": f"op_{n}", "revision": "r1", "summary": "s", "expires_at": FUTURE}
            ),
        )
        store.approve(result.operation_row, result.revision_id, grace_seconds=grace_seconds)
        rows.append(result.operation_row)
    return rows


def test_claim_due_many_takes_up_to_the_limit_oldest_first_in_one_statement(store):
    rows = _approved_operations(store, 5)
    statements = []
    store._db._connection.set_trace_callback(statements.append)
    first = store.claim_due_many("a", 30, 3)
    writes = [s for s in statements if s.lstrip().upper().startswith(("UPDATE", "BEGIN"))]
    store._db._connection.set_trace_callback(None)
    assert [op.id for op in first] == rows[:3]
    assert len(writes) == 1  # one UPDATE ... RETURNING: one transaction for the batch
    assert all(op.status == Status.APPROVED for op in first)
    with Store.open(store.path) as other:
        # Leased by "a": another dispatcher gets only what is left, then nothing.
        assert [op.id for op in other.claim_due_many("b", 30, 10)] == rows[3:]
        assert other.claim_due_many("b", 30, 10) == []
    lapsed = datetime.now(UTC) + timedelta(seconds=31)
    assert sorted(op.id for op in store.claim_due_many("c", 30, 10, now=lapsed)) == rows


def test_a_never_sent_approval_claimed_alone_gets_its_attempt_in_the_claims_transaction(store):
    (row,) = _approved_operations(store, 1)
    assert store.flush(5)
    claimed, attempt = store.claim_due_starting_alone("a", 30, 8)
    assert [op.id for op in claimed] == [row]
    # The record as claimed (before the attempt), and the attempt, committed, awaiting its fsync.
    assert claimed[0].status == Status.APPROVED and claimed[0].attempt_count == 0
    assert attempt is not None and attempt.number == 1 and attempt.owner == "a"
    assert attempt.idempotency_key == claimed[0].idempotency_key
    commit = store.take_awaited()
    assert commit > 0 and store._flusher.pending == 1  # not on disk until sync_through
    store.sync_through(commit)
    assert store._flusher.pending == 0
    with Store.open(store.path) as other:
        assert other.get_operation(row).status == Status.SENDING
        assert [a.id for a in other.attempts(row)] == [attempt.id]
        assert other.claim_due_many("b", 30, 8) == []  # leased by "a"


def test_no_attempt_is_started_with_a_claim_of_several_or_of_an_approval_sent_before(store):
    rows = _approved_operations(store, 2)
    claimed, attempt = store.claim_due_starting_alone("a", 30, 8)
    assert [op.id for op in claimed] == rows and attempt is None  # two due: each its own attempt
    assert store.take_awaited() == 0 and all(store.attempts(r) == [] for r in rows)
    # One due, but a claim of one (the limit) may have left others due.
    store.release_lease(rows[0], "a")
    store.release_lease(rows[1], "a")
    claimed, attempt = store.claim_due_starting_alone("a", 30, 1)
    assert [op.id for op in claimed] == [rows[0]] and attempt is None
    # Sent before (an attempt in doubt, the lease lapsed): resent by the dispatcher's own checks.
    store.start_attempt(rows[0], "a")
    store.release_lease(rows[0], "a")
    store.release_lease(rows[1], "a")
    store.decline(rows[1], store.get_operation(rows[1]).current.id)
    claimed, attempt = store.claim_due_starting_alone("b", 30, 8)
    assert [op.id for op in claimed] == [rows[0]] and attempt is None
    assert len(store.attempts(rows[0])) == 1


def test_claim_due_many_skips_what_is_not_due(store):
    rows = _approved_operations(store, 3, grace_seconds=60)
    assert store.claim_due_many("a", 30, 10) == []  # all in their grace period
    assert store.send_now([rows[1]]) == [rows[1]]
    assert [op.id for op in store.claim_due_many("a", 30, 10)] == [rows[1]]
    assert store.claim_due_many("a", 30, 10, operation_row=rows[0]) == []
    later = datetime.now(UTC) + timedelta(seconds=61)
    assert [
        op.id for op in store.claim_due_many("a", 30, 10, now=later, operation_row=rows[0])
    ] == [rows[0]]


def test_an_attempt_is_refused_with_its_reason_and_nothing_written(store):
    rows = _approved_operations(store, 2)
    claimed = store.claim_due_many("a", 30, 2)
    assert [op.id for op in claimed] == rows
    changes = store._db.total_changes
    with pytest.raises(StateError, match="another sender holds this operation"):
        store.start_attempt(rows[0], "b")
    store.decline(rows[1], store.get_operation(rows[1]).current.id)
    changes = store._db.total_changes
    results = store.start_attempts(rows, "a")
    assert isinstance(results[1], StateError) and "declined; nothing to send" in str(results[1])
    first = results[0]
    assert (first.number, first.operation_row) == (1, rows[0])
    assert first.idempotency_key == store.get_operation(rows[0]).idempotency_key
    op = store.get_operation(rows[0])
    assert (op.status, op.attempt_count) == (Status.SENDING, 1)
    assert store.get_operation(rows[1]).attempt_count == 0 and store.attempts(rows[1]) == []
    assert store._db.total_changes - changes == 3  # the operation, its attempt row and its event
    second = store.start_attempt(rows[0], "a")
    assert second.number == 2 and store.get_operation(rows[0]).attempt_count == 2
