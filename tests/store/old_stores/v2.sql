-- A poppy-tui store at schema version 2, written by c1beb362ace0
-- (tests/store/old_stores/make.py; do not edit: make it again).
PRAGMA user_version=2;
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
INSERT INTO "attempts" VALUES(1,5,6,1,'37016122-10f8-4ab2-96a4-a869384e95cd','2026-12-07T09:41:08.557211Z','2026-12-07T09:41:08.560449Z','performed',200,'{"exchange_id": "xch_88"}','performed (HTTP 200)','old-dispatcher');
INSERT INTO "attempts" VALUES(2,6,7,1,'48742904-2dde-4576-88c2-7c6cf6af0dbc','2026-12-07T09:41:08.561121Z','2026-12-07T09:41:08.561572Z','not_performed',409,'{"error": "sold_out"}','refused: sold out','old-dispatcher');
INSERT INTO "attempts" VALUES(3,7,8,1,'e3f613aa-d77a-4801-89af-5216229f6d29','2026-12-07T09:41:08.562152Z','2026-12-07T09:41:08.562494Z','unknown',NULL,'null','connection dropped after sending','old-dispatcher');
INSERT INTO "attempts" VALUES(4,8,9,1,'76bb311e-7289-4c9b-b5cf-aa238172e2d0','2026-12-07T09:41:08.567875Z','2026-12-07T09:41:08.576325Z','unknown',NULL,'null','timed out','old-dispatcher');
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
INSERT INTO "companies" VALUES(1,'http://127.0.0.1:8401','127.0.0.1:8401','Manzanita Outfitters','{"protocol_version": "0.4", "organization": {"name": "Manzanita Outfitters", "domain": "127.0.0.1:8401"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8401/openapi.json"}, {"type": "mcp", "url": "http://127.0.0.1:8401/mcp"}], "extensions": {"operations": [{"version": "2"}]}, "agent": {"protocols": [{"type": "poppy", "endpoint": "http://127.0.0.1:8401/conversations"}]}}',1,'usr_Eq7nFuWwHFeDoLeqdKxgsA','ses_J_cEOEUSUvIqVrpdLWIh7A','2026-12-07T09:41:08.550704Z','2026-12-07T09:41:08.550704Z',NULL);
INSERT INTO "companies" VALUES(2,'http://127.0.0.1:8402','127.0.0.1:8402','Larkspur Air','{"protocol_version": "0.4", "organization": {"name": "Larkspur Air", "domain": "127.0.0.1:8402"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8402/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_k5v-dMXcSZ_IW5Pabwaa5g','ses_czqOKYVZHuOHkXDBsMxi8w','2026-12-07T09:41:08.551261Z','2026-12-07T09:41:08.551261Z',NULL);
INSERT INTO "companies" VALUES(3,'http://127.0.0.1:8404','127.0.0.1:8404','Juniper Books','{"protocol_version": "0.4", "organization": {"name": "Juniper Books", "domain": "127.0.0.1:8404"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8404/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_BGobS4pBRWV-8J2ESvgz8w','ses_HQlYy8C0a-nP0KDsixb40Q','2026-12-07T09:41:08.585658Z','2026-12-07T09:41:08.585658Z','2026-12-07T09:41:08.592508Z');
CREATE TABLE company_documents (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        etag TEXT,
        fetched_at TEXT NOT NULL,
        fresh_until TEXT NOT NULL
    );
