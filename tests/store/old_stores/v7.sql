-- A poppy-tui store at schema version 7, written by e98c40a30703
-- (tests/store/old_stores/make.py; do not edit: make it again).
PRAGMA user_version=7;
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
INSERT INTO "attempts" VALUES(1,5,6,1,'9dcee24b-0e93-4cd9-ba6f-38a62d4e57f5','2026-12-07T09:41:13.725805Z','2026-12-07T09:41:13.728415Z','performed',200,'{"exchange_id": "xch_88"}','performed (HTTP 200)','old-dispatcher');
INSERT INTO "attempts" VALUES(2,6,7,1,'126da9ee-0f83-4d8c-818b-b845ce5cfd97','2026-12-07T09:41:13.729344Z','2026-12-07T09:41:13.729889Z','not_performed',409,'{"error": "sold_out"}','refused: sold out','old-dispatcher');
INSERT INTO "attempts" VALUES(3,7,8,1,'93553fcc-c669-471a-be20-5bd74b1a3331','2026-12-07T09:41:13.730721Z','2026-12-07T09:41:13.732401Z','unknown',NULL,'null','connection dropped after sending','old-dispatcher');
INSERT INTO "attempts" VALUES(4,8,9,1,'2aa3695f-e0f2-4ec8-9435-cc240bb6ecf2','2026-12-07T09:41:13.733228Z','2026-12-07T09:41:13.736422Z','unknown',NULL,'null','timed out','old-dispatcher');
INSERT INTO "attempts" VALUES(5,13,14,1,'45d2679f-c26f-44fa-8346-23af46cc1473','2026-12-07T09:41:13.745887Z','2026-12-07T09:41:13.748388Z','sign_in_required',401,'{"error": "invalid_token"}','sign in again','old-dispatcher');
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
INSERT INTO "companies" VALUES(1,'http://127.0.0.1:8401','127.0.0.1:8401','Manzanita Outfitters','{"protocol_version": "0.4", "organization": {"name": "Manzanita Outfitters", "domain": "127.0.0.1:8401"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8401/openapi.json"}, {"type": "mcp", "url": "http://127.0.0.1:8401/mcp"}], "extensions": {"operations": [{"version": "2"}]}, "agent": {"protocols": [{"type": "poppy", "endpoint": "http://127.0.0.1:8401/conversations"}]}}',1,'usr_dZLbCOIWJdMI-TkkLIQ6cg','ses_elOVBAqQd9icj6rCAwUoCA','2026-12-07T09:41:13.665094Z','2026-12-07T09:41:13.665094Z',NULL);
INSERT INTO "companies" VALUES(2,'http://127.0.0.1:8402','127.0.0.1:8402','Larkspur Air','{"protocol_version": "0.4", "organization": {"name": "Larkspur Air", "domain": "127.0.0.1:8402"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8402/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_-uPQnJYGc58P9MDTs-c3VQ','ses_SUEgrOKGFRB01uAky9akAg','2026-12-07T09:41:13.691975Z','2026-12-07T09:41:13.748729Z',NULL);
INSERT INTO "companies" VALUES(3,'http://127.0.0.1:8404','127.0.0.1:8404','Juniper Books','{"protocol_version": "0.4", "organization": {"name": "Juniper Books", "domain": "127.0.0.1:8404"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8404/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_N79IPs4Dt-iXFAqjrA2M6Q','ses_6u_zPAY4KC9TvJ2osz-iwA','2026-12-07T09:41:13.738222Z','2026-12-07T09:41:13.738222Z','2026-12-07T09:41:13.739236Z');
CREATE TABLE company_documents (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        etag TEXT,
        fetched_at TEXT NOT NULL,
        fresh_until TEXT NOT NULL
    );
