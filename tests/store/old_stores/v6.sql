-- A poppy-tui store at schema version 6, written by 243fa00be7ee
-- (tests/store/old_stores/make.py; do not edit: make it again).
PRAGMA user_version=6;
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
INSERT INTO "attempts" VALUES(1,5,6,1,'3e3caed2-2536-4b4c-b458-5dadf6ab595c','2026-12-07T09:41:12.457272Z','2026-12-07T09:41:12.460024Z','performed',200,'{"exchange_id": "xch_88"}','performed (HTTP 200)','old-dispatcher');
INSERT INTO "attempts" VALUES(2,6,7,1,'9b34e55d-333d-4658-8964-6438ac02a5a7','2026-12-07T09:41:12.461229Z','2026-12-07T09:41:12.472482Z','not_performed',409,'{"error": "sold_out"}','refused: sold out','old-dispatcher');
INSERT INTO "attempts" VALUES(3,7,8,1,'b52eee8a-ea2c-46f9-bc8a-9ecceabf9747','2026-12-07T09:41:12.473715Z','2026-12-07T09:41:12.500339Z','unknown',NULL,'null','connection dropped after sending','old-dispatcher');
INSERT INTO "attempts" VALUES(4,8,9,1,'4a5d3ea7-70a1-4bd8-8a3f-7ea8e6eb2bdb','2026-12-07T09:41:12.501703Z','2026-12-07T09:41:12.513755Z','unknown',NULL,'null','timed out','old-dispatcher');
INSERT INTO "attempts" VALUES(5,13,14,1,'cf7aabce-4480-40ea-b416-dc3e9e83147f','2026-12-07T09:41:12.586116Z','2026-12-07T09:41:12.592519Z','sign_in_required',401,'{"error": "invalid_token"}','sign in again','old-dispatcher');
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
INSERT INTO "companies" VALUES(1,'http://127.0.0.1:8401','127.0.0.1:8401','Manzanita Outfitters','{"protocol_version": "0.4", "organization": {"name": "Manzanita Outfitters", "domain": "127.0.0.1:8401"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8401/openapi.json"}, {"type": "mcp", "url": "http://127.0.0.1:8401/mcp"}], "extensions": {"operations": [{"version": "2"}]}, "agent": {"protocols": [{"type": "poppy", "endpoint": "http://127.0.0.1:8401/conversations"}]}}',1,'usr_zzF1vrDZ5RKRvEyzg2-mBQ','ses_DfdNMmuAiCUTqcBVsUQ2qQ','2026-12-07T09:41:12.421542Z','2026-12-07T09:41:12.421542Z',NULL);
INSERT INTO "companies" VALUES(2,'http://127.0.0.1:8402','127.0.0.1:8402','Larkspur Air','{"protocol_version": "0.4", "organization": {"name": "Larkspur Air", "domain": "127.0.0.1:8402"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8402/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_o0bQusXnivI-IuzgwZqVEg','ses_KFHAhLf4w83EJxP_Y3oVNg','2026-12-07T09:41:12.429975Z','2026-12-07T09:41:12.429975Z',NULL);
INSERT INTO "companies" VALUES(3,'http://127.0.0.1:8404','127.0.0.1:8404','Juniper Books','{"protocol_version": "0.4", "organization": {"name": "Juniper Books", "domain": "127.0.0.1:8404"}, "apis": [{"type": "openapi", "url": "http://127.0.0.1:8404/openapi.json"}], "extensions": {"operations": [{"version": "2"}]}}',1,'usr_GlKHxUMiDwSyxxHfZKsxrQ','ses_LsGmp3wcHQcnklNGZR7woQ','2026-12-07T09:41:12.524148Z','2026-12-07T09:41:12.524148Z','2026-12-07T09:41:12.544517Z');
CREATE TABLE company_documents (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        etag TEXT,
        fetched_at TEXT NOT NULL,
        fresh_until TEXT NOT NULL
    );
