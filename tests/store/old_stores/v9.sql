-- A poppy-tui store at schema version 9, written by 7cd237f30781
-- (tests/store/old_stores/make.py; do not edit: make it again).
PRAGMA user_version=9;
BEGIN TRANSACTION;
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
INSERT INTO "attempts" VALUES(1,5,6,1,'76c4a953-223b-4da7-a990-493497e60e71','2026-12-07T09:41:17.613557Z','2026-12-07T09:41:17.615953Z','performed',200,'{"exchange_id": "xch_88"}','performed (HTTP 200)','old-dispatcher');
INSERT INTO "attempts" VALUES(2,6,7,1,'631b02b4-7993-4956-bfbf-d3c3fd0da85c','2026-12-07T09:41:17.617162Z','2026-12-07T09:41:17.617639Z','not_performed',409,'{"error": "sold_out"}','refused: sold out','old-dispatcher');
INSERT INTO "attempts" VALUES(3,7,8,1,'d4c735b3-5017-45aa-a747-ef9b6e2392c6','2026-12-07T09:41:17.621819Z','2026-12-07T09:41:17.624380Z','unknown',NULL,'null','connection dropped after sending','old-dispatcher');
INSERT INTO "attempts" VALUES(4,8,9,1,'e2b4de43-0543-46a2-a132-cd003a438590','2026-12-07T09:41:17.625271Z','2026-12-07T09:41:17.625754Z','unknown',NULL,'null','timed out','old-dispatcher');
INSERT INTO "attempts" VALUES(5,13,14,1,'053d6c32-f42b-4071-ad54-13c0280bf5b9','2026-12-07T09:41:17.641609Z','2026-12-07T09:41:17.644603Z','sign_in_required',401,'{"error": "invalid_token"}','sign in again','old-dispatcher');
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
    , removed_at TEXT);
INSERT INTO "companies" VALUES(1,'http://127.0.0.1:8401','127.0.0.1:8401','Manzanita Outfitters','{"protocol_version": "0.4", "organization": {"name": "Manzanita Outfitters", "domain": "127.0.0.1:8401"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8401/openapi.json"}, {"type": "mcp", "url": "http://127.0.0.1:8401/mcp"}], "extensions": {"operations": [{"version": "2"}]}, "agent": {"protocols": [{"type": "poppy", "endpoint": "http://127.0.0.1:8401/conversations"}]}}',1,'usr_bGqtfP7mJFlB2uzyk2jb2A','ses_P5rSsYaRUW8gUXr-eyODHQ','2026-12-07T09:41:17.548974Z','2026-12-07T09:41:17.548974Z',NULL);
INSERT INTO "companies" VALUES(2,'http://127.0.0.1:8402','127.0.0.1:8402','Larkspur Air','{"protocol_version": "0.4", "organization": {"name": "Larkspur Air", "domain": "127.0.0.1:8402"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8402/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_cnvnN6OKKj69Lqxrs9MKeA','ses_cmJNuGlk7Wx4Pm96FeEfdw','2026-12-07T09:41:17.574771Z','2026-12-07T09:41:17.645175Z',NULL);
INSERT INTO "companies" VALUES(3,'http://127.0.0.1:8404','127.0.0.1:8404','Juniper Books','{"protocol_version": "0.4", "organization": {"name": "Juniper Books", "domain": "127.0.0.1:8404"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8404/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_iy8EpXgK4xDxIL_XNx6bCg','ses_SzmwZjAaLSHLUHJMc7SqUA','2026-12-07T09:41:17.627832Z','2026-12-07T09:41:17.627832Z','2026-12-07T09:41:17.632427Z');
CREATE TABLE company_documents (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        etag TEXT,
        fetched_at TEXT NOT NULL,
        fresh_until TEXT NOT NULL
    );
