"""Rendering and checking a 10 KB and a 1 MB summary: safety.summary.render_summary (Markdown
subset + sanitiser -> Textual Content) and safety.discrepancies.check_operation."""

from __future__ import annotations

import random

from common import Figure, timed

PARAGRAPHS = (
    "Exchange the **Stormline Jacket (M)** on order ord_7Hk2 for the *Stormline Insulated Jacket (M)*, "
    "for $70.00 more, charged to the card used for the order.",
    "- Return the original by Dec 18, 2026\n- The replacement ships within 2 business days\n- Refunds go to the Visa ending 4242",
    "Your fitting moves from Fri, Dec 11 at 10:00 AM to Sat, Dec 12 at 10:30 AM (Pacific time), for a $10.00 change fee.",
    "1. Cancel the Trailhead Coffee Club ($18.00 a month)\n2. Keep the 10% member discount until Dec 31, 2026",
    "Terms: [the full terms](https://evil.example/terms) <b>are</b> here \u202eevil\u202c and \x1b]52;c;ZXZpbA==\x07 "
    "should show as text.",
)


def make_summary(size: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        part = PARAGRAPHS[rng.randrange(len(PARAGRAPHS))]
        parts.append(part)
        total += len(part.encode()) + 2
    return "\n\n".join(parts).encode()[:size].decode("utf-8", "ignore")


def make_operation(summary: str):
    from poppy_tui.protocol.operation import parse_operation

    return parse_operation(
        {
            "operation_id": "exc_5Rt2",
            "revision": "1791487200-k3Jd9Qx2mW8v",
            "summary": summary,
            "terms": {
                "order_id": "ord_7Hk2",
                "item_id": "itm_4Qa",
                "replacement_sku": "stormline-insulated-m",
                "price_difference": {"amount": "70.00", "currency": "USD"},
            },
            "expires_at": "2099-10-08T12:20:00-07:00",
        }
    )


def run(quick: bool = False) -> list[Figure]:
    from poppy_tui.protocol.requests import ApiRequest
    from poppy_tui.safety.discrepancies import check_operation
    from poppy_tui.safety.formatting import format_summary
    from poppy_tui.safety.summary import render_summary

    def render_uncached(summary: str):
        format_summary.cache_clear()  # the renderer keeps the last 8; a new revision is a miss
        return render_summary(summary)

    request = ApiRequest(
        "POST",
        "http://127.0.0.1:8401/api/orders/ord_7Hk2/exchanges",
        {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
    )
    figures: list[Figure] = []
    for label, size, repeat in (("10 KB", 10 * 1024, 30), ("1 MB", 1024 * 1024, 3 if quick else 5)):
        summary = make_summary(size)
        operation = make_operation(summary)
        render_summary(summary)  # warm imports and caches
        check_operation(operation, request)
        # timed() calls each lambda before the loop moves on (B023 doesn't apply).
        rendered, result = timed(lambda: render_uncached(summary), repeat)  # noqa: B023
        cached, _ = timed(lambda: render_summary(summary), repeat)  # noqa: B023
        checked, findings = timed(lambda: check_operation(operation, request), repeat)  # noqa: B023
        both = rendered.median + checked.median
        figures.append(
            Figure(
                "Summary",
                f"render_summary, {label}",
                rendered.median,
                "ms",
                f"{rendered.text()}; again from its cache: median {cached.median:.3f} ms",
            )
        )
        figures.append(
            Figure(
                "Summary",
                f"check_operation, {label}",
                checked.median,
                "ms",
                f"{checked.text()}; {len(findings)} findings",
            )
        )  # type: ignore[arg-type]
        figures.append(
            Figure(
                "Summary",
                f"render + check, {label} (median)",
                both,
                "ms",
                f"{len(summary.encode()):,} bytes; "
                + (
                    "Markdown subset rendered"
                    if result.formatted
                    else "shown as plain text (past the Markdown limit)"
                )  # type: ignore[union-attr]
                + f"; sanitiser flags {', '.join(sorted(result.flags))}",
            )
        )  # type: ignore[union-attr]
    return figures