INSERT INTO "company_documents" VALUES(1,'"v1-etag"','2026-12-07T09:41:12.421542Z','2026-12-07T10:41:12.346707Z');
INSERT INTO "company_documents" VALUES(2,'"v1-etag"','2026-12-07T09:41:12.429975Z','2026-12-07T10:41:12.346707Z');
INSERT INTO "company_documents" VALUES(3,'"v1-etag"','2026-12-07T09:41:12.524148Z','2026-12-07T10:41:12.346707Z');
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
INSERT INTO "conversations" VALUES(1,1,'http://127.0.0.1:8401/conversations','conv_1',NULL,'2026-12-07T09:41:12.523536Z','2026-12-07T09:41:12.523536Z');
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
INSERT INTO "decisions" VALUES(1,2,3,'declined','2026-12-07T09:41:12.431511Z','tui','too dear');
INSERT INTO "decisions" VALUES(2,3,4,'approved','2026-12-07T09:41:12.436571Z','tui',NULL);
INSERT INTO "decisions" VALUES(3,4,5,'approved','2026-12-07T09:41:12.440014Z','tui',NULL);
INSERT INTO "decisions" VALUES(4,4,5,'withdrawn','2026-12-07T09:41:12.444417Z','tui',NULL);
INSERT INTO "decisions" VALUES(5,5,6,'approved','2026-12-07T09:41:12.445484Z','tui',NULL);
INSERT INTO "decisions" VALUES(6,6,7,'approved','2026-12-07T09:41:12.460726Z','tui',NULL);
INSERT INTO "decisions" VALUES(7,7,8,'approved','2026-12-07T09:41:12.473131Z','tui',NULL);
INSERT INTO "decisions" VALUES(8,8,9,'approved','2026-12-07T09:41:12.500930Z','tui',NULL);
INSERT INTO "decisions" VALUES(9,8,9,'resolved_performed','2026-12-07T09:41:12.516566Z','tui','the airline''s page shows it');
INSERT INTO "decisions" VALUES(10,12,13,'declined','2026-12-07T09:41:12.538879Z','tui',NULL);
INSERT INTO "decisions" VALUES(11,13,14,'approved','2026-12-07T09:41:12.585545Z','tui',NULL);
CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        operation_row INTEGER NOT NULL REFERENCES operations(id),
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        detail TEXT
    );
