-- A poppy-tui store at schema version 1, written by e7237ca70bda
-- (tests/store/old_stores/make.py; do not edit: make it again).
PRAGMA user_version=1;
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
INSERT INTO "attempts" VALUES(1,5,6,1,'d203c320-b22f-4676-9174-19a24925fb69','2026-12-07T09:41:07.894412Z','2026-12-07T09:41:07.894780Z','performed',200,'{"exchange_id": "xch_88"}','performed (HTTP 200)','old-dispatcher');
INSERT INTO "attempts" VALUES(2,6,7,1,'d1d38403-b395-42f5-a06e-8442f05ae798','2026-12-07T09:41:07.896880Z','2026-12-07T09:41:07.900433Z','not_performed',409,'{"error": "sold_out"}','refused: sold out','old-dispatcher');
INSERT INTO "attempts" VALUES(3,7,8,1,'f5e24660-132b-401b-ac5c-722760778a56','2026-12-07T09:41:07.910134Z','2026-12-07T09:41:07.912429Z','unknown',NULL,'null','connection dropped after sending','old-dispatcher');
INSERT INTO "attempts" VALUES(4,8,9,1,'d3819816-d76c-4512-ae54-d3c1cefcef50','2026-12-07T09:41:07.916890Z','2026-12-07T09:41:07.917293Z','unknown',NULL,'null','timed out','old-dispatcher');
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
INSERT INTO "companies" VALUES(1,'http://127.0.0.1:8401','127.0.0.1:8401','Manzanita Outfitters','{"protocol_version": "0.4", "organization": {"name": "Manzanita Outfitters", "domain": "127.0.0.1:8401"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8401/openapi.json"}, {"type": "mcp", "url": "http://127.0.0.1:8401/mcp"}], "extensions": {"operations": [{"version": "2"}]}, "agent": {"protocols": [{"type": "poppy", "endpoint": "http://127.0.0.1:8401/conversations"}]}}',1,'usr_EJ79EhjouTQmvWNWom73Fg','ses__qxiIT2q9zDbJYtyp7AiKg','2026-12-07T09:41:07.861389Z','2026-12-07T09:41:07.861389Z');
INSERT INTO "companies" VALUES(2,'http://127.0.0.1:8402','127.0.0.1:8402','Larkspur Air','{"protocol_version": "0.4", "organization": {"name": "Larkspur Air", "domain": "127.0.0.1:8402"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8402/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_x_Lh2Z2OQOHEW3lJchTHyA','ses_l4PGDhUXfJcMR0Wb3SVx-g','2026-12-07T09:41:07.864645Z','2026-12-07T09:41:07.864645Z');
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
INSERT INTO "conversations" VALUES(1,1,'http://127.0.0.1:8401/conversations','conv_1',NULL,'2026-12-07T09:41:07.933140Z','2026-12-07T09:41:07.933140Z');
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
INSERT INTO "decisions" VALUES(1,2,3,'declined','2026-12-07T09:41:07.882370Z','tui','too dear');
INSERT INTO "decisions" VALUES(2,3,4,'approved','2026-12-07T09:41:07.883499Z','tui',NULL);
INSERT INTO "decisions" VALUES(3,4,5,'approved','2026-12-07T09:41:07.886565Z','tui',NULL);
INSERT INTO "decisions" VALUES(4,4,5,'withdrawn','2026-12-07T09:41:07.887161Z','tui',NULL);
INSERT INTO "decisions" VALUES(5,5,6,'approved','2026-12-07T09:41:07.888294Z','tui',NULL);
INSERT INTO "decisions" VALUES(6,6,7,'approved','2026-12-07T09:41:07.896086Z','tui',NULL);
INSERT INTO "decisions" VALUES(7,7,8,'approved','2026-12-07T09:41:07.902149Z','tui',NULL);
INSERT INTO "decisions" VALUES(8,8,9,'approved','2026-12-07T09:41:07.915824Z','tui',NULL);
INSERT INTO "decisions" VALUES(9,8,9,'resolved_performed','2026-12-07T09:41:07.924494Z','tui','the airline''s page shows it');
CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        detail TEXT
    );
