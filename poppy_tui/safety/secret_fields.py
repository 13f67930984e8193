"""Which Mediated Sign-In fields poppy-tui treats as secret, whatever the Company declares.

0.2 4.7: credentials marked `secret` are never shown back, logged or kept. A Company can mark its
password field `secret: false`, by mistake or to have it echoed on screen and kept as the account
name. So a field is secret when the Company says so, or when its name, type or label says it is
a password or a code (password, passcode, PIN, OTP, one-time code, verification code, secret,
token, CVV, ...; any case, in any of the three), or when its label mixes alphabets or hides
characters (a "Pаssword" with a Cyrillic а must not slip past the words). Only the field that
identifies the account (an email, user name, login or phone number, and not secret) is ever kept
and shown as "signed in as". No Textual.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from poppy_tui.protocol.signin import MediatedField
from poppy_tui.safety.sanitize import sanitize_line

# Words and phrases that make a field secret, matched as whole words after normalising (below).
SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "pass",
        "passcode",
        "passphrase",
        "pin",
        "otp",
        "totp",
        "hotp",
        "2fa",
        "mfa",
        "secret",
        "token",
        "cvv",
        "cvv2",
        "cvc",
        "cvc2",
        "csc",
        "cid",
        "ssn",
        "apikey",
        "code",  # a one-time code by any other name ("code", "sms code"); postal codes are let through below
    }
)
SECRET_PHRASES = (
    "one time",
    "onetime",
    "verification code",
    "security code",
    "auth code",
    "authentication code",
    "access code",
    "confirmation code",
    "api key",
    "private key",
    "security answer",
    "card number",
)
# Squashed spellings ("userpassword", "otpcode", "accesstoken") caught inside longer names.
SECRET_INSIDE = (
    "password",
    "passwd",
    "passcode",
    "passphrase",
    "secret",
    "token",
    "onetime",
    "otpcode",
)
NOT_SECRET_CODES = frozenset(
    {"postal", "zip", "post", "country", "area", "promo", "discount", "coupon", "referral"}
)
ACCOUNT_WORDS = frozenset(
    {
        "email",
        "e mail",
        "mail",
        "email address",
        "username",
        "user name",
        "user",
        "login",
        "login name",
        "user id",
        "userid",
        "account",
        "account name",
        "phone",
        "phone number",
        "mobile",
        "mobile number",
    }
)

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_WORD = re.compile(r"[^a-z0-9]+")


def _normalised(text: str | None) -> str:
    """Lowercase words separated by single spaces: NFKC (fullwidth letters), no format
    characters (zero-width), camelCase and snake_case split."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cf", "Mn"))
    text = _CAMEL.sub(" ", text).casefold()
    return _NOT_WORD.sub(" ", text).strip()


def _says_secret(text: str | None) -> bool:
    words = _normalised(text)
    if not words:
        return False
    tokens = words.split()
    padded = f" {words} "
    for index, token in enumerate(tokens):
        if token in SECRET_WORDS:
            if token == "code" and index and tokens[index - 1] in NOT_SECRET_CODES:
                continue
            return True
    if any(f" {phrase} " in padded for phrase in SECRET_PHRASES):
        return True
    squashed = words.replace(" ", "")
    return any(inside in squashed for inside in SECRET_INSIDE)


def _hides_something(label: str) -> bool:
    flags = sanitize_line(label, 200).flags
    return bool(flags & {"mixed_script", "invisible", "bidi", "control", "escape"})


def looks_secret(field: MediatedField) -> bool:
    """Secret as declared, or by its name, type or label, or a label that could hide a word."""
    return (
        field.secret
        or any(_says_secret(text) for text in (field.name, field.type, field.label))
        or _hides_something(field.label)
    )


def identifies_account(field: MediatedField) -> bool:
    """The account identifier: not secret, and its name, type or label says email, user name,
    login or phone (the whole of it, not a word inside: "account number" is not one)."""
    if looks_secret(field):
        return False
    return any(_normalised(text) in ACCOUNT_WORDS for text in (field.name, field.type, field.label))


@dataclass(frozen=True)
class GuardedField:
    """A declared field as poppy-tui handles it."""

    name: str
    label: str
    secret: bool  # never echoed, kept or shown
    account: bool  # the one value kept and shown as "signed in as"
    declared_secret: bool  # what the Company said, to tell the person when poppy-tui overrode it


def guard_fields(fields: tuple[MediatedField, ...]) -> tuple[GuardedField, ...]:
    """Every field with poppy-tui's own verdict; at most one (the first) identifies the account."""
    guarded: list[GuardedField] = []
    account_taken = False
    for field in fields:
        account = not account_taken and identifies_account(field)
        account_taken = account_taken or account
        guarded.append(
            GuardedField(field.name, field.label, looks_secret(field), account, field.secret)
        )
    return tuple(guarded)


def redact(text: str, secrets: list[str]) -> str:
    """A Company's message with any secret the person typed cut out (a Company must never
    return credentials, 0.2 4.7; a hostile one may quote them back)."""
    for value in sorted({s for s in secrets if len(s) >= 3}, key=len, reverse=True):
        text = text.replace(value, "•••")
    return text
