"""Which node is at fault: all-reduce in pairs, re-test the suspects against nodes that passed (pure logic).

The planner and the judge of `make isolate` (the runner, isolate_run.py, launches each pair as a Slurm step):

- round 1 pairs the nodes in order (n1+n2, n3+n4, ...; with an odd count the last one waits);
- every later round pairs each node not yet cleared with a node already cleared (a known-good reference, one per
  suspect), and the suspects left over with each other in pairs not tried before (a second pairing);
- a pair the tool could not judge (verify's crash or refused measurement, the image's fault) is `not-assessed`:
  it neither clears nor strikes a node, and the answer is never clean while one is on record;
- a pair is `pass` when its all-reduce gave a right result and a figure (bus bandwidth, GB/s) of at least
  SLOW_BELOW x the upper median of every finished pair's figure so far (upper: with two pairs, the faster one);
  `slow` below that; `fail` when it did not finish, or its result was wrong or missing;
- a node in a passing pair is cleared; a node is named (failing or slow) when its pairs failed or were slow with
  CONFIRM (2) different known-good partners (one slow pair on a busy host is noise as often as not). A partner is
  known-good for a node when it passed and every failed pair of its own holds that node, a named node or a node
  that never passed: a second flaky node (it passed once too) is no reference, or two flaky nodes would name each
  other and every healthy node they met; nor is a node the answer ends calling intermittent. A node that passed a pair itself is never named on failed pairs: it is not
  broken every time, and two flaky partners failing only beside it read the same (it ends intermittent). Two flaky
  nodes whose failures fall on the pairs of a third that never passed can still point at it within the rounds: the
  evidence is the same as that node failing, and only repeating those pairs would tell;
- it stops when no node is left in doubt, when no new pair can be formed, or after ceil(log2 N) + 1 rounds;
- when the fastest pair is more than 1/SLOW_BELOW x the median, slow nodes may be the majority, which a median cannot
  single out: the answer says so (`spread`) and is not "healthy".

A node never paired against a cleared one is never named: when no pair passes at all, the cause is common to all
(the image, the network, the tool itself) and the answer is "undetermined", never a node.

A failed pair is never forgotten (a flaky node fails one all-reduce in two): a node that passed in one pair and
failed in another is not cleared by the pass. It collects strikes like any other (a node that fails with CONFIRM
different partners that passed elsewhere is named, passes or not), is re-tested against nodes with a clean record,
and, where the rounds end before the record decides, ends "intermittent": named as undetermined, never "no node at
fault" (exit 2). Only a failure a named partner explains is cleared.
"""
from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from .plausible import node_key

SLOW_BELOW = 0.5        # below half the (upper) median passing pair is slow: a shared host's noise stays above it
PASS, SLOW, FAIL = "pass", "slow", "fail"
# a pair the tool could not judge (verify crashed or refused its own measurement, or the image's fault): no evidence
# of either node, so it neither clears nor strikes one, and is never a clean answer
UNJUDGED = "not-assessed"
CONFIRM = 2             # a node is named after slow or failing pairs with this many different known-good partners
# a step stopped at its timeout proves a hang only when the timeout is at least this many times the slowest step that
# ended on its own (the prolog's confirmation rule: a hang is proven only with room to spare)
HANG_MARGIN = 2.0


@dataclass(frozen=True)
class Outcome:
    """One pair's all-reduce, as the runner read it from the pair's report."""

    nodes: tuple[str, ...]
    ok: bool                        # it finished with a right result and a figure
    busbw: float | None = None      # GB/s, present and finite when ok
    why: str = ""                   # what went wrong when not ok (one line)
    seconds: float | None = None    # the step's wall time
    ours: bool = False              # not ok for the tool's or the image's trouble, not a node's: UNJUDGED
    hung: bool = field(default=False, compare=False)   # stopped at the step timeout (seconds: about that timeout)
    wrong: bool = field(default=False, compare=False)  # its all-reduce returned wrong values (NCCL_WRONG_RESULT)


@dataclass(frozen=True)
class Tried:
    """A pair's outcome in its round, with its verdict against the median of the passing pairs."""

    round: int
    outcome: Outcome
    verdict: str                    # pass, slow, fail, not-assessed (UNJUDGED)
    ratio: float | None             # busbw / median


