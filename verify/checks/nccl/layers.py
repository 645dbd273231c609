"""A connection NCCL could not set up between an InfiniBand port and a RoCE one, where NCCL's own device list shows it
was given both. Pure: text in, a verdict out; the job's (FABRIC_MIXED_ADAPTERS), never the host's.

NCCL prints the devices it will use once per rank, with each port's link layer (src/transport/net_ib.cc, 2.x to
2.30: `NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/RoCE [RO]; OOB ...`, `/IB/SHARP` where SHARP is on). A list that
holds both link layers is a node built with InfiniBand rails beside an Ethernet port (a front-end or storage NIC), all
handed to NCCL because the job named no rails (NCCL_IB_HCA), or named them all. NCCL then may pair an InfiniBand port
with a RoCE one, and the queue pair between them cannot be brought to RTR (an InfiniBand address against a RoCE GID):
`ibv_modify_qp` answers EINVAL (`Call to ibv_modify_qp failed with error Invalid argument`; 2.27+: `failed with 22
Invalid argument, ...`). Nothing on the node is broken: the job names the rails of the fabric the nodes share. A link
that timed out, a peer not reached, a work completion's error are other failures, judged by their own rules.

The rule reads the line itself (kept in the log's proof, or quoted in the error), not the adapters' sysfs: it is
what NCCL was given, whatever NCCL_IB_HCA said.
"""
from __future__ import annotations

import re

from ...result import FAIL, CheckResult

USING = re.compile(r"NET/IB ?: ?Using((?: \[\d+\][\w.-]+:\d+/\S+)+)")
DEVICE = re.compile(r"\[\d+\]([\w.-]+):\d+/(IB|RoCE)\b")
CROSS_LAYER_QP = re.compile(r"Call to ibv_modify_qp failed with (?:error |22 )?Invalid argument")


def mixed_list(said: str) -> dict[str, list[str]] | None:
    """{link layer: devices} of the first `NET/IB : Using` line that lists InfiniBand and RoCE ports together."""
    for line in USING.finditer(said):
        layers: dict[str, list[str]] = {}
        for name, layer in DEVICE.findall(line.group(1)):
            layers.setdefault(layer, []).append(name)
        if len(layers) == 2:
            return layers
    return None


def layers_verdict(said: list[str], over: str, result: CheckResult) -> CheckResult | None:
    """FABRIC_MIXED_ADAPTERS, the job's, where a queue pair failed with EINVAL and NCCL's list mixed link layers."""
    text = " | ".join(said)
    einval = CROSS_LAYER_QP.search(text)
    layers = mixed_list(text) if einval else None
    if not einval or not layers:
        return None
    ib, roce = layers["IB"], layers["RoCE"]
    return result.verdict(FAIL, "FABRIC_MIXED_ADAPTERS", f"{over} failed: NCCL was given "
                          f"InfiniBand ports ({', '.join(ib)}) and RoCE ones ({', '.join(roce)}) together, and a queue pair between the "
                          f"two link layers cannot be set up ({einval.group(0)}): the job's choice of rails",
                          f"Set NCCL_IB_HCA to the rails of the fabric the nodes share (`NCCL_IB_HCA={','.join(ib)}`, "
                          f"or `NCCL_IB_HCA=^{','.join(roce)}` to leave the RoCE port out).", "job")
