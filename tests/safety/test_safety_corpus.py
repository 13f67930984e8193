"""The hostile corpus: every case has its exact expected output."""

from __future__ import annotations

import pytest

from poppy_tui.safety.discrepancies import check_operation
from poppy_tui.safety.sanitize import sanitize, sanitize_line
from poppy_tui.safety.summary import render_summary
from tests.safety.safety_corpus import NOW, cases, expand, finding_case

SANITIZE = cases("sanitize")
LINE = cases("sanitize_line")
RENDER = cases("render")
FINDINGS = cases("findings")


def test_corpus_is_big_enough_and_ids_are_unique():
    every = SANITIZE + LINE + RENDER + FINDINGS
    assert len(every) >= 60
    for group in (SANITIZE, LINE, RENDER, FINDINGS):
        ids = [c["id"] for c in group]
        assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", SANITIZE, ids=[c["id"] for c in SANITIZE])
def test_sanitize(case):
    result = sanitize(expand(case["input"]))
    assert result.text == expand(case["text"])
    assert result.flags == frozenset(case["flags"])
    if "marks" in case:
        assert [list(m) for m in result.marks] == case["marks"]


@pytest.mark.parametrize("case", LINE, ids=[c["id"] for c in LINE])
def test_sanitize_line(case):
    result = sanitize_line(expand(case["input"]), case["max_chars"])
    assert result.text == expand(case["text"])
    assert result.flags == frozenset(case["flags"])
    assert "\n" not in result.text and "\t" not in result.text


@pytest.mark.parametrize("case", RENDER, ids=[c["id"] for c in RENDER])
def test_render_summary(case):
    rendered = render_summary(expand(case["input"]))
    assert rendered.content.plain == expand(case["plain"])
    assert rendered.plain == rendered.content.plain
    spans = sorted([s.start, s.end, s.style] for s in rendered.content.spans)
    assert spans == case["spans"]
    assert rendered.flags == frozenset(case["flags"])


@pytest.mark.parametrize("case", FINDINGS, ids=[c["id"] for c in FINDINGS])
def test_findings(case):
    operation, request, previous = finding_case(case)
    findings = check_operation(operation, request, previous=previous, now=NOW)
    got = [[f.severity, f.code, f.field] for f in findings]
    assert got == case["expect"], [f.message for f in findings]
