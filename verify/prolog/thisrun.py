"""Whether a report is evidence of this node now: not a replay, not another schema's, not another node's, not
another run's time (the prolog's rule; the fleet report refuses the same: scripts/fleet/fleet.py). Pure."""
from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

from .. import REPORT_SCHEMA_VERSION
from .verdict import one_line


def not_this_run(report: Any, started: float, ended: float, skew_s: float, nodes: tuple[str | None, ...] = ()
                 ) -> str | None:
    """Why a report is no evidence of this node now, or None: a replay of recorded facts (verify --from-facts judged
    a record, another host's or another day's, and probed nothing here), one of a report schema this verify does not
    write, one whose scheduler names a node other than `nodes` (the names this run goes by: its --node, the
    SLURMD_NODENAME verify was given), or one `created` outside the run that was asked to write it (a --python that
    hands back a kept report, a clock stepped while it ran), past the clock-skew allowance either side. Evidence
    from another host or time never drains a node and never passes one (the fleet report refuses both alike:
    scripts/fleet/fleet.py)."""
    if not isinstance(report, dict):
        return None
    version = report.get("schema_version", REPORT_SCHEMAS[-1])
    if type(version) is not int or version not in REPORT_SCHEMAS:
        return f"report schema_version {one_line(repr(version))[:20]}, none this verify writes " \
               f"({', '.join(map(str, REPORT_SCHEMAS))}): not its report of this node"
    if group := _group_run(report):
        return group
    if (other := _other_node(report, nodes)) is not None:
        return f"a report of node {one_line(other)[:60]!r} (its environment.scheduler.node), not of " \
               f"{'/'.join(sorted({str(n) for n in nodes if n}))[:80]}: not evidence of this node"
    if replay := report.get("replay"):
        facts = replay.get("facts_dir") if isinstance(replay, dict) else replay
        return f"a replay of recorded facts ({one_line(str(facts))[:80]}: verify --from-facts), nothing probed on " \
               "this node: not evidence of it now"
    raw = report.get("created")
    if raw is None:               # verify writes it in every report (its schema requires it): a replay stripped of it
        return "no `created` time, which every verify report has: not evidence of when it ran, nor of this node now"
    try:
        when = datetime.strptime(str(raw), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return f"created {one_line(repr(raw))[:40]}, no time verify writes (YYYY-MM-DDTHH:MM:SSZ): not evidence of " \
               "when it ran"
    if not math.floor(started) - skew_s <= when <= ended + skew_s:
        return f"created {one_line(str(raw))[:40]}, outside this run ({datetime.fromtimestamp(started, timezone.utc):%Y-%m-%dT%H:%M:%SZ}" \
               f" + {ended - started:.0f} s, {skew_s:g} s of clock skew allowed): another run's report, not evidence " \
               "of this node now"
    return None


# the report schemas a verify of this checkout writes (verify/__init__.py), or verify 1.x wrote (1, still read)
REPORT_SCHEMAS = (1, REPORT_SCHEMA_VERSION)


def _other_node(report: dict[str, Any], nodes: tuple[str | None, ...]) -> str | None:
    """The node a report's scheduler names where it is none of `nodes`, or None. DNS names are case-insensitive and
    a short name is its FQDN's first label (n1 is n1.cluster.example.), as scripts/fleet/plausible.py node_key."""
    env = report.get("environment")
    sched = env.get("scheduler") if isinstance(env, dict) else None
    said = sched.get("node") if isinstance(sched, dict) else None
    names = {k for n in nodes if isinstance(n, str) and n.strip() for k in _node_keys(n)}
    if not isinstance(said, str) or not said.strip() or not names:
        return None
    return None if _node_keys(said) & names else said


def _group_run(report: dict[str, Any]) -> str | None:
    """Why a report is a multi-node group's, not this node's preflight, or None: the prolog runs verify --preflight
    alone on this node (the job's torchrun settings dropped), so a check whose data says it ran across nodes or as a
    launcher's rank is another run's (and its figures would be judged against an inter-node floor, not this node's)."""
    checks = report.get("checks")
    for c in checks if isinstance(checks, list) else []:
        data = c.get("data") if isinstance(c, dict) else None
        if not isinstance(data, dict):
            continue
        nodes = data.get("nodes")
        many = (isinstance(nodes, int) and not isinstance(nodes, bool) and nodes > 1) \
            or (isinstance(nodes, list) and len(nodes) > 1)         # the train check lists its ranks' nodes
        if many or data.get("rank") is not None:
            return (f"a report whose {one_line(str(c.get('name')))[:20]} check ran across nodes or as a launcher's rank "
                    f"(nodes {one_line(str(nodes))[:12]}): a group's run, not this node's preflight")
    return None


def _node_keys(name: str) -> set[str]:
    key = name.strip().lower().rstrip(".")
    return {key, key.split(".", 1)[0]}
