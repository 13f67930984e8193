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

# Sign-in challenges (spec 7 as read; 0.4/1.0 text NOT FOUND). The 0.2 form was
# `WWW-Authenticate: DPoP error="insufficient_scope", scope="..."`; DPoP is gone
# from the 0.4 example (`Authorization: Bearer`), so the scheme is Bearer.
# sign_in_required and invalid_token are 401 (no usable credentials, RFC 6750 3.1);
# insufficient_scope is 403 (RFC 6750 3.1). The body repeats the challenge as JSON:
# {"error", "error_description", "scope"}.
CHALLENGE_SCHEME = "Bearer"
SIGN_IN_REQUIRED = "sign_in_required"
INSUFFICIENT_SCOPE = "insufficient_scope"
INVALID_TOKEN = "invalid_token"
CHALLENGE_STATUS = {SIGN_IN_REQUIRED: 401, INVALID_TOKEN: 401, INSUFFICIENT_SCOPE: 403}
# MCP: a tool call that needs sign-in is refused at the HTTP layer (the MCP
# authorization model: 401/403 + WWW-Authenticate), with a JSON-RPC error body the
# SDK surfaces as MCPError(code, data={"error", "scope", "error_description"}).
MCP_CHALLENGE_CODE = -32051
# Conversations: 0.2's `authorization` event, `{"type": "authorization", "error", "scope"}`.
CONVERSATION_AUTHORIZATION_EVENT = "authorization"

# Protocol scopes (0.1/0.2); a Company's own scopes are listed in auth.custom_scopes.
SCOPE_READ = "poppy:read"
SCOPE_WRITE = "poppy:write"

# The agent's client assertion at the token, revocation and mediated endpoints
# (private_key_jwt): `aud` is auth.issuer as one string, nothing else (0.2).
CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
AS_METADATA_WELL_KNOWN = "/.well-known/oauth-authorization-server"

# Mediated Sign-In (0.2): the request format is NOT FOUND. We read it as a JSON POST
# to auth.mediated.endpoint: {"client_id", "client_assertion_type", "client_assertion",
# "scope", "fields": {name: value}}; the answer's `status` is one of these, and a
# complete answer carries the token response members beside it. After code_required
# the agent POSTs {"code", client assertion members} to {endpoint}/{sign_in_id}.
MEDIATED_STATUSES = ("complete", "code_required", "failed", "expired")