INSERT INTO "company_documents" VALUES(1,'"v1-etag"','2026-12-07T09:41:17.548974Z','2026-12-07T10:41:17.518769Z');
INSERT INTO "company_documents" VALUES(2,'"v1-etag"','2026-12-07T09:41:17.574771Z','2026-12-07T10:41:17.518769Z');
INSERT INTO "company_documents" VALUES(3,'"v1-etag"','2026-12-07T09:41:17.627832Z','2026-12-07T10:41:17.518769Z');
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
INSERT INTO "conversations" VALUES(1,1,'http://127.0.0.1:8401/conversations','conv_1',NULL,'2026-12-07T09:41:17.627267Z','2026-12-07T09:41:17.627267Z');
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
INSERT INTO "decisions" VALUES(1,2,3,'declined','2026-12-07T09:41:17.576433Z','tui','too dear');
INSERT INTO "decisions" VALUES(2,3,4,'approved','2026-12-07T09:41:17.584904Z','tui',NULL);
INSERT INTO "decisions" VALUES(3,4,5,'approved','2026-12-07T09:41:17.603526Z','tui',NULL);
INSERT INTO "decisions" VALUES(4,4,5,'withdrawn','2026-12-07T09:41:17.603888Z','tui',NULL);
INSERT INTO "decisions" VALUES(5,5,6,'approved','2026-12-07T09:41:17.612786Z','tui',NULL);
INSERT INTO "decisions" VALUES(6,6,7,'approved','2026-12-07T09:41:17.616742Z','tui',NULL);
INSERT INTO "decisions" VALUES(7,7,8,'approved','2026-12-07T09:41:17.621352Z','tui',NULL);
INSERT INTO "decisions" VALUES(8,8,9,'approved','2026-12-07T09:41:17.624779Z','tui',NULL);
INSERT INTO "decisions" VALUES(9,8,9,'resolved_performed','2026-12-07T09:41:17.625973Z','tui','the airline''s page shows it');
INSERT INTO "decisions" VALUES(10,12,13,'declined','2026-12-07T09:41:17.628381Z','tui',NULL);
INSERT INTO "decisions" VALUES(11,13,14,'approved','2026-12-07T09:41:17.641051Z','tui',NULL);
CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        detail TEXT
    );
