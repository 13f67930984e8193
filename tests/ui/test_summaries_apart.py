"""Summaries that begin alike are shown from a little before they part (ui/safe.first_lines_apart)."""

from __future__ import annotations

import os
import random

from poppy_tui.ui.safe import CONTEXT_BEFORE, SHARED_START, first_lines_apart, shared_length


def reference(summaries: list[str]) -> list[str]:
    """Every line against every other (no sorting, no neighbours): what the list must show."""
    lines = [next((part.strip() for part in s.split("\n") if part.strip()), "") for s in summaries]
    heads = {line[:400] for line in lines}
    out = []
    for line in lines:
        head = line[:400]
        shared = max(
            (len(os.path.commonprefix([head, other])) for other in heads if other != head),
            default=0,
        )
        start = 0
        if shared >= SHARED_START:
            start = max(0, head.rfind(" ", 0, max(0, shared - CONTEXT_BEFORE)) + 1)
        out.append("…" + line[start:] if start else line)
    return out


def test_summaries_that_begin_alike_are_shown_from_where_they_part():
    shown = first_lines_apart(
        [
            "Move your jacket fitting (bkg_398) at Manzanita Outfitters Portland to Friday",
            "Move your jacket fitting (bkg_398) at Manzanita Outfitters Seattle to Friday",
            "Cancel your coffee club subscription",
        ]
    )
    assert shown[0].startswith("…") and "Portland" in shown[0] and not shown[0].startswith("…Move")
    assert shown[1].startswith("…") and "Seattle" in shown[1]
    assert shown[2] == "Cancel your coffee club subscription"


def test_a_long_list_matches_comparing_every_pair():
    rnd = random.Random(15)
    words = ["Move", "your", "jacket", "fitting", "to", "Fri", "bkg_3", "x" * 30, "é", "🙂", "\n"]
    for _ in range(200):
        stems = [
            " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 30)))
            for _ in range(rnd.randint(1, 5))
        ]
        summaries = [
            rnd.choice(stems) + " " + " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 8)))
            for _ in range(rnd.randint(0, 40))
        ]
        assert first_lines_apart(summaries) == reference(summaries)
        # The first frame's few rows, told apart from the whole list as they will be in it.
        count = rnd.randint(0, len(summaries))
        assert first_lines_apart(summaries, count) == reference(summaries)[:count]


def test_shared_length_is_the_common_beginning():
    rnd = random.Random(7)
    for _ in range(2000):
        a = "".join(rnd.choice("ab🙂") for _ in range(rnd.randint(0, 12)))
        b = "".join(rnd.choice("ab🙂") for _ in range(rnd.randint(0, 12)))
        assert shared_length(a, b) == len(os.path.commonprefix([a, b]))