INSERT INTO "events" VALUES(1,1,'2026-12-07T09:41:12.430508Z','received','revision r1');
INSERT INTO "events" VALUES(2,1,'2026-12-07T09:41:12.431109Z','new_revision','revision r2');
INSERT INTO "events" VALUES(3,2,'2026-12-07T09:41:12.431302Z','received','revision r1');
INSERT INTO "events" VALUES(4,2,'2026-12-07T09:41:12.431544Z','declined','too dear');
INSERT INTO "events" VALUES(5,3,'2026-12-07T09:41:12.436391Z','received','revision r1');
INSERT INTO "events" VALUES(6,3,'2026-12-07T09:41:12.436571Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(7,4,'2026-12-07T09:41:12.439874Z','received','revision r1');
INSERT INTO "events" VALUES(8,4,'2026-12-07T09:41:12.440014Z','approved','grace 3.1536e+07s');
INSERT INTO "events" VALUES(9,4,'2026-12-07T09:41:12.444441Z','withdrawn',NULL);
INSERT INTO "events" VALUES(10,5,'2026-12-07T09:41:12.445346Z','received','revision r1');
INSERT INTO "events" VALUES(11,5,'2026-12-07T09:41:12.445484Z','approved','grace 0s');
INSERT INTO "events" VALUES(12,5,'2026-12-07T09:41:12.457351Z','attempt','#1');
INSERT INTO "events" VALUES(13,5,'2026-12-07T09:41:12.460245Z','performed','performed (HTTP 200)');
INSERT INTO "events" VALUES(14,6,'2026-12-07T09:41:12.460548Z','received','revision r1');
INSERT INTO "events" VALUES(15,6,'2026-12-07T09:41:12.460726Z','approved','grace 0s');
INSERT INTO "events" VALUES(16,6,'2026-12-07T09:41:12.461262Z','attempt','#1');
INSERT INTO "events" VALUES(17,6,'2026-12-07T09:41:12.472634Z','not_performed','refused: sold out');
INSERT INTO "events" VALUES(18,7,'2026-12-07T09:41:12.472952Z','received','revision r1');
INSERT INTO "events" VALUES(19,7,'2026-12-07T09:41:12.473131Z','approved','grace 0s');
INSERT INTO "events" VALUES(20,7,'2026-12-07T09:41:12.473749Z','attempt','#1');
INSERT INTO "events" VALUES(21,7,'2026-12-07T09:41:12.500480Z','outcome_unknown','connection dropped after sending');
INSERT INTO "events" VALUES(22,8,'2026-12-07T09:41:12.500755Z','received','revision r1');
INSERT INTO "events" VALUES(23,8,'2026-12-07T09:41:12.500930Z','approved','grace 0s');
INSERT INTO "events" VALUES(24,8,'2026-12-07T09:41:12.501733Z','attempt','#1');
INSERT INTO "events" VALUES(25,8,'2026-12-07T09:41:12.516368Z','outcome_unknown','timed out');
INSERT INTO "events" VALUES(26,8,'2026-12-07T09:41:12.520510Z','resolved','performed');
INSERT INTO "events" VALUES(27,9,'2026-12-07T09:41:12.522854Z','received','revision r1');
INSERT INTO "events" VALUES(28,9,'2026-12-07T09:41:12.523189Z','expired',NULL);
INSERT INTO "events" VALUES(29,10,'2026-12-07T09:41:12.523442Z','received','revision r1');
INSERT INTO "events" VALUES(30,11,'2026-12-07T09:41:12.523836Z','received','revision r1');
INSERT INTO "events" VALUES(31,12,'2026-12-07T09:41:12.537511Z','received','revision r1');
INSERT INTO "events" VALUES(32,12,'2026-12-07T09:41:12.538897Z','declined',NULL);
INSERT INTO "events" VALUES(33,13,'2026-12-07T09:41:12.584969Z','received','revision r1');
INSERT INTO "events" VALUES(34,14,'2026-12-07T09:41:12.585358Z','received','revision r1');
INSERT INTO "events" VALUES(35,13,'2026-12-07T09:41:12.585545Z','approved','grace 0s');
INSERT INTO "events" VALUES(36,13,'2026-12-07T09:41:12.591683Z','attempt','#1');
INSERT INTO "events" VALUES(37,13,'2026-12-07T09:41:12.592621Z','waiting_sign_in','waiting for you to sign in to Larkspur Air');
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
INSERT INTO "messages" VALUES(1,1,'msg_1','user','Swap my jacket','{"id": "msg_1", "role": "user", "text": "Swap my jacket"}','2026-12-07T09:41:12.523643Z');
INSERT INTO "messages" VALUES(2,1,'msg_2','company','That is $70.00 more.','{"id": "msg_2", "role": "company", "text": "That is $70.00 more."}','2026-12-07T09:41:12.523696Z');
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
INSERT INTO "operations" VALUES(1,1,'exc_pending','api','ses_DfdNMmuAiCUTqcBVsUQ2qQ','pending',2,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:12.430430Z','2026-12-07T09:41:12.431042Z',0,NULL);
INSERT INTO "operations" VALUES(2,2,'chg_declined','api','ses_KFHAhLf4w83EJxP_Y3oVNg','declined',3,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:12.431278Z','2026-12-07T09:41:12.431454Z',0,NULL);
INSERT INTO "operations" VALUES(3,1,'ret_grace','api','ses_DfdNMmuAiCUTqcBVsUQ2qQ','approved',4,4,'2027-12-07T09:41:12.436571Z','4c46f798-2046-47a9-8f2a-06d1ad058ad1',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:12.436350Z','2026-12-07T09:41:12.436571Z',0,NULL);
INSERT INTO "operations" VALUES(4,1,'ret_withdrawn','api','ses_DfdNMmuAiCUTqcBVsUQ2qQ','withdrawn',5,NULL,NULL,'2b37e365-3f2b-4b41-b309-053dc41ee979',NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:12.439844Z','2026-12-07T09:41:12.444368Z',0,NULL);
INSERT INTO "operations" VALUES(5,1,'exc_performed','api','ses_DfdNMmuAiCUTqcBVsUQ2qQ','performed',6,6,'2026-12-07T09:41:12.445484Z','3e3caed2-2536-4b4c-b458-5dadf6ab595c',NULL,NULL,NULL,1,'{"exchange_id": "xch_88"}','performed (HTTP 200)','2026-12-07T09:41:12.445314Z','2026-12-07T09:41:12.460128Z',0,NULL);
INSERT INTO "operations" VALUES(6,2,'seat_refused','api','ses_KFHAhLf4w83EJxP_Y3oVNg','not_performed',7,7,'2026-12-07T09:41:12.460726Z','9b34e55d-333d-4658-8964-6438ac02a5a7',NULL,NULL,NULL,1,'{"error": "sold_out"}','refused: sold out','2026-12-07T09:41:12.460515Z','2026-12-07T09:41:12.472599Z',0,NULL);
INSERT INTO "operations" VALUES(7,2,'bag_unknown','api','ses_KFHAhLf4w83EJxP_Y3oVNg','outcome_unknown',8,8,'2026-12-07T09:41:12.473131Z','b52eee8a-ea2c-46f9-bc8a-9ecceabf9747',NULL,NULL,NULL,1,'null','connection dropped after sending','2026-12-07T09:41:12.472906Z','2026-12-07T09:41:12.500446Z',0,NULL);
INSERT INTO "operations" VALUES(8,2,'bag_resolved','api','ses_KFHAhLf4w83EJxP_Y3oVNg','performed',9,9,'2026-12-07T09:41:12.500930Z','4a5d3ea7-70a1-4bd8-8a3f-7ea8e6eb2bdb',NULL,NULL,NULL,1,'null','the airline''s page shows it','2026-12-07T09:41:12.500724Z','2026-12-07T09:41:12.516520Z',0,NULL);
INSERT INTO "operations" VALUES(9,1,'exc_expired','api','ses_DfdNMmuAiCUTqcBVsUQ2qQ','expired',10,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:12.522724Z','2026-12-07T09:41:17.346707Z',0,NULL);
INSERT INTO "operations" VALUES(10,1,'can_mcp','mcp','ses_DfdNMmuAiCUTqcBVsUQ2qQ','pending',11,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:12.523408Z','2026-12-07T09:41:12.523408Z',0,NULL);
INSERT INTO "operations" VALUES(11,1,'exc_talk','conversation','ses_DfdNMmuAiCUTqcBVsUQ2qQ','pending',12,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:12.523814Z','2026-12-07T09:41:12.523814Z',0,NULL);
INSERT INTO "operations" VALUES(12,3,'ord_removed','api','ses_LsGmp3wcHQcnklNGZR7woQ','declined',13,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:12.537461Z','2026-12-07T09:41:12.538841Z',0,NULL);
INSERT INTO "operations" VALUES(13,2,'chg_owned','api','ses_KFHAhLf4w83EJxP_Y3oVNg','sending',14,14,'2026-12-07T09:41:12.585545Z','cf7aabce-4480-40ea-b416-dc3e9e83147f',NULL,NULL,'2036-12-04T09:41:12.346707Z',1,NULL,'waiting for you to sign in to Larkspur Air','2026-12-07T09:41:12.584918Z','2026-12-07T09:41:12.592544Z',1,'waiting for you to sign in to Larkspur Air');
INSERT INTO "operations" VALUES(14,2,'chg_owned_pending','api','ses_KFHAhLf4w83EJxP_Y3oVNg','pending',15,NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,NULL,'2026-12-07T09:41:12.585326Z','2026-12-07T09:41:12.585326Z',1,NULL);
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
INSERT INTO "requests" VALUES(1,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T09:41:12.430164Z',NULL,NULL);
INSERT INTO "requests" VALUES(2,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_pending"}','cli','2026-12-07T09:41:12.430887Z',NULL,NULL);
INSERT INTO "requests" VALUES(3,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_declined"}','cli','2026-12-07T09:41:12.431195Z',NULL,NULL);
INSERT INTO "requests" VALUES(4,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_grace"}','cli','2026-12-07T09:41:12.432424Z',NULL,NULL);
INSERT INTO "requests" VALUES(5,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/ret_withdrawn"}','cli','2026-12-07T09:41:12.439744Z',NULL,NULL);
INSERT INTO "requests" VALUES(6,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_performed"}','cli','2026-12-07T09:41:12.445182Z',NULL,NULL);
INSERT INTO "requests" VALUES(7,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/seat_refused"}','cli','2026-12-07T09:41:12.460347Z',NULL,NULL);
INSERT INTO "requests" VALUES(8,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_unknown"}','cli','2026-12-07T09:41:12.472724Z',NULL,NULL);
INSERT INTO "requests" VALUES(9,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/bag_resolved"}','cli','2026-12-07T09:41:12.500564Z',NULL,NULL);
INSERT INTO "requests" VALUES(10,1,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8401/api/orders/exc_expired"}','cli','2026-12-07T09:41:12.522428Z',NULL,NULL);
INSERT INTO "requests" VALUES(11,1,'mcp','{"arguments": {"plan": "fiber-500"}, "interface": "mcp", "server_url": "http://127.0.0.1:8401/mcp", "tool": "cancel_plan"}','cli','2026-12-07T09:41:12.523264Z',NULL,NULL);
INSERT INTO "requests" VALUES(12,1,'conversation','{"conversation_id": "conv_1", "endpoint": "http://127.0.0.1:8401/conversations", "interface": "conversation", "message_id": "msg_3", "text": "Yes"}','cli','2026-12-07T09:41:12.523735Z',NULL,NULL);
INSERT INTO "requests" VALUES(13,3,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8404/api/orders/ord_removed"}','cli','2026-12-07T09:41:12.537168Z',NULL,NULL);
INSERT INTO "requests" VALUES(14,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_owned"}','cli','2026-12-07T09:41:12.584585Z',NULL,NULL);
INSERT INTO "requests" VALUES(15,2,'api','{"body": {"n": 1}, "interface": "api", "method": "POST", "url": "http://127.0.0.1:8402/api/orders/chg_owned_pending"}','cli','2026-12-07T09:41:12.585142Z',NULL,NULL);
CREATE TABLE revision_checks (
        revision_id INTEGER PRIMARY KEY REFERENCES revisions(id),
        checker_version INTEGER NOT NULL,
        amount TEXT,
        findings_json TEXT NOT NULL,
        checked_at TEXT NOT NULL
    );
INSERT INTO "revision_checks" VALUES(2,1,'USD 95.00','[["warning", "price_changed", "The price changed.", null]]','2026-12-07T09:41:12.596925Z');
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
INSERT INTO "revisions" VALUES(1,1,'r1',1,'Exchange the **jacket** for $70.00 more.','{"price":{"amount":"70.00","currency":"USD"}}','2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "exc_pending", "revision": "r1", "summary": "Exchange the **jacket** for $70.00 more.", "expires_at": "2036-12-04T09:41:12Z", "terms": {"price": {"amount": "70.00", "currency": "USD"}}}',NULL,'2026-12-07T09:41:12.430430Z','2026-12-07T09:41:12.430825Z');
INSERT INTO "revisions" VALUES(2,1,'r2',2,'Exchange the **jacket** for $95.00 more.','{"price":{"amount":"95.00","currency":"USD"}}','2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "exc_pending", "revision": "r2", "summary": "Exchange the **jacket** for $95.00 more.", "expires_at": "2036-12-04T09:41:12Z", "terms": {"price": {"amount": "95.00", "currency": "USD"}}}',NULL,'2026-12-07T09:41:12.431042Z',NULL);
INSERT INTO "revisions" VALUES(3,2,'r1',3,'Move your flight to 22 January for $45.00.',NULL,'2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "chg_declined", "revision": "r1", "summary": "Move your flight to 22 January for $45.00.", "expires_at": "2036-12-04T09:41:12Z"}',NULL,'2026-12-07T09:41:12.431278Z',NULL);
INSERT INTO "revisions" VALUES(4,3,'r1',4,'Return the beanie for a refund of $24.00.',NULL,'2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "ret_grace", "revision": "r1", "summary": "Return the beanie for a refund of $24.00.", "expires_at": "2036-12-04T09:41:12Z"}',NULL,'2026-12-07T09:41:12.436350Z',NULL);
INSERT INTO "revisions" VALUES(5,4,'r1',5,'Return the gloves for $10.00.',NULL,'2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "ret_withdrawn", "revision": "r1", "summary": "Return the gloves for $10.00.", "expires_at": "2036-12-04T09:41:12Z"}',NULL,'2026-12-07T09:41:12.439844Z',NULL);
INSERT INTO "revisions" VALUES(6,5,'r1',6,'Exchange the gloves (S) for M.',NULL,'2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "exc_performed", "revision": "r1", "summary": "Exchange the gloves (S) for M.", "expires_at": "2036-12-04T09:41:12Z"}',NULL,'2026-12-07T09:41:12.445314Z',NULL);
INSERT INTO "revisions" VALUES(7,6,'r1',7,'Upgrade seat 14C to 4C for $89.00.',NULL,'2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "seat_refused", "revision": "r1", "summary": "Upgrade seat 14C to 4C for $89.00.", "expires_at": "2036-12-04T09:41:12Z"}',NULL,'2026-12-07T09:41:12.460515Z',NULL);
INSERT INTO "revisions" VALUES(8,7,'r1',8,'Add a checked bag for $35.00.',NULL,'2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "bag_unknown", "revision": "r1", "summary": "Add a checked bag for $35.00.", "expires_at": "2036-12-04T09:41:12Z"}',NULL,'2026-12-07T09:41:12.472906Z',NULL);
INSERT INTO "revisions" VALUES(9,8,'r1',9,'Add a second bag for $35.00.',NULL,'2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "bag_resolved", "revision": "r1", "summary": "Add a second bag for $35.00.", "expires_at": "2036-12-04T09:41:12Z"}',NULL,'2026-12-07T09:41:12.500724Z',NULL);
INSERT INTO "revisions" VALUES(10,9,'r1',10,'Exchange the shorts.',NULL,'2026-12-07T09:41:13.000000Z','2026-12-07T09:41:13Z','{"operation_id": "exc_expired", "revision": "r1", "summary": "Exchange the shorts.", "expires_at": "2026-12-07T09:41:13Z"}',NULL,'2026-12-07T09:41:12.522724Z',NULL);
INSERT INTO "revisions" VALUES(11,10,'r1',11,'Cancel the Fiber 500 plan.',NULL,'2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "can_mcp", "revision": "r1", "summary": "Cancel the Fiber 500 plan.", "expires_at": "2036-12-04T09:41:12Z"}',NULL,'2026-12-07T09:41:12.523408Z',NULL);
INSERT INTO "revisions" VALUES(12,11,'r1',12,'Exchange the jacket, as agreed.',NULL,'2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "exc_talk", "revision": "r1", "summary": "Exchange the jacket, as agreed.", "expires_at": "2036-12-04T09:41:12Z"}',NULL,'2026-12-07T09:41:12.523814Z',NULL);
INSERT INTO "revisions" VALUES(13,12,'r1',13,'Order the atlas for $30.00.',NULL,'2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "ord_removed", "revision": "r1", "summary": "Order the atlas for $30.00.", "expires_at": "2036-12-04T09:41:12Z"}',NULL,'2026-12-07T09:41:12.537461Z',NULL);
INSERT INTO "revisions" VALUES(14,13,'r1',14,'Change the booking.',NULL,'2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "chg_owned", "revision": "r1", "summary": "Change the booking.", "expires_at": "2036-12-04T09:41:12Z"}',NULL,'2026-12-07T09:41:12.584918Z',NULL);
INSERT INTO "revisions" VALUES(15,14,'r1',15,'Rebook the flight.',NULL,'2036-12-04T09:41:12.000000Z','2036-12-04T09:41:12Z','{"operation_id": "chg_owned_pending", "revision": "r1", "summary": "Rebook the flight.", "expires_at": "2036-12-04T09:41:12Z"}',NULL,'2026-12-07T09:41:12.585326Z',NULL);
CREATE TABLE sign_ins (
        company_id INTEGER PRIMARY KEY REFERENCES companies(id),
        issuer TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('device', 'direct', 'mediated')),
        scopes TEXT NOT NULL,
        account TEXT,
        signed_in_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
INSERT INTO "sign_ins" VALUES(2,'http://127.0.0.1:8402','device','poppy:read orders','alice@larkspur.test','2026-12-07T09:41:12.548037Z','2026-12-07T09:41:12.548037Z');
CREATE INDEX operations_status ON operations (status, updated_at);
CREATE INDEX operations_updated ON operations (updated_at);
CREATE INDEX decisions_operation ON decisions (operation_row);
CREATE INDEX attempts_operation ON attempts (operation_row);
CREATE INDEX events_operation ON events (operation_row);
CREATE INDEX operations_due ON operations (updated_at) WHERE status IN ('approved', 'sending');
COMMIT;