INSERT INTO "company_documents" VALUES(1,'"v1-etag"','2026-12-07T09:41:13.665094Z','2026-12-07T10:41:13.636011Z');
INSERT INTO "company_documents" VALUES(2,'"v1-etag"','2026-12-07T09:41:13.691975Z','2026-12-07T10:41:13.636011Z');
INSERT INTO "company_documents" VALUES(3,'"v1-etag"','2026-12-07T09:41:13.738222Z','2026-12-07T10:41:13.636011Z');
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
INSERT INTO "conversations" VALUES(1,1,'http://127.0.0.1:8401/conversations','conv_1',NULL,'2026-12-07T09:41:13.737660Z','2026-12-07T09:41:13.737660Z');
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
INSERT INTO "decisions" VALUES(1,2,3,'declined','2026-12-07T09:41:13.693627Z','tui','too dear');
INSERT INTO "decisions" VALUES(2,3,4,'approved','2026-12-07T09:41:13.716922Z','tui',NULL);
INSERT INTO "decisions" VALUES(3,4,5,'approved','2026-12-07T09:41:13.723874Z','tui',NULL);
INSERT INTO "decisions" VALUES(4,4,5,'withdrawn','2026-12-07T09:41:13.724157Z','tui',NULL);
INSERT INTO "decisions" VALUES(5,5,6,'approved','2026-12-07T09:41:13.725087Z','tui',NULL);
INSERT INTO "decisions" VALUES(6,6,7,'approved','2026-12-07T09:41:13.728885Z','tui',NULL);
INSERT INTO "decisions" VALUES(7,7,8,'approved','2026-12-07T09:41:13.730299Z','tui',NULL);
INSERT INTO "decisions" VALUES(8,8,9,'approved','2026-12-07T09:41:13.732793Z','tui',NULL);
INSERT INTO "decisions" VALUES(9,8,9,'resolved_performed','2026-12-07T09:41:13.736635Z','tui','the airline''s page shows it');
INSERT INTO "decisions" VALUES(10,12,13,'declined','2026-12-07T09:41:13.738634Z','tui',NULL);
INSERT INTO "decisions" VALUES(11,13,14,'approved','2026-12-07T09:41:13.745450Z','tui',NULL);
CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        detail TEXT
    );
