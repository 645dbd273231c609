"""Issue 35, batch 149 (NCCL logs from containers where the network NCCL chose is the question): the classes their
blind translations showed the nccl judge getting wrong.
- The job's own switch-off (`NCCL_IB_DISABLE set by environment to 1.`) beside sockets is said to the job whatever
  device a net plugin found: HPC-X's IBext plugin printing `NET/IB : No device found.` is no workstation without a
  fabric that excuses it (as on loopback, FACTS.md).
- `NET/IB : No device found.` then `Using network Socket` with nothing else showing a fabric (no adapter, HCA, verbs
  network or error) is no fall-back on two nodes either: Ethernet-only nodes meet over sockets; never the host's.
Real lines are quoted from corpus entries (by slug)."""
from __future__ import annotations

import pytest

from tests.judging import NOTHING_TO_JUDGE, explained, replayed, verdict

pytestmark = pytest.mark.unit

VLMEVAL = "vlmevalkit-docker-hpcx-ibext-v8-job-sets-nccl-ib-disable-1-no-ib-device-socket-eth0-docker-bridge-four-ranks"
NGC = "ngc-container-hpcx-ibext-net-ib-no-device-found-twice-socket-eno3-two-node-ddp-no-fabric-shown-nothing-to-judge"
GCP = "gcp-slurm-gcp-two-vms-nccl-2.7.8-net-ib-no-device-socket-eth0-multi-node-stuck-after-launch-mode-parallel"
FORCED = ("warn", "FABRIC_NCCL_FORCED_SOCKET", "job")

# VLMEVAL's second rank, as its raw.txt holds it
PLUGIN_NO_DEVICE = """\
12f0e56ac84d:2338970:2339157 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so
12f0e56ac84d:2338970:2339157 [0] NCCL INFO P2P plugin IBext_v8
12f0e56ac84d:2338970:2339157 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0
12f0e56ac84d:2338970:2339157 [0] NCCL INFO NET/IB : No device found.
12f0e56ac84d:2338970:2339157 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.
12f0e56ac84d:2338970:2339157 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0
12f0e56ac84d:2338970:2339157 [0] NCCL INFO NET/Socket : Using [0]eth0:172.17.0.2<0>
12f0e56ac84d:2338970:2339157 [0] NCCL INFO Using non-device net plugin version 0
12f0e56ac84d:2338970:2339157 [0] NCCL INFO Using network Socket
"""
# NGC's first rank, as its raw.txt holds it
TWO_NODE_NO_DEVICE = """\
10-12-3-162:7990:8056 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so
10-12-3-162:7990:8056 [0] NCCL INFO P2P plugin IBext
10-12-3-162:7990:8056 [0] NCCL INFO NET/IB : No device found.
10-12-3-162:7990:8056 [0] NCCL INFO NET/IB : No device found.
10-12-3-162:7990:8056 [0] NCCL INFO NET/Socket : Using [0]eno3:10.12.3.162<0>
10-12-3-162:7990:8056 [0] NCCL INFO Using non-device net plugin version 0
10-12-3-162:7990:8056 [0] NCCL INFO Using network Socket
"""


def test_the_jobs_ib_disable_beside_a_plugins_no_device_is_still_the_job_forcing_sockets():
    assert replayed(VLMEVAL) == {"nccl": FORCED}
    assert verdict(explained(PLUGIN_NO_DEVICE)) == FORCED


def test_the_same_lines_without_the_jobs_variable_stay_nothing_to_judge():
    lines = "".join(line + "\n" for line in PLUGIN_NO_DEVICE.splitlines() if "NCCL_IB_DISABLE" not in line)
    assert verdict(explained(lines)) == NOTHING_TO_JUDGE


def test_no_ib_device_and_sockets_on_two_nodes_with_no_fabric_shown_is_nothing_to_judge():
    assert replayed(NGC) == {"nccl": NOTHING_TO_JUDGE}
    assert replayed(GCP) == {"nccl": NOTHING_TO_JUDGE}
    assert verdict(explained(TWO_NODE_NO_DEVICE)) == NOTHING_TO_JUDGE
