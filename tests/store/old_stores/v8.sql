-- A poppy-tui store at schema version 8, written by a8b753bf085a
-- (tests/store/old_stores/make.py; do not edit: make it again).
PRAGMA user_version=8;
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
INSERT INTO "attempts" VALUES(1,5,6,1,'8d6e002f-15f7-4567-921a-24ced5c0eec8','2026-12-07T09:41:15.302851Z','2026-12-07T09:41:15.318815Z','performed',200,'{"exchange_id": "xch_88"}','performed (HTTP 200)','old-dispatcher');
INSERT INTO "attempts" VALUES(2,6,7,1,'0016685a-dfc2-4fbe-8ef1-1f54072ad1d0','2026-12-07T09:41:15.325486Z','2026-12-07T09:41:15.348592Z','not_performed',409,'{"error": "sold_out"}','refused: sold out','old-dispatcher');
INSERT INTO "attempts" VALUES(3,7,8,1,'0612402a-2311-4367-813a-c0670c54f9bc','2026-12-07T09:41:15.365513Z','2026-12-07T09:41:15.370830Z','unknown',NULL,'null','connection dropped after sending','old-dispatcher');
INSERT INTO "attempts" VALUES(4,8,9,1,'9fb2cf9c-9985-478d-a194-1dfe68430966','2026-12-07T09:41:15.371835Z','2026-12-07T09:41:15.377745Z','unknown',NULL,'null','timed out','old-dispatcher');
INSERT INTO "attempts" VALUES(5,13,14,1,'aa188ee5-fd2d-42bf-8f6c-b3cf5a9459e1','2026-12-07T09:41:15.387951Z','2026-12-07T09:41:15.397292Z','sign_in_required',401,'{"error": "invalid_token"}','sign in again','old-dispatcher');
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
INSERT INTO "companies" VALUES(1,'http://127.0.0.1:8401','127.0.0.1:8401','Manzanita Outfitters','{"protocol_version": "0.4", "organization": {"name": "Manzanita Outfitters", "domain": "127.0.0.1:8401"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8401/openapi.json"}, {"type": "mcp", "url": "http://127.0.0.1:8401/mcp"}], "extensions": {"operations": [{"version": "2"}]}, "agent": {"protocols": [{"type": "poppy", "endpoint": "http://127.0.0.1:8401/conversations"}]}}',1,'usr_VOXYLpF03t6zv3k8sdwYtg','ses_bD4CVLCvtmhuPfNwhaeNxg','2026-12-07T09:41:15.187929Z','2026-12-07T09:41:15.187929Z',NULL);
INSERT INTO "companies" VALUES(2,'http://127.0.0.1:8402','127.0.0.1:8402','Larkspur Air','{"protocol_version": "0.4", "organization": {"name": "Larkspur Air", "domain": "127.0.0.1:8402"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8402/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_stM8R4cOQgoTJj95EMK0vQ','ses_MHrAD_p4HW_1ZBr436LsEQ','2026-12-07T09:41:15.217625Z','2026-12-07T09:41:15.397660Z',NULL);
INSERT INTO "companies" VALUES(3,'http://127.0.0.1:8404','127.0.0.1:8404','Juniper Books','{"protocol_version": "0.4", "organization": {"name": "Juniper Books", "domain": "127.0.0.1:8404"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8404/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_bH7WtSS0vfUjXyTQXWOjWw','ses_o7cWBlmauiInWSqu126CjA','2026-12-07T09:41:15.380885Z','2026-12-07T09:41:15.380885Z','2026-12-07T09:41:15.384525Z');
CREATE TABLE company_documents (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        etag TEXT,
        fetched_at TEXT NOT NULL,
        fresh_until TEXT NOT NULL
    );
