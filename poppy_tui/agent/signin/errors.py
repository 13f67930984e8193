"""One error type for sign-in: its message is one clear line a person can act on."""

from __future__ import annotations


class SignInError(RuntimeError):
    """Sign-in could not go on. The message says why (and may quote a Company: show it sanitised)."""


class CodeRejected(SignInError):
    """The Company said `failed` to a one-time code and kept the code step open: the person may
    type the code again (not the credentials, which were sent once)."""
