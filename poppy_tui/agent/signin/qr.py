"""A QR code of the Device Sign-In link, as text (two rows of modules per line, half blocks),
so the CLI and the TUI can show it in a terminal. Only a link that passed the host check is
ever encoded."""

from __future__ import annotations

_BLOCKS = {(True, True): "█", (True, False): "▀", (False, True): "▄", (False, False): " "}


def qr_text(data: str, border: int = 2) -> str:
    import segno  # imported on use: only a device sign-in with a link shows a QR code

    rows = [
        [bool(m) for m in row]
        for row in segno.make(data, error="m").matrix_iter(scale=1, border=border)
    ]
    if len(rows) % 2:
        rows.append([False] * len(rows[0]))
    lines = []
    for top, bottom in zip(rows[0::2], rows[1::2], strict=True):
        lines.append("".join(_BLOCKS[(a, b)] for a, b in zip(top, bottom, strict=True)))
    return "\n".join(lines)