INSERT INTO "company_documents" VALUES(1,'"v1-etag"','2026-12-07T09:41:15.187929Z','2026-12-07T10:41:15.142180Z');
INSERT INTO "company_documents" VALUES(2,'"v1-etag"','2026-12-07T09:41:15.217625Z','2026-12-07T10:41:15.142180Z');
INSERT INTO "company_documents" VALUES(3,'"v1-etag"','2026-12-07T09:41:15.380885Z','2026-12-07T10:41:15.142180Z');
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
INSERT INTO "conversations" VALUES(1,1,'http://127.0.0.1:8401/conversations','conv_1',NULL,'2026-12-07T09:41:15.380311Z','2026-12-07T09:41:15.380311Z');
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
INSERT INTO "decisions" VALUES(1,2,3,'declined','2026-12-07T09:41:15.219373Z','tui','too dear');
INSERT INTO "decisions" VALUES(2,3,4,'approved','2026-12-07T09:41:15.244930Z','tui',NULL);
INSERT INTO "decisions" VALUES(3,4,5,'approved','2026-12-07T09:41:15.281982Z','tui',NULL);
INSERT INTO "decisions" VALUES(4,4,5,'withdrawn','2026-12-07T09:41:15.282375Z','tui',NULL);
INSERT INTO "decisions" VALUES(5,5,6,'approved','2026-12-07T09:41:15.302131Z','tui',NULL);
INSERT INTO "decisions" VALUES(6,6,7,'approved','2026-12-07T09:41:15.324943Z','tui',NULL);
INSERT INTO "decisions" VALUES(7,7,8,'approved','2026-12-07T09:41:15.364970Z','tui',NULL);
INSERT INTO "decisions" VALUES(8,8,9,'approved','2026-12-07T09:41:15.371286Z','tui',NULL);
INSERT INTO "decisions" VALUES(9,8,9,'resolved_performed','2026-12-07T09:41:15.377994Z','tui','the airline''s page shows it');
INSERT INTO "decisions" VALUES(10,12,13,'declined','2026-12-07T09:41:15.381305Z','tui',NULL);
INSERT INTO "decisions" VALUES(11,13,14,'approved','2026-12-07T09:41:15.387423Z','tui',NULL);
CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        detail TEXT
    );