@dataclass
class Finding:
    node: str
    verdict: str                    # failing, slow, ok, intermittent, undetermined
    evidence: list[str] = field(default_factory=list)


@dataclass
class Decision:
    nodes: list[str]
    rounds: int
    tried: list[Tried]
    median: float | None
    findings: list[Finding]
    done: bool                      # no node left in doubt
    best: float | None = None       # the fastest passing pair's figure
    interrupted: str | None = None  # the signal that stopped the runner before the rounds ended (not final)

    @property
    def spread(self) -> str | None:
        """Said when the fastest pair is more than 1/SLOW_BELOW x the median: slow nodes may be the majority, which
        a median cannot single out (nothing is named slow for it, and the answer says so)."""
        if self.best and self.median and self.best * SLOW_BELOW > self.median:
            return (f"the fastest pair ({self.best:.3g} GB/s) is {self.best / self.median:.1f}x the median "
                    f"({self.median:.3g} GB/s): if most nodes are slow, a median cannot single them out")
        return None

    @property
    def named(self) -> list[Finding]:
        return [f for f in self.findings if f.verdict in ("failing", "slow")]

    @property
    def undetermined(self) -> list[str]:
        """Nodes no answer clears: never paired with a known-good node, or intermittent (a failure on record)."""
        return [f.node for f in self.findings if f.verdict in ("undetermined", "intermittent")]

    @property
    def intermittent(self) -> list[str]:
        return [f.node for f in self.findings if f.verdict == "intermittent"]

    @property
    def failed_pairs(self) -> int:
        return sum(1 for t in self.tried if t.verdict == FAIL)

    @property
    def unjudged_pairs(self) -> list[Tried]:
        return [t for t in self.tried if t.verdict == UNJUDGED]

    def _most_failed(self) -> str:
        """The intermittent node in the most failed pairs, where one is (a flaky node meets several partners, each
        of which fails once beside it): the first to inspect, not a verdict (two flaky partners read the same)."""
        counts = {n: (sum(1 for t in self.tried if n in t.outcome.nodes and t.verdict == FAIL),
                      sum(1 for t in self.tried if n in t.outcome.nodes)) for n in self.intermittent}
        ranked = sorted(counts.items(), key=lambda kv: -kv[1][0])
        if len(ranked) > 1 and ranked[0][1][0] > ranked[1][1][0]:
            node, (failed, tried) = ranked[0]
            return f"; in the most failed pairs: {node} ({failed} of {tried}), the first to inspect"
        return ""

    @property
    def summary(self) -> str:
        """The answer; a run stopped by a signal (scancel, the job's time limit) is never final, never clean."""
        text = self._answer
        if self.interrupted is None:
            return text
        stopped = (f"interrupted by {self.interrupted} after {self.rounds} finished round(s), before the rounds "
                   "ended: not final")
        if self.named:
            return f"{text}; {stopped}"
        if not self.tried:
            return f"undetermined: {stopped}, before any pair's step ended: no node judged"
        return f"undetermined: {stopped}, no node cleared by it (the finished rounds: {text})"

    @property
    def _answer(self) -> str:
        named = ", ".join(f"{f.node} ({f.verdict})" for f in self.named)
        if self.intermittent:
            flaky = (f"intermittent, undetermined: {', '.join(self.intermittent)} (each failed in a pair and passed in "
                     f"another; {self.failed_pairs} failed pair(s) on record): not cleared")
            others = [n for n in self.undetermined if n not in self.intermittent]
            return ((f"at fault: {named}; " if self.named else "") + flaky + self._most_failed()
                    + (f"; undetermined: {', '.join(others)}" if others else ""))
        if self.named and not self.undetermined:
            return f"at fault: {named}; every other node passed against a known-good partner"
        if self.named:
            return f"at fault: {named}; undetermined: {', '.join(self.undetermined)}"
        if self.undetermined and len(self.nodes) == 2:
            return (f"undetermined: the one pair {'+'.join(self.nodes)} failed and no third node is a known-good "
                    "reference: either node, or what both share (the image, the network): no node named; isolate "
                    "among 3 or more nodes to tell")
        if self.undetermined and len(self.undetermined) == len(self.nodes):
            return ("undetermined: no pair passed, so no node is a known-good reference; the cause is common to all "
                    "(the image, the network, the tool, or every node): no node named" + self._ours_said)
        if self.undetermined:
            return f"undetermined: {', '.join(self.undetermined)} (never paired with a known-good node){self._ours_said}"
        if self.unjudged_pairs:
            # every node passed somewhere, but a pair the tool could not judge is no evidence either way: not clean
            return f"undetermined: every node passed in a pair{self._ours_said}"
        spread = f"; but {self.spread}" if self.spread else ""
        return (f"no node at fault: every node passed in a pair ({len(self.nodes)} nodes, {self.rounds} round(s))"
                f"{spread}{self._slow_said}")

    @property
    def _ours_said(self) -> str:
        ours = self.unjudged_pairs
        if not ours:
            return ""
        said = "; ".join(f"{'+'.join(t.outcome.nodes)}: {t.outcome.why}" for t in ours)
        return (f"; {len(ours)} pair(s) not assessed, the tool's or the image's trouble and no node's ({said[:300]}): "
                "fix that and run make isolate again")

    @property
    def _slow_said(self) -> str:
        """A slow pair whose nodes each passed elsewhere is taken as noise (one slow pair on a busy host is as often
        noise as not), but said: a node slow one all-reduce in two reads the same, so it is never hidden."""
        slow = [t for t in self.tried if t.verdict == SLOW]
        if not slow:
            return ""
        pairs = ", ".join(f"{'+'.join(t.outcome.nodes)} (round {t.round}, {t.ratio:.2f}x the median)"
                          if t.ratio is not None else "+".join(t.outcome.nodes) for t in slow)
        return (f"; {len(slow)} slow pair(s) on record, taken as noise (each node passed with another partner): "
                f"{pairs}; a node slow again there is intermittent: run make isolate again to tell")


