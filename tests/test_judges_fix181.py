"""Issue 35, batches 181, 183 and 184 (fix181), fixed for the class:
- an RDMA port the kernel shows ACTIVE while libibverbs lists no device and names none it could not drive: the
  process was not given the verbs device node (rdma-core skips a device whose /dev/infiniband node it cannot stat),
  the deployment's (verify/checks/fabric/nodevnode.py);
- Talos's fabric manager wrapper listing the NVSwitch LPF ports (`found NVSwitch LPF: device=mlx5_10`) shows the
  node's own NVSwitches to `verify explain` (verify/explain/fmstatus.py); with no state, error or device it is still
  nothing to judge (the rule kept: tests/test_judges_schema3x.py);
- a matrix's header line followed by its first row (`nvidia-smi topo -m` under sglang's check_env) is no terminal-cut
  row (verify/explain/wrap.py);
- NCCL's log reader reads each message where it starts: several pasted run together on one line, and a `NET/IB :
  Using` list cut by a terminal inside a device's name (verify/checks/nccl/ncclog.py).
Real lines from the entries named by slug (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, fabric, raw, replayed, verdict
from verify.checks.nccl import ncclog
from verify.explain import fmstatus, pasted

pytestmark = pytest.mark.unit

VF_POD = "sriov-vf-pod-non-privileged-ibv-devinfo-no-ib-devices-found-beside-rdma-link-mlx5-7-active-link-up-net1-spiderpool"
TALOS = "hgx-b200-talos-1.12-beta-fabricmanager-580.95.05-wrapper-picks-lpf-mlx5-10-of-four-for-nvlsm-node-does-not-work"
SGLANG = "b200-x8-570.124.06-torch-2.7.1-cu128-topo-nv18-every-pair-sglang-0.4.8-kimi-k2-gibberish-tokens-software"
WRAPPED = "vllm-k8s-head-pod-eight-ranks-nccl-net-ib-eight-mlx5-ib-hcas-oob-eth0-using-network-ib-sanity-check-failure-not-in-excerpt"
ONE_LINE = "wsl2-docker-two-rtx4090-vllm-nccl-2.18.1-failed-to-open-libibverbs-socket-eth0-one-line-paste-nothing-to-judge"

ACTIVE = [{"name": "mlx5_7", "ports": [{"port": 1, "state": "ACTIVE", "phys_state": "LinkUp"}]}]


def test_an_active_port_beside_an_empty_silent_verbs_list_is_the_device_node_not_given():
    assert "link mlx5_7/1 state ACTIVE physical_state LINK_UP netdev net1" in raw(VF_POD)
    assert "No IB devices found" in raw(VF_POD)
    assert replayed(VF_POD) == {"fabric": ("fail", "FABRIC_NOT_PASSED", "job")}
    assert verdict(explained(raw(VF_POD))) == ("fail", "FABRIC_NOT_PASSED", "job")
    assert verdict(fabric(adapters=ACTIVE, verbs_devices=[])) == ("fail", "FABRIC_NOT_PASSED", "job")


@pytest.mark.parametrize("more", [
    {"verbs_error": "libibverbs: Warning: no userspace device-specific driver found for "
                    "/sys/class/infiniband_verbs/uverbs0"},     # a device it kept and no provider drives: the image's
    {"uverbs": ["uverbs0"]},                                    # the node is there: the provider's (check._userspace)
    {"providers": ["mlx5"]},
    {"verbs_devices": ["mlx5_7"]},                              # libibverbs opens it
])
def test_what_names_another_cause_or_opens_the_device_is_not_this_class(more):
    r = fabric(**{"adapters": ACTIVE, "verbs_devices": [], **more})
    assert not (r.code == "FABRIC_NOT_PASSED" and r.owner == "job" and "verbs device node" in r.summary)


def test_a_port_down_beside_an_empty_verbs_list_is_not_the_device_node():
    down = [{"name": "mlx5_7", "ports": [{"port": 1, "state": "DOWN", "phys_state": "Disabled"}]}]
    assert "verbs device node" not in fabric(adapters=down, verbs_devices=[]).summary


def test_talos_s_wrapper_listing_nvswitch_lpf_ports_shows_the_node_s_switches():
    assert "nvidia-fabricmanager-wrapper: found NVSwitch LPF: device=mlx5_10 guid=0xcc40f3030027f630" in raw(TALOS)
    assert fmstatus.detect(raw(TALOS))
    assert fmstatus.parse(raw(TALOS))["fabric_manager"] == {"state": None, "result": None, "error": None,
                                                             "nvswitches": True}
    # no state, error or device read: the wrapper's listing alone is nothing to judge (a known mismatch of the
    # explain road); the translation's driver, read from the extensions' versions, warns the GPUs' health unread
    assert verdict(explained(raw(TALOS))) == ("skip", "FACTS_INCOMPLETE", None)
    assert replayed(TALOS)["gpu"] == ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_a_topology_matrix_s_header_is_not_a_row_cut_by_the_terminal():
    text = raw(SGLANG)
    assert "GPU0     X      NV18    NV18" in text
    bare = pasted.views(text)[1]
    assert any(line.startswith("GPU0") for line in bare.splitlines())
    assert verdict(explained(text)) == ("pass", None, None)
    # a long line cut inside a word still joins with its rest
    cut = ["x" * 70 + " abc", "def and the rest", "short"]
    assert len(pasted.views("\n".join(cut))[1].splitlines()) <= 3


def test_nccl_lines_run_together_are_read_each_where_it_starts():
    text = raw(ONE_LINE)
    assert "NCCL INFO Failed to open libibverbs.so[.1] wjw-gpu:121572:123489 [0] NCCL INFO NET/Socket" in text
    log = ncclog.parse(text)
    assert log["networks"] == ["Socket"]
    assert log["verbs_missing"] == "Failed to open libibverbs.so[.1]"
    assert log["rank_networks"] == {"wjw-gpu:121572": "Socket"}
    assert log["plugin_missing"].endswith("No such file or directory")


def test_a_device_list_cut_by_the_terminal_is_joined_never_guessed():
    text = raw(WRAPPED)
    assert "[6]mlx5_36:1/IB [7]m\nlx5_27:1/IB [RO]; OOB eth0:172.20.91.177<0>" in text
    assert "m" not in ncclog.parse(text)["hcas"]
    assert "mlx5_27:1/IB" in ncclog.parse(text)["hcas"]
    # cut with no rest after it: the cut device is left out, the whole ones kept
    alone = "host:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]ml"
    assert ncclog.parse(alone)["hcas"] == ["mlx5_0:1/IB"]
