"""The sweep's bandwidth judged: busbw against the SKU's baseline (ring or NVLS, verify/baselines.json) and against
what the node's links carry, the job's own NCCL_* variables that explain a low figure, a collapse under load."""
from __future__ import annotations

import re
from typing import Any

from ... import baselines
from ...codes import Owner
from ...facts import NcclFacts, SizeRow
from ...findings import Findings
from ...options import human_bytes
from ...result import FAIL, PASS, WARN, CheckResult
from .ncclog import NVLS_CHANNELS
from .transport import job_env

LINKS_WARN, LINKS_FAIL = 0.5, 0.25      # busbw / what the node's links carry
NVLS_FROM = (2, 17)           # NCCL 2.17 added NVLink SHARP (NVLS)


# busbw within one node above this x its SKU's baseline is no measurement: NVLS beats the ring baseline by about
# 1.3x, nothing by 3x (across nodes the baseline is a floor, and the links' capacity bounds it: _against_links)
IMPOSSIBLE_RATIO = 3.0
COLLAPSE_BELOW = 0.5          # busbw at the largest message below this x the peak: the fabric collapses under load


COLLAPSE_FROM = 64 << 20
# below this every row is latency-bound (nccl-tests' doc/PERFORMANCE.md: "Time is useful with small sizes, to measure
# the constant overhead"; the bandwidth is read at large sizes): verify's own sweep starts here (Options.nccl_min_bytes),
# and no baseline or link rate is a figure a sweep of smaller messages can reach: such a sweep measures no bandwidth
LATENCY_BOUND_BELOW = 1 << 20


def _version_at_least(text: Any, floor: tuple[int, int]) -> bool:
    parts = [int(p) for p in str(text or "").split(".")[:2] if p.isdecimal()]
    return len(parts) == 2 and (parts[0], parts[1]) >= floor


def nvls_expected(facts: NcclFacts) -> bool:
    """NVLS is NCCL's default all-reduce on one NVSwitch node from NCCL 2.17 (Hopper and later)."""
    version = facts.get("nccl_version")
    proof = (facts.get("nccl_log") or {}).get("proof") or []
    knows = _version_at_least(version, NVLS_FROM) or (version is None and any(
        NVLS_CHANNELS.search(str(line)) for line in proof))
    switched = facts.get("nvswitch") is True or (facts.get("nvswitch") is None and hgx_eight(facts))
    return (switched and knows and facts.get("nodes") == 1 and (facts.get("world_size") or 0) > 1)


# Hopper and Blackwell GPUs whose eight-GPU boards are only built around NVSwitches (HGX H100/H800/H200/H20/B200/B300;
# the PCIe and NVL cards have other names, and a four-GPU HGX board has no switch): eight ranks of one on one node
# are behind third-generation NVSwitches or later, where NVLS exists
_HGX_ONLY = re.compile(r"^NVIDIA (?:H100 80GB HBM3|H100 SXM5?(?: \d+GB)?|H800|H200|H20|B200|B300)$")


def hgx_eight(facts: NcclFacts) -> bool:
    """Whether the record shows eight GPUs of an HGX-only model on one node (NVSwitches, though not recorded)."""
    return facts.get("nodes") == 1 and facts.get("world_size") == 8 and \
        bool(_HGX_ONLY.match(str(facts.get("device_name") or "").strip()))


def nvls_not_used(facts: NcclFacts, found: Findings) -> None:
    """NVLS expected on this NVSwitch node and NCCL's log shows it was not used: the job's where its settings exclude
    it, else the node's (multicast: the driver, the fabric manager)."""
    if not (nvls_expected(facts) and (facts.get("nccl_log") or {}).get("nvls") is False):
        return
    env = facts.get("nccl_env") or {}
    off = env.get("NCCL_NVLS_ENABLE") == "0" or ("NCCL_ALGO" in env and "nvls" not in str(env["NCCL_ALGO"]).lower())
    found.add(WARN, "NVLS_NOT_USED", f"NVLS (NVLink SHARP) is expected on this NVSwitch node with NCCL "
              f"{facts.get('nccl_version') or '(2.17 or later, by its log)'} but was not used"
              + (" (the job's NCCL_* settings exclude it)" if off else ""),
              "Check the fabric manager and multicast support (`nvidia-smi -q | grep -i -A2 fabric`), and that "
              "NCCL_NVLS_ENABLE / NCCL_ALGO do not exclude NVLS.", "job" if off else "host")


# GB/s one GPU's NVLink5 moves each way (B200/GB200): the fastest link shipping, so the ceiling below never refuses a
# GPU newer than the table (a ring's busbw stays under its link's one-way rate)
NVLINK5_GBPS = 900.0