INSERT INTO "company_documents" VALUES(1,'"v1-etag"','2026-12-07T09:41:08.550704Z','2026-12-07T10:41:08.544263Z');
INSERT INTO "company_documents" VALUES(2,'"v1-etag"','2026-12-07T09:41:08.551261Z','2026-12-07T10:41:08.544263Z');
INSERT INTO "company_documents" VALUES(3,'"v1-etag"','2026-12-07T09:41:08.585658Z','2026-12-07T10:41:08.544263Z');
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
INSERT INTO "conversations" VALUES(1,1,'http://127.0.0.1:8401/conversations','conv_1',NULL,'2026-12-07T09:41:08.585038Z','2026-12-07T09:41:08.585038Z');
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
INSERT INTO "decisions" VALUES(1,2,3,'declined','2026-12-07T09:41:08.554559Z','tui','too dear');
INSERT INTO "decisions" VALUES(2,3,4,'approved','2026-12-07T09:41:08.555346Z','tui',NULL);
INSERT INTO "decisions" VALUES(3,4,5,'approved','2026-12-07T09:41:08.555782Z','tui',NULL);
INSERT INTO "decisions" VALUES(4,4,5,'withdrawn','2026-12-07T09:41:08.556094Z','tui',NULL);
INSERT INTO "decisions" VALUES(5,5,6,'approved','2026-12-07T09:41:08.556912Z','tui',NULL);
INSERT INTO "decisions" VALUES(6,6,7,'approved','2026-12-07T09:41:08.560873Z','tui',NULL);
INSERT INTO "decisions" VALUES(7,7,8,'approved','2026-12-07T09:41:08.561927Z','tui',NULL);
INSERT INTO "decisions" VALUES(8,8,9,'approved','2026-12-07T09:41:08.567623Z','tui',NULL);
INSERT INTO "decisions" VALUES(9,8,9,'resolved_performed','2026-12-07T09:41:08.576550Z','tui','the airline''s page shows it');
INSERT INTO "decisions" VALUES(10,12,13,'declined','2026-12-07T09:41:08.586059Z','tui',NULL);
CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        detail TEXT
    );
