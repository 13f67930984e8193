"""The lifecycle simulation: a hypothesis rule-based state machine that drives the real `Agent`
(its store on disk, real HTTP and the real MCP SDK on 127.0.0.1) against the simulated Company,
on a clock it moves by hand, and checks the invariants (invariants.py) after every step.

A world is drawn first (the agent's grace period and retry window, how long the Company's terms
last, how it mints operation_ids, and the script of its answers to approvals); then steps:
requests over the API, MCP and conversations; the person's approvals, withdrawals, declines,
approvals again and resolutions of unknown outcomes, and the word that the sign-in now is a held
approval's account (the `Agent` methods the TUI calls); sign-ins as the same or another account,
named or not (Device Sign-In); the clock moving, with a dispatcher pass after it;
kills, idle or mid-send (before or after the Company performed), and restarts on the same home.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from poppy_tui.agent import clock
from poppy_tui.agent.agent import AgentError
from poppy_tui.agent.identity import publisher
from poppy_tui.agent.lifecycle import Why
from poppy_tui.agent.store import Status
from poppy_tui.agent.store.connection import StateError
from poppy_tui.safety.account_owner import UNCONFIRMED_WAIT_PREFIX

from . import invariants
from .company import SendHold, SimCompany
from .driver import SIM_LEASE_SECONDS, Driver, sim_config
from .invariants import Model
from .known_findings import Findings
from .sim_clock import SimClock
from .world import CONFIRMATION, DIRECTIVE_KINDS, ITEMS, VERBS, Asked, Directive, World

INTERFACES = ("api", "mcp", "conversation")
# Signed out, or in as a user by a sign-in that names the account (True) or not (Device Sign-In).
SIGN_INS = (None, ("alice", True), ("alice", False), ("bob", True), ("bob", False))
KILLS = ("between steps", "mid-send, before performing", "mid-send, after performing")
DECLINABLE = (Status.PENDING, Status.WITHDRAWN, Status.APPROVED)
# The moves of a step, weighted by repetition: time and the person's approvals drive every
# lifecycle, so they come most often; the word on a sign-in is offered only while an approval is
# held for it, and then the person mostly gives it (as the review's banner asks them to).
MOVES = (
    "time passes",
    "approve",
    "ask",
    "time passes",
    "approve",
    "ask",
    "say again",
    "time passes",
    "take back",
    "resolve unknown",
    "sign in or out",
    "confirm account",
    "the company will",
    "confirm account",
    "kill and restart",
)

# Every kind, and the ones that change the course of an approval again: an example draws
# them often enough to meet them together (new terms, then new terms again; busy, then performed).
WEIGHTED_KINDS = ("perform", "new_revision", *DIRECTIVE_KINDS, "new_revision", "busy", "refuse")
directives = st.builds(
    Directive,
    st.sampled_from(WEIGHTED_KINDS),
    st.sampled_from([None, 1, 45]),
    st.sampled_from([500, 502]),
)

# What the worlds met (for `-s`: the test prints it), counted once per world.
COVERAGE: Counter[str] = Counter()

# How far the clock moves in one step, by what it passes.
TICKS = ("a second", "the grace period", "a resend's wait", "a lease", "the retry window", "expiry")


class LifecycleMachine(RuleBasedStateMachine):
    """One simulated world per example. `company` is set on the class by the test (one server
    for the run, a fresh World per example)."""

    company: SimCompany

    def __init__(self) -> None:
        super().__init__()
        self._stack = ExitStack()
        self.clock = SimClock()
        self._stack.enter_context(clock.use(self.clock))
        self.home = Path(self._stack.enter_context(tempfile.TemporaryDirectory(prefix="sim-")))
        self.serving_before = publisher.serving()
        self.driver: Driver | None = None
        self.world: World | None = None
        self.model = Model()
        self.findings = Findings()
        self.step = 0

    # ---- the world -------------------------------------------------------------------------------

    @initialize(
        grace=st.sampled_from([0.0, 10.0]),
        window=st.sampled_from([60.0, 300.0]),
        expiry=st.sampled_from([120.0, 900.0, 3600.0]),
        mint_ids=st.booleans(),
        reuse_ids=st.booleans(),
        script=st.lists(directives, max_size=10),
    )
    def a_world(self, grace, window, expiry, mint_ids, reuse_ids, script) -> None:
        self.grace, self.window, self.expiry = grace, window, expiry
        self.world = World(self.clock, expiry, mint_ids, reuse_ids)
        self.world.script.extend(script)
        self.company.world = self.world
        self.driver = Driver(self.home, sim_config(grace, window), self.company.base_url)

    def teardown(self) -> None:
        try:
            if self.driver is not None:
                self._note_what_happened()
                self.driver.close()
            for port in publisher.serving() - self.serving_before:
                publisher.stop(port)  # this home's identity server
        finally:
            self._stack.close()

    def _note_what_happened(self) -> None:
        """How often each answer and end was met, in how many worlds (COVERAGE)."""
        seen = {f"answered {got.interface} approval: {got.answer}" for got in self.world.received}
        seen |= {f"ended {self.agent.store.get_operation(r).status.value}" for r in self.model.rows}
        seen |= {f"open finding met: {key}" for key in self.findings.noted}
        if self.model.vouched:
            seen.add("the person said a sign-in is an operation's account")
        vouched = {t for words in self.model.vouched.values() for _, t in words}
        seen |= {
            f"sent on the person's word, {'rightly' if got.check1 == 'ok' else got.check1}"
            for got in self.world.received
            if got.token in vouched
        }
        seen |= (
            {f"restarted {min(self.driver.restarts, 3)}+ times"} if self.driver.restarts else set()
        )
        COVERAGE.update(seen)
        COVERAGE["worlds"] += 1
        COVERAGE["steps"] += self.step

    def _next_step(self) -> int:
        self.step += 1
        assert self.world is not None
        self.world.step = self.step
        return self.step

    @property
    def agent(self):
        assert self.driver is not None
        return self.driver.agent

    # ---- one step ----------------------------------------------------------------------------------

    @rule(data=st.data())
    def step(self, data) -> None:
        """One move, drawn among those that can be made now (MOVES weights them): a single rule,
        so every world mixes every kind of move (hypothesis would otherwise switch whole rules
        off in many worlds, and a bounded run would rarely see a request, an approval and time
        passing together)."""
        moves = [move for move in MOVES if self._can(move)]
        move = data.draw(st.sampled_from(moves), label="move")
        self._next_step()
        getattr(self, move.replace(" ", "_"))(data)

    def _can(self, move: str) -> bool:
        if move == "approve":
            return self._any(Status.PENDING, Status.WITHDRAWN)
        if move == "take back":
            return self._any(*DECLINABLE)
        if move == "resolve unknown":
            return self._any(Status.OUTCOME_UNKNOWN)
        if move == "say again":
            return bool(self.model.conversations)
        if move == "confirm account":
            return bool(self._held_for_the_word())
        return True

    # ---- requests --------------------------------------------------------------------------------

    def _asked(self, request_id, interface, verb, item, qty=1, conversation_id=None) -> None:
        if request_id is not None:
            self.model.asked[request_id] = Asked(interface, verb, item, qty, conversation_id)

    def ask(self, data) -> None:
        """A request over the API or MCP, or the first words of a new conversation."""
        interface = data.draw(st.sampled_from(INTERFACES), label="interface")
        verb = data.draw(st.sampled_from(VERBS), label="verb")
        item = data.draw(st.sampled_from(ITEMS), label="item")
        qty = data.draw(st.sampled_from([1, 2]), label="qty")
        company = self.driver.company
        if interface == "api":
            result = self.driver.run(
                self.agent.call_api(company, "POST", f"/items/{item}/{verb}", {"qty": qty})
            )
        elif interface == "mcp":
            arguments = {"verb": verb, "item": item, "qty": qty}
            result = self.driver.run(self.agent.call_tool(company, "act", arguments))
        else:
            try:
                said = self.driver.run(self.agent.say(company, f"Please {verb} {item}"))
            except AgentError:
                return  # not started (the Company refused the token): nothing to follow
            self.driver.settle()
            self.model.conversations.append((said.conversation_row, said.conversation_id))
            self._asked(said.request_id, "conversation", verb, item, 1, said.conversation_id)
            self.model.rows.update(said.operation_rows)
            return
        self.driver.settle()
        self._asked(result.request_id, interface, verb, item, qty)
        if result.operation_row is not None:
            self.model.rows.add(result.operation_row)

    def say_again(self, data) -> None:
        """More words in a conversation: the confirmation, or a request (its own or another)."""
        row, conversation_id = data.draw(st.sampled_from(self.model.conversations), label="in")
        words = data.draw(st.sampled_from([CONFIRMATION, "Please hold it1"]), label="words")
        said = self.driver.run(self.agent.say(self.driver.company, words, row))
        self.driver.settle()
        topic = self.world.topics.get(conversation_id)
        if topic is not None and (words == CONFIRMATION or topic == ("hold", "it1")):
            self._asked(said.request_id, "conversation", *topic, 1, conversation_id)
        self.model.rows.update(said.operation_rows)

    # ---- the person's answers --------------------------------------------------------------------

    def _any(self, *statuses: Status) -> bool:
        if self.driver is None:
            return False
        return any(self.agent.store.get_operation(r).status in statuses for r in self.model.rows)

    def _pick(self, data, statuses):
        rows = [
            r
            for r in sorted(self.model.rows)
            if self.agent.store.get_operation(r).status in statuses
        ]
        if not rows:
            return None
        return self.agent.store.get_operation(data.draw(st.sampled_from(rows), label="operation"))

    def approve(self, data) -> None:
        """Approve the current revision (again, after a withdrawal)."""
        op = self._pick(data, (Status.PENDING, Status.WITHDRAWN))
        if op is None:
            return
        try:
            self.agent.approve(op.id, op.current.id)
        except StateError:
            invariants.check_hold_names_the_same_action(
                self.agent, op.id, self.model.rows, self.findings, refused=True
            )
            return
        self.model.decide(self.step, op.id, "approve", op.current.revision)
        invariants.check_hold_names_the_same_action(
            self.agent, op.id, self.model.rows, self.findings, refused=False
        )

    def take_back(self, data) -> None:
        """Withdraw an approval (before it is sent), or decline."""
        answer = data.draw(st.sampled_from(["withdraw", "decline"]), label="answer")
        op = self._pick(data, (Status.APPROVED,) if answer == "withdraw" else DECLINABLE)
        if op is None:
            return
        try:
            if answer == "withdraw":
                self.agent.withdraw(op.id)
            else:
                self.agent.decline(op.id, op.current.id)
        except StateError:
            return  # already on its way: too late to take back
        self.model.decide(self.step, op.id, answer, None)

    def resolve_unknown(self, data) -> None:
        """The person checks with the Company (its ground truth) and says what it told them."""
        op = self._pick(data, (Status.OUTCOME_UNKNOWN,))
        if op is None:
            return
        performed = op.operation_id in self.world.performed_ids()
        try:
            self.agent.resolve_unknown(op.id, performed)
        except StateError:
            return
        self.model.decide(self.step, op.id, "resolve", None)

    def _held_for_the_word(self) -> list[int]:
        """The approvals held until the person says whose the sign-in is: what the review offers
        its `u` for (the sign-in now can't be shown to be the operation's account), and what the
        agent tells the person of it (Why.SIGN_IN, the hold's own line)."""
        if self.driver is None:
            return []
        held = []
        for row in sorted(self.model.rows):
            op = self.agent.store.get_operation(row)
            if op.status not in (Status.APPROVED, Status.SENDING):
                continue
            standing = self.agent.store.account_standing(op)
            if standing is None or standing.standing != "unconfirmed":
                continue
            said = self.agent.explain(row)
            if said.why == Why.SIGN_IN and UNCONFIRMED_WAIT_PREFIX in said.line:
                held.append(row)
        return held

    def confirm_account(self, data) -> None:
        """The person says, in the review (`u`), that the sign-in now is the operation's account:
        rightly or not (whose it is, the Company knows; the simulation doesn't make the person
        check), so an approval released this way goes with that sign-in's token, and only it."""
        row = data.draw(st.sampled_from(self._held_for_the_word()), label="operation")
        token = self.driver.vault.token
        try:
            self.agent.confirm_account(row)
        except StateError as exc:
            self.findings.broken(
                None,
                f"confirming the account of operation row {row}, held for it, was refused: {exc}",
            )
            return
        self.model.vouch(self.step, row, token)
        invariants.check_the_word_releases(self.agent, row, self.findings)

    # ---- sign-ins --------------------------------------------------------------------------------

    def sign_in_or_out(self, data) -> None:
        """Signed out, or signed in as alice or bob, by a sign-in that names the account or not."""
        who = data.draw(st.sampled_from(SIGN_INS), label="who")
        if who is None:
            self.driver.sign_out()
            return
        user, named = who
        token = self.world.issue_token(user)
        self.model.named_tokens[token] = named
        self.driver.sign_in(token, user, named)
        invariants.check_the_word_no_longer_holds(self.agent, self.model, self.findings, token)

    # ---- the Company's next answers ----------------------------------------------------------------

    def the_company_will(self, data) -> None:
        self.world.script.append(data.draw(directives, label="answer"))

    # ---- time, kills, restarts -------------------------------------------------------------------

    def _seconds(self, tick: str) -> float:
        return {
            "a second": 1.0,
            "the grace period": self.grace + 1.0,
            "a resend's wait": 21.0,
            "a lease": SIM_LEASE_SECONDS + 1.0,
            "the retry window": self.window + 1.0,
            "expiry": self.expiry + 1.0,
        }[tick]

    def time_passes(self, data) -> None:
        """The clock moves past something, then a dispatcher pass runs."""
        tick = data.draw(st.sampled_from(TICKS), label="past")
        self.clock.advance(self._seconds(tick))
        self.driver.dispatch()

    def kill_and_restart(self, data) -> None:
        """Kill the agent between steps, or mid-send before or after the Company performed."""
        when = data.draw(st.sampled_from(KILLS), label="when")
        self.model.kills.append(self.clock.now())
        if when == "between steps":
            self.driver.kill()
        else:
            hold = SendHold(after_performing=when == "mid-send, after performing")
            self.driver.kill_mid_send(hold, self.world)

    # ---- after every step ------------------------------------------------------------------------

    @invariant()
    def invariants_hold(self) -> None:
        if self.driver is None:
            return
        agent = self.agent
        invariants.check_company_side(self.world, agent, self.model, self.findings)
        invariants.check_outcomes(self.world, agent, self.model, self.findings)
        invariants.check_on_its_way(
            agent, self.model, self.findings, self.clock.now(), SIM_LEASE_SECONDS
        )
