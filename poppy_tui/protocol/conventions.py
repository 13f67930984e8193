"""Every choice the core spec leaves open (NOT FOUND in the digest), in one place.

Each constant names the reading we chose; docs/protocol-choices.md explains why.
Change a reading here and both the agent and the demo Company follow.
"""

from __future__ import annotations

POPPY_VERSION = "0.4"
SUPPORTED_DOCUMENT_VERSIONS = frozenset({"0.4"})

EXTENSION_NAME = "operations"
EXTENSION_VERSION = "2"
EXTENSION_MAJOR = "2"

# Header names (case-insensitive on the wire; spelled as the spec spells them).
HEADER_SESSION = "Poppy-Session"
HEADER_VERSION = "Poppy-Version"
HEADER_EXTENSIONS = "Poppy-Extensions"
HEADER_APPROVAL = "Poppy-Approval"
HEADER_IDEMPOTENCY_KEY = "Idempotency-Key"

MCP_APPROVAL_META_KEY = "personalagentprotocol.org/approval"

WELL_KNOWN_PATH = "/.well-known/poppy.json"

# poppy.json is cached as its HTTP caching headers say (Cache-Control max-age, else Expires),
# within the bounds the 0.2 guide suggests: at least 1 minute, at most 1 day. A document with
# no caching headers is kept for an hour (a heuristic freshness, as RFC 9111 4.2.2 allows);
# no-cache/no-store get the minimum, since the guide's lower bound still applies.
DISCOVERY_MIN_FRESH_SECONDS = 60
DISCOVERY_MAX_FRESH_SECONDS = 86400
DISCOVERY_DEFAULT_FRESH_SECONDS = 3600

# Session JWT. The digest confirms only `typ`. Claims follow the 0.2 Session
# assertion (iss/sub/aud/iat/exp/jti) plus `sid` for the Session. The public key
# travels in the protected header as `jwk` (as DPoP does) because a terminal
# agent has no hosted CIMD/jwks_uri; a Company binds the Session to the key's
# RFC 7638 thumbprint on first use and rejects any other key for that Session.
SESSION_JWT_TYP = "poppy-session+jwt"
SESSION_JWT_ALG = "ES256"
SESSION_JWT_LIFETIME_SECONDS = 120
SESSION_JWT_MAX_CLOCK_SKEW_SECONDS = 60
# The agent's client_id would be the HTTPS URL of its Client ID Metadata Document.
AGENT_CLIENT_ID = "https://poppy-tui.invalid/agent.json"

# Idempotency-Key: the Poppy example sends a bare UUID (Stripe style), not an
# RFC 9651 sf-string. Companies in the wild expect the bare form, so we send it.
IDEMPOTENCY_KEY_QUOTED = False

# Conversations (spec 8, paths NOT FOUND for 0.4: the 0.2 layout is used).
CONVERSATION_PROTOCOL_TYPE = "poppy"
CONVERSATION_CREATE_PATH = ""  # POST {endpoint}
CONVERSATION_MESSAGES_PATH = "/{conversation_id}/messages"  # POST
CONVERSATION_EVENTS_PATH = "/{conversation_id}/events"  # GET ?cursor=&wait=

# Bounds on what a Company may send us. Large enough for a 1 MB summary benchmark.
MAX_ID_LENGTH = 256
MAX_SUMMARY_BYTES = 2 * 1024 * 1024
MAX_TERMS_BYTES = 1024 * 1024
MAX_TERMS_DEPTH = 32
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
MAX_DISCOVERY_BYTES = 1024 * 1024

# How a Company says in a conversation how an approved operation went (Ops 6: "says how it went
# in a later message", in words; the spec defines no structured field). poppy-tui reads one
# convention, and only it: message.data.status, about message.data.operation_id when present.
# Words alone are shown to the person and never taken as an outcome (docs/protocol-choices.md).
CONVERSATION_OUTCOME_STATUS_FIELD = "status"  # in message.data
CONVERSATION_OUTCOME_OPERATION_FIELD = "operation_id"  # in message.data
CONVERSATION_PERFORMED_STATUSES = frozenset({"performed"})
CONVERSATION_NOT_PERFORMED_STATUSES = frozenset({"not_performed"})
CONVERSATION_IN_PROGRESS_STATUSES = frozenset({"performing", "in_progress"})