def max_rounds(count: int) -> int:
    """The bound: ceil(log2 N) + 1 rounds (2 nodes: 2; 4: 3; 64: 7)."""
    return math.ceil(math.log2(count)) + 1 if count > 1 else 0


def first_round(nodes: Sequence[str]) -> list[tuple[str, str]]:
    """n1+n2, n3+n4, ...; an odd last node waits for the next round."""
    # one host however it is spelt (DNS: N1, n1 and n1. are one): a host paired with itself all-reduces over its
    # own links and would pass as the known-good reference that clears its partners
    spellings: dict[str, list[str]] = {}
    for n in nodes:
        spellings.setdefault(node_key(n), []).append(n)
    if twice := sorted(", ".join(v) for v in spellings.values() if len(v) > 1):
        raise ValueError(f"a node is named twice: {twice}")
    if len(nodes) < 2:
        raise ValueError("isolation needs at least two nodes: a pair")
    return [(nodes[i], nodes[i + 1]) for i in range(0, len(nodes) - 1, 2)]


def _tight(results: Sequence[tuple[int, Outcome]]) -> Outcome | None:
    """The slowest step that ended on its own, where a step stopped at the timeout had less than HANG_MARGIN x its
    time: that timeout (TORCHIMAGES_ISOLATE_TIMEOUT, our setting) cut short steps that were still all-reducing as
    slowly as a healthy pair, which is no hang of a node (an image pulled on first use, a slow rendezvous)."""
    ended = [o for _, o in results if not o.hung and o.seconds is not None]
    slowest = max(ended, key=lambda o: o.seconds or 0.0, default=None)
    return slowest if slowest is not None and any(
        o.hung and o.seconds is not None and o.seconds < HANG_MARGIN * (slowest.seconds or 0.0)
        for _, o in results) else None


def judge(results: Sequence[tuple[int, Outcome]]) -> tuple[list[Tried], float | None]:
    """Every pair's verdict against the median figure of all the passing pairs so far."""
    if (slowest := _tight(results)) is not None:
        results = [(n, o if not (o.hung and o.seconds is not None and o.seconds < HANG_MARGIN * (slowest.seconds or 0))
                    else dataclasses.replace(o, ours=True, why=(
                        f"stopped at the step timeout after {o.seconds:.0f} s, while {'+'.join(slowest.nodes)} took "
                        f"{slowest.seconds:.0f} s to end on its own: less than {HANG_MARGIN:g}x that proves no hang; "
                        "raise TORCHIMAGES_ISOLATE_TIMEOUT")))
                   for n, o in results]
    figures = [o.busbw for _, o in results if o.ok and o.busbw is not None]
    median = statistics.median_high(figures) if figures else None
    tried = []
    for number, o in results:
        if not o.ok or o.busbw is None:
            tried.append(Tried(number, o, UNJUDGED if o.ours and not o.ok else FAIL, None))
            continue
        ratio = o.busbw / median if median else None
        slow = len(figures) > 1 and ratio is not None and ratio < SLOW_BELOW
        tried.append(Tried(number, o, SLOW if slow else PASS, round(ratio, 3) if ratio is not None else None))
    return tried, median


