"""The lifecycle of an operation: one pure transition function and the explanation of a state.

No I/O: nothing here reads a clock, a store, the network or a file (an import-linter contract and
tests/agent/test_lifecycle.py hold it to `poppy_tui.protocol` and the standard library). It is
the one place that decides what happens next; the store persists its result
(agent/store/decisions.py, dispatch.py), the dispatcher carries it out (agent/dispatcher.py,
agent/sending/), and the screens and commands describe it (`explain`).

API (stable; docs/state-machine.md is drawn from it):

- `Status` (states.py): pending, approved, sending, performed, not_performed, outcome_unknown,
  declined, withdrawn, expired. Also re-exported by agent/store/status.py.
- `Facts` (facts.py): what is known of one operation (status, revisions, send time, retry time,
  attempts as `AttemptFact`, `Holds`). `Policy`: retry window, inline-retry limit, backoff.
  A revision's timers are its own: `Facts.window_start()` counts only the approved revision's
  attempts (since it last waited for sign-in).
- Events (events.py): the person's `Approve`, `Decline`, `Withdraw`, `ResolveUnknown`,
  `SendNow`; new terms not in answer to an approval, `NewRevision`; what the outcome probe found out,
  `FoundOut`; the clock's `Tick`; a dispatcher's `Due` (it holds the lease, the time has come);
  the Company's `Answer` (an `AnswerKind`: performed, new_revision, same_revision,
  other_operation, refused, broke_protocol, retry_later, in_doubt, in_doubt_final, not_sent,
  sign_in, other_account); `SignedIn`; `SenderGone` (a lease lapsed on an unfinished attempt).
- `step(facts, event, now, policy=None) -> Step` (machine.py): the first of `RULES` (rules.py; their
  conditions and words in conditions.py, the Step and Rule types in steps.py) that matches
  decides; a Step names its `rule`, the state it leads `to`, what to `do` (`Do`), the `detail`
  recorded, and `at` (the send time, the retry's time, how long a wait lasts). `NoRule` is a hole.
- `explain(facts, now) -> Explanation` (explanation.py): `why` (a `Why`), `on_its_way`, `line`, `at`,
  and `sentence(time_text=None)`: the one sentence the TUI, `show` and the MCP tools say.
- `render_table()` (table.py): the Markdown transition table docs/state-machine.md holds.
"""

from __future__ import annotations

from poppy_tui.lazy_exports import lazy_exports

# Loaded on first use: agent/store/status.py reads `Status` from states.py on `pending`'s light
# path, which must not import the machine's dataclasses.
_WHERE = {
    "Status": "states",
    "AttemptFact": "facts",
    "Facts": "facts",
    "Holds": "facts",
    "Policy": "facts",
    "Answer": "events",
    "AnswerKind": "events",
    "Approve": "events",
    "Decline": "events",
    "Due": "events",
    "Event": "events",
    "FoundOut": "events",
    "NewRevision": "events",
    "ResolveUnknown": "events",
    "SendNow": "events",
    "SenderGone": "events",
    "SignedIn": "events",
    "Tick": "events",
    "Withdraw": "events",
    "Do": "machine",
    "NoRule": "machine",
    "RULES": "machine",
    "Rule": "machine",
    "Step": "machine",
    "step": "machine",
    "Explanation": "explanation",
    "Why": "explanation",
    "explain": "explanation",
    "render_table": "table",
}

TYPE_CHECKING = False
if TYPE_CHECKING:
    from poppy_tui.agent.lifecycle.events import (
        Answer,
        AnswerKind,
        Approve,
        Decline,
        Due,
        Event,
        FoundOut,
        NewRevision,
        ResolveUnknown,
        SendNow,
        SenderGone,
        SignedIn,
        Tick,
        Withdraw,
    )
    from poppy_tui.agent.lifecycle.explanation import Explanation, Why, explain
    from poppy_tui.agent.lifecycle.facts import AttemptFact, Facts, Holds, Policy
    from poppy_tui.agent.lifecycle.machine import RULES, Do, NoRule, Rule, Step, step
    from poppy_tui.agent.lifecycle.states import Status
    from poppy_tui.agent.lifecycle.table import render_table

__all__ = [
    "Answer",
    "AnswerKind",
    "Approve",
    "AttemptFact",
    "Decline",
    "Do",
    "Due",
    "Event",
    "Explanation",
    "Facts",
    "FoundOut",
    "Holds",
    "NewRevision",
    "NoRule",
    "Policy",
    "RULES",
    "ResolveUnknown",
    "Rule",
    "SendNow",
    "SenderGone",
    "SignedIn",
    "Status",
    "Step",
    "Tick",
    "Why",
    "Withdraw",
    "explain",
    "render_table",
    "step",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
