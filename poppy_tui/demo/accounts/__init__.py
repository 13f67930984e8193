"""The demo Company's accounts: an authorization server (RFC 8414 metadata, Direct, Device and Mediated Sign-In, token, revocation) and the token checks its interfaces make."""
