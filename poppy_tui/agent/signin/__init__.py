"""Signing in to Companies (spec 5.4): issuer binding, the three sign-in kinds (Device, Direct,
Mediated), tokens (refresh tokens in the keyring or the opt-in key file storage, access tokens in memory) and sign-out.

`SignIns` is the one entry point; the CLI and the TUI drive its flows step by step.

Modules: service (SignIns), flows (the three kinds), oauth (authlib, imported on first use:
it costs ~0.1 s, and most runs never sign in), vault (tokens), loopback, identity, errors.
"""
