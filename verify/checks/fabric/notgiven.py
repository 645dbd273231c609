"""A container given no RDMA device on a node whose cloud instance type has them (verify/FACTS.md, `instance_type`,
`uverbs`). The type's published adapter count (instancetype.SHAPES) says the node has EFA or InfiniBand adapters even
where the host's sysfs was not read; `uverbs` [] says the container holds none of them. That is the deployment's: the
Kubernetes device plugin that would inject `/dev/infiniband/uverbs*` (`vpc.amazonaws.com/efa`, `rdma/ib`) is not
scheduled on that type or not requested (aws-samples/aws-do-eks#56: the EFA plugin's allowlist ended at p5.48xlarge,
so on p6-b200 nodes pods got no uverbs and NCCL fell back to sockets). Owner job, never a drain: nothing of the host
was read. Where the host's adapters were read, check._container decides from them; where sysfs was read and is empty
on such a type, the host's side is in question and this rule says nothing."""
from __future__ import annotations

from ...facts import FabricFacts
from ...findings import Findings
from ...result import FAIL
from .instancetype import SHAPES, normal

REMEDY = {
    "efa": "Give the pods the EFA devices: request `vpc.amazonaws.com/efa` and check that the EFA device plugin's "
           "DaemonSet schedules on this instance type (its nodeAffinity allowlist); outside Kubernetes `docker run "
           "--device /dev/infiniband --ulimit memlock=-1 --cap-add IPC_LOCK`.",
    "InfiniBand": "Give the container the devices: request the RDMA device plugin's resource (e.g. rdma/ib) and check "
                  "that its DaemonSet runs on this VM size; outside Kubernetes `docker run --device /dev/infiniband "
                  "--ulimit memlock=-1 --cap-add IPC_LOCK`.",
}


def judge(facts: FabricFacts, found: Findings) -> bool:
    """FABRIC_NOT_PASSED (job) where the type has adapters, the container none and the host's side is not read."""
    name = facts.get("instance_type")
    shape = SHAPES.get(normal(name)) if name else None
    if shape is None or facts.get("uverbs") != [] or facts.get("adapters") is not None:
        return False
    found.add(FAIL, "FABRIC_NOT_PASSED", f"the node is a {name}, which has {shape.adapters} {shape.kind} adapter(s) "
              f"(source: {shape.source}), but the container has no /dev/infiniband/uverbs*: NCCL can only use TCP "
              "sockets; the host's adapters were not read", REMEDY[shape.kind], "job")
    return True