INSERT INTO "events" VALUES(1,1,'2026-12-07T09:41:17.575294Z','received','revision r1');
INSERT INTO "events" VALUES(2,1,'2026-12-07T09:41:17.575870Z','new_revision','revision r2');
INSERT INTO "events" VALUES(3,2,'2026-12-07T09:41:17.576056Z','received','revision r1');
INSERT INTO "events" VALUES(4,2,'2026-12-07T09:41:17.580300Z','declined','too dear');
INSERT INTO "events" VALUES(5,3,'2026-12-07T09:41:17.584699Z','received','revision r1');
INSERT INTO "events" VALUES(6,3,'2026-12-07T09:41:17.584904Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(7,4,'2026-12-07T09:41:17.603360Z','received','revision r1');
INSERT INTO "events" VALUES(8,4,'2026-12-07T09:41:17.603526Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(9,4,'2026-12-07T09:41:17.603901Z','withdrawn',NULL);
INSERT INTO "events" VALUES(10,5,'2026-12-07T09:41:17.612585Z','received','revision r1');
INSERT INTO "events" VALUES(11,5,'2026-12-07T09:41:17.612786Z','approved','grace 0s');
INSERT INTO "events" VALUES(12,5,'2026-12-07T09:41:17.613650Z','attempt','#1');
INSERT INTO "events" VALUES(13,5,'2026-12-07T09:41:17.616350Z','performed','performed (HTTP 200)');
INSERT INTO "events" VALUES(14,6,'2026-12-07T09:41:17.616600Z','received','revision r1');
INSERT INTO "events" VALUES(15,6,'2026-12-07T09:41:17.616742Z','approved','grace 0s');
INSERT INTO "events" VALUES(16,6,'2026-12-07T09:41:17.617205Z','attempt','#1');
INSERT INTO "events" VALUES(17,6,'2026-12-07T09:41:17.617961Z','not_performed','refused: sold out');
INSERT INTO "events" VALUES(18,7,'2026-12-07T09:41:17.621207Z','received','revision r1');
INSERT INTO "events" VALUES(19,7,'2026-12-07T09:41:17.621352Z','approved','grace 0s');
INSERT INTO "events" VALUES(20,7,'2026-12-07T09:41:17.621866Z','attempt','#1');
INSERT INTO "events" VALUES(21,7,'2026-12-07T09:41:17.624466Z','outcome_unknown','connection dropped after sending');
INSERT INTO "events" VALUES(22,8,'2026-12-07T09:41:17.624647Z','received','revision r1');
INSERT INTO "events" VALUES(23,8,'2026-12-07T09:41:17.624779Z','approved','grace 0s');
INSERT INTO "events" VALUES(24,8,'2026-12-07T09:41:17.625316Z','attempt','#1');
INSERT INTO "events" VALUES(25,8,'2026-12-07T09:41:17.625849Z','outcome_unknown','timed out');
INSERT INTO "events" VALUES(26,8,'2026-12-07T09:41:17.625987Z','resolved','performed');
INSERT INTO "events" VALUES(27,9,'2026-12-07T09:41:17.626583Z','received','revision r1');
INSERT INTO "events" VALUES(28,9,'2026-12-07T09:41:17.627013Z','expired',NULL);
INSERT INTO "events" VALUES(29,10,'2026-12-07T09:41:17.627185Z','received','revision r1');
INSERT INTO "events" VALUES(30,11,'2026-12-07T09:41:17.627566Z','received','revision r1');
INSERT INTO "events" VALUES(31,12,'2026-12-07T09:41:17.628169Z','received','revision r1');
INSERT INTO "events" VALUES(32,12,'2026-12-07T09:41:17.628391Z','declined',NULL);
INSERT INTO "events" VALUES(33,13,'2026-12-07T09:41:17.640534Z','received','revision r1');
INSERT INTO "events" VALUES(34,14,'2026-12-07T09:41:17.640901Z','received','revision r1');
INSERT INTO "events" VALUES(35,13,'2026-12-07T09:41:17.641051Z','approved','grace 0s');
INSERT INTO "events" VALUES(36,13,'2026-12-07T09:41:17.641661Z','attempt','#1');
INSERT INTO "events" VALUES(37,13,'2026-12-07T09:41:17.644677Z','waiting_sign_in','waiting for you to sign in to Larkspur Air');
INSERT INTO "events" VALUES(38,2,'2026-12-07T09:41:17.645418Z','new_revision','revision r2');
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
INSERT INTO "messages" VALUES(1,1,'msg_1','user','Swap my jacket','{"id": "msg_1", "role": "user", "text": "Swap my jacket"}','2026-12-07T09:41:17.627370Z');
INSERT INTO "messages" VALUES(2,1,'msg_2','company','That is $70.00 more.','{"id": "msg_2", "role": "company", "text": "That is $70.00 more."}','2026-12-07T09:41:17.627431Z');
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
        updated_at TEXT NOT NULL, account_owned INTEGER NOT NULL DEFAULT 0, waiting_sign_in TEXT, account TEXT,
        UNIQUE (company_id, operation_id)
    );
INSERT INTO "operations" VALUES(1,1,'exc_pending','api','ses_P5rSsYaRUW8gUXr-eyODHQ','pending',2,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:17.575215Z','2026-12-07T09:41:17.575806Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(2,2,'chg_declined','api','ses_cmJNuGlk7Wx4Pm96FeEfdw','pending',16,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:17.576033Z','2026-12-07T09:41:17.645375Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(3,1,'ret_grace','api','ses_P5rSsYaRUW8gUXr-eyODHQ','approved',4,4,'2027-12-07T09:41:17.584904Z','6161347b-3a97-4b71-bae0-e102d1906bc5',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:17.584660Z','2026-12-07T09:41:17.584904Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(4,1,'ret_withdrawn','api','ses_P5rSsYaRUW8gUXr-eyODHQ','withdrawn',5,NULL,NULL,'18f4b90c-a773-4f32-bdd0-1c3710b95820',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:17.603323Z','2026-12-07T09:41:17.603855Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(5,1,'exc_performed','api','ses_P5rSsYaRUW8gUXr-eyODHQ','performed',6,6,'2026-12-07T09:41:17.612786Z','76c4a953-223b-4da7-a990-493497e60e71',NULL,NULL,NULL,1,'{"exchange_id": "xch_88"}','performed (HTTP 200)','2026-12-07T09:41:17.612490Z','2026-12-07T09:41:17.616151Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(6,2,'seat_refused','api','ses_kkAfBe4UKg1DfDtFgVYguw','not_performed',7,7,'2026-12-07T09:41:17.616742Z','631b02b4-7993-4956-bfbf-d3c3fd0da85c',NULL,NULL,NULL,1,'{"error": "sold_out"}','refused: sold out','2026-12-07T09:41:17.616572Z','2026-12-07T09:41:17.617812Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(7,2,'bag_unknown','api','ses_kkAfBe4UKg1DfDtFgVYguw','outcome_unknown',8,8,'2026-12-07T09:41:17.621352Z','d4c735b3-5017-45aa-a747-ef9b6e2392c6',NULL,NULL,NULL,1,'null','connection dropped after sending','2026-12-07T09:41:17.621174Z','2026-12-07T09:41:17.624446Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(8,2,'bag_resolved','api','ses_kkAfBe4UKg1DfDtFgVYguw','performed',9,9,'2026-12-07T09:41:17.624779Z','e2b4de43-0543-46a2-a132-cd003a438590',NULL,NULL,NULL,1,'null','the airline''s page shows it','2026-12-07T09:41:17.624623Z','2026-12-07T09:41:17.625940Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(9,1,'exc_expired','api','ses_P5rSsYaRUW8gUXr-eyODHQ','expired',10,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:17.626554Z','2026-12-07T09:41:22.518769Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(10,1,'can_mcp','mcp','ses_P5rSsYaRUW8gUXr-eyODHQ','pending',11,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:17.627162Z','2026-12-07T09:41:17.627162Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(11,1,'exc_talk','conversation','ses_P5rSsYaRUW8gUXr-eyODHQ','pending',12,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:17.627544Z','2026-12-07T09:41:17.627544Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(12,3,'ord_removed','api','ses_SzmwZjAaLSHLUHJMc7SqUA','declined',13,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:17.628145Z','2026-12-07T09:41:17.628358Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(13,2,'chg_owned','api','ses_kkAfBe4UKg1DfDtFgVYguw','sending',14,14,'2026-12-07T09:41:17.641051Z','053d6c32-f42b-4071-ad54-13c0280bf5b9',NULL,NULL,'2036-12-04T09:41:17.518769Z',1,NULL,'waiting for you to sign in to Larkspur Air','2026-12-07T09:41:17.640491Z','2026-12-07T09:41:17.644624Z',1,'waiting for you to sign in to Larkspur Air','alice@larkspur.test');
INSERT INTO "operations" VALUES(14,2,'chg_owned_pending','api','ses_kkAfBe4UKg1DfDtFgVYguw','pending',15,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:17.640875Z','2026-12-07T09:41:17.640875Z',1,NULL,'alice@larkspur.test');
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
INSERT INTO "requests" VALUES(1,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T09:41:17.574957Z',NULL,NULL);
INSERT INTO "requests" VALUES(2,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T09:41:17.575660Z',NULL,NULL);
INSERT INTO "requests" VALUES(3,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_declined"}','cli','2026-12-07T09:41:17.575951Z',NULL,NULL);
INSERT INTO "requests" VALUES(4,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_grace"}','cli','2026-12-07T09:41:17.584431Z',NULL,NULL);
INSERT INTO "requests" VALUES(5,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_withdrawn"}','cli','2026-12-07T09:41:17.603153Z',NULL,NULL);
INSERT INTO "requests" VALUES(6,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_performed"}','cli','2026-12-07T09:41:17.611094Z',NULL,NULL);
INSERT INTO "requests" VALUES(7,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/seat_refused"}','cli','2026-12-07T09:41:17.616447Z',NULL,NULL);
INSERT INTO "requests" VALUES(8,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_unknown"}','cli','2026-12-07T09:41:17.621031Z',NULL,NULL);
INSERT INTO "requests" VALUES(9,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_resolved"}','cli','2026-12-07T09:41:17.624529Z',NULL,NULL);
INSERT INTO "requests" VALUES(10,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_expired"}','cli','2026-12-07T09:41:17.626371Z',NULL,NULL);
INSERT INTO "requests" VALUES(11,1,'mcp','{"arguments": {"plan": "fiber-500"}, "interface": "mcp", "server_url": "http://127.0.0.1:8401/mcp", "tool": "cancel_plan"}','cli','2026-12-07T09:41:17.627082Z',NULL,NULL);
INSERT INTO "requests" VALUES(12,1,'conversation','{"conversation_id": "conv_1", "endpoint": "http://127.0.0.1:8401/conversations", "interface": "conversation", "message_id": "msg_3", "text": "Yes"}','cli','2026-12-07T09:41:17.627467Z',NULL,NULL);
INSERT INTO "requests" VALUES(13,3,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8404/api/orders/ord_removed"}','cli','2026-12-07T09:41:17.628064Z',NULL,NULL);
INSERT INTO "requests" VALUES(14,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_owned"}','cli','2026-12-07T09:41:17.636400Z',NULL,NULL);
INSERT INTO "requests" VALUES(15,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_owned_pending"}','cli','2026-12-07T09:41:17.640721Z',NULL,NULL);
INSERT INTO "requests" VALUES(16,2,'api','{"body": {}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/x"}','cli','2026-12-07T09:41:17.645283Z',NULL,NULL);
CREATE TABLE resource_reads (
        operation_row INTEGER PRIMARY KEY REFERENCES operations(id),
        revision_id INTEGER REFERENCES revisions(id),
        source TEXT NOT NULL,
        read_at TEXT NOT NULL,
        ok INTEGER NOT NULL,
        body_json TEXT,
        problem TEXT
    );
INSERT INTO "resource_reads" VALUES(1,2,'GET http://127.0.0.1:8401/api/orders/ord_7Hk2','2026-12-07T09:41:17.518769Z',1,'{"order_id": "ord_7Hk2", "status": "delivered"}',NULL);
CREATE TABLE revision_checks (
        revision_id INTEGER PRIMARY KEY REFERENCES revisions(id),
        checker_version INTEGER NOT NULL,
        amount TEXT,
        findings_json TEXT NOT NULL,
        checked_at TEXT NOT NULL
    );
INSERT INTO "revision_checks" VALUES(2,1,'USD 95.00','[["warning", "price_changed", "The price changed.", null]]','2026-12-07T09:41:17.644998Z');
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
        seen_at TEXT, session_id TEXT,
        UNIQUE (operation_row, revision)
    );
INSERT INTO "revisions" VALUES(1,1,'r1',1,'Exchange the **jacket** for $70.00 more.','{"price":{"amount":"70.00","currency":"USD"}}','2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "exc_pending", "revision": "r1", "summary": "Exchange the **jacket** for $70.00 more.", "expires_at": "2036-12-04T09:41:17Z", "terms": {"price": {"amount": "70.00", "currency": "USD"}}}',NULL,'2026-12-07T09:41:17.575215Z','2026-12-07T09:41:17.575605Z','ses_P5rSsYaRUW8gUXr-eyODHQ');
INSERT INTO "revisions" VALUES(2,1,'r2',2,'Exchange the **jacket** for $95.00 more.','{"price":{"amount":"95.00","currency":"USD"}}','2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "exc_pending", "revision": "r2", "summary": "Exchange the **jacket** for $95.00 more.", "expires_at": "2036-12-04T09:41:17Z", "terms": {"price": {"amount": "95.00", "currency": "USD"}}}',NULL,'2026-12-07T09:41:17.575806Z',NULL,'ses_P5rSsYaRUW8gUXr-eyODHQ');
INSERT INTO "revisions" VALUES(3,2,'r1',3,'Move your flight to 22 January for $45.00.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "chg_declined", "revision": "r1", "summary": "Move your flight to 22 January for $45.00.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.576033Z',NULL,'ses_kkAfBe4UKg1DfDtFgVYguw');
INSERT INTO "revisions" VALUES(4,3,'r1',4,'Return the beanie for a refund of $24.00.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "ret_grace", "revision": "r1", "summary": "Return the beanie for a refund of $24.00.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.584660Z',NULL,'ses_P5rSsYaRUW8gUXr-eyODHQ');
INSERT INTO "revisions" VALUES(5,4,'r1',5,'Return the gloves for $10.00.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "ret_withdrawn", "revision": "r1", "summary": "Return the gloves for $10.00.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.603323Z',NULL,'ses_P5rSsYaRUW8gUXr-eyODHQ');
INSERT INTO "revisions" VALUES(6,5,'r1',6,'Exchange the gloves (S) for M.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "exc_performed", "revision": "r1", "summary": "Exchange the gloves (S) for M.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.612490Z',NULL,'ses_P5rSsYaRUW8gUXr-eyODHQ');
INSERT INTO "revisions" VALUES(7,6,'r1',7,'Upgrade seat 14C to 4C for $89.00.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "seat_refused", "revision": "r1", "summary": "Upgrade seat 14C to 4C for $89.00.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.616572Z',NULL,'ses_kkAfBe4UKg1DfDtFgVYguw');
INSERT INTO "revisions" VALUES(8,7,'r1',8,'Add a checked bag for $35.00.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "bag_unknown", "revision": "r1", "summary": "Add a checked bag for $35.00.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.621174Z',NULL,'ses_kkAfBe4UKg1DfDtFgVYguw');
INSERT INTO "revisions" VALUES(9,8,'r1',9,'Add a second bag for $35.00.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "bag_resolved", "revision": "r1", "summary": "Add a second bag for $35.00.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.624623Z',NULL,'ses_kkAfBe4UKg1DfDtFgVYguw');
INSERT INTO "revisions" VALUES(10,9,'r1',10,'Exchange the shorts.',NULL,'2026-12-07T09:41:18.000000Z','2026-12-07T09:41:18Z','{"operation_id": "exc_expired", "revision": "r1", "summary": "Exchange the shorts.", "expires_at": "2026-12-07T09:41:18Z"}',NULL,'2026-12-07T09:41:17.626554Z',NULL,'ses_P5rSsYaRUW8gUXr-eyODHQ');
INSERT INTO "revisions" VALUES(11,10,'r1',11,'Cancel the Fiber 500 plan.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "can_mcp", "revision": "r1", "summary": "Cancel the Fiber 500 plan.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.627162Z',NULL,'ses_P5rSsYaRUW8gUXr-eyODHQ');
INSERT INTO "revisions" VALUES(12,11,'r1',12,'Exchange the jacket, as agreed.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "exc_talk", "revision": "r1", "summary": "Exchange the jacket, as agreed.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.627544Z',NULL,'ses_P5rSsYaRUW8gUXr-eyODHQ');
INSERT INTO "revisions" VALUES(13,12,'r1',13,'Order the atlas for $30.00.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "ord_removed", "revision": "r1", "summary": "Order the atlas for $30.00.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.628145Z',NULL,'ses_SzmwZjAaLSHLUHJMc7SqUA');
INSERT INTO "revisions" VALUES(14,13,'r1',14,'Change the booking.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "chg_owned", "revision": "r1", "summary": "Change the booking.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.640491Z',NULL,'ses_kkAfBe4UKg1DfDtFgVYguw');
INSERT INTO "revisions" VALUES(15,14,'r1',15,'Rebook the flight.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "chg_owned_pending", "revision": "r1", "summary": "Rebook the flight.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.640875Z',NULL,'ses_kkAfBe4UKg1DfDtFgVYguw');
INSERT INTO "revisions" VALUES(16,2,'r2',16,'Move it to the 23rd.',NULL,'2036-12-04T09:41:17.000000Z','2036-12-04T09:41:17Z','{"operation_id": "chg_declined", "revision": "r2", "summary": "Move it to the 23rd.", "expires_at": "2036-12-04T09:41:17Z"}',NULL,'2026-12-07T09:41:17.645375Z',NULL,'ses_cmJNuGlk7Wx4Pm96FeEfdw');
CREATE TABLE sign_ins (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        issuer TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('device', 'direct', 'mediated')),
        scopes TEXT NOT NULL,
        account TEXT,
        signed_in_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
INSERT INTO "sign_ins" VALUES(2,'http://127.0.0.1:8402','device','poppy:read orders','alice@larkspur.test','2026-12-07T09:41:17.634350Z','2026-12-07T09:41:17.634350Z');
CREATE INDEX operations_status ON operations (status, updated_at);
CREATE INDEX operations_updated ON operations (updated_at);
CREATE INDEX decisions_operation ON decisions (operation_row);
CREATE INDEX attempts_operation ON attempts (operation_row);
CREATE INDEX events_operation ON events (operation_row);
CREATE INDEX operations_due ON operations (updated_at) WHERE status IN ('approved', 'sending');
COMMIT;
