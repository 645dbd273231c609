"""A cloud GPU instance type fixes how many RDMA adapters the node has (verify/FACTS.md, `instance_type`): fewer
read is an EFA interface the instance was launched without, or an InfiniBand HCA (a GPU's rail) missing from the VM.
Only types whose count is published are listed, each with its source; any other type is said, never guessed.

Judged only on a host's listing (`uverbs` not recorded: `ibstat`, the host's sysfs): a container may see only the
devices it was given (the RDMA subsystem's exclusive network-namespace mode, a device plugin's share), which is the
job's request, not the node's. An AWS instance launched with fewer EFA interfaces than its type takes still runs, on
fewer rails (its launch template's, the site's: warn); an Azure ND VM missing an InfiniBand VF has a GPU without its
rail (fail), as Azure's own node health checks count them."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...facts import Adapter, FabricFacts
from ...findings import Findings
from ...result import FAIL, WARN, Status


@dataclass(frozen=True)
class Shape:
    adapters: int           # RDMA adapters the type has
    kind: str               # "efa" or "InfiniBand"
    source: str


TORCHX = "https://github.com/meta-pytorch/torchx/blob/main/torchx/specs/named_resources_aws.py (EFA devices per type)"
AWS_P5 = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html (a P5 with 32 EFA devices)"
ND_H100 = ("https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series (each of the 8 "
           "GPUs its own 400 Gb/s Quantum-2 CX7 InfiniBand)")
ND_A100 = ("https://learn.microsoft.com/azure/virtual-machines/nda100-v4-series (each of the 8 GPUs its own 200 Gb/s "
           "HDR InfiniBand)")
SHAPES = {
    "p4d.24xlarge": Shape(4, "efa", TORCHX), "p4de.24xlarge": Shape(4, "efa", TORCHX),
    "p5.48xlarge": Shape(32, "efa", f"{TORCHX}; {AWS_P5}"), "p5e.48xlarge": Shape(32, "efa", TORCHX),
    "p5en.48xlarge": Shape(16, "efa", TORCHX), "p6-b200.48xlarge": Shape(8, "efa", TORCHX),
    "nd96isr_h100_v5": Shape(8, "InfiniBand", ND_H100), "nd96asr_v4": Shape(8, "InfiniBand", ND_A100),
}
EFA_NAME = re.compile(r"efa_\d+|rdmap\d+s\d+")


def normal(name: object) -> str:
    """`Standard_ND96isr_H100_v5` as `nd96isr_h100_v5`, SageMaker's `ml.p4d.24xlarge` as `p4d.24xlarge`."""
    text = str(name or "").strip().lower()
    return re.sub(r"^(?:standard_|ml\.)", "", text)


def _counted(adapters: list[Adapter], kind: str) -> tuple[int, int]:
    """(adapters of the kind, adapters whose kind is not shown)."""
    if kind == "efa":
        known = [a for a in adapters if a.get("driver") is not None]
        return (sum(1 for a in known if a.get("driver") == "efa")
                + sum(1 for a in adapters if a.get("driver") is None and EFA_NAME.fullmatch(str(a.get("name"))) ),
                sum(1 for a in adapters if a.get("driver") is None and not EFA_NAME.fullmatch(str(a.get("name")))))
    layers = [{p.get("link_layer") for p in a.get("ports") or []} - {None} for a in adapters]
    return sum(1 for s in layers if kind in s), sum(1 for s in layers if not s)


def judge(facts: FabricFacts, adapters: list[Adapter], found: Findings) -> list[str]:
    """The adapters against the type's count; what is said of the type where it is not judged."""
    name = facts.get("instance_type")
    if not name:
        return []
    shape = SHAPES.get(normal(name))
    if shape is None:
        return [f"instance type {name}: its adapter count is not one this verify knows: not judged"]
    if facts.get("uverbs") is not None:
        return [f"instance type {name} has {shape.adapters} {shape.kind} adapter(s); a container may see only those "
                "it was given: the count is not judged here"]
    have, unknown = _counted(adapters, shape.kind)
    if have + unknown >= shape.adapters:
        return [f"instance type {name}: {have} of its {shape.adapters} {shape.kind} adapter(s) read"]
    severity: Status = WARN if shape.kind == "efa" else FAIL
    what = "EFA interface(s)" if shape.kind == "efa" else "InfiniBand adapter(s)"
    found.add(severity, "FABRIC_ADAPTERS_MISSING", f"{name} has {shape.adapters} {what}, {have} read"
              + (f" ({unknown} of unknown kind)" if unknown else "") + f" (source: {shape.source})",
              "Launch the instance with every EFA interface its type takes (one EFA-only interface per network card)."
              if shape.kind == "efa" else "Drain the VM and redeploy it (or report the missing InfiniBand VF to the "
              "cloud): a GPU without its rail slows every collective.", "host")
    return []