INSERT INTO "events" VALUES(1,1,'2026-12-07T09:41:13.692537Z','received','revision r1');
INSERT INTO "events" VALUES(2,1,'2026-12-07T09:41:13.693136Z','new_revision','revision r2');
INSERT INTO "events" VALUES(3,2,'2026-12-07T09:41:13.693389Z','received','revision r1');
INSERT INTO "events" VALUES(4,2,'2026-12-07T09:41:13.693660Z','declined','too dear');
INSERT INTO "events" VALUES(5,3,'2026-12-07T09:41:13.716760Z','received','revision r1');
INSERT INTO "events" VALUES(6,3,'2026-12-07T09:41:13.716922Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(7,4,'2026-12-07T09:41:13.723688Z','received','revision r1');
INSERT INTO "events" VALUES(8,4,'2026-12-07T09:41:13.723874Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(9,4,'2026-12-07T09:41:13.724177Z','withdrawn',NULL);
INSERT INTO "events" VALUES(10,5,'2026-12-07T09:41:13.724943Z','received','revision r1');
INSERT INTO "events" VALUES(11,5,'2026-12-07T09:41:13.725087Z','approved','grace 0s');
INSERT INTO "events" VALUES(12,5,'2026-12-07T09:41:13.725915Z','attempt','#1');
INSERT INTO "events" VALUES(13,5,'2026-12-07T09:41:13.728544Z','performed','performed (HTTP 200)');
INSERT INTO "events" VALUES(14,6,'2026-12-07T09:41:13.728746Z','received','revision r1');
INSERT INTO "events" VALUES(15,6,'2026-12-07T09:41:13.728885Z','approved','grace 0s');
INSERT INTO "events" VALUES(16,6,'2026-12-07T09:41:13.729394Z','attempt','#1');
INSERT INTO "events" VALUES(17,6,'2026-12-07T09:41:13.729967Z','not_performed','refused: sold out');
INSERT INTO "events" VALUES(18,7,'2026-12-07T09:41:13.730160Z','received','revision r1');
INSERT INTO "events" VALUES(19,7,'2026-12-07T09:41:13.730299Z','approved','grace 0s');
INSERT INTO "events" VALUES(20,7,'2026-12-07T09:41:13.730765Z','attempt','#1');
INSERT INTO "events" VALUES(21,7,'2026-12-07T09:41:13.732481Z','outcome_unknown','connection dropped after sending');
INSERT INTO "events" VALUES(22,8,'2026-12-07T09:41:13.732661Z','received','revision r1');
INSERT INTO "events" VALUES(23,8,'2026-12-07T09:41:13.732793Z','approved','grace 0s');
INSERT INTO "events" VALUES(24,8,'2026-12-07T09:41:13.733272Z','attempt','#1');
INSERT INTO "events" VALUES(25,8,'2026-12-07T09:41:13.736503Z','outcome_unknown','timed out');
INSERT INTO "events" VALUES(26,8,'2026-12-07T09:41:13.736650Z','resolved','performed');
INSERT INTO "events" VALUES(27,9,'2026-12-07T09:41:13.737160Z','received','revision r1');
INSERT INTO "events" VALUES(28,9,'2026-12-07T09:41:13.737405Z','expired',NULL);
INSERT INTO "events" VALUES(29,10,'2026-12-07T09:41:13.737579Z','received','revision r1');
INSERT INTO "events" VALUES(30,11,'2026-12-07T09:41:13.737968Z','received','revision r1');
INSERT INTO "events" VALUES(31,12,'2026-12-07T09:41:13.738474Z','received','revision r1');
INSERT INTO "events" VALUES(32,12,'2026-12-07T09:41:13.738645Z','declined',NULL);
INSERT INTO "events" VALUES(33,13,'2026-12-07T09:41:13.744982Z','received','revision r1');
INSERT INTO "events" VALUES(34,14,'2026-12-07T09:41:13.745312Z','received','revision r1');
INSERT INTO "events" VALUES(35,13,'2026-12-07T09:41:13.745450Z','approved','grace 0s');
INSERT INTO "events" VALUES(36,13,'2026-12-07T09:41:13.745952Z','attempt','#1');
INSERT INTO "events" VALUES(37,13,'2026-12-07T09:41:13.748458Z','waiting_sign_in','waiting for you to sign in to Larkspur Air');
INSERT INTO "events" VALUES(38,2,'2026-12-07T09:41:13.748978Z','new_revision','revision r2');
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
INSERT INTO "messages" VALUES(1,1,'msg_1','user','Swap my jacket','{"id": "msg_1", "role": "user", "text": "Swap my jacket"}','2026-12-07T09:41:13.737766Z');
INSERT INTO "messages" VALUES(2,1,'msg_2','company','That is $70.00 more.','{"id": "msg_2", "role": "company", "text": "That is $70.00 more."}','2026-12-07T09:41:13.737828Z');
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
        updated_at TEXT NOT NULL, account_owned INTEGER NOT NULL DEFAULT 0, waiting_sign_in TEXT,
        UNIQUE (company_id, operation_id)
    );
INSERT INTO "operations" VALUES(1,1,'exc_pending','api','ses_elOVBAqQd9icj6rCAwUoCA','pending',2,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:13.692460Z','2026-12-07T09:41:13.693068Z',0,NULL);
INSERT INTO "operations" VALUES(2,2,'chg_declined','api','ses_SUEgrOKGFRB01uAky9akAg','pending',16,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:13.693316Z','2026-12-07T09:41:13.748931Z',0,NULL);
INSERT INTO "operations" VALUES(3,1,'ret_grace','api','ses_elOVBAqQd9icj6rCAwUoCA','approved',4,4,'2027-12-07T09:41:13.716922Z','1754633b-90a5-4d12-a62b-a24797d8bd78',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:13.716719Z','2026-12-07T09:41:13.716922Z',0,NULL);
INSERT INTO "operations" VALUES(4,1,'ret_withdrawn','api','ses_elOVBAqQd9icj6rCAwUoCA','withdrawn',5,NULL,NULL,'3180dc2a-72ae-4719-8583-09b6d73602f5',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:13.723638Z','2026-12-07T09:41:13.724121Z',0,NULL);
INSERT INTO "operations" VALUES(5,1,'exc_performed','api','ses_elOVBAqQd9icj6rCAwUoCA','performed',6,6,'2026-12-07T09:41:13.725087Z','9dcee24b-0e93-4cd9-ba6f-38a62d4e57f5',NULL,NULL,NULL,1,'{"exchange_id": "xch_88"}','performed (HTTP 200)','2026-12-07T09:41:13.724913Z','2026-12-07T09:41:13.728495Z',0,NULL);
INSERT INTO "operations" VALUES(6,2,'seat_refused','api','ses_E9X4R-w-mJ_OxnyT7qeaLw','not_performed',7,7,'2026-12-07T09:41:13.728885Z','126da9ee-0f83-4d8c-818b-b845ce5cfd97',NULL,NULL,NULL,1,'{"error": "sold_out"}','refused: sold out','2026-12-07T09:41:13.728719Z','2026-12-07T09:41:13.729944Z',0,NULL);
INSERT INTO "operations" VALUES(7,2,'bag_unknown','api','ses_E9X4R-w-mJ_OxnyT7qeaLw','outcome_unknown',8,8,'2026-12-07T09:41:13.730299Z','93553fcc-c669-471a-be20-5bd74b1a3331',NULL,NULL,NULL,1,'null','connection dropped after sending','2026-12-07T09:41:13.730133Z','2026-12-07T09:41:13.732461Z',0,NULL);
INSERT INTO "operations" VALUES(8,2,'bag_resolved','api','ses_E9X4R-w-mJ_OxnyT7qeaLw','performed',9,9,'2026-12-07T09:41:13.732793Z','2aa3695f-e0f2-4ec8-9435-cc240bb6ecf2',NULL,NULL,NULL,1,'null','the airline''s page shows it','2026-12-07T09:41:13.732636Z','2026-12-07T09:41:13.736600Z',0,NULL);
INSERT INTO "operations" VALUES(9,1,'exc_expired','api','ses_elOVBAqQd9icj6rCAwUoCA','expired',10,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:13.737134Z','2026-12-07T09:41:18.636011Z',0,NULL);
INSERT INTO "operations" VALUES(10,1,'can_mcp','mcp','ses_elOVBAqQd9icj6rCAwUoCA','pending',11,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:13.737556Z','2026-12-07T09:41:13.737556Z',0,NULL);
INSERT INTO "operations" VALUES(11,1,'exc_talk','conversation','ses_elOVBAqQd9icj6rCAwUoCA','pending',12,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:13.737945Z','2026-12-07T09:41:13.737945Z',0,NULL);
INSERT INTO "operations" VALUES(12,3,'ord_removed','api','ses_6u_zPAY4KC9TvJ2osz-iwA','declined',13,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:13.738450Z','2026-12-07T09:41:13.738613Z',0,NULL);
INSERT INTO "operations" VALUES(13,2,'chg_owned','api','ses_E9X4R-w-mJ_OxnyT7qeaLw','sending',14,14,'2026-12-07T09:41:13.745450Z','45d2679f-c26f-44fa-8346-23af46cc1473',NULL,NULL,'2036-12-04T09:41:13.636011Z',1,NULL,'waiting for you to sign in to Larkspur Air','2026-12-07T09:41:13.744950Z','2026-12-07T09:41:13.748407Z',1,'waiting for you to sign in to Larkspur Air');
INSERT INTO "operations" VALUES(14,2,'chg_owned_pending','api','ses_E9X4R-w-mJ_OxnyT7qeaLw','pending',15,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:13.745285Z','2026-12-07T09:41:13.745285Z',1,NULL);
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
INSERT INTO "requests" VALUES(1,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T09:41:13.692164Z',NULL,NULL);
INSERT INTO "requests" VALUES(2,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T09:41:13.692917Z',NULL,NULL);
INSERT INTO "requests" VALUES(3,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_declined"}','cli','2026-12-07T09:41:13.693226Z',NULL,NULL);
INSERT INTO "requests" VALUES(4,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_grace"}','cli','2026-12-07T09:41:13.716560Z',NULL,NULL);
INSERT INTO "requests" VALUES(5,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_withdrawn"}','cli','2026-12-07T09:41:13.720090Z',NULL,NULL);
INSERT INTO "requests" VALUES(6,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_performed"}','cli','2026-12-07T09:41:13.724801Z',NULL,NULL);
INSERT INTO "requests" VALUES(7,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/seat_refused"}','cli','2026-12-07T09:41:13.728615Z',NULL,NULL);
INSERT INTO "requests" VALUES(8,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_unknown"}','cli','2026-12-07T09:41:13.730035Z',NULL,NULL);
INSERT INTO "requests" VALUES(9,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_resolved"}','cli','2026-12-07T09:41:13.732543Z',NULL,NULL);
INSERT INTO "requests" VALUES(10,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_expired"}','cli','2026-12-07T09:41:13.737032Z',NULL,NULL);
INSERT INTO "requests" VALUES(11,1,'mcp','{"arguments": {"plan": "fiber-500"}, "interface": "mcp", "server_url": "http://127.0.0.1:8401/mcp", "tool": "cancel_plan"}','cli','2026-12-07T09:41:13.737474Z',NULL,NULL);
INSERT INTO "requests" VALUES(12,1,'conversation','{"conversation_id": "conv_1", "endpoint": "http://127.0.0.1:8401/conversations", "interface": "conversation", "message_id": "msg_3", "text": "Yes"}','cli','2026-12-07T09:41:13.737864Z',NULL,NULL);
INSERT INTO "requests" VALUES(13,3,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8404/api/orders/ord_removed"}','cli','2026-12-07T09:41:13.738371Z',NULL,NULL);
INSERT INTO "requests" VALUES(14,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_owned"}','cli','2026-12-07T09:41:13.744747Z',NULL,NULL);
INSERT INTO "requests" VALUES(15,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_owned_pending"}','cli','2026-12-07T09:41:13.745129Z',NULL,NULL);
INSERT INTO "requests" VALUES(16,2,'api','{"body": {}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/x"}','cli','2026-12-07T09:41:13.748839Z',NULL,NULL);
CREATE TABLE revision_checks (
        revision_id INTEGER PRIMARY KEY REFERENCES revisions(id),
        checker_version INTEGER NOT NULL,
        amount TEXT,
        findings_json TEXT NOT NULL,
        checked_at TEXT NOT NULL
    );
INSERT INTO "revision_checks" VALUES(2,1,'USD 95.00','[["warning", "price_changed", "The price changed.", null]]','2026-12-07T09:41:13.748603Z');
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
INSERT INTO "revisions" VALUES(1,1,'r1',1,'Exchange the **jacket** for $70.00 more.','{"price":{"amount":"70.00","currency":"USD"}}','2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "exc_pending", "revision": "r1", "summary": "Exchange the **jacket** for $70.00 more.", "expires_at": "2036-12-04T09:41:13Z", "terms": {"price": {"amount": "70.00", "currency": "USD"}}}',NULL,'2026-12-07T09:41:13.692460Z','2026-12-07T09:41:13.692860Z','ses_elOVBAqQd9icj6rCAwUoCA');
INSERT INTO "revisions" VALUES(2,1,'r2',2,'Exchange the **jacket** for $95.00 more.','{"price":{"amount":"95.00","currency":"USD"}}','2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "exc_pending", "revision": "r2", "summary": "Exchange the **jacket** for $95.00 more.", "expires_at": "2036-12-04T09:41:13Z", "terms": {"price": {"amount": "95.00", "currency": "USD"}}}',NULL,'2026-12-07T09:41:13.693068Z',NULL,'ses_elOVBAqQd9icj6rCAwUoCA');
INSERT INTO "revisions" VALUES(3,2,'r1',3,'Move your flight to 22 January for $45.00.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "chg_declined", "revision": "r1", "summary": "Move your flight to 22 January for $45.00.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.693316Z',NULL,'ses_E9X4R-w-mJ_OxnyT7qeaLw');
INSERT INTO "revisions" VALUES(4,3,'r1',4,'Return the beanie for a refund of $24.00.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "ret_grace", "revision": "r1", "summary": "Return the beanie for a refund of $24.00.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.716719Z',NULL,'ses_elOVBAqQd9icj6rCAwUoCA');
INSERT INTO "revisions" VALUES(5,4,'r1',5,'Return the gloves for $10.00.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "ret_withdrawn", "revision": "r1", "summary": "Return the gloves for $10.00.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.723638Z',NULL,'ses_elOVBAqQd9icj6rCAwUoCA');
INSERT INTO "revisions" VALUES(6,5,'r1',6,'Exchange the gloves (S) for M.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "exc_performed", "revision": "r1", "summary": "Exchange the gloves (S) for M.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.724913Z',NULL,'ses_elOVBAqQd9icj6rCAwUoCA');
INSERT INTO "revisions" VALUES(7,6,'r1',7,'Upgrade seat 14C to 4C for $89.00.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "seat_refused", "revision": "r1", "summary": "Upgrade seat 14C to 4C for $89.00.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.728719Z',NULL,'ses_E9X4R-w-mJ_OxnyT7qeaLw');
INSERT INTO "revisions" VALUES(8,7,'r1',8,'Add a checked bag for $35.00.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "bag_unknown", "revision": "r1", "summary": "Add a checked bag for $35.00.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.730133Z',NULL,'ses_E9X4R-w-mJ_OxnyT7qeaLw');
INSERT INTO "revisions" VALUES(9,8,'r1',9,'Add a second bag for $35.00.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "bag_resolved", "revision": "r1", "summary": "Add a second bag for $35.00.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.732636Z',NULL,'ses_E9X4R-w-mJ_OxnyT7qeaLw');
INSERT INTO "revisions" VALUES(10,9,'r1',10,'Exchange the shorts.',NULL,'2026-12-07T09:41:14.000000Z','2026-12-07T09:41:14Z','{"operation_id": "exc_expired", "revision": "r1", "summary": "Exchange the shorts.", "expires_at": "2026-12-07T09:41:14Z"}',NULL,'2026-12-07T09:41:13.737134Z',NULL,'ses_elOVBAqQd9icj6rCAwUoCA');
INSERT INTO "revisions" VALUES(11,10,'r1',11,'Cancel the Fiber 500 plan.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "can_mcp", "revision": "r1", "summary": "Cancel the Fiber 500 plan.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.737556Z',NULL,'ses_elOVBAqQd9icj6rCAwUoCA');
INSERT INTO "revisions" VALUES(12,11,'r1',12,'Exchange the jacket, as agreed.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "exc_talk", "revision": "r1", "summary": "Exchange the jacket, as agreed.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.737945Z',NULL,'ses_elOVBAqQd9icj6rCAwUoCA');
INSERT INTO "revisions" VALUES(13,12,'r1',13,'Order the atlas for $30.00.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "ord_removed", "revision": "r1", "summary": "Order the atlas for $30.00.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.738450Z',NULL,'ses_6u_zPAY4KC9TvJ2osz-iwA');
INSERT INTO "revisions" VALUES(14,13,'r1',14,'Change the booking.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "chg_owned", "revision": "r1", "summary": "Change the booking.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.744950Z',NULL,'ses_E9X4R-w-mJ_OxnyT7qeaLw');
INSERT INTO "revisions" VALUES(15,14,'r1',15,'Rebook the flight.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "chg_owned_pending", "revision": "r1", "summary": "Rebook the flight.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.745285Z',NULL,'ses_E9X4R-w-mJ_OxnyT7qeaLw');
INSERT INTO "revisions" VALUES(16,2,'r2',16,'Move it to the 23rd.',NULL,'2036-12-04T09:41:13.000000Z','2036-12-04T09:41:13Z','{"operation_id": "chg_declined", "revision": "r2", "summary": "Move it to the 23rd.", "expires_at": "2036-12-04T09:41:13Z"}',NULL,'2026-12-07T09:41:13.748931Z',NULL,'ses_SUEgrOKGFRB01uAky9akAg');
CREATE TABLE sign_ins (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        issuer TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('device', 'direct', 'mediated')),
        scopes TEXT NOT NULL,
        account TEXT,
        signed_in_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
INSERT INTO "sign_ins" VALUES(2,'http://127.0.0.1:8402','device','poppy:read orders','alice@larkspur.test','2026-12-07T09:41:13.744318Z','2026-12-07T09:41:13.744318Z');
CREATE INDEX operations_status ON operations (status, updated_at);
CREATE INDEX operations_updated ON operations (updated_at);
CREATE INDEX decisions_operation ON decisions (operation_row);
CREATE INDEX attempts_operation ON attempts (operation_row);
CREATE INDEX events_operation ON events (operation_row);
CREATE INDEX operations_due ON operations (updated_at) WHERE status IN ('approved', 'sending');
COMMIT;