def fastest_busbw() -> float:
    """The highest one-node all-reduce busbw baseline in verify/baselines.json (any GPU, world size, algorithm), and
    never below NVLink5's per-GPU rate."""
    figures = [float(f["value"]) for m in baselines.load().models for algos in m.busbw.values()
               for f in algos.values()]
    return max([NVLINK5_GBPS, *figures])


def _busbw_baseline(facts: NcclFacts, use_nvls: bool) -> tuple[dict[str, Any] | None, str]:
    model = baselines.load().model(facts.get("device_name"))
    if model is None:
        return None, ""
    nodes = facts.get("nodes")
    if nodes is not None and nodes > 1:
        return model.internode, "inter-node"
    world = facts.get("world_size") or 0
    per_world = model.busbw.get(world) or {}
    key = "nvls" if use_nvls and "nvls" in per_world else "ring"
    if key not in per_world:
        return _nvswitch_ring(facts, model, world)
    return per_world.get(key), key if nodes is not None else f"one-node {key} (nodes not recorded)"


NVSWITCH_RANKS = range(2, 9)     # the GPUs of one NVSwitch node (HGX/DGX: up to 8)


def _nvswitch_ring(facts: NcclFacts, model: baselines.Model, world: int) -> tuple[dict[str, Any] | None, str]:
    """On one NVSwitch node every GPU drives all its NVLinks into the switches whatever the number of peers, so ring
    busbw (nccl-tests' rank-independent figure) is the same from 2 to 8 GPUs: H100 SXM rings 365-370 GB/s at every
    count (NVIDIA/nccl#1455), a DGX A100 gives 235 GB/s on 4 GPUs (tests/data/real-world) against the maintainer's
    230 GB/s on 8. The model's ring figure at another world size applies then; NVLS does not (it grows with ranks)."""
    if facts.get("nvswitch") is not True or facts.get("nodes") != 1 or world not in NVSWITCH_RANKS:
        return None, ""
    rings = {w: algos["ring"] for w, algos in model.busbw.items() if "ring" in algos and w in NVSWITCH_RANKS}
    if not rings:
        return None, ""
    size = max(rings)
    return rings[size], f"{size}-rank NVSwitch ring (rank-independent on one NVSwitch node)"


def _excludes(value: Any, wanted: set[str]) -> bool:
    """Whether an NCCL_ALGO / NCCL_PROTO value ("Ring,Tree", "^NVLS", "allreduce:tree;broadcast:ring") leaves the
    all-reduce none of `wanted`."""
    text = str(value or "").strip().lower()
    parts = [p.split(":", 1)[1] for p in text.split(";") if p.startswith("allreduce:")] if ":" in text else [text]
    if not parts or not parts[0]:
        return False
    names = {n.strip() for n in parts[0].lstrip("^").split(",")}
    return bool(wanted & names) if parts[0].startswith("^") else not wanted & names


