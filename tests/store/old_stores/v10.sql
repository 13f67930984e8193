-- A poppy-tui store at schema version 10, written by b2b1e6eba7f1
-- (tests/store/old_stores/make.py; do not edit: make it again).
PRAGMA user_version=10;
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
INSERT INTO "attempts" VALUES(1,5,6,1,'3ff35628-7e94-48ce-90ef-5f8e452ce9a3','2026-12-07T11:00:03.129366Z','2026-12-07T11:00:03.130413Z','performed',200,'{"exchange_id": "xch_88"}','performed (HTTP 200)','old-dispatcher');
INSERT INTO "attempts" VALUES(2,6,7,1,'eb6eb8ba-ec03-42b1-ac3f-df86ecdb84f4','2026-12-07T11:00:03.132127Z','2026-12-07T11:00:03.133372Z','not_performed',409,'{"error": "sold_out"}','refused: sold out','old-dispatcher');
INSERT INTO "attempts" VALUES(3,7,8,1,'081160b9-fc20-4333-8c94-5f3a3c8817c3','2026-12-07T11:00:03.138453Z','2026-12-07T11:00:03.139353Z','unknown',NULL,'null','connection dropped after sending','old-dispatcher');
INSERT INTO "attempts" VALUES(4,8,9,1,'d1e989f6-7d15-497c-8b71-586c793df5e1','2026-12-07T11:00:03.141232Z','2026-12-07T11:00:03.142112Z','unknown',NULL,'null','timed out','old-dispatcher');
INSERT INTO "attempts" VALUES(5,13,14,1,'9cf1c363-4548-4ada-af3c-c73024e3e1b9','2026-12-07T11:00:03.169825Z','2026-12-07T11:00:03.170642Z','sign_in_required',401,'{"error": "invalid_token"}','sign in again','old-dispatcher');
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
INSERT INTO "companies" VALUES(1,'http://127.0.0.1:8401','127.0.0.1:8401','Manzanita Outfitters','{"protocol_version": "0.4", "organization": {"name": "Manzanita Outfitters", "domain": "127.0.0.1:8401"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8401/openapi.json"}, {"type": "mcp", "url": "http://127.0.0.1:8401/mcp"}], "extensions": {"operations": [{"version": "2"}]}, "agent": {"protocols": [{"type": "poppy", "endpoint": "http://127.0.0.1:8401/conversations"}]}}',1,'usr_QZSgKBfbv2G1zjcwahHkuw','ses_SXArTyN1QruOAJivfJc9qg','2026-12-07T11:00:03.109836Z','2026-12-07T11:00:03.109836Z',NULL);
INSERT INTO "companies" VALUES(2,'http://127.0.0.1:8402','127.0.0.1:8402','Larkspur Air','{"protocol_version": "0.4", "organization": {"name": "Larkspur Air", "domain": "127.0.0.1:8402"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8402/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_sFrxcSGuv4eSba4-xnwpZg','ses_qJFeuriUuTP7RaQWr8mSaQ','2026-12-07T11:00:03.116871Z','2026-12-07T11:00:03.171416Z',NULL);
INSERT INTO "companies" VALUES(3,'http://127.0.0.1:8404','127.0.0.1:8404','Juniper Books','{"protocol_version": "0.4", "organization": {"name": "Juniper Books", "domain": "127.0.0.1:8404"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8404/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_oH1uky8mllpeZJPhI4JjNA','ses__6hTU2aHr_sgt2Fd_nmYDw','2026-12-07T11:00:03.145778Z','2026-12-07T11:00:03.145778Z','2026-12-07T11:00:03.148733Z');
CREATE TABLE company_documents (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        etag TEXT,
        fetched_at TEXT NOT NULL,
        fresh_until TEXT NOT NULL
    );