INSERT INTO "events" VALUES(1,1,'2026-12-07T09:41:08.551636Z','received','revision r1');
INSERT INTO "events" VALUES(2,1,'2026-12-07T09:41:08.552122Z','new_revision','revision r2');
INSERT INTO "events" VALUES(3,2,'2026-12-07T09:41:08.554301Z','received','revision r1');
INSERT INTO "events" VALUES(4,2,'2026-12-07T09:41:08.554613Z','declined','too dear');
INSERT INTO "events" VALUES(5,3,'2026-12-07T09:41:08.555220Z','received','revision r1');
INSERT INTO "events" VALUES(6,3,'2026-12-07T09:41:08.555346Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(7,4,'2026-12-07T09:41:08.555667Z','received','revision r1');
INSERT INTO "events" VALUES(8,4,'2026-12-07T09:41:08.555782Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(9,4,'2026-12-07T09:41:08.556107Z','withdrawn',NULL);
INSERT INTO "events" VALUES(10,5,'2026-12-07T09:41:08.556788Z','received','revision r1');
INSERT INTO "events" VALUES(11,5,'2026-12-07T09:41:08.556912Z','approved','grace 0s');
INSERT INTO "events" VALUES(12,5,'2026-12-07T09:41:08.557249Z','attempt','#1');
INSERT INTO "events" VALUES(13,5,'2026-12-07T09:41:08.560572Z','performed','performed (HTTP 200)');
INSERT INTO "events" VALUES(14,6,'2026-12-07T09:41:08.560748Z','received','revision r1');
INSERT INTO "events" VALUES(15,6,'2026-12-07T09:41:08.560873Z','approved','grace 0s');
INSERT INTO "events" VALUES(16,6,'2026-12-07T09:41:08.561136Z','attempt','#1');
INSERT INTO "events" VALUES(17,6,'2026-12-07T09:41:08.561637Z','not_performed','refused: sold out');
INSERT INTO "events" VALUES(18,7,'2026-12-07T09:41:08.561801Z','received','revision r1');
INSERT INTO "events" VALUES(19,7,'2026-12-07T09:41:08.561927Z','approved','grace 0s');
INSERT INTO "events" VALUES(20,7,'2026-12-07T09:41:08.562167Z','attempt','#1');
INSERT INTO "events" VALUES(21,7,'2026-12-07T09:41:08.567264Z','outcome_unknown','connection dropped after sending');
INSERT INTO "events" VALUES(22,8,'2026-12-07T09:41:08.567453Z','received','revision r1');
INSERT INTO "events" VALUES(23,8,'2026-12-07T09:41:08.567623Z','approved','grace 0s');
INSERT INTO "events" VALUES(24,8,'2026-12-07T09:41:08.567948Z','attempt','#1');
INSERT INTO "events" VALUES(25,8,'2026-12-07T09:41:08.576419Z','outcome_unknown','timed out');
INSERT INTO "events" VALUES(26,8,'2026-12-07T09:41:08.576566Z','resolved','performed');
INSERT INTO "events" VALUES(27,9,'2026-12-07T09:41:08.584587Z','received','revision r1');
INSERT INTO "events" VALUES(28,9,'2026-12-07T09:41:08.584792Z','expired',NULL);
INSERT INTO "events" VALUES(29,10,'2026-12-07T09:41:08.584955Z','received','revision r1');
INSERT INTO "events" VALUES(30,11,'2026-12-07T09:41:08.585401Z','received','revision r1');
INSERT INTO "events" VALUES(31,12,'2026-12-07T09:41:08.585908Z','received','revision r1');
INSERT INTO "events" VALUES(32,12,'2026-12-07T09:41:08.586070Z','declined',NULL);
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
INSERT INTO "messages" VALUES(1,1,'msg_1','user','Swap my jacket','{"id": "msg_1", "role": "user", "text": "Swap my jacket"}','2026-12-07T09:41:08.585140Z');
INSERT INTO "messages" VALUES(2,1,'msg_2','company','That is $70.00 more.','{"id": "msg_2", "role": "company", "text": "That is $70.00 more."}','2026-12-07T09:41:08.585255Z');
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
INSERT INTO "operations" VALUES(1,1,'exc_pending','api','ses_J_cEOEUSUvIqVrpdLWIh7A','pending',2,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:08.551578Z','2026-12-07T09:41:08.552062Z');
INSERT INTO "operations" VALUES(2,2,'chg_declined','api','ses_czqOKYVZHuOHkXDBsMxi8w','declined',3,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:08.554274Z','2026-12-07T09:41:08.554450Z');
INSERT INTO "operations" VALUES(3,1,'ret_grace','api','ses_J_cEOEUSUvIqVrpdLWIh7A','approved',4,4,'2027-12-07T09:41:08.555346Z','690bbaca-3adc-41b1-a8ed-5a9ad01fa64d',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:08.555195Z','2026-12-07T09:41:08.555346Z');
INSERT INTO "operations" VALUES(4,1,'ret_withdrawn','api','ses_J_cEOEUSUvIqVrpdLWIh7A','withdrawn',5,NULL,NULL,'06ab3731-1beb-43d4-b8e3-f2be8b216225',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:08.555645Z','2026-12-07T09:41:08.556070Z');
INSERT INTO "operations" VALUES(5,1,'exc_performed','api','ses_J_cEOEUSUvIqVrpdLWIh7A','performed',6,6,'2026-12-07T09:41:08.556912Z','37016122-10f8-4ab2-96a4-a869384e95cd',NULL,NULL,NULL,1,'{"exchange_id": "xch_88"}','performed (HTTP 200)','2026-12-07T09:41:08.556761Z','2026-12-07T09:41:08.560532Z');
INSERT INTO "operations" VALUES(6,2,'seat_refused','api','ses_czqOKYVZHuOHkXDBsMxi8w','not_performed',7,7,'2026-12-07T09:41:08.560873Z','48742904-2dde-4576-88c2-7c6cf6af0dbc',NULL,NULL,NULL,1,'{"error": "sold_out"}','refused: sold out','2026-12-07T09:41:08.560724Z','2026-12-07T09:41:08.561622Z');
INSERT INTO "operations" VALUES(7,2,'bag_unknown','api','ses_czqOKYVZHuOHkXDBsMxi8w','outcome_unknown',8,8,'2026-12-07T09:41:08.561927Z','e3f613aa-d77a-4801-89af-5216229f6d29',NULL,NULL,NULL,1,'null','connection dropped after sending','2026-12-07T09:41:08.561776Z','2026-12-07T09:41:08.567236Z');
INSERT INTO "operations" VALUES(8,2,'bag_resolved','api','ses_czqOKYVZHuOHkXDBsMxi8w','performed',9,9,'2026-12-07T09:41:08.567623Z','76bb311e-7289-4c9b-b5cf-aa238172e2d0',NULL,NULL,NULL,1,'null','the airline''s page shows it','2026-12-07T09:41:08.567428Z','2026-12-07T09:41:08.576519Z');
INSERT INTO "operations" VALUES(9,1,'exc_expired','api','ses_J_cEOEUSUvIqVrpdLWIh7A','expired',10,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:08.584556Z','2026-12-07T09:41:13.544263Z');
INSERT INTO "operations" VALUES(10,1,'can_mcp','mcp','ses_J_cEOEUSUvIqVrpdLWIh7A','pending',11,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:08.584933Z','2026-12-07T09:41:08.584933Z');
INSERT INTO "operations" VALUES(11,1,'exc_talk','conversation','ses_J_cEOEUSUvIqVrpdLWIh7A','pending',12,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:08.585379Z','2026-12-07T09:41:08.585379Z');
INSERT INTO "operations" VALUES(12,3,'ord_removed','api','ses_HQlYy8C0a-nP0KDsixb40Q','declined',13,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:08.585886Z','2026-12-07T09:41:08.586040Z');
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
INSERT INTO "requests" VALUES(1,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T09:41:08.551402Z',NULL,NULL);
INSERT INTO "requests" VALUES(2,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T09:41:08.551961Z',NULL,NULL);
INSERT INTO "requests" VALUES(3,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_declined"}','cli','2026-12-07T09:41:08.554157Z',NULL,NULL);
INSERT INTO "requests" VALUES(4,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_grace"}','cli','2026-12-07T09:41:08.555090Z',NULL,NULL);
INSERT INTO "requests" VALUES(5,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_withdrawn"}','cli','2026-12-07T09:41:08.555573Z',NULL,NULL);
INSERT INTO "requests" VALUES(6,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_performed"}','cli','2026-12-07T09:41:08.556637Z',NULL,NULL);
INSERT INTO "requests" VALUES(7,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/seat_refused"}','cli','2026-12-07T09:41:08.560633Z',NULL,NULL);
INSERT INTO "requests" VALUES(8,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_unknown"}','cli','2026-12-07T09:41:08.561691Z',NULL,NULL);
INSERT INTO "requests" VALUES(9,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_resolved"}','cli','2026-12-07T09:41:08.567336Z',NULL,NULL);
INSERT INTO "requests" VALUES(10,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_expired"}','cli','2026-12-07T09:41:08.584418Z',NULL,NULL);
INSERT INTO "requests" VALUES(11,1,'mcp','{"arguments": {"plan": "fiber-500"}, "interface": "mcp", "server_url": "http://127.0.0.1:8401/mcp", "tool": "cancel_plan"}','cli','2026-12-07T09:41:08.584859Z',NULL,NULL);
INSERT INTO "requests" VALUES(12,1,'conversation','{"conversation_id": "conv_1", "endpoint": "http://127.0.0.1:8401/conversations", "interface": "conversation", "message_id": "msg_3", "text": "Yes"}','cli','2026-12-07T09:41:08.585302Z',NULL,NULL);
INSERT INTO "requests" VALUES(13,3,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8404/api/orders/ord_removed"}','cli','2026-12-07T09:41:08.585812Z',NULL,NULL);
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
INSERT INTO "revisions" VALUES(1,1,'r1',1,'Exchange the **jacket** for $70.00 more.','{"price":{"amount":"70.00","currency":"USD"}}','2036-12-04T09:41:08.000000Z','2036-12-04T09:41:08Z','{"operation_id": "exc_pending", "revision": "r1", "summary": "Exchange the **jacket** for $70.00 more.", "expires_at": "2036-12-04T09:41:08Z", "terms": {"price": {"amount": "70.00", "currency": "USD"}}}',NULL,'2026-12-07T09:41:08.551578Z','2026-12-07T09:41:08.551909Z');
INSERT INTO "revisions" VALUES(2,1,'r2',2,'Exchange the **jacket** for $95.00 more.','{"price":{"amount":"95.00","currency":"USD"}}','2036-12-04T09:41:08.000000Z','2036-12-04T09:41:08Z','{"operation_id": "exc_pending", "revision": "r2", "summary": "Exchange the **jacket** for $95.00 more.", "expires_at": "2036-12-04T09:41:08Z", "terms": {"price": {"amount": "95.00", "currency": "USD"}}}',NULL,'2026-12-07T09:41:08.552062Z',NULL);
INSERT INTO "revisions" VALUES(3,2,'r1',3,'Move your flight to 22 January for $45.00.',NULL,'2036-12-04T09:41:08.000000Z','2036-12-04T09:41:08Z','{"operation_id": "chg_declined", "revision": "r1", "summary": "Move your flight to 22 January for $45.00.", "expires_at": "2036-12-04T09:41:08Z"}',NULL,'2026-12-07T09:41:08.554274Z',NULL);
INSERT INTO "revisions" VALUES(4,3,'r1',4,'Return the beanie for a refund of $24.00.',NULL,'2036-12-04T09:41:08.000000Z','2036-12-04T09:41:08Z','{"operation_id": "ret_grace", "revision": "r1", "summary": "Return the beanie for a refund of $24.00.", "expires_at": "2036-12-04T09:41:08Z"}',NULL,'2026-12-07T09:41:08.555195Z',NULL);
INSERT INTO "revisions" VALUES(5,4,'r1',5,'Return the gloves for $10.00.',NULL,'2036-12-04T09:41:08.000000Z','2036-12-04T09:41:08Z','{"operation_id": "ret_withdrawn", "revision": "r1", "summary": "Return the gloves for $10.00.", "expires_at": "2036-12-04T09:41:08Z"}',NULL,'2026-12-07T09:41:08.555645Z',NULL);
INSERT INTO "revisions" VALUES(6,5,'r1',6,'Exchange the gloves (S) for M.',NULL,'2036-12-04T09:41:08.000000Z','2036-12-04T09:41:08Z','{"operation_id": "exc_performed", "revision": "r1", "summary": "Exchange the gloves (S) for M.", "expires_at": "2036-12-04T09:41:08Z"}',NULL,'2026-12-07T09:41:08.556761Z',NULL);
INSERT INTO "revisions" VALUES(7,6,'r1',7,'Upgrade seat 14C to 4C for $89.00.',NULL,'2036-12-04T09:41:08.000000Z','2036-12-04T09:41:08Z','{"operation_id": "seat_refused", "revision": "r1", "summary": "Upgrade seat 14C to 4C for $89.00.", "expires_at": "2036-12-04T09:41:08Z"}',NULL,'2026-12-07T09:41:08.560724Z',NULL);
INSERT INTO "revisions" VALUES(8,7,'r1',8,'Add a checked bag for $35.00.',NULL,'2036-12-04T09:41:08.000000Z','2036-12-04T09:41:08Z','{"operation_id": "bag_unknown", "revision": "r1", "summary": "Add a checked bag for $35.00.", "expires_at": "2036-12-04T09:41:08Z"}',NULL,'2026-12-07T09:41:08.561776Z',NULL);
INSERT INTO "revisions" VALUES(9,8,'r1',9,'Add a second bag for $35.00.',NULL,'2036-12-04T09:41:08.000000Z','2036-12-04T09:41:08Z','{"operation_id": "bag_resolved", "revision": "r1", "summary": "Add a second bag for $35.00.", "expires_at": "2036-12-04T09:41:08Z"}',NULL,'2026-12-07T09:41:08.567428Z',NULL);
INSERT INTO "revisions" VALUES(10,9,'r1',10,'Exchange the shorts.',NULL,'2026-12-07T09:41:09.000000Z','2026-12-07T09:41:09Z','{"operation_id": "exc_expired", "revision": "r1", "summary": "Exchange the shorts.", "expires_at": "2026-12-07T09:41:09Z"}',NULL,'2026-12-07T09:41:08.584556Z',NULL);
INSERT INTO "revisions" VALUES(11,10,'r1',11,'Cancel the Fiber 500 plan.',NULL,'2036-12-04T09:41:08.000000Z','2036-12-04T09:41:08Z','{"operation_id": "can_mcp", "revision": "r1", "summary": "Cancel the Fiber 500 plan.", "expires_at": "2036-12-04T09:41:08Z"}',NULL,'2026-12-07T09:41:08.584933Z',NULL);
INSERT INTO "revisions" VALUES(12,11,'r1',12,'Exchange the jacket, as agreed.',NULL,'2036-12-04T09:41:08.000000Z','2036-12-04T09:41:08Z','{"operation_id": "exc_talk", "revision": "r1", "summary": "Exchange the jacket, as agreed.", "expires_at": "2036-12-04T09:41:08Z"}',NULL,'2026-12-07T09:41:08.585379Z',NULL);
INSERT INTO "revisions" VALUES(13,12,'r1',13,'Order the atlas for $30.00.',NULL,'2036-12-04T09:41:08.000000Z','2036-12-04T09:41:08Z','{"operation_id": "ord_removed", "revision": "r1", "summary": "Order the atlas for $30.00.", "expires_at": "2036-12-04T09:41:08Z"}',NULL,'2026-12-07T09:41:08.585886Z',NULL);
CREATE INDEX operations_status ON operations (status, updated_at);
CREATE INDEX operations_updated ON operations (updated_at);
CREATE INDEX decisions_operation ON decisions (operation_row);
CREATE INDEX attempts_operation ON attempts (operation_row);
CREATE INDEX events_operation ON events (operation_row);
COMMIT;
