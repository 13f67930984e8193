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
# assertion (iss/sub/aud/iat/exp/jti) plus `sid` for the Session.
SESSION_JWT_TYP = "poppy-session+jwt"
SESSION_JWT_ALG = "ES256"
SESSION_JWT_LIFETIME_SECONDS = 120
SESSION_JWT_MAX_CLOCK_SKEW_SECONDS = 60
# How a Session JWT is signed (NOT FOUND for 0.4; digest 3.4). Chosen: "direct", the
# 0.4-compatible reading: each JWT is signed with the agent's long-term key, named by `kid`
# (its RFC 7638 thumbprint) and published in the JWKS at the CIMD's jwks_uri. The 1.0 reading
# ("delegated": a short-lived key vouched for under the `poppy_dlg` header) would add a
# second signature format nobody can test against yet. The token never carries its key:
# `jwk`, `jku`, `x5u` and `x5c` in its header are refused.
SESSION_JWT_KEY_MODE = "direct"
SESSION_JWT_FORBIDDEN_HEADER_MEMBERS = ("jwk", "jku", "x5u", "x5c")

# Agent identity (spec 4.1): client_id is the HTTPS URL of the agent's Client ID Metadata
# Document. Until `poppy-tui identity init --client-id URL` sets one, an agent that may talk
# to loopback Companies (the demo, tests) gets a development identity it serves itself on
# 127.0.0.1 (agent/identity/); only a loopback Company accepts such an http:// client_id.
AGENT_TOKEN_ENDPOINT_AUTH_METHOD = "private_key_jwt"
LOOPBACK_CLIENT_IDS_FOR_LOOPBACK_COMPANIES = True
DEV_CLIENT_ID_PATH = "/poppy-tui/agent.json"
DEV_JWKS_PATH = "/poppy-tui/jwks.json"
# A Company refetches an agent's JWKS on an unknown kid at most this often (digest 3.1).
JWKS_REFETCH_MIN_SECONDS = 30.0
# private_key_jwt client assertions (RFC 7523): aud is the Company's auth.issuer as one string.
CLIENT_ASSERTION_TYP = "JWT"
# The OAuth error codes a Company answers with when it can't verify the agent itself (its
# CIMD, its JWKS, or the key a request names); the agent then names its CIMD URL.
IDENTITY_REJECTED_ERRORS = ("invalid_client", "unauthorized_client")
# Kept for old records and messages only: the placeholder client_id poppy-tui used before it
# published an identity of its own (a CIMD and its JWKS, spec 4.1; docs/protocol-choices.md).
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
# ... and what its authorization server may answer a sign-in step with (tokens, device codes).
MAX_SIGNIN_ANSWER_BYTES = 64 * 1024

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

# ---- Sign-in flows (spec 5.4 NOT FOUND for 0.4; the 0.2 rules and the RFCs they name) ----------
CLIENT_ASSERTION_LIFETIME_SECONDS = 60
DEVICE_CODE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code"
# Direct Sign-In redirect for a terminal program: RFC 8252 7.3, a loopback IP literal with any
# port. The CIMD's redirect_uris lists DIRECT_SIGNIN_LOOPBACK_REDIRECT without a port, and the
# authorization server must accept any port on it (RFC 8252 7.3), as the agent picks a free one.
DIRECT_SIGNIN_LOOPBACK_HOST = "127.0.0.1"
DIRECT_SIGNIN_CALLBACK_PATH = "/callback"
DIRECT_SIGNIN_LOOPBACK_REDIRECT = (
    f"http://{DIRECT_SIGNIN_LOOPBACK_HOST}{DIRECT_SIGNIN_CALLBACK_PATH}"
)
# RFC 8628 3.5: `slow_down` adds 5 seconds to the polling interval; 5 s when none is given.
DEVICE_DEFAULT_INTERVAL_SECONDS = 5
DEVICE_SLOW_DOWN_SECONDS = 5
# Mediated Sign-In: the member that holds exactly the declared fields (see the reading above).
MEDIATED_FIELDS_MEMBER = "fields"
# Access tokens are refreshed this long before they expire.
ACCESS_TOKEN_REFRESH_MARGIN_SECONDS = 60

