"""Issue 36, class 7: `make isolate` never clears a node it saw fail.

The practice followed is the fault-isolation rule of scripts/fleet/isolate.py's docstring: a node is cleared only by
evidence, and a failed all-reduce on record is evidence that no later pass erases (NVSentinel and Meta's GCM alike
treat a flapping check as a fault to investigate, not as health). A flaky node (one all-reduce in two fails) must end
named, or "intermittent, undetermined" with a non-zero exit, never "no node at fault" with exit 0. Pure logic against
a simulated fabric, as tests/test_isolate.py.
"""
from __future__ import annotations

import itertools

import pytest

from scripts.fleet.isolate import Decision, Outcome, plan_done
from scripts.fleet.isolate_run import decision_json, exit_status, format_decision

pytestmark = pytest.mark.unit


def run_flaky(count: int, flaky: str, fails_first: bool, bad: frozenset[str] = frozenset()) -> Decision:
    """Rounds until the plan stops; `flaky` fails every other all-reduce it joins (its first one, or its second);
    `bad` nodes fail every one."""
    nodes = [f"n{i + 1}" for i in range(count)]
    joined = itertools.count(0 if fails_first else 1)
    results: list[tuple[int, Outcome]] = []
    number = 0
    while True:
        decision, pairs = plan_done(nodes, results)
        if not pairs:
            return decision
        number += 1
        for pair in pairs:
            fails = bool(bad & set(pair)) or (flaky in pair and next(joined) % 2 == 0)
            results.append((number, Outcome(pair, not fails, None if fails else 10.0, "timed out" if fails else "",
                                            5.0)))


@pytest.mark.parametrize("count", range(2, 13))
@pytest.mark.parametrize("fails_first", [True, False])
def test_a_flaky_node_is_never_cleared_when_a_pair_failed_on_record(count, fails_first):
    for i in range(count):
        flaky = f"n{i + 1}"
        d = run_flaky(count, flaky, fails_first)
        if not d.failed_pairs:
            continue                        # it never failed where it was tried: nothing on record to answer
        named = {f.node for f in d.named}
        assert flaky in named or flaky in d.undetermined, (flaky, d.summary)
        assert named <= {flaky}, d.summary           # a healthy partner of the flaky node is never named
        assert exit_status(d) != 0 and not d.summary.startswith("no node at fault"), d.summary
        assert all(f.verdict != "ok" or f.node != flaky for f in d.findings)


def test_the_flaky_node_of_four_is_named_or_said_intermittent_with_its_record():
    d = run_flaky(4, "n2", fails_first=True)            # n1+n2 fails, then n2 passes with another node
    assert d.failed_pairs >= 1
    flaky = next(f for f in d.findings if f.node == "n2")
    assert flaky.verdict in ("failing", "intermittent"), d.summary
    assert any("FAIL" in e for e in flaky.evidence) and any("PASS" in e for e in flaky.evidence), flaky.evidence
    text = format_decision(d)
    assert "n2" in text.splitlines()[0] and exit_status(d) in (1, 2)
    doc = decision_json(d)
    assert "n2" in doc["undetermined"] + [n["node"] for n in doc["named"]]


def test_two_nodes_that_passed_elsewhere_but_failed_together_are_intermittent_not_healthy():
    # round 1: a+b fail, c+d pass; round 2: a+c and b+d pass; the bound (3 rounds for 4) re-tests a and b once more
    nodes = ["a", "b", "c", "d"]
    results = [(1, Outcome(("a", "b"), False, None, "timed out")), (1, Outcome(("c", "d"), True, 10.0)),
               (2, Outcome(("a", "c"), True, 10.0)), (2, Outcome(("b", "d"), True, 10.0))]
    d, pairs = plan_done(nodes, results)
    assert set(d.intermittent) == {"a", "b"} and not d.done
    assert {frozenset(p) for p in pairs} == {frozenset(("a", "d")), frozenset(("b", "c"))}   # clean references
    results += [(3, Outcome(p, True, 10.0)) for p in pairs]
    d, pairs = plan_done(nodes, results)
    assert pairs == [] and set(d.intermittent) == {"a", "b"}
    assert exit_status(d) == 2 and d.summary.startswith("intermittent, undetermined: a, b"), d.summary


def test_a_failure_a_named_node_explains_clears_its_partner():
    d = run_flaky(4, "n9", fails_first=True, bad=frozenset({"n3"}))       # n3 fails always; no flaky node
    assert {f.node: f.verdict for f in d.named} == {"n3": "failing"}
    assert d.intermittent == [] and exit_status(d) == 1


def _run_two_flaky(count: int, fails: dict[str, set[int]]) -> Decision:
    """Rounds until the plan stops; each node of `fails` fails the all-reduces it joins whose number (1, 2, ...) is in
    its set, and passes the others."""
    nodes = [f"n{i + 1}" for i in range(count)]
    joined = dict.fromkeys(nodes, 0)
    results: list[tuple[int, Outcome]] = []
    number = 0
    while True:
        decision, pairs = plan_done(nodes, results)
        if not pairs:
            return decision
        number += 1
        for pair in pairs:
            for n in pair:
                joined[n] += 1
            bad = any(joined[n] in fails.get(n, set()) for n in pair)
            results.append((number, Outcome(pair, not bad, None if bad else 10.0, "timed out" if bad else "", 5.0)))


def test_two_flaky_nodes_never_make_each_other_or_a_healthy_node_a_known_good_reference():
    """The fault-isolation rule: a reference must be known-good. n1 and n3 fail their odd all-reduces; each passed
    once (with each other), so neither is a reference for the other's partners: the answer is "intermittent,
    undetermined" for those with failures on record, never "at fault: n1, n2, n3, n4" (n2 and n4 never failed
    alone: every pair of theirs that failed held n1 or n3)."""
    d = _run_two_flaky(4, {"n1": {1, 3, 5}, "n3": {1, 3, 5}})
    assert not {f.node for f in d.named} - {"n1", "n3"}, d.summary
    assert exit_status(d) != 0 and "intermittent" in d.summary, d.summary
