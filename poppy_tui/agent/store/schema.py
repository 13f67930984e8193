"""Schema migrations, applied in order; PRAGMA user_version records how far a file has come.

Never edit a released migration: add a new one. Old files must keep opening.
"""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: the first schema.
    """
    CREATE TABLE companies (
        id INTEGER PRIMARY KEY,
        base_url TEXT NOT NULL UNIQUE,
        domain TEXT NOT NULL,
        name TEXT NOT NULL,
        document_json TEXT NOT NULL,
        supports_operations INTEGER NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        discovered_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE requests (
        id INTEGER PRIMARY KEY,
        company_id INTEGER NOT NULL REFERENCES companies(id),
        interface TEXT NOT NULL CHECK (interface IN ('api', 'mcp', 'conversation')),
        request_json TEXT NOT NULL,
        origin TEXT NOT NULL,
        created_at TEXT NOT NULL,
        first_status INTEGER,
        first_response_json TEXT
    );
    CREATE TABLE operations (
        id INTEGER PRIMARY KEY,
        company_id INTEGER NOT NULL REFERENCES companies(id),
        operation_id TEXT NOT NULL,
        interface TEXT NOT NULL,
        session_id TEXT NOT NULL,
        status TEXT NOT NULL,
        current_revision_id INTEGER,
        approved_revision_id INTEGER,
        send_after TEXT,
        idempotency_key TEXT,
        lease_owner TEXT,
        lease_until TEXT,
        next_attempt_at TEXT,
        attempt_count INTEGER NOT NULL DEFAULT 0,
        outcome_json TEXT,
        outcome_detail TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (company_id, operation_id)
    );
    CREATE INDEX operations_status ON operations (status, updated_at);
    CREATE INDEX operations_updated ON operations (updated_at);
    CREATE TABLE revisions (
        id INTEGER PRIMARY KEY,
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        revision TEXT NOT NULL,
        request_id INTEGER NOT NULL REFERENCES requests(id),
        summary TEXT NOT NULL,
        terms_json TEXT,
        expires_at TEXT NOT NULL,
        expires_at_text TEXT NOT NULL,
        raw_json TEXT NOT NULL,
        carrier_text TEXT,
        received_at TEXT NOT NULL,
        seen_at TEXT,
        UNIQUE (operation_row, revision)
    );
    CREATE TABLE decisions (
        id INTEGER PRIMARY KEY,
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        revision_id INTEGER NOT NULL REFERENCES revisions(id),
        decision TEXT NOT NULL CHECK (decision IN
            ('approved', 'declined', 'withdrawn', 'resolved_performed', 'resolved_not_performed')),
        decided_at TEXT NOT NULL,
        actor TEXT NOT NULL,
        note TEXT
    );
    CREATE INDEX decisions_operation ON decisions (operation_row);
    CREATE TABLE attempts (
        id INTEGER PRIMARY KEY,
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        revision_id INTEGER NOT NULL REFERENCES revisions(id),
        number INTEGER NOT NULL,
        idempotency_key TEXT,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        outcome TEXT,
        http_status INTEGER,
        response_json TEXT,
        detail TEXT,
        owner TEXT
    );
    CREATE INDEX attempts_operation ON attempts (operation_row);
    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        detail TEXT
    );
    CREATE INDEX events_operation ON events (operation_row);
    CREATE TABLE conversations (
        id INTEGER PRIMARY KEY,
        company_id INTEGER NOT NULL REFERENCES companies(id),
        endpoint TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        cursor TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (company_id, conversation_id)
    );
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_row INTEGER NOT NULL REFERENCES conversations(id),
        message_id TEXT NOT NULL,
        role TEXT NOT NULL,
        text TEXT,
        message_json TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (conversation_row, message_id)
    );
    """,
    # 2: poppy.json's HTTP cache state (it is cached per HTTP caching, kept between a minute and a
    # day: digest 1.1), and Companies the person removed (kept for the records that name them,
    # gone from lists and name look-ups).
    """
    ALTER TABLE companies ADD COLUMN removed_at TEXT;
    CREATE TABLE company_documents (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        etag TEXT,
        fetched_at TEXT NOT NULL,
        fresh_until TEXT NOT NULL
    );
    """,
    # 3: who is signed in at each Company (sign-in, spec 5.4). Nothing secret: refresh tokens live
    # in the keyring and access tokens in memory; this keeps only what `companies list` shows.
    """
    CREATE TABLE sign_ins (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        issuer TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('device', 'direct', 'mediated')),
        scopes TEXT NOT NULL,
        account TEXT,
        signed_in_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    """,
    # 4: account-owned operations (one returned signed in belongs to the account: Ops §3, "Who can
    # approve it") and approvals waiting for sign-in. Existing operations were all returned signed
    # out (nothing signed in before), so 0 is true of them.
    """
    ALTER TABLE operations ADD COLUMN account_owned INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE operations ADD COLUMN waiting_sign_in TEXT;
    """,
    # 5: discrepancy checks, computed once per revision off the event loop and kept with it
    # (so the inbox's first frame doesn't compute them: the first-frame target, docs/benchmarks.md),
    # tagged with the checker's version (poppy_tui/safety/checker.py) so a new checker recomputes
    # them. A cache of what the code derives from the revision: losing it loses nothing recorded.
    """
    CREATE TABLE IF NOT EXISTS revision_checks (
        revision_id INTEGER PRIMARY KEY REFERENCES revisions(id),
        checker_version INTEGER NOT NULL,
        amount TEXT,
        findings_json TEXT NOT NULL,
        checked_at TEXT NOT NULL
    );
    """,
    # 6: the dispatcher's claim (dispatch.py claim_due_many) walks only approved and sending
    # operations, oldest change first, and stops at the first due ones (the sending-rate target,
    # docs/benchmarks.md).
    """
    CREATE INDEX IF NOT EXISTS operations_due ON operations (updated_at) WHERE status IN ('approved', 'sending');
    """,
    # 7: the Session each revision was returned in. An operation returned signed out can be
    # approved only in that Session (Ops 3), and a later revision can come in a later Session
    # (after invalid_session), so the approval of a revision goes in that revision's Session.
    # Revisions recorded before have NULL: they fall back to operations.session_id, the Session
    # of the operation's first revision, which is what those stores used.
    """
    ALTER TABLE revisions ADD COLUMN session_id TEXT;
    """,
    # 8: the resource an operation changes, as last read from the Company before the decision
    # (agent/resource_read.py): where from, when, and what came back or why nothing did. One row
    # per operation, replaced by each read. Stores without it open as before: no row, no read.
    """
    CREATE TABLE IF NOT EXISTS resource_reads (
        operation_row INTEGER PRIMARY KEY REFERENCES operations(id),
        revision_id INTEGER REFERENCES revisions(id),
        source TEXT NOT NULL,
        read_at TEXT NOT NULL,
        ok INTEGER NOT NULL,
        body_json TEXT,
        problem TEXT
    );
    """,
    # 9: WHICH account an account-owned operation belongs to (Ops 3, "Who can approve it": any
    # Session of this agent and User may approve it *while signed in to the same account*): the
    # account the agent was signed in as (sign_ins.account) when it sent the request that returned
    # the current revision. NULL where that is unknown (rows from before, a sign-in that never
    # named its account): those behave as before, approvable from any signed-in Session.
    """
    ALTER TABLE operations ADD COLUMN account TEXT;
    """,
    # 10: who asked. `requester`: the agent that made a request through the gate (`poppy-tui
    # mcp`), by the name its token has (or the one the person gave a stdio gate); NULL where the
    # origin says it all (the CLI, the TUI, the demo). Requests the gate made before agents had
    # names were all the one unnamed agent's, which is called `default` now. `requester_client`:
    # what that agent's MCP client said it is (clientInfo name and version, JSON): a claim, never
    # checked. `request_operations`: every operation each request returned (a request answered
    # with an operation another request returned first gets no revision of its own, yet it
    # returned it); what an agent may read through the gate is what its own requests returned.
    # `gate_agents`: when each agent last called a tool, and the client it last said it was.
    """
    ALTER TABLE requests ADD COLUMN requester TEXT;
    ALTER TABLE requests ADD COLUMN requester_client TEXT;
    UPDATE requests SET requester = 'default' WHERE origin = 'mcp';
    CREATE INDEX IF NOT EXISTS requests_requester ON requests (requester, id) WHERE requester IS NOT NULL;
    CREATE TABLE IF NOT EXISTS request_operations (
        request_id INTEGER NOT NULL REFERENCES requests(id),
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        PRIMARY KEY (request_id, operation_row)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS request_operations_operation ON request_operations (operation_row);
    INSERT OR IGNORE INTO request_operations (request_id, operation_row)
        SELECT request_id, operation_row FROM revisions;
    CREATE TABLE IF NOT EXISTS gate_agents (
        name TEXT PRIMARY KEY,
        last_used_at TEXT NOT NULL,
        client TEXT
    );
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)