# Which account a sign-in is (Ops 3: an account's operation is approved "while signed in to the
# same account"). The core's User ID is the agent's own pairwise name (digest 3.2), the same
# whoever signs in; how a Company names the account is NOT FOUND for 0.4. Read, in this order,
# where the Company gives it unasked (protocol/accounts.py, docs/protocol-choices.md):
# an OIDC ID token in the token answer; the userinfo endpoint its metadata names; an RFC 9068
# JWT access token's `sub`. From claims: `email` (unless email_verified is false), else `sub`.
ACCOUNT_ID_TOKEN_MEMBER = "id_token"
ACCOUNT_USERINFO_METADATA = "userinfo_endpoint"
ACCOUNT_CLAIMS = ("email", "sub")
ACCOUNT_ACCESS_TOKEN_TYPES = ("at+jwt", "application/at+jwt")
ACCOUNT_MAX_CHARS = 320  # an email address's longest (RFC 3696 errata), a sub's 255 (OIDC 2)
ACCOUNT_MAX_TOKEN_CHARS = 16 * 1024
ACCOUNT_CLOCK_SKEW_SECONDS = 60
# Accounts are compared as the Company wrote them: exactly, but an email address's domain, whose
# ASCII letters are compared without case (safety/account_owner.same_account).

# How a Company says in a conversation how an approved operation went (Ops 6: "says how it went
# in a later message", in words; the spec defines no structured field). poppy-tui reads one
# convention, and only it: message.data.status, about message.data.operation_id when present.
# Words alone are shown to the person and never taken as an outcome (docs/protocol-choices.md).
CONVERSATION_OUTCOME_STATUS_FIELD = "status"  # in message.data
CONVERSATION_OUTCOME_OPERATION_FIELD = "operation_id"  # in message.data
CONVERSATION_PERFORMED_STATUSES = frozenset({"performed"})
CONVERSATION_NOT_PERFORMED_STATUSES = frozenset({"not_performed"})
CONVERSATION_IN_PROGRESS_STATUSES = frozenset({"performing", "in_progress"})

# ---- What an answer to an approval says (Ops 7; docs/protocol-choices.md, "Answers to an approval")
# Once an approval may have left, only an answer that says nothing was performed settles an
# operation `not_performed`; anything else is in doubt: the same approval is sent again while the
# terms last (Ops 7), then the outcome is found out another way. These say nothing was performed:
# - the error codes of the refusals the spec defines before or instead of performing: a new
#   revision or operation (`approval_required`, Ops 6 check 3, "performs nothing"), the Session
#   and token checks that come before the operation's checks (Ops 6: invalid_session, sign-in
#   challenges, an identity the Company can't verify), and `extension_required` (spec 3.3);
#   in a conversation, the structured "not performed" of CONVERSATION_NOT_PERFORMED_STATUSES;
APPROVAL_REFUSAL_CODES = (
    frozenset(
        {
            "approval_required",
            "invalid_session",
            SIGN_IN_REQUIRED,
            INVALID_TOKEN,
            INSUFFICIENT_SCOPE,
            *IDENTITY_REJECTED_ERRORS,
            "extension_required",
        }
    )
    | CONVERSATION_NOT_PERFORMED_STATUSES
)
# - a JSON-RPC error saying the server did not run the tool at all (method not found, invalid
#   params: the call never reached the tool);
MCP_REFUSAL_ERROR_CODES = frozenset({-32601, -32602})
# - any other 4xx status on the API or at the MCP server's HTTP layer (the reading NOT FOUND in the
#   spec): RFC 9110 15.5 makes 4xx the server's refusal of the request as sent, and Ops 7 forbids a
#   Company to "respond as if it failed" while it performs the operation or doesn't know whether it
#   took effect (503 then), so a 4xx is its word that nothing was done. Except these, which say
#   nothing about the request's fate: 408 (the server stopped waiting for the request: a timeout,
#   which Ops 7 resends) and 425 (Too Early: "retry", RFC 8470).
APPROVAL_4XX_IN_DOUBT = frozenset({408, 425})
# Never a refusal: a 5xx (a crash or a gateway can't say whether the action was done, whatever its
# body: HTML, empty, cut off, declared JSON but unreadable), a 3xx (redirects are not followed,
# and a 303 may follow a performed POST), an MCP tool error (`isError: true`) that carries neither
# an operation nor one of the codes above (an MCP SDK server reports a tool that raised, maybe
# after it committed, exactly so), and a success status whose answer can't be read.