def _cleared(tried: Sequence[Tried]) -> set[str]:
    return {n for t in tried if t.verdict == PASS for n in t.outcome.nodes}


def _clean_for(partner: str, node: str, tried: Sequence[Tried], cleared: set[str], blamed: set[str],
               unsure: frozenset[str] = frozenset()) -> bool:
    """Whether `partner` is a known-good reference against `node`: it passed in a pair, and each failing pair it was
    in holds `node`, a node already named, or a node that never passed (a slow pair is noise as often as not). A
    partner with a failure nothing else explains (a second flaky node, which passed once too) proves nothing of
    `node`: two flaky nodes would otherwise name each other and every healthy node they met."""
    return partner in cleared and partner not in unsure and all(t.verdict != FAIL or node in t.outcome.nodes
                                      or any(b != partner and (b in blamed or b not in cleared) for b in t.outcome.nodes)
                                      for t in tried if partner in t.outcome.nodes)


def _strikes(tried: Sequence[Tried], cleared: set[str], blamed: set[str],
             unsure: frozenset[str] = frozenset()) -> dict[str, list[Tried]]:
    """node → the slow or failing pairs in which every other member is a known-good reference for it (the node is
    the odd one out). A node's own pass does not spare it: a flaky node passes one pair and fails the next."""
    found: dict[str, list[Tried]] = {}
    for t in tried:
        if t.verdict in (PASS, UNJUDGED):         # the tool's trouble strikes no node
            continue
        for n in t.outcome.nodes:
            if all(_clean_for(m, n, tried, cleared, blamed, unsure) for m in t.outcome.nodes if m != n):
                found.setdefault(n, []).append(t)
    return found


def _blamed(tried: Sequence[Tried], cleared: set[str], unsure: frozenset[str] = frozenset()) -> dict[str, list[Tried]]:
    """The nodes named: a strike against CONFIRM different known-good partners (one slow or timed-out pair on a busy
    host is noise as often as not; the same node twice, with two known-good partners, is not). A named node explains
    its partners' failures with it, which may make them references for another: repeated until nothing changes
    (it only grows, so it ends)."""
    blamed: dict[str, list[Tried]] = {}
    while True:
        found = {n: ts for n, ts in _strikes(tried, cleared, set(blamed), unsure).items()
                 if len({m for t in ts for m in t.outcome.nodes if m != n}) >= CONFIRM
                 and not (n in cleared and any(t.verdict == FAIL for t in ts))}
        if found.keys() == blamed.keys():
            return found
        blamed = found


def _unexplained(tried: Sequence[Tried], cleared: set[str], blamed: dict[str, list[Tried]]) -> set[str]:
    """Nodes that passed in a pair, are not named, and were in a failed pair that no named member explains: one
    of them may be flaky (a failed all-reduce on record is never cleared by a later pass)."""
    found = set()
    for t in tried:
        if t.verdict != FAIL:
            continue
        for n in t.outcome.nodes:
            if n in cleared and n not in blamed and not any(_explains(m, n, t, blamed) for m in t.outcome.nodes
                                                            if m != n):
                found.add(n)
    return found


def _explains(member: str, node: str, t: Tried, blamed: dict[str, list[Tried]]) -> bool:
    """Whether the named `member` explains `node`'s failed pair `t`. Any failure but wrong values (a timeout, no
    figure, a crash: a slow or broken node causes those); wrong values only a node named on wrong values, with
    CONFIRM different partners (a slow node computes no wrong element: named on one slow pair and the very pair with
    `node`, it cleared `node`, whose GPU returned the wrong values, as "ok", hunt85)."""
    if member not in blamed:
        return False
    if not t.outcome.wrong:
        return True
    return len({m for s in blamed[member] if s.outcome.wrong for m in s.outcome.nodes if m != member}) >= CONFIRM


