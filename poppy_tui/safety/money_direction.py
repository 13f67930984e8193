"""Which way money moves, as the terms and as the summary say it. No Textual.

The terms say it by their keys (a `refund` comes to the person, a `charge` or a
positive `price_difference` goes from them); the summary says it in words next to
the amount ("$70.00 more, charged", "$70.00 less, refunded"). A summary that
calls a charge a refund is a finding even when the amount is right. A zero amount
can be said in words ("at no extra cost", "isn't refunded"). And a recurring
price ("$18.00 a month") is a rate, not what this operation makes the person pay.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Literal
from collections.abc import Callable

from poppy_tui.safety.extract import MoneyMention, find_money_spans

Direction = Literal["pays", "receives"]  # from the person's side

# Keys for money that comes to the person (norm keys: lower case, no separators).
_RECEIVING_KEYS = frozenset(
    {
        "refund",
        "refundamount",
        "refunded",
        "credit",
        "creditamount",
        "reimbursement",
        "cashback",
        "payout",
    }
)
# Keys that say nothing about direction on their own.
_UNDIRECTED_KEYS = frozenset({"balance", "value"})

_NEGATION = re.compile(
    r"(?:\bnot|\bno|\bnever|\bnothing|\bwithout|n['’]t|\bcannot|\bnor)\s+(?:\w+\s+){0,2}$",
    re.IGNORECASE,
)
_PAYS_WORDS = re.compile(
    r"\b(?:charg(?:e|ed|es|ing)|pay|pays|paying|costs?|more|fees?|bill(?:ed|s)?|debit(?:ed|s)?|extra|owe)\b",
    re.IGNORECASE,
)
_RECEIVES_WORDS = re.compile(
    r"\b(?:refund(?:s|ed|ing)?|credit(?:ed|s)?(?!\s+card)|reimburs\w*|less|back|cashback)\b",
    re.IGNORECASE,
)
# Sentence ends: . ! ? ; or a line break, but not the dot inside "70.00".
_SENTENCE_END = re.compile(r"(?<!\d)[.!?;](?!\d)|[.!?;](?=\s|$)|\n")
_WINDOW = 40  # direction words further than this from the amount don't describe it

_RATE_AFTER = re.compile(
    r"\s*(?:(?:a|an|per|each|every|/)\s*(?:month|year|week|day|mo|yr|wk|annum)\b"
    r"|monthly\b|yearly\b|annually\b|weekly\b|daily\b)",
    re.IGNORECASE,
)

_NO_CHARGE = re.compile(
    r"\bno\s+(?:extra\s+|additional\s+|further\s+)?(?:cost|charge|fee|payment)s?\b"
    r"|\bfree(?:\s+of\s+charge)?\b"
    r"|\bwithout\s+(?:any\s+)?(?:extra\s+)?(?:cost|charge|fee)s?\b"
    r"|\bnothing\s+(?:more\s+|extra\s+|further\s+)?(?:is\s+|will\s+be\s+|gets\s+)?charged\b"
    r"|\b(?:costs|pay)\s+nothing\b"
    r"|\bno\s+price\s+difference\b",
    re.IGNORECASE,
)
_NO_REFUND = re.compile(
    r"\bno\s+refunds?\b"
    r"|\b(?:is|are|was|were|will|wo|won)\s*(?:n['’]t|not)\s+(?:be\s+)?refunded\b"
    r"|\bnot\s+(?:be\s+)?refunded\b"
    r"|\bnon-?refundable\b"
    r"|\bnothing\s+(?:is\s+|will\s+be\s+)?refunded\b",
    re.IGNORECASE,
)


def terms_direction(name: str, amount: Decimal) -> Direction | None:
    """Which way a terms amount under key `name` (a norm key) moves, or None if unsaid."""
    if amount == 0 or name in _UNDIRECTED_KEYS:
        return None
    if name in _RECEIVING_KEYS or name.startswith("refund"):
        return "receives"  # a refund comes back whichever sign the Company's ledger gives it
    return (
        "pays" if amount > 0 else "receives"
    )  # a negative charge or price difference is money back


def zero_direction(name: str) -> Direction | None:
    """For a zero amount: which way it would have moved, to know how "none" is said."""
    if name in _UNDIRECTED_KEYS:
        return None
    if name in _RECEIVING_KEYS or name.startswith("refund"):
        return "receives"
    return "pays"


def said_as_zero(text: str, direction: Direction | None) -> bool:
    """The summary says in words that nothing is paid ("at no extra cost") or refunded."""
    if direction == "pays":
        return bool(_NO_CHARGE.search(text))
    if direction == "receives":
        return bool(_NO_REFUND.search(text))
    return bool(_NO_CHARGE.search(text) or _NO_REFUND.search(text))


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    left = max(0, start - 400)
    begin = left
    for match in _SENTENCE_END.finditer(text, left, start):
        begin = match.end()
    after = _SENTENCE_END.search(text, end, end + 400)
    return begin, after.start() if after else min(len(text), end + 400)


def _words(pattern: re.Pattern[str], text: str, begin: int, finish: int) -> list[tuple[int, int]]:
    found = []
    for match in pattern.finditer(text, begin, finish):
        if not _NEGATION.search(text[max(begin, match.start() - 30) : match.start()]):
            found.append(match.span())
    return found


def mention_direction(text: str, start: int, end: int) -> Direction | None:
    """The direction the nearest money word in the same sentence gives an amount at [start, end)."""
    begin, finish = _sentence(text, start, end)
    begin, finish = max(begin, start - _WINDOW), min(finish, end + _WINDOW)

    def distance(span: tuple[int, int]) -> int:
        return start - span[1] if span[1] <= start else span[0] - end if span[0] >= end else 0

    pays = [distance(s) for s in _words(_PAYS_WORDS, text, begin, finish)]
    receives = [distance(s) for s in _words(_RECEIVES_WORDS, text, begin, finish)]
    nearest_pay = min(pays, default=None)
    nearest_receive = min(receives, default=None)
    if nearest_pay is None and nearest_receive is None:
        return None
    if nearest_receive is None or (nearest_pay is not None and nearest_pay < nearest_receive):
        return "pays"
    if nearest_pay is None or nearest_receive < nearest_pay:
        return "receives"
    return None  # as near each way: the summary doesn't say


def mentions_of(
    text: str, amount: Decimal, compatible: Callable[[MoneyMention], bool]
) -> list[tuple[MoneyMention, int, int]]:
    """Where the summary names `amount` (sign ignored), with a compatible currency."""
    return [
        (m, s, e)
        for m, s, e in find_money_spans(text)
        if abs(m.amount) == abs(amount) and compatible(m)
    ]


def is_rate(text: str, spans: list[tuple[MoneyMention, int, int]]) -> bool:
    """Every mention of the amount is followed by a period ("a month", "/yr", "monthly")."""
    return bool(spans) and all(_RATE_AFTER.match(text, end) for _, _, end in spans)


def rate_label(text: str, spans: list[tuple[MoneyMention, int, int]]) -> str:
    """The period as the summary writes it, e.g. "a month"."""
    match = _RATE_AFTER.match(text, spans[0][2])
    return " ".join(match.group().split()) if match else ""