INSERT INTO "events" VALUES(1,1,'2026-12-07T09:41:15.218255Z','received','revision r1');
INSERT INTO "events" VALUES(2,1,'2026-12-07T09:41:15.218938Z','new_revision','revision r2');
INSERT INTO "events" VALUES(3,2,'2026-12-07T09:41:15.219143Z','received','revision r1');
INSERT INTO "events" VALUES(4,2,'2026-12-07T09:41:15.219407Z','declined','too dear');
INSERT INTO "events" VALUES(5,3,'2026-12-07T09:41:15.244743Z','received','revision r1');
INSERT INTO "events" VALUES(6,3,'2026-12-07T09:41:15.244930Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(7,4,'2026-12-07T09:41:15.281790Z','received','revision r1');
INSERT INTO "events" VALUES(8,4,'2026-12-07T09:41:15.281982Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(9,4,'2026-12-07T09:41:15.282389Z','withdrawn',NULL);
INSERT INTO "events" VALUES(10,5,'2026-12-07T09:41:15.301950Z','received','revision r1');
INSERT INTO "events" VALUES(11,5,'2026-12-07T09:41:15.302131Z','approved','grace 0s');
INSERT INTO "events" VALUES(12,5,'2026-12-07T09:41:15.303056Z','attempt','#1');
INSERT INTO "events" VALUES(13,5,'2026-12-07T09:41:15.324388Z','performed','performed (HTTP 200)');
INSERT INTO "events" VALUES(14,6,'2026-12-07T09:41:15.324757Z','received','revision r1');
INSERT INTO "events" VALUES(15,6,'2026-12-07T09:41:15.324943Z','approved','grace 0s');
INSERT INTO "events" VALUES(16,6,'2026-12-07T09:41:15.325536Z','attempt','#1');
INSERT INTO "events" VALUES(17,6,'2026-12-07T09:41:15.364473Z','not_performed','refused: sold out');
INSERT INTO "events" VALUES(18,7,'2026-12-07T09:41:15.364786Z','received','revision r1');
INSERT INTO "events" VALUES(19,7,'2026-12-07T09:41:15.364970Z','approved','grace 0s');
INSERT INTO "events" VALUES(20,7,'2026-12-07T09:41:15.365567Z','attempt','#1');
INSERT INTO "events" VALUES(21,7,'2026-12-07T09:41:15.370925Z','outcome_unknown','connection dropped after sending');
INSERT INTO "events" VALUES(22,8,'2026-12-07T09:41:15.371133Z','received','revision r1');
INSERT INTO "events" VALUES(23,8,'2026-12-07T09:41:15.371286Z','approved','grace 0s');
INSERT INTO "events" VALUES(24,8,'2026-12-07T09:41:15.371886Z','attempt','#1');
INSERT INTO "events" VALUES(25,8,'2026-12-07T09:41:15.377845Z','outcome_unknown','timed out');
INSERT INTO "events" VALUES(26,8,'2026-12-07T09:41:15.378012Z','resolved','performed');
INSERT INTO "events" VALUES(27,9,'2026-12-07T09:41:15.379736Z','received','revision r1');
INSERT INTO "events" VALUES(28,9,'2026-12-07T09:41:15.380001Z','expired',NULL);
INSERT INTO "events" VALUES(29,10,'2026-12-07T09:41:15.380177Z','received','revision r1');
INSERT INTO "events" VALUES(30,11,'2026-12-07T09:41:15.380612Z','received','revision r1');
INSERT INTO "events" VALUES(31,12,'2026-12-07T09:41:15.381141Z','received','revision r1');
INSERT INTO "events" VALUES(32,12,'2026-12-07T09:41:15.381316Z','declined',NULL);
INSERT INTO "events" VALUES(33,13,'2026-12-07T09:41:15.386952Z','received','revision r1');
INSERT INTO "events" VALUES(34,14,'2026-12-07T09:41:15.387279Z','received','revision r1');
INSERT INTO "events" VALUES(35,13,'2026-12-07T09:41:15.387423Z','approved','grace 0s');
INSERT INTO "events" VALUES(36,13,'2026-12-07T09:41:15.389506Z','attempt','#1');
INSERT INTO "events" VALUES(37,13,'2026-12-07T09:41:15.397386Z','waiting_sign_in','waiting for you to sign in to Larkspur Air');
INSERT INTO "events" VALUES(38,2,'2026-12-07T09:41:15.397890Z','new_revision','revision r2');
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
INSERT INTO "messages" VALUES(1,1,'msg_1','user','Swap my jacket','{"id": "msg_1", "role": "user", "text": "Swap my jacket"}','2026-12-07T09:41:15.380419Z');
INSERT INTO "messages" VALUES(2,1,'msg_2','company','That is $70.00 more.','{"id": "msg_2", "role": "company", "text": "That is $70.00 more."}','2026-12-07T09:41:15.380474Z');
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
INSERT INTO "operations" VALUES(1,1,'exc_pending','api','ses_bD4CVLCvtmhuPfNwhaeNxg','pending',2,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:15.218173Z','2026-12-07T09:41:15.218870Z',0,NULL);
INSERT INTO "operations" VALUES(2,2,'chg_declined','api','ses_MHrAD_p4HW_1ZBr436LsEQ','pending',16,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:15.219119Z','2026-12-07T09:41:15.397844Z',0,NULL);
INSERT INTO "operations" VALUES(3,1,'ret_grace','api','ses_bD4CVLCvtmhuPfNwhaeNxg','approved',4,4,'2027-12-07T09:41:15.244930Z','49d1062c-1f09-4fa8-a212-42ea48771ff9',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:15.244698Z','2026-12-07T09:41:15.244930Z',0,NULL);
INSERT INTO "operations" VALUES(4,1,'ret_withdrawn','api','ses_bD4CVLCvtmhuPfNwhaeNxg','withdrawn',5,NULL,NULL,'ab529512-bd6e-4d5b-bcb1-bf483e082031',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:15.281750Z','2026-12-07T09:41:15.282341Z',0,NULL);
INSERT INTO "operations" VALUES(5,1,'exc_performed','api','ses_bD4CVLCvtmhuPfNwhaeNxg','performed',6,6,'2026-12-07T09:41:15.302131Z','8d6e002f-15f7-4567-921a-24ced5c0eec8',NULL,NULL,NULL,1,'{"exchange_id": "xch_88"}','performed (HTTP 200)','2026-12-07T09:41:15.301902Z','2026-12-07T09:41:15.318950Z',0,NULL);
INSERT INTO "operations" VALUES(6,2,'seat_refused','api','ses_RNpVBYaoySXixjYikncgDA','not_performed',7,7,'2026-12-07T09:41:15.324943Z','0016685a-dfc2-4fbe-8ef1-1f54072ad1d0',NULL,NULL,NULL,1,'{"error": "sold_out"}','refused: sold out','2026-12-07T09:41:15.324718Z','2026-12-07T09:41:15.364415Z',0,NULL);
INSERT INTO "operations" VALUES(7,2,'bag_unknown','api','ses_RNpVBYaoySXixjYikncgDA','outcome_unknown',8,8,'2026-12-07T09:41:15.364970Z','0612402a-2311-4367-813a-c0670c54f9bc',NULL,NULL,NULL,1,'null','connection dropped after sending','2026-12-07T09:41:15.364751Z','2026-12-07T09:41:15.370902Z',0,NULL);
INSERT INTO "operations" VALUES(8,2,'bag_resolved','api','ses_RNpVBYaoySXixjYikncgDA','performed',9,9,'2026-12-07T09:41:15.371286Z','9fb2cf9c-9985-478d-a194-1dfe68430966',NULL,NULL,NULL,1,'null','the airline''s page shows it','2026-12-07T09:41:15.371106Z','2026-12-07T09:41:15.377955Z',0,NULL);
INSERT INTO "operations" VALUES(9,1,'exc_expired','api','ses_bD4CVLCvtmhuPfNwhaeNxg','expired',10,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:15.379706Z','2026-12-07T09:41:20.142180Z',0,NULL);
INSERT INTO "operations" VALUES(10,1,'can_mcp','mcp','ses_bD4CVLCvtmhuPfNwhaeNxg','pending',11,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:15.380154Z','2026-12-07T09:41:15.380154Z',0,NULL);
INSERT INTO "operations" VALUES(11,1,'exc_talk','conversation','ses_bD4CVLCvtmhuPfNwhaeNxg','pending',12,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:15.380590Z','2026-12-07T09:41:15.380590Z',0,NULL);
INSERT INTO "operations" VALUES(12,3,'ord_removed','api','ses_o7cWBlmauiInWSqu126CjA','declined',13,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:15.381119Z','2026-12-07T09:41:15.381282Z',0,NULL);
INSERT INTO "operations" VALUES(13,2,'chg_owned','api','ses_RNpVBYaoySXixjYikncgDA','sending',14,14,'2026-12-07T09:41:15.387423Z','aa188ee5-fd2d-42bf-8f6c-b3cf5a9459e1',NULL,NULL,'2036-12-04T09:41:15.142180Z',1,NULL,'waiting for you to sign in to Larkspur Air','2026-12-07T09:41:15.386922Z','2026-12-07T09:41:15.397318Z',1,'waiting for you to sign in to Larkspur Air');
INSERT INTO "operations" VALUES(14,2,'chg_owned_pending','api','ses_RNpVBYaoySXixjYikncgDA','pending',15,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:15.387255Z','2026-12-07T09:41:15.387255Z',1,NULL);
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
INSERT INTO "requests" VALUES(1,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T09:41:15.217879Z',NULL,NULL);
INSERT INTO "requests" VALUES(2,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T09:41:15.218711Z',NULL,NULL);
INSERT INTO "requests" VALUES(3,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_declined"}','cli','2026-12-07T09:41:15.219030Z',NULL,NULL);
INSERT INTO "requests" VALUES(4,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_grace"}','cli','2026-12-07T09:41:15.244520Z',NULL,NULL);
INSERT INTO "requests" VALUES(5,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_withdrawn"}','cli','2026-12-07T09:41:15.281599Z',NULL,NULL);
INSERT INTO "requests" VALUES(6,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_performed"}','cli','2026-12-07T09:41:15.301578Z',NULL,NULL);
INSERT INTO "requests" VALUES(7,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/seat_refused"}','cli','2026-12-07T09:41:15.324538Z',NULL,NULL);
INSERT INTO "requests" VALUES(8,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_unknown"}','cli','2026-12-07T09:41:15.364584Z',NULL,NULL);
INSERT INTO "requests" VALUES(9,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_resolved"}','cli','2026-12-07T09:41:15.370996Z',NULL,NULL);
INSERT INTO "requests" VALUES(10,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_expired"}','cli','2026-12-07T09:41:15.379575Z',NULL,NULL);
INSERT INTO "requests" VALUES(11,1,'mcp','{"arguments": {"plan": "fiber-500"}, "interface": "mcp", "server_url": "http://127.0.0.1:8401/mcp", "tool": "cancel_plan"}','cli','2026-12-07T09:41:15.380073Z',NULL,NULL);
INSERT INTO "requests" VALUES(12,1,'conversation','{"conversation_id": "conv_1", "endpoint": "http://127.0.0.1:8401/conversations", "interface": "conversation", "message_id": "msg_3", "text": "Yes"}','cli','2026-12-07T09:41:15.380510Z',NULL,NULL);
INSERT INTO "requests" VALUES(13,3,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8404/api/orders/ord_removed"}','cli','2026-12-07T09:41:15.381042Z',NULL,NULL);
INSERT INTO "requests" VALUES(14,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_owned"}','cli','2026-12-07T09:41:15.386695Z',NULL,NULL);
INSERT INTO "requests" VALUES(15,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_owned_pending"}','cli','2026-12-07T09:41:15.387104Z',NULL,NULL);
INSERT INTO "requests" VALUES(16,2,'api','{"body": {}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/x"}','cli','2026-12-07T09:41:15.397738Z',NULL,NULL);
CREATE TABLE resource_reads (
        operation_row INTEGER PRIMARY KEY REFERENCES operations(id),
        revision_id INTEGER REFERENCES revisions(id),
        source TEXT NOT NULL,
        read_at TEXT NOT NULL,
        ok INTEGER NOT NULL,
        body_json TEXT,
        problem TEXT
    );
INSERT INTO "resource_reads" VALUES(1,2,'GET http://127.0.0.1:8401/api/orders/ord_7Hk2','2026-12-07T09:41:15.142180Z',1,'{"order_id": "ord_7Hk2", "status": "delivered"}',NULL);
CREATE TABLE revision_checks (
        revision_id INTEGER PRIMARY KEY REFERENCES revisions(id),
        checker_version INTEGER NOT NULL,
        amount TEXT,
        findings_json TEXT NOT NULL,
        checked_at TEXT NOT NULL
    );
INSERT INTO "revision_checks" VALUES(2,1,'USD 95.00','[["warning", "price_changed", "The price changed.", null]]','2026-12-07T09:41:15.397566Z');
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
INSERT INTO "revisions" VALUES(1,1,'r1',1,'Exchange the **jacket** for $70.00 more.','{"price":{"amount":"70.00","currency":"USD"}}','2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "exc_pending", "revision": "r1", "summary": "Exchange the **jacket** for $70.00 more.", "expires_at": "2036-12-04T09:41:15Z", "terms": {"price": {"amount": "70.00", "currency": "USD"}}}',NULL,'2026-12-07T09:41:15.218173Z','2026-12-07T09:41:15.218637Z','ses_bD4CVLCvtmhuPfNwhaeNxg');
INSERT INTO "revisions" VALUES(2,1,'r2',2,'Exchange the **jacket** for $95.00 more.','{"price":{"amount":"95.00","currency":"USD"}}','2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "exc_pending", "revision": "r2", "summary": "Exchange the **jacket** for $95.00 more.", "expires_at": "2036-12-04T09:41:15Z", "terms": {"price": {"amount": "95.00", "currency": "USD"}}}',NULL,'2026-12-07T09:41:15.218870Z',NULL,'ses_bD4CVLCvtmhuPfNwhaeNxg');
INSERT INTO "revisions" VALUES(3,2,'r1',3,'Move your flight to 22 January for $45.00.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "chg_declined", "revision": "r1", "summary": "Move your flight to 22 January for $45.00.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.219119Z',NULL,'ses_RNpVBYaoySXixjYikncgDA');
INSERT INTO "revisions" VALUES(4,3,'r1',4,'Return the beanie for a refund of $24.00.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "ret_grace", "revision": "r1", "summary": "Return the beanie for a refund of $24.00.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.244698Z',NULL,'ses_bD4CVLCvtmhuPfNwhaeNxg');
INSERT INTO "revisions" VALUES(5,4,'r1',5,'Return the gloves for $10.00.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "ret_withdrawn", "revision": "r1", "summary": "Return the gloves for $10.00.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.281750Z',NULL,'ses_bD4CVLCvtmhuPfNwhaeNxg');
INSERT INTO "revisions" VALUES(6,5,'r1',6,'Exchange the gloves (S) for M.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "exc_performed", "revision": "r1", "summary": "Exchange the gloves (S) for M.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.301902Z',NULL,'ses_bD4CVLCvtmhuPfNwhaeNxg');
INSERT INTO "revisions" VALUES(7,6,'r1',7,'Upgrade seat 14C to 4C for $89.00.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "seat_refused", "revision": "r1", "summary": "Upgrade seat 14C to 4C for $89.00.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.324718Z',NULL,'ses_RNpVBYaoySXixjYikncgDA');
INSERT INTO "revisions" VALUES(8,7,'r1',8,'Add a checked bag for $35.00.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "bag_unknown", "revision": "r1", "summary": "Add a checked bag for $35.00.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.364751Z',NULL,'ses_RNpVBYaoySXixjYikncgDA');
INSERT INTO "revisions" VALUES(9,8,'r1',9,'Add a second bag for $35.00.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "bag_resolved", "revision": "r1", "summary": "Add a second bag for $35.00.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.371106Z',NULL,'ses_RNpVBYaoySXixjYikncgDA');
INSERT INTO "revisions" VALUES(10,9,'r1',10,'Exchange the shorts.',NULL,'2026-12-07T09:41:16.000000Z','2026-12-07T09:41:16Z','{"operation_id": "exc_expired", "revision": "r1", "summary": "Exchange the shorts.", "expires_at": "2026-12-07T09:41:16Z"}',NULL,'2026-12-07T09:41:15.379706Z',NULL,'ses_bD4CVLCvtmhuPfNwhaeNxg');
INSERT INTO "revisions" VALUES(11,10,'r1',11,'Cancel the Fiber 500 plan.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "can_mcp", "revision": "r1", "summary": "Cancel the Fiber 500 plan.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.380154Z',NULL,'ses_bD4CVLCvtmhuPfNwhaeNxg');
INSERT INTO "revisions" VALUES(12,11,'r1',12,'Exchange the jacket, as agreed.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "exc_talk", "revision": "r1", "summary": "Exchange the jacket, as agreed.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.380590Z',NULL,'ses_bD4CVLCvtmhuPfNwhaeNxg');
INSERT INTO "revisions" VALUES(13,12,'r1',13,'Order the atlas for $30.00.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "ord_removed", "revision": "r1", "summary": "Order the atlas for $30.00.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.381119Z',NULL,'ses_o7cWBlmauiInWSqu126CjA');
INSERT INTO "revisions" VALUES(14,13,'r1',14,'Change the booking.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "chg_owned", "revision": "r1", "summary": "Change the booking.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.386922Z',NULL,'ses_RNpVBYaoySXixjYikncgDA');
INSERT INTO "revisions" VALUES(15,14,'r1',15,'Rebook the flight.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "chg_owned_pending", "revision": "r1", "summary": "Rebook the flight.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.387255Z',NULL,'ses_RNpVBYaoySXixjYikncgDA');
INSERT INTO "revisions" VALUES(16,2,'r2',16,'Move it to the 23rd.',NULL,'2036-12-04T09:41:15.000000Z','2036-12-04T09:41:15Z','{"operation_id": "chg_declined", "revision": "r2", "summary": "Move it to the 23rd.", "expires_at": "2036-12-04T09:41:15Z"}',NULL,'2026-12-07T09:41:15.397844Z',NULL,'ses_MHrAD_p4HW_1ZBr436LsEQ');
CREATE TABLE sign_ins (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        issuer TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('device', 'direct', 'mediated')),
        scopes TEXT NOT NULL,
        account TEXT,
        signed_in_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
INSERT INTO "sign_ins" VALUES(2,'http://127.0.0.1:8402','device','poppy:read orders','alice@larkspur.test','2026-12-07T09:41:15.386335Z','2026-12-07T09:41:15.386335Z');
CREATE INDEX operations_status ON operations (status, updated_at);
CREATE INDEX operations_updated ON operations (updated_at);
CREATE INDEX decisions_operation ON decisions (operation_row);
CREATE INDEX attempts_operation ON attempts (operation_row);
CREATE INDEX events_operation ON events (operation_row);
CREATE INDEX operations_due ON operations (updated_at) WHERE status IN ('approved', 'sending');
COMMIT;