def _settled(tried: Sequence[Tried], cleared: set[str]) -> tuple[dict[str, list[Tried]], set[str]]:
    """The nodes named and the intermittent ones, consistent with each other: a node the answer calls intermittent
    (a failure on record no named node explains) is no known-good reference for naming another. _clean_for excuses a
    partner's failures beside a node that never passed, _unexplained does not: two flaky nodes (each passed once, each
    failed beside a never-passed node) were the two "known-good" partners that named a healthy third, while the same
    answer listed them as intermittent. Fewer references name fewer nodes, which explains fewer failures: repeated
    until the intermittent set stops growing (it only grows, so it ends)."""
    unsure: frozenset[str] = frozenset()
    while True:
        blamed = _blamed(tried, cleared, unsure)
        flaky = _unexplained(tried, cleared, blamed)
        if flaky <= unsure:
            return blamed, flaky
        unsure |= flaky


def next_round(nodes: Sequence[str], tried: Sequence[Tried]) -> list[tuple[str, str]]:
    """The next round's pairs: each node in doubt (never cleared, or intermittent) with a node of clean record it has
    not met (one each), the rest in doubt in pairs not tried before."""
    cleared = _cleared(tried)
    blamed, flaky = _settled(tried, cleared)
    doubt = [n for n in nodes if (n not in cleared or n in flaky) and n not in blamed]
    seen = {frozenset(t.outcome.nodes) for t in tried}
    free = [n for n in nodes if n in cleared and n not in flaky and n not in blamed]
    pairs, left = [], []
    for node in doubt:
        reference = next((r for r in free if frozenset((node, r)) not in seen), None)
        if reference is None:
            left.append(node)
        else:
            free.remove(reference)
            pairs.append((node, reference))
    while left:
        node = left.pop(0)
        partner = next((m for m in left if frozenset((node, m)) not in seen), None)
        if partner is not None:
            left.remove(partner)
            pairs.append((node, partner))
    return pairs


def decide(nodes: Sequence[str], results: Sequence[tuple[int, Outcome]]) -> Decision:
    """Who is at fault after the rounds run so far; `done` when no node is left in doubt."""
    tried, median = judge(results)
    cleared = _cleared(tried)
    blamed, flaky = _settled(tried, cleared)
    findings = []
    for n in nodes:
        mine = [t for t in tried if n in t.outcome.nodes]
        evidence = [_evidence(n, t) for t in mine]
        if n in blamed:
            verdict = "failing" if any(t.verdict == FAIL for t in blamed[n]) else "slow"
        elif n in flaky:
            verdict = "intermittent"
        elif n in cleared:
            verdict = "ok"
        else:
            verdict = "undetermined"
        findings.append(Finding(n, verdict, evidence))
    rounds = max((number for number, _ in results), default=0)
    best = max((t.outcome.busbw for t in tried if t.verdict == PASS and t.outcome.busbw is not None), default=None)
    return Decision(list(nodes), rounds, tried, median, findings,
                    done=not any(f.verdict in ("undetermined", "intermittent") for f in findings), best=best)


def _evidence(node: str, t: Tried) -> str:
    o = t.outcome
    partner = "+".join(m for m in o.nodes if m != node)
    took = f", {o.seconds:.1f} s" if o.seconds is not None else ""
    if t.verdict in (FAIL, UNJUDGED):
        return f"round {t.round} with {partner}: {t.verdict.upper()} ({o.why or 'no result'}{took})"
    ratio = f" = {t.ratio:.2f}x the median" if t.ratio is not None else ""
    return f"round {t.round} with {partner}: {t.verdict.upper()} busbw {o.busbw:.3g} GB/s{ratio}{took}"


def plan_done(nodes: Sequence[str], results: Sequence[tuple[int, Outcome]]) -> tuple[Decision, list[tuple[str, str]]]:
    """The decision so far and the next round's pairs (empty: stop, the answer is final)."""
    decision = decide(nodes, results)
    if decision.done or decision.rounds >= max_rounds(len(nodes)):
        return decision, []
    return decision, next_round(nodes, decision.tried)