INSERT INTO "company_documents" VALUES(1,'"v1-etag"','2026-12-07T11:00:03.109836Z','2026-12-07T12:00:03.102057Z');
INSERT INTO "company_documents" VALUES(2,'"v1-etag"','2026-12-07T11:00:03.116871Z','2026-12-07T12:00:03.102057Z');
INSERT INTO "company_documents" VALUES(3,'"v1-etag"','2026-12-07T11:00:03.145778Z','2026-12-07T12:00:03.102057Z');
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
INSERT INTO "conversations" VALUES(1,1,'http://127.0.0.1:8401/conversations','conv_1',NULL,'2026-12-07T11:00:03.144904Z','2026-12-07T11:00:03.144904Z');
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
INSERT INTO "decisions" VALUES(1,2,3,'declined','2026-12-07T11:00:03.119363Z','tui','too dear');
INSERT INTO "decisions" VALUES(2,3,4,'approved','2026-12-07T11:00:03.121365Z','tui',NULL);
INSERT INTO "decisions" VALUES(3,4,5,'approved','2026-12-07T11:00:03.126064Z','tui',NULL);
INSERT INTO "decisions" VALUES(4,4,5,'withdrawn','2026-12-07T11:00:03.126594Z','tui',NULL);
INSERT INTO "decisions" VALUES(5,5,6,'approved','2026-12-07T11:00:03.128387Z','tui',NULL);
INSERT INTO "decisions" VALUES(6,6,7,'approved','2026-12-07T11:00:03.131451Z','tui',NULL);
INSERT INTO "decisions" VALUES(7,7,8,'approved','2026-12-07T11:00:03.137539Z','tui',NULL);
INSERT INTO "decisions" VALUES(8,8,9,'approved','2026-12-07T11:00:03.140450Z','tui',NULL);
INSERT INTO "decisions" VALUES(9,8,9,'resolved_performed','2026-12-07T11:00:03.142813Z','tui','the airline''s page shows it');
INSERT INTO "decisions" VALUES(10,12,13,'declined','2026-12-07T11:00:03.146474Z','tui',NULL);
INSERT INTO "decisions" VALUES(11,13,14,'approved','2026-12-07T11:00:03.153391Z','tui',NULL);
CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        detail TEXT
    );