INSERT INTO "events" VALUES(1,1,'2026-12-07T09:41:07.865502Z','received','revision r1');
INSERT INTO "events" VALUES(2,1,'2026-12-07T09:41:07.881241Z','new_revision','revision r2');
INSERT INTO "events" VALUES(3,2,'2026-12-07T09:41:07.881841Z','received','revision r1');
INSERT INTO "events" VALUES(4,2,'2026-12-07T09:41:07.882405Z','declined','too dear');
INSERT INTO "events" VALUES(5,3,'2026-12-07T09:41:07.883015Z','received','revision r1');
INSERT INTO "events" VALUES(6,3,'2026-12-07T09:41:07.883499Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(7,4,'2026-12-07T09:41:07.884553Z','received','revision r1');
INSERT INTO "events" VALUES(8,4,'2026-12-07T09:41:07.886565Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(9,4,'2026-12-07T09:41:07.887179Z','withdrawn',NULL);
INSERT INTO "events" VALUES(10,5,'2026-12-07T09:41:07.887869Z','received','revision r1');
INSERT INTO "events" VALUES(11,5,'2026-12-07T09:41:07.888294Z','approved','grace 0s');
INSERT INTO "events" VALUES(12,5,'2026-12-07T09:41:07.894467Z','attempt','#1');
INSERT INTO "events" VALUES(13,5,'2026-12-07T09:41:07.895084Z','performed','performed (HTTP 200)');
INSERT INTO "events" VALUES(14,6,'2026-12-07T09:41:07.895699Z','received','revision r1');
INSERT INTO "events" VALUES(15,6,'2026-12-07T09:41:07.896086Z','approved','grace 0s');
INSERT INTO "events" VALUES(16,6,'2026-12-07T09:41:07.896904Z','attempt','#1');
INSERT INTO "events" VALUES(17,6,'2026-12-07T09:41:07.900736Z','not_performed','refused: sold out');
INSERT INTO "events" VALUES(18,7,'2026-12-07T09:41:07.901733Z','received','revision r1');
INSERT INTO "events" VALUES(19,7,'2026-12-07T09:41:07.902149Z','approved','grace 0s');
INSERT INTO "events" VALUES(20,7,'2026-12-07T09:41:07.910178Z','attempt','#1');
INSERT INTO "events" VALUES(21,7,'2026-12-07T09:41:07.913170Z','outcome_unknown','connection dropped after sending');
INSERT INTO "events" VALUES(22,8,'2026-12-07T09:41:07.915276Z','received','revision r1');
INSERT INTO "events" VALUES(23,8,'2026-12-07T09:41:07.915824Z','approved','grace 0s');
INSERT INTO "events" VALUES(24,8,'2026-12-07T09:41:07.916917Z','attempt','#1');
INSERT INTO "events" VALUES(25,8,'2026-12-07T09:41:07.917623Z','outcome_unknown','timed out');
INSERT INTO "events" VALUES(26,8,'2026-12-07T09:41:07.924522Z','resolved','performed');
INSERT INTO "events" VALUES(27,9,'2026-12-07T09:41:07.925342Z','received','revision r1');
INSERT INTO "events" VALUES(28,9,'2026-12-07T09:41:07.925741Z','expired',NULL);
INSERT INTO "events" VALUES(29,10,'2026-12-07T09:41:07.930104Z','received','revision r1');
INSERT INTO "events" VALUES(30,11,'2026-12-07T09:41:07.940763Z','received','revision r1');
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
INSERT INTO "messages" VALUES(1,1,'msg_1','user','Swap my jacket','{"id": "msg_1", "role": "user", "text": "Swap my jacket"}','2026-12-07T09:41:07.937820Z');
INSERT INTO "messages" VALUES(2,1,'msg_2','company','That is $70.00 more.','{"id": "msg_2", "role": "company", "text": "That is $70.00 more."}','2026-12-07T09:41:07.938105Z');
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
INSERT INTO "operations" VALUES(1,1,'exc_pending','api','ses__qxiIT2q9zDbJYtyp7AiKg','pending',2,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:07.865373Z','2026-12-07T09:41:07.881166Z');
INSERT INTO "operations" VALUES(2,2,'chg_declined','api','ses_l4PGDhUXfJcMR0Wb3SVx-g','declined',3,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:07.881812Z','2026-12-07T09:41:07.882280Z');
INSERT INTO "operations" VALUES(3,1,'ret_grace','api','ses__qxiIT2q9zDbJYtyp7AiKg','approved',4,4,'2027-12-07T09:41:07.883499Z','9d7b235e-7ce3-49ea-8fa6-51329c89a71b',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:07.882989Z','2026-12-07T09:41:07.883499Z');
INSERT INTO "operations" VALUES(4,1,'ret_withdrawn','api','ses__qxiIT2q9zDbJYtyp7AiKg','withdrawn',5,NULL,NULL,'ffd28641-922b-47b4-9e67-6f21ce314637',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:07.884527Z','2026-12-07T09:41:07.887127Z');
INSERT INTO "operations" VALUES(5,1,'exc_performed','api','ses__qxiIT2q9zDbJYtyp7AiKg','performed',6,6,'2026-12-07T09:41:07.888294Z','d203c320-b22f-4676-9174-19a24925fb69',NULL,NULL,NULL,1,'{"exchange_id": "xch_88"}','performed (HTTP 200)','2026-12-07T09:41:07.887842Z','2026-12-07T09:41:07.895028Z');
INSERT INTO "operations" VALUES(6,2,'seat_refused','api','ses_l4PGDhUXfJcMR0Wb3SVx-g','not_performed',7,7,'2026-12-07T09:41:07.896086Z','d1d38403-b395-42f5-a06e-8442f05ae798',NULL,NULL,NULL,1,'{"error": "sold_out"}','refused: sold out','2026-12-07T09:41:07.895671Z','2026-12-07T09:41:07.900700Z');
INSERT INTO "operations" VALUES(7,2,'bag_unknown','api','ses_l4PGDhUXfJcMR0Wb3SVx-g','outcome_unknown',8,8,'2026-12-07T09:41:07.902149Z','f5e24660-132b-401b-ac5c-722760778a56',NULL,NULL,NULL,1,'null','connection dropped after sending','2026-12-07T09:41:07.901701Z','2026-12-07T09:41:07.913128Z');
INSERT INTO "operations" VALUES(8,2,'bag_resolved','api','ses_l4PGDhUXfJcMR0Wb3SVx-g','performed',9,9,'2026-12-07T09:41:07.915824Z','d3819816-d76c-4512-ae54-d3c1cefcef50',NULL,NULL,NULL,1,'null','the airline''s page shows it','2026-12-07T09:41:07.915240Z','2026-12-07T09:41:07.924430Z');
INSERT INTO "operations" VALUES(9,1,'exc_expired','api','ses__qxiIT2q9zDbJYtyp7AiKg','expired',10,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:07.925312Z','2026-12-07T09:41:12.779386Z');
INSERT INTO "operations" VALUES(10,1,'can_mcp','mcp','ses__qxiIT2q9zDbJYtyp7AiKg','pending',11,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:07.930073Z','2026-12-07T09:41:07.930073Z');
INSERT INTO "operations" VALUES(11,1,'exc_talk','conversation','ses__qxiIT2q9zDbJYtyp7AiKg','pending',12,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:07.940727Z','2026-12-07T09:41:07.940727Z');
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
INSERT INTO "requests" VALUES(1,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T09:41:07.864994Z',NULL,NULL);
INSERT INTO "requests" VALUES(2,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T09:41:07.880322Z',NULL,NULL);
INSERT INTO "requests" VALUES(3,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_declined"}','cli','2026-12-07T09:41:07.881545Z',NULL,NULL);
INSERT INTO "requests" VALUES(4,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_grace"}','cli','2026-12-07T09:41:07.882752Z',NULL,NULL);
INSERT INTO "requests" VALUES(5,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_withdrawn"}','cli','2026-12-07T09:41:07.884148Z',NULL,NULL);
INSERT INTO "requests" VALUES(6,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_performed"}','cli','2026-12-07T09:41:07.887562Z',NULL,NULL);
INSERT INTO "requests" VALUES(7,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/seat_refused"}','cli','2026-12-07T09:41:07.895385Z',NULL,NULL);
INSERT INTO "requests" VALUES(8,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_unknown"}','cli','2026-12-07T09:41:07.901023Z',NULL,NULL);
INSERT INTO "requests" VALUES(9,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_resolved"}','cli','2026-12-07T09:41:07.913442Z',NULL,NULL);
INSERT INTO "requests" VALUES(10,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_expired"}','cli','2026-12-07T09:41:07.925012Z',NULL,NULL);
INSERT INTO "requests" VALUES(11,1,'mcp','{"arguments": {"plan": "fiber-500"}, "interface": "mcp", "server_url": "http://127.0.0.1:8401/mcp", "tool": "cancel_plan"}','cli','2026-12-07T09:41:07.929747Z',NULL,NULL);
INSERT INTO "requests" VALUES(12,1,'conversation','{"conversation_id": "conv_1", "endpoint": "http://127.0.0.1:8401/conversations", "interface": "conversation", "message_id": "msg_3", "text": "Yes"}','cli','2026-12-07T09:41:07.938513Z',NULL,NULL);
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
INSERT INTO "revisions" VALUES(1,1,'r1',1,'Exchange the **jacket** for $70.00 more.','{"price":{"amount":"70.00","currency":"USD"}}','2036-12-04T09:41:07.000000Z','2036-12-04T09:41:07Z','{"operation_id": "exc_pending", "revision": "r1", "summary": "Exchange the **jacket** for $70.00 more.", "expires_at": "2036-12-04T09:41:07Z", "terms": {"price": {"amount": "70.00", "currency": "USD"}}}',NULL,'2026-12-07T09:41:07.865373Z','2026-12-07T09:41:07.871798Z');
INSERT INTO "revisions" VALUES(2,1,'r2',2,'Exchange the **jacket** for $95.00 more.','{"price":{"amount":"95.00","currency":"USD"}}','2036-12-04T09:41:07.000000Z','2036-12-04T09:41:07Z','{"operation_id": "exc_pending", "revision": "r2", "summary": "Exchange the **jacket** for $95.00 more.", "expires_at": "2036-12-04T09:41:07Z", "terms": {"price": {"amount": "95.00", "currency": "USD"}}}',NULL,'2026-12-07T09:41:07.881166Z',NULL);
INSERT INTO "revisions" VALUES(3,2,'r1',3,'Move your flight to 22 January for $45.00.',NULL,'2036-12-04T09:41:07.000000Z','2036-12-04T09:41:07Z','{"operation_id": "chg_declined", "revision": "r1", "summary": "Move your flight to 22 January for $45.00.", "expires_at": "2036-12-04T09:41:07Z"}',NULL,'2026-12-07T09:41:07.881812Z',NULL);
INSERT INTO "revisions" VALUES(4,3,'r1',4,'Return the beanie for a refund of $24.00.',NULL,'2036-12-04T09:41:07.000000Z','2036-12-04T09:41:07Z','{"operation_id": "ret_grace", "revision": "r1", "summary": "Return the beanie for a refund of $24.00.", "expires_at": "2036-12-04T09:41:07Z"}',NULL,'2026-12-07T09:41:07.882989Z',NULL);
INSERT INTO "revisions" VALUES(5,4,'r1',5,'Return the gloves for $10.00.',NULL,'2036-12-04T09:41:07.000000Z','2036-12-04T09:41:07Z','{"operation_id": "ret_withdrawn", "revision": "r1", "summary": "Return the gloves for $10.00.", "expires_at": "2036-12-04T09:41:07Z"}',NULL,'2026-12-07T09:41:07.884527Z',NULL);
INSERT INTO "revisions" VALUES(6,5,'r1',6,'Exchange the gloves (S) for M.',NULL,'2036-12-04T09:41:07.000000Z','2036-12-04T09:41:07Z','{"operation_id": "exc_performed", "revision": "r1", "summary": "Exchange the gloves (S) for M.", "expires_at": "2036-12-04T09:41:07Z"}',NULL,'2026-12-07T09:41:07.887842Z',NULL);
INSERT INTO "revisions" VALUES(7,6,'r1',7,'Upgrade seat 14C to 4C for $89.00.',NULL,'2036-12-04T09:41:07.000000Z','2036-12-04T09:41:07Z','{"operation_id": "seat_refused", "revision": "r1", "summary": "Upgrade seat 14C to 4C for $89.00.", "expires_at": "2036-12-04T09:41:07Z"}',NULL,'2026-12-07T09:41:07.895671Z',NULL);
INSERT INTO "revisions" VALUES(8,7,'r1',8,'Add a checked bag for $35.00.',NULL,'2036-12-04T09:41:07.000000Z','2036-12-04T09:41:07Z','{"operation_id": "bag_unknown", "revision": "r1", "summary": "Add a checked bag for $35.00.", "expires_at": "2036-12-04T09:41:07Z"}',NULL,'2026-12-07T09:41:07.901701Z',NULL);
INSERT INTO "revisions" VALUES(9,8,'r1',9,'Add a second bag for $35.00.',NULL,'2036-12-04T09:41:07.000000Z','2036-12-04T09:41:07Z','{"operation_id": "bag_resolved", "revision": "r1", "summary": "Add a second bag for $35.00.", "expires_at": "2036-12-04T09:41:07Z"}',NULL,'2026-12-07T09:41:07.915240Z',NULL);
INSERT INTO "revisions" VALUES(10,9,'r1',10,'Exchange the shorts.',NULL,'2026-12-07T09:41:08.000000Z','2026-12-07T09:41:08Z','{"operation_id": "exc_expired", "revision": "r1", "summary": "Exchange the shorts.", "expires_at": "2026-12-07T09:41:08Z"}',NULL,'2026-12-07T09:41:07.925312Z',NULL);
INSERT INTO "revisions" VALUES(11,10,'r1',11,'Cancel the Fiber 500 plan.',NULL,'2036-12-04T09:41:07.000000Z','2036-12-04T09:41:07Z','{"operation_id": "can_mcp", "revision": "r1", "summary": "Cancel the Fiber 500 plan.", "expires_at": "2036-12-04T09:41:07Z"}',NULL,'2026-12-07T09:41:07.930073Z',NULL);
INSERT INTO "revisions" VALUES(12,11,'r1',12,'Exchange the jacket, as agreed.',NULL,'2036-12-04T09:41:07.000000Z','2036-12-04T09:41:07Z','{"operation_id": "exc_talk", "revision": "r1", "summary": "Exchange the jacket, as agreed.", "expires_at": "2036-12-04T09:41:07Z"}',NULL,'2026-12-07T09:41:07.940727Z',NULL);
CREATE INDEX operations_status ON operations (status, updated_at);
CREATE INDEX operations_updated ON operations (updated_at);
CREATE INDEX decisions_operation ON decisions (operation_row);
CREATE INDEX attempts_operation ON attempts (operation_row);
CREATE INDEX events_operation ON events (operation_row);
COMMIT;
