"""What NCCL's log alone says names the network the log shows: connections `via NET/IB/0/GDRDMA` with no `Using
network` line are InfiniBand's, never "aws-ofi-nccl selected provider efa" (which only `Selected provider is efa`
shows)."""
import pytest

from verify.checks.nccl import ncclog
from verify.checks.nccl.logsaid import log_said

pytestmark = pytest.mark.unit

# tests/data/real-world/g183-grpo-multi-node-ms-swift-...: rank 7 to its peer on the next node
IB_CHANNELS = ("g183:1234:1300 [7] NCCL INFO Channel 00/0 : 7[7] -> 15[7] [send] via NET/IB/8/GDRDMA\n"
               "g183:1234:1300 [7] NCCL INFO Channel 01/0 : 7[7] -> 15[7] [send] via NET/IB/8/GDRDMA\n")


def test_channels_alone_name_their_network_not_efa():
    said = log_said({"nodes": 2, "nccl_log": ncclog.parse(IB_CHANNELS)})   # type: ignore[typeddict-item]
    assert said is not None and "NET/IB" in said and "efa" not in said.lower()
    assert "2 IB/RoCE connection(s), 2 with GPUDirect RDMA" in said


def test_the_efa_provider_line_is_what_names_efa():
    text = IB_CHANNELS.replace("NET/IB/8", "NET/AWS Libfabric/0") + \
        "g183:1234:1234 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa-direct (found 4 nics)\n"
    log = ncclog.parse(text)
    if log.get("ofi_provider") == "efa" and not log.get("networks"):
        assert "efa" in (log_said({"nodes": 2, "nccl_log": log}) or "").lower()   # type: ignore[typeddict-item]