INSERT INTO "events" VALUES(1,1,'2026-12-07T11:00:03.117688Z','received','revision r1');
INSERT INTO "events" VALUES(2,1,'2026-12-07T11:00:03.118667Z','new_revision','revision r2');
INSERT INTO "events" VALUES(3,2,'2026-12-07T11:00:03.119008Z','received','revision r1');
INSERT INTO "events" VALUES(4,2,'2026-12-07T11:00:03.119412Z','declined','too dear');
INSERT INTO "events" VALUES(5,3,'2026-12-07T11:00:03.120921Z','received','revision r1');
INSERT INTO "events" VALUES(6,3,'2026-12-07T11:00:03.121365Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(7,4,'2026-12-07T11:00:03.125824Z','received','revision r1');
INSERT INTO "events" VALUES(8,4,'2026-12-07T11:00:03.126064Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(9,4,'2026-12-07T11:00:03.126617Z','withdrawn',NULL);
INSERT INTO "events" VALUES(10,5,'2026-12-07T11:00:03.127964Z','received','revision r1');
INSERT INTO "events" VALUES(11,5,'2026-12-07T11:00:03.128387Z','approved','grace 0s');
INSERT INTO "events" VALUES(12,5,'2026-12-07T11:00:03.129502Z','attempt','#1');
INSERT INTO "events" VALUES(13,5,'2026-12-07T11:00:03.130762Z','performed','performed (HTTP 200)');
INSERT INTO "events" VALUES(14,6,'2026-12-07T11:00:03.131220Z','received','revision r1');
INSERT INTO "events" VALUES(15,6,'2026-12-07T11:00:03.131451Z','approved','grace 0s');
INSERT INTO "events" VALUES(16,6,'2026-12-07T11:00:03.132246Z','attempt','#1');
INSERT INTO "events" VALUES(17,6,'2026-12-07T11:00:03.133620Z','not_performed','refused: sold out');
INSERT INTO "events" VALUES(18,7,'2026-12-07T11:00:03.135395Z','received','revision r1');
INSERT INTO "events" VALUES(19,7,'2026-12-07T11:00:03.137539Z','approved','grace 0s');
INSERT INTO "events" VALUES(20,7,'2026-12-07T11:00:03.138548Z','attempt','#1');
INSERT INTO "events" VALUES(21,7,'2026-12-07T11:00:03.139652Z','outcome_unknown','connection dropped after sending');
INSERT INTO "events" VALUES(22,8,'2026-12-07T11:00:03.140125Z','received','revision r1');
INSERT INTO "events" VALUES(23,8,'2026-12-07T11:00:03.140450Z','approved','grace 0s');
INSERT INTO "events" VALUES(24,8,'2026-12-07T11:00:03.141306Z','attempt','#1');
INSERT INTO "events" VALUES(25,8,'2026-12-07T11:00:03.142377Z','outcome_unknown','timed out');
INSERT INTO "events" VALUES(26,8,'2026-12-07T11:00:03.142842Z','resolved','performed');
INSERT INTO "events" VALUES(27,9,'2026-12-07T11:00:03.143866Z','received','revision r1');
INSERT INTO "events" VALUES(28,9,'2026-12-07T11:00:03.144418Z','expired',NULL);
INSERT INTO "events" VALUES(29,10,'2026-12-07T11:00:03.144707Z','received','revision r1');
INSERT INTO "events" VALUES(30,11,'2026-12-07T11:00:03.145382Z','received','revision r1');
INSERT INTO "events" VALUES(31,12,'2026-12-07T11:00:03.146176Z','received','revision r1');
INSERT INTO "events" VALUES(32,12,'2026-12-07T11:00:03.146492Z','declined',NULL);
INSERT INTO "events" VALUES(33,13,'2026-12-07T11:00:03.152575Z','received','revision r1');
INSERT INTO "events" VALUES(34,14,'2026-12-07T11:00:03.153135Z','received','revision r1');
INSERT INTO "events" VALUES(35,13,'2026-12-07T11:00:03.153391Z','approved','grace 0s');
INSERT INTO "events" VALUES(36,13,'2026-12-07T11:00:03.169906Z','attempt','#1');
INSERT INTO "events" VALUES(37,13,'2026-12-07T11:00:03.170775Z','waiting_sign_in','waiting for you to sign in to Larkspur Air');
INSERT INTO "events" VALUES(38,2,'2026-12-07T11:00:03.171830Z','new_revision','revision r2');
INSERT INTO "events" VALUES(39,15,'2026-12-07T11:00:03.172415Z','received','revision r1');
CREATE TABLE gate_agents (
        name TEXT PRIMARY KEY,
        last_used_at TEXT NOT NULL,
        client TEXT
    );
INSERT INTO "gate_agents" VALUES('laptop','2026-12-07T11:00:03.172800Z','{"name": "claude-code", "version": "2.1.0"}');
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
INSERT INTO "messages" VALUES(1,1,'msg_1','user','Swap my jacket','{"id": "msg_1", "role": "user", "text": "Swap my jacket"}','2026-12-07T11:00:03.145071Z');
INSERT INTO "messages" VALUES(2,1,'msg_2','company','That is $70.00 more.','{"id": "msg_2", "role": "company", "text": "That is $70.00 more."}','2026-12-07T11:00:03.145154Z');
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
INSERT INTO "operations" VALUES(1,1,'exc_pending','api','ses_SXArTyN1QruOAJivfJc9qg','pending',2,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T11:00:03.117567Z','2026-12-07T11:00:03.118555Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(2,2,'chg_declined','api','ses_qJFeuriUuTP7RaQWr8mSaQ','pending',16,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T11:00:03.118969Z','2026-12-07T11:00:03.171748Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(3,1,'ret_grace','api','ses_SXArTyN1QruOAJivfJc9qg','approved',4,4,'2027-12-07T11:00:03.121365Z','ff79ed24-e239-4869-a664-df0a08e33c6e',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T11:00:03.120736Z','2026-12-07T11:00:03.121365Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(4,1,'ret_withdrawn','api','ses_SXArTyN1QruOAJivfJc9qg','withdrawn',5,NULL,NULL,'14d2b292-a5d6-4ca5-910c-59bcbc96c733',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T11:00:03.125778Z','2026-12-07T11:00:03.126543Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(5,1,'exc_performed','api','ses_SXArTyN1QruOAJivfJc9qg','performed',6,6,'2026-12-07T11:00:03.128387Z','3ff35628-7e94-48ce-90ef-5f8e452ce9a3',NULL,NULL,NULL,1,'{"exchange_id": "xch_88"}','performed (HTTP 200)','2026-12-07T11:00:03.127852Z','2026-12-07T11:00:03.130623Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(6,2,'seat_refused','api','ses_WSNji5FtOHHiH5UsbrKULA','not_performed',7,7,'2026-12-07T11:00:03.131451Z','eb6eb8ba-ec03-42b1-ac3f-df86ecdb84f4',NULL,NULL,NULL,1,'{"error": "sold_out"}','refused: sold out','2026-12-07T11:00:03.131178Z','2026-12-07T11:00:03.133583Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(7,2,'bag_unknown','api','ses_WSNji5FtOHHiH5UsbrKULA','outcome_unknown',8,8,'2026-12-07T11:00:03.137539Z','081160b9-fc20-4333-8c94-5f3a3c8817c3',NULL,NULL,NULL,1,'null','connection dropped after sending','2026-12-07T11:00:03.134951Z','2026-12-07T11:00:03.139550Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(8,2,'bag_resolved','api','ses_WSNji5FtOHHiH5UsbrKULA','performed',9,9,'2026-12-07T11:00:03.140450Z','d1e989f6-7d15-497c-8b71-586c793df5e1',NULL,NULL,NULL,1,'null','the airline''s page shows it','2026-12-07T11:00:03.140082Z','2026-12-07T11:00:03.142739Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(9,1,'exc_expired','api','ses_SXArTyN1QruOAJivfJc9qg','expired',10,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T11:00:03.143681Z','2026-12-07T11:00:08.102057Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(10,1,'can_mcp','mcp','ses_SXArTyN1QruOAJivfJc9qg','pending',11,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T11:00:03.144668Z','2026-12-07T11:00:03.144668Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(11,1,'exc_talk','conversation','ses_SXArTyN1QruOAJivfJc9qg','pending',12,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T11:00:03.145348Z','2026-12-07T11:00:03.145348Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(12,3,'ord_removed','api','ses__6hTU2aHr_sgt2Fd_nmYDw','declined',13,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T11:00:03.146128Z','2026-12-07T11:00:03.146438Z',0,NULL,NULL);
INSERT INTO "operations" VALUES(13,2,'chg_owned','api','ses_WSNji5FtOHHiH5UsbrKULA','sending',14,14,'2026-12-07T11:00:03.153391Z','9cf1c363-4548-4ada-af3c-c73024e3e1b9',NULL,NULL,'2036-12-04T11:00:03.102057Z',1,NULL,'waiting for you to sign in to Larkspur Air','2026-12-07T11:00:03.152525Z','2026-12-07T11:00:03.170587Z',1,'waiting for you to sign in to Larkspur Air','alice@larkspur.test');
INSERT INTO "operations" VALUES(14,2,'chg_owned_pending','api','ses_WSNji5FtOHHiH5UsbrKULA','pending',15,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T11:00:03.153076Z','2026-12-07T11:00:03.153076Z',1,NULL,'alice@larkspur.test');
INSERT INTO "operations" VALUES(15,1,'exc_agent','api','ses_SXArTyN1QruOAJivfJc9qg','pending',17,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T11:00:03.172370Z','2026-12-07T11:00:03.172370Z',0,NULL,NULL);
CREATE TABLE request_operations (
        request_id INTEGER NOT NULL REFERENCES requests(id),
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        PRIMARY KEY (request_id, operation_row)
    ) WITHOUT ROWID;
INSERT INTO "request_operations" VALUES(1,1);
INSERT INTO "request_operations" VALUES(2,1);
INSERT INTO "request_operations" VALUES(3,2);
INSERT INTO "request_operations" VALUES(16,2);
INSERT INTO "request_operations" VALUES(4,3);
INSERT INTO "request_operations" VALUES(5,4);
INSERT INTO "request_operations" VALUES(6,5);
INSERT INTO "request_operations" VALUES(7,6);
INSERT INTO "request_operations" VALUES(8,7);
INSERT INTO "request_operations" VALUES(9,8);
INSERT INTO "request_operations" VALUES(10,9);
INSERT INTO "request_operations" VALUES(11,10);
INSERT INTO "request_operations" VALUES(12,11);
INSERT INTO "request_operations" VALUES(13,12);
INSERT INTO "request_operations" VALUES(14,13);
INSERT INTO "request_operations" VALUES(15,14);
INSERT INTO "request_operations" VALUES(17,15);
INSERT INTO "request_operations" VALUES(18,15);
CREATE TABLE requests (
        id INTEGER PRIMARY KEY,
        company_id INTEGER NOT NULL REFERENCES companies(id),
        interface TEXT NOT NULL CHECK (interface IN ('api', 'mcp', 'conversation')),
        request_json TEXT NOT NULL,
        origin TEXT NOT NULL,
        created_at TEXT NOT NULL,
        first_status INTEGER,
        first_response_json TEXT
    , requester TEXT, requester_client TEXT);
INSERT INTO "requests" VALUES(1,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T11:00:03.117180Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(2,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T11:00:03.118330Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(3,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_declined"}','cli','2026-12-07T11:00:03.118816Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(4,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_grace"}','cli','2026-12-07T11:00:03.120441Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(5,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_withdrawn"}','cli','2026-12-07T11:00:03.125611Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(6,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_performed"}','cli','2026-12-07T11:00:03.127579Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(7,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/seat_refused"}','cli','2026-12-07T11:00:03.130991Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(8,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_unknown"}','cli','2026-12-07T11:00:03.133909Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(9,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_resolved"}','cli','2026-12-07T11:00:03.139880Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(10,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_expired"}','cli','2026-12-07T11:00:03.143404Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(11,1,'mcp','{"arguments": {"plan": "fiber-500"}, "interface": "mcp", "server_url": "http://127.0.0.1:8401/mcp", "tool": "cancel_plan"}','cli','2026-12-07T11:00:03.144527Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(12,1,'conversation','{"conversation_id": "conv_1", "endpoint": "http://127.0.0.1:8401/conversations", "interface": "conversation", "message_id": "msg_3", "text": "Yes"}','cli','2026-12-07T11:00:03.145220Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(13,3,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8404/api/orders/ord_removed"}','cli','2026-12-07T11:00:03.146001Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(14,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_owned"}','cli','2026-12-07T11:00:03.152117Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(15,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_owned_pending"}','cli','2026-12-07T11:00:03.152825Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(16,2,'api','{"body": {}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/x"}','cli','2026-12-07T11:00:03.171578Z',NULL,NULL,NULL,NULL);
INSERT INTO "requests" VALUES(17,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_agent"}','mcp','2026-12-07T11:00:03.172178Z',NULL,NULL,'laptop','{"name": "claude-code", "version": "2.1.0"}');
INSERT INTO "requests" VALUES(18,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_agent"}','cli','2026-12-07T11:00:03.172579Z',NULL,NULL,NULL,NULL);
CREATE TABLE resource_reads (
        operation_row INTEGER PRIMARY KEY REFERENCES operations(id),
        revision_id INTEGER REFERENCES revisions(id),
        source TEXT NOT NULL,
        read_at TEXT NOT NULL,
        ok INTEGER NOT NULL,
        body_json TEXT,
        problem TEXT
    );
INSERT INTO "resource_reads" VALUES(1,2,'GET http://127.0.0.1:8401/api/orders/ord_7Hk2','2026-12-07T11:00:03.102057Z',1,'{"order_id": "ord_7Hk2", "status": "delivered"}',NULL);
CREATE TABLE revision_checks (
        revision_id INTEGER PRIMARY KEY REFERENCES revisions(id),
        checker_version INTEGER NOT NULL,
        amount TEXT,
        findings_json TEXT NOT NULL,
        checked_at TEXT NOT NULL
    );
INSERT INTO "revision_checks" VALUES(2,1,'USD 95.00','[["warning", "price_changed", "The price changed.", null]]','2026-12-07T11:00:03.171182Z');
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
INSERT INTO "revisions" VALUES(1,1,'r1',1,'Exchange the **jacket** for $70.00 more.','{"price":{"amount":"70.00","currency":"USD"}}','2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "exc_pending", "revision": "r1", "summary": "Exchange the **jacket** for $70.00 more.", "expires_at": "2036-12-04T11:00:03Z", "terms": {"price": {"amount": "70.00", "currency": "USD"}}}',NULL,'2026-12-07T11:00:03.117567Z','2026-12-07T11:00:03.118233Z','ses_SXArTyN1QruOAJivfJc9qg');
INSERT INTO "revisions" VALUES(2,1,'r2',2,'Exchange the **jacket** for $95.00 more.','{"price":{"amount":"95.00","currency":"USD"}}','2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "exc_pending", "revision": "r2", "summary": "Exchange the **jacket** for $95.00 more.", "expires_at": "2036-12-04T11:00:03Z", "terms": {"price": {"amount": "95.00", "currency": "USD"}}}',NULL,'2026-12-07T11:00:03.118555Z',NULL,'ses_SXArTyN1QruOAJivfJc9qg');
INSERT INTO "revisions" VALUES(3,2,'r1',3,'Move your flight to 22 January for $45.00.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "chg_declined", "revision": "r1", "summary": "Move your flight to 22 January for $45.00.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.118969Z',NULL,'ses_WSNji5FtOHHiH5UsbrKULA');
INSERT INTO "revisions" VALUES(4,3,'r1',4,'Return the beanie for a refund of $24.00.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "ret_grace", "revision": "r1", "summary": "Return the beanie for a refund of $24.00.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.120736Z',NULL,'ses_SXArTyN1QruOAJivfJc9qg');
INSERT INTO "revisions" VALUES(5,4,'r1',5,'Return the gloves for $10.00.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "ret_withdrawn", "revision": "r1", "summary": "Return the gloves for $10.00.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.125778Z',NULL,'ses_SXArTyN1QruOAJivfJc9qg');
INSERT INTO "revisions" VALUES(6,5,'r1',6,'Exchange the gloves (S) for M.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "exc_performed", "revision": "r1", "summary": "Exchange the gloves (S) for M.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.127852Z',NULL,'ses_SXArTyN1QruOAJivfJc9qg');
INSERT INTO "revisions" VALUES(7,6,'r1',7,'Upgrade seat 14C to 4C for $89.00.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "seat_refused", "revision": "r1", "summary": "Upgrade seat 14C to 4C for $89.00.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.131178Z',NULL,'ses_WSNji5FtOHHiH5UsbrKULA');
INSERT INTO "revisions" VALUES(8,7,'r1',8,'Add a checked bag for $35.00.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "bag_unknown", "revision": "r1", "summary": "Add a checked bag for $35.00.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.134951Z',NULL,'ses_WSNji5FtOHHiH5UsbrKULA');
INSERT INTO "revisions" VALUES(9,8,'r1',9,'Add a second bag for $35.00.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "bag_resolved", "revision": "r1", "summary": "Add a second bag for $35.00.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.140082Z',NULL,'ses_WSNji5FtOHHiH5UsbrKULA');
INSERT INTO "revisions" VALUES(10,9,'r1',10,'Exchange the shorts.',NULL,'2026-12-07T11:00:04.000000Z','2026-12-07T11:00:04Z','{"operation_id": "exc_expired", "revision": "r1", "summary": "Exchange the shorts.", "expires_at": "2026-12-07T11:00:04Z"}',NULL,'2026-12-07T11:00:03.143681Z',NULL,'ses_SXArTyN1QruOAJivfJc9qg');
INSERT INTO "revisions" VALUES(11,10,'r1',11,'Cancel the Fiber 500 plan.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "can_mcp", "revision": "r1", "summary": "Cancel the Fiber 500 plan.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.144668Z',NULL,'ses_SXArTyN1QruOAJivfJc9qg');
INSERT INTO "revisions" VALUES(12,11,'r1',12,'Exchange the jacket, as agreed.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "exc_talk", "revision": "r1", "summary": "Exchange the jacket, as agreed.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.145348Z',NULL,'ses_SXArTyN1QruOAJivfJc9qg');
INSERT INTO "revisions" VALUES(13,12,'r1',13,'Order the atlas for $30.00.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "ord_removed", "revision": "r1", "summary": "Order the atlas for $30.00.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.146128Z',NULL,'ses__6hTU2aHr_sgt2Fd_nmYDw');
INSERT INTO "revisions" VALUES(14,13,'r1',14,'Change the booking.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "chg_owned", "revision": "r1", "summary": "Change the booking.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.152525Z',NULL,'ses_WSNji5FtOHHiH5UsbrKULA');
INSERT INTO "revisions" VALUES(15,14,'r1',15,'Rebook the flight.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "chg_owned_pending", "revision": "r1", "summary": "Rebook the flight.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.153076Z',NULL,'ses_WSNji5FtOHHiH5UsbrKULA');
INSERT INTO "revisions" VALUES(16,2,'r2',16,'Move it to the 23rd.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "chg_declined", "revision": "r2", "summary": "Move it to the 23rd.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.171748Z',NULL,'ses_qJFeuriUuTP7RaQWr8mSaQ');
INSERT INTO "revisions" VALUES(17,15,'r1',17,'Exchange the socks.',NULL,'2036-12-04T11:00:03.000000Z','2036-12-04T11:00:03Z','{"operation_id": "exc_agent", "revision": "r1", "summary": "Exchange the socks.", "expires_at": "2036-12-04T11:00:03Z"}',NULL,'2026-12-07T11:00:03.172370Z',NULL,'ses_SXArTyN1QruOAJivfJc9qg');
CREATE TABLE sign_ins (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        issuer TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('device', 'direct', 'mediated')),
        scopes TEXT NOT NULL,
        account TEXT,
        signed_in_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
INSERT INTO "sign_ins" VALUES(2,'http://127.0.0.1:8402','device','poppy:read orders','alice@larkspur.test','2026-12-07T11:00:03.151399Z','2026-12-07T11:00:03.151399Z');
CREATE INDEX operations_status ON operations (status, updated_at);
CREATE INDEX operations_updated ON operations (updated_at);
CREATE INDEX decisions_operation ON decisions (operation_row);
CREATE INDEX attempts_operation ON attempts (operation_row);
CREATE INDEX events_operation ON events (operation_row);
CREATE INDEX operations_due ON operations (updated_at) WHERE status IN ('approved', 'sending');
CREATE INDEX requests_requester ON requests (requester, id) WHERE requester IS NOT NULL;
CREATE INDEX request_operations_operation ON request_operations (operation_row);
COMMIT;