def job_explains(facts: NcclFacts, algo: str) -> list[str]:
    """The job's own NCCL_* variables that explain a low busbw, each with what it does (NCCL's environment
    documentation): a figure measured with them is the job's transport, not what the host can give."""
    env, world, nodes = job_env(facts), facts.get("world_size"), facts.get("nodes")
    paired = nodes is None or not isinstance(world, int) or world > nodes      # some ranks share a node
    across = nodes is None or nodes > 1
    p2p_off = env.get("NCCL_P2P_DISABLE") == "1" or str(env.get("NCCL_P2P_LEVEL", "")).upper() in ("LOC", "0")
    found = []
    if paired and p2p_off:
        found += [f"{k}={env[k]} turns off peer-to-peer (NVLink/PCIe) between the node's GPUs"
                  for k in ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL") if k in env]
    if paired and env.get("NCCL_SHM_DISABLE") == "1" and (p2p_off or facts.get("nvswitch") is not True):
        found.append("NCCL_SHM_DISABLE=1 turns off shared memory, so GPUs without peer-to-peer go through the network")
    if across and str(env.get("NCCL_NET", "")).lower() == "socket":
        found.append(f"NCCL_NET={env['NCCL_NET']} forces TCP sockets between the nodes")
    if across and env.get("NCCL_IB_DISABLE") == "1" and facts.get("infiniband") is not False:
        found.append("NCCL_IB_DISABLE=1 turns off InfiniBand/RoCE between the nodes")
    wanted = {"ring", "tree"} if algo == "inter-node" else {"nvls" if "nvls" in algo else "ring"}
    if _excludes(env.get("NCCL_ALGO"), wanted):
        found.append(f"NCCL_ALGO={env['NCCL_ALGO']} forces an algorithm other than the {'/'.join(sorted(wanted))} "
                     "the baseline measures")
    if _excludes(env.get("NCCL_PROTO"), {"simple"}):
        found.append(f"NCCL_PROTO={env['NCCL_PROTO']} excludes Simple, the protocol that carries large messages at "
                     "full bandwidth")
    return found


def _owner_of_low(facts: NcclFacts, algo: str, host_remedy: str) -> tuple[str, str, Owner]:
    """(why, remedy, owner) of a low busbw: the job's where its own variables explain it, else the host's."""
    explained = job_explains(facts, algo)
    if not explained:
        return "", host_remedy, "host"
    names = ", ".join(dict.fromkeys(e.split("=", 1)[0] for e in explained))
    return (f"; the job's own settings explain it: {'; '.join(explained)}",
            f"Unset {names} in the job and rerun: the figure measures the transport these variables force, not "
            "what the node gives; if it stays low without them, the host is at fault.", "job")


def _unknown_nodes(facts: NcclFacts, peak: float, verdict: str) -> str:
    """Nodes unknown, judged against the one-node baseline: a low figure fails only where it is also below the
    inter-node floor (low however the ranks were spread); otherwise it warns."""
    if facts.get("nodes") is not None or verdict != FAIL:
        return verdict
    model = baselines.load().model(facts.get("device_name"))
    inter = model.internode if model else None
    return FAIL if inter and baselines.judge_ratio(peak, float(inter["value"]))[0] == FAIL else WARN


def bandwidth_figures(facts: NcclFacts, rows: list[SizeRow], verified: str, result: CheckResult,
             found: Findings) -> str:
    """Peak busbw against the baseline (NVLS where it is expected), the NVLS choice, and a collapse at size."""
    peak_row = max(rows, key=lambda r: r["busbw"])
    peak = peak_row["busbw"]
    summary = f"{verified}; peak busbw {peak:.1f} GB/s"
    if rows[-1]["size"] < LATENCY_BOUND_BELOW:
        why = f"the largest message, {human_bytes(rows[-1]['size'])}, is latency-bound"
        result.details.append(f"{why}: bandwidth not assessed")
        return f"{summary}; bandwidth not assessed ({why})"
    log = facts.get("nccl_log") or {}
    expected = nvls_expected(facts)
    last = rows[-1]
    if last["size"] >= COLLAPSE_FROM and last is not peak_row and last["busbw"] < COLLAPSE_BELOW * peak:
        found.add(FAIL, "BANDWIDTH_LOW", f"busbw collapses at large messages: {last['busbw']:.1f} GB/s at "
                  f"{human_bytes(last['size'])} against a peak of {peak:.1f} GB/s at {human_bytes(peak_row['size'])}",
                  "A fabric that slows under load: check the links and switches (`ibstat`, counters of errors and "
                  "congestion), PFC/ECN on RoCE, and rerun with NCCL_DEBUG=INFO.", "host")
    _against_links(facts, peak, result, found)
    env = facts.get("nccl_env") or {}
    excluded = _excludes(env.get("NCCL_ALGO"), {"nvls"}) or env.get("NCCL_NVLS_ENABLE") == "0"
    baseline, algo = _busbw_baseline(facts, (bool(log.get("nvls")) or expected) and not excluded)
    if baseline is None and (facts.get("nodes") or 1) == 1 and peak > IMPOSSIBLE_RATIO * (fastest := fastest_busbw()):
        # no baseline for this GPU (an unknown name, another world size): it is held to the fastest one-node figure
        # verify knows, as a known GPU is to its own, never to no ceiling at all (a T4 "moving" 3,000 GB/s passed)
        found.add(FAIL, "MEASUREMENT_INVALID", f"{verified}; peak busbw {peak:.1f} GB/s on one node is over "
                  f"{IMPOSSIBLE_RATIO:g}x the fastest one-node figure verify knows ({fastest:g} GB/s: "
                  "verify/baselines.json, NVLink5): no GPU moves that much, physically impossible", "Record the check again.",
                  "host")
        return f"{summary}: over {IMPOSSIBLE_RATIO:g}x any GPU's baseline, impossible"
    if baseline is None:
        missing = (f"no busbw baseline for {facts.get('device_name')} at world size {facts.get('world_size')}"
                   f"{' across ' + str(facts['nodes']) + ' nodes' if (facts.get('nodes') or 1) > 1 else ''}")
        result.details.append(f"{missing} in verify/baselines.json: bandwidth not assessed")
        return f"{summary}; bandwidth not assessed ({missing})"
    verdict, ratio = baselines.judge_ratio(peak, float(baseline["value"]))
    if ratio > IMPOSSIBLE_RATIO and (facts.get("nodes") or 1) == 1:      # across nodes the baseline is a floor
        found.add(FAIL, "MEASUREMENT_INVALID", f"{verified}; peak busbw {peak:.1f} GB/s is {ratio:.2f}x the {algo} "
                  f"baseline {baseline['value']} GB/s of {facts.get('device_name')}: no such GPU moves that much, "
                  "physically impossible", "Record the check again.", "host")
        return f"{summary}: {ratio:.2f}x the {algo} baseline, impossible"
    verdict = _unknown_nodes(facts, peak, verdict)
    result.metric("busbw_ratio", ratio, "x")
    result.details.append(f"peak busbw {peak:.1f} GB/s = {ratio:.2f}x the {algo} baseline {baseline['value']} GB/s "
                          f"({baseline['source']})")
    if verdict != PASS:
        why, remedy, owner = _owner_of_low(facts, algo, "Compare with another node; check NVLink state (gpu check), "
                                           "NCCL_ALGO/NCCL_PROTO overrides, and rerun with NCCL_DEBUG=INFO for the "
                                           "transport chosen.")
        found.add(WARN if verdict == WARN else FAIL, "BANDWIDTH_LOW", f"{verified}; peak busbw {peak:.1f} GB/s is "
                  f"{ratio:.2f}x the {algo} baseline {baseline['value']} GB/s{why}", remedy, owner)
    return f"{summary} = {ratio:.2f}x the {algo} baseline"


def _local_ranks(facts: NcclFacts) -> int | None:
    world, nodes = facts.get("world_size"), facts.get("nodes")
    if isinstance(world, int) and isinstance(nodes, int) and nodes > 0 and world >= nodes:
        return world // nodes
    return facts.get("gpus") or None


def link_capacity(facts: NcclFacts) -> tuple[float, str] | None:
    """What one node's RDMA links carry for this all-reduce (GB/s) and where the figure comes from.

    The active ports NCCL listed (`NET/IB : Using`), else every active port, their rates from
    /sys/class/infiniband/*/ports/*/rate; a node's ranks drive at most one port's rate each (rail-optimised: one NIC
    per GPU, and a GPU's PCIe x16 link is about one NIC's rate), so 1 GPU beside 4 NICs expects one NIC
    (NVIDIA/nccl-tests#232). Ring busbw across nodes reaches about this: a DGX A100's 8x200 Gb/s gives 192 GB/s
    (AddyLaddy, NVIDIA/nccl#812, quoted in #1576)."""
    listed = {h.split("/")[0] for h in (facts.get("nccl_log") or {}).get("hcas") or []}
    ports = [(a.get("name"), p) for a in facts.get("adapters") or [] for p in a.get("ports") or []
             if str(p.get("state") or "").upper() == "ACTIVE" and p.get("rate_gbps")]
    used = [(n, p) for n, p in ports if f"{n}:{p.get('port')}" in listed] or ports
    if not used:
        return None
    each_rate = sorted((float(p.get("rate_gbps") or 0.0) for _, p in used), reverse=True)
    ranks = _local_ranks(facts)
    driven = each_rate[:ranks] if ranks else each_rate
    gbps = sum(driven)
    rates = sorted(set(each_rate))
    each = f"{rates[0]:g} Gb/s" if len(rates) == 1 else "/".join(f"{r:g}" for r in rates) + " Gb/s"
    which = "listed by NCCL (NET/IB : Using)" if len(used) < len(ports) or listed else "active"
    capped = f", {len(driven)} driven by {ranks} rank(s) per node" if len(driven) < len(each_rate) else ""
    return gbps / 8, (f"{len(used)} {which} port(s) x {each}{capped} = {gbps:g} Gb/s per node "
                      "(/sys/class/infiniband/*/ports/*/rate)")


def _against_links(facts: NcclFacts, peak: float, result: CheckResult, found: Findings) -> None:
    """Item 6: across nodes an all-reduce's busbw approaches what each node's links carry (nccl-tests' busbw is the
    per-rank figure that ring all-reduce drives through the NICs); far below it, the fabric is not delivering."""
    capacity = link_capacity(facts) if (facts.get("nodes") or 1) > 1 else None
    if capacity is None:
        return
    expected, source = capacity
    ratio = peak / expected if expected else 0.0
    result.metric("busbw_vs_links", ratio, "x")
    result.details.append(f"peak busbw {peak:.1f} GB/s = {ratio:.2f}x the {expected:.1f} GB/s the links carry: {source}")
    if ratio < LINKS_WARN:
        why, remedy, owner = _owner_of_low(facts, "inter-node", "Read the network NCCL used (NET/IB, NET/Socket) and GDR "
                                           "in the details; check the links (`ibstat`), NCCL_IB_HCA and `ib_write_bw` "
                                           "between the nodes.")
        found.add(FAIL if ratio < LINKS_FAIL else WARN, "FABRIC_BANDWIDTH_LOW",
                  f"across {facts.get('nodes')} nodes peak busbw {peak:.1f} GB/s is {ratio:.2f}x the {expected:.1f} GB/s "
                  f"the node's links carry ({source}){why}", remedy, owner)
