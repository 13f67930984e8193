"""The spec's own examples (operations-extension-v2.md), verbatim."""

OPERATION = {
    "operation_id": "exc_5Rt2",
    "revision": "1791487200-k3Jd9Qx2mW8v",
    "summary": "Exchange the Stormline Jacket (M) on order ord_7Hk2 for the Stormline Insulated Jacket (M), for $70.00 more, charged to the card used for the order.",
    "terms": {
        "order_id": "ord_7Hk2",
        "item_id": "itm_4Qa",
        "replacement_sku": "stormline-insulated-m",
        "price_difference": {"amount": "70.00", "currency": "USD"},
    },
    "expires_at": "2026-10-08T12:20:00-07:00",
}

API_403_BODY = """{
  "error": "approval_required",
  "operation": {
    "operation_id": "exc_5Rt2",
    "revision": "1791487200-k3Jd9Qx2mW8v",
    "summary": "Exchange the Stormline Jacket (M) on order ord_7Hk2 for the Stormline Insulated Jacket (M), for $70.00 more, charged to the card used for the order.",
    "expires_at": "2026-10-08T12:20:00-07:00"
  }
}"""

MCP_RESULT = """{
  "isError": true,
  "content": [
    {
      "type": "text",
      "text": "Not done yet. This needs the user's approval: exchange the Stormline Jacket (M) for the Stormline Insulated Jacket (M), for $70.00 more."
    }
  ],
  "structuredContent": {
    "operation": {
      "operation_id": "exc_5Rt2",
      "revision": "1791487200-k3Jd9Qx2mW8v",
      "summary": "Exchange the Stormline Jacket (M) on order ord_7Hk2 for the Stormline Insulated Jacket (M), for $70.00 more, charged to the card used for the order.",
      "expires_at": "2026-10-08T12:20:00-07:00"
    }
  }
}"""

CONVERSATION_EVENT = """{
  "id": "evt_c4",
  "type": "message",
  "created_at": "2026-10-08T19:05:00Z",
  "message": {
    "id": "msg_r2Kq",
    "role": "company",
    "author": {
      "type": "agent"
    },
    "text": "I can exchange it for the insulated version in medium for $70 more. I'll do it once you approve.",
    "extensions": {
      "operations": {
        "operation": {
          "operation_id": "exc_5Rt2",
          "revision": "1791487200-k3Jd9Qx2mW8v",
          "summary": "Exchange the Stormline Jacket (M) on order ord_7Hk2 for the Stormline Insulated Jacket (M), for $70.00 more, charged to the card used for the order.",
          "expires_at": "2026-10-08T12:20:00-07:00"
        }
      }
    }
  }
}"""

APPROVAL_HEADER = 'operation_id="exc_5Rt2", revision="1791487200-k3Jd9Qx2mW8v"'

MCP_CALL_PARAMS_META = {
    "personalagentprotocol.org/approval": {
        "operation_id": "exc_5Rt2",
        "revision": "1791487200-k3Jd9Qx2mW8v",
    }
}

AGENT_APPROVAL_MESSAGE = """{
  "id": "msg_Qd4hVn2Rx8TfLe1M",
  "author": {
    "type": "agent"
  },
  "text": "The user approved the exchange.",
  "extensions": {
    "operations": {
      "approval": {
        "operation_id": "exc_5Rt2",
        "revision": "1791487200-k3Jd9Qx2mW8v"
      }
    }
  }
}"""

POPPY_JSON_EXTENSIONS = {"operations": [{"version": "2"}]}
EXTENSIONS_HEADER = '"operations";v="2"'
