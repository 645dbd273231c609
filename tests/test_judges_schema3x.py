"""Facts schema 3, optional fields added for what translators of real output could not carry (issue 35): the NVIDIA
Fabric Manager service's state (GpuFacts.fabric_manager) and Libfabric's providers as `fi_info` lists them
(FabricFacts.ofi_providers, ofi_query). Each parser and rule is fed real public output (URLs beside each excerpt);
each new host- or image-owned verdict is tested against a real excerpt where the node is healthy.
- the fabric manager down on a node with NVSwitches of its own fails NVLINK_DOWN (host); down where it found none
  (`NV_WARN_NOTHING_TO_DO`) is by design; down where nothing shows NVSwitches is said and not judged; active is said,
  never a pass; a Grace tray's GPUs behind NVSwitches are no proof of local switches;
- EFA adapters whose image's Libfabric lists no `efa` (asked for it, the devices in reach; or built without it) fail
  FABRIC_EFA_PLUGIN_MISSING (image); -61 alone is not judged; a listing holding `efa` passes on that alone."""
from __future__ import annotations

import json

import pytest

from tests.helpers import ROOT
from tests.judging import explained, verdict
from verify.checks import CHECKS
from verify.explain import fiinfo, fmstatus
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

CORPUS = ROOT / "tests" / "data" / "real-world"

# https://github.com/NVIDIA/NVSentinel/issues/883 (Node 1 of an H100 NVSwitch cluster; the stored copy ends at `SIGK`)
FAILED = """\
# systemctl status nvidia-fabricmanager.service
× nvidia-fabricmanager.service - NVIDIA fabric manager service
Loaded: loaded (/usr/lib/systemd/system/nvidia-fabricmanager.service; enabled; preset: enabled)
Active: failed (Result: exit-code) since Fri 2026-01-30 11:58:43 UTC; 2 weeks 4 days ago
CPU: 7.387s
Jan 30 11:58:43 node systemd[1]: nvidia-fabricmanager.service: Killing process 76454 (nv-fabricmanage) with signal SIGK
"""
# https://github.com/NVIDIA/nvtrust/issues/128 (8 x H20 behind NVSwitches: the fabric manager had configured them;
# its restart then failed; the stored copy ends inside the last line)
RESTART_FAILED = """\
[root@TENCENT64 ~]# systemctl restart nvidia-fabricmanager.service
Job for nvidia-fabricmanager.service failed because the control process exited with error code.
See "systemctl status nvidia-fabricmanager.service" and "journalctl -xeu nvidia-fabricmanager.service" for details.
[root@TENCENT64 ~]# journalctl -xeu nvidia-fabricmanager.service --no-pager
Jan 05 14:44:41 TENCENT64 systemd[1]: Starting nvidia-fabricmanager.service - NVIDIA fabric manager service...
Jan 05 14:44:41 TENCENT64 nvidia-fabricmanager-start.sh[1049]: Detected Pre-NVL5 system
Jan 05 14:45:26 TENCENT64 nv-fabricmanager[1120]: Connected to 1 node.
Jan 05 14:45:28 TENCENT64 nv-fabricmanager[1120]: Successfully configured all the available NVSwitches to route GPU NVLink traffic. NVLink Peer-to-Peer support will be enabled once the GPUs are successfully registered with the NVLink fabric.
Jan 05 14:45:28 TENCENT64 nvidia-fabricmanager-start.sh[1049]: Started "Nvidia Fabric Manager"
Jan 05 14:45:28 TENCENT64 systemd[1]: Started nvidia-fabricmanager.service - NVIDIA fabric manager service.
Jan 05 15:32:16 TENCENT64 systemd[1]: Stopping nvidia-fabricmanager.service - NVIDIA fabric manager service...
Jan 05 15:32:16 TENCENT64 nvidia-fabricmanager-start.sh[20411]: Stopped "Nvidia Fabric Manager"
"""
# https://github.com/NVIDIA/gpu-operator/issues/610 (two A40s on an NVLink bridge: no NVSwitch; healthy)
NOTHING_TO_DO = """\
Job for nvidia-fabricmanager.service failed because the control process exited with error code.
See "systemctl status nvidia-fabricmanager.service" and "journalctl -xe" for details.
11月 15 14:15:47 leon-NF5468M6 systemd[1]: Starting NVIDIA fabric manager service...
11月 15 14:15:47 leon-NF5468M6 nv-fabricmanager[4177]: request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]
11月 15 14:15:47 leon-NF5468M6 systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE
"""
# https://github.com/bottlerocket-os/bottlerocket-kernel-kit/pull/142 (a B200-class node; healthy: the smoke test runs)
ACTIVE = """\
bash-5.1# systemctl status nvidia-fabricmanager
● nvidia-fabricmanager.service - NVIDIA fabric manager service
     Loaded: loaded (/x86_64-bottlerocket-linux-gnu/sys-root/usr/lib/systemd/system/nvidia-fabricmanager.service; enabled; preset: enabled)
    Drop-In: /x86_64-bottlerocket-linux-gnu/sys-root/usr/lib/systemd/system/service.d
             └─00-aws-config.conf
     Active: active (running) since Fri 2025-05-16 15:10:10 UTC; 13min ago
   Main PID: 29850 (nv-fabricmanage)
"""
# https://github.com/akash-network/website/pull/632 (the provider guide's quote: FM and driver versions differ)
MISMATCH = """\
# systemctl status nvidia-fabricmanager
Nov 05 13:55:26 node1 systemd[1]: Starting NVIDIA fabric manager service...
Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface version 550.127.05 doesn't match with driver version 550.120. Please update with the matching NVIDIA driver package.
Nov 05 13:55:26 node1 systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE
"""


def gpu(**facts):
    return judge(CHECKS["gpu"], {"torch": None, "devices": None, **facts}, Options(), source="gpu.json")


def test_systemctl_status_of_a_failed_fabric_manager_is_read_state_and_result():
    assert fmstatus.detect(FAILED)
    assert fmstatus.parse(FAILED)["fabric_manager"] == {"state": "failed", "result": "exit-code", "error": None,
                                                        "nvswitches": None}


def test_a_failed_fabric_manager_alone_is_said_never_judged_a_fault():
    """NVSentinel#883's excerpt shows no NVSwitch of the node (the H100 NVSwitch system is the issue's prose): a fabric
    manager installed on a PCIe node fails in the same words, so nothing to judge, no owner, and the state said."""
    r = explained(FAILED)
    assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None)
    assert any("fabric manager is failed (Result: exit-code)" in d and "not judged" in d for d in r.details)


def test_the_same_failure_on_a_node_with_nvswitches_is_the_host_s_nvlink_down():
    """The translator who reads the issue's 'multi-GPU NVSwitch systems' records `nvswitches` true: the SRE's verdict
    (the corpus entry's expected.json) is then the judge's."""
    manager = fmstatus.parse(FAILED)["fabric_manager"]
    r = gpu(fabric_manager={**manager, "nvswitches": True})
    expected = json.loads((CORPUS / "h100-nvswitch-node-nvidia-fabricmanager-service-failed-killed-two-weeks-undetected"
                           / "expected.json").read_text())["verdicts"]["gpu"]
    assert verdict(r) == (expected["status"], expected["code"], expected["owner"]) == ("fail", "NVLINK_DOWN", "host")
    assert "fabric manager is failed" in r.summary


def test_a_restart_that_fails_after_the_fabric_manager_configured_the_switches_is_the_host_s():
    """nvtrust#128: the journal shows the node's NVSwitches configured; systemctl's own answer (the newest line) is the
    restart's failure, whatever the older journal lines say."""
    manager = fmstatus.parse(RESTART_FAILED)["fabric_manager"]
    assert manager["state"] == "failed" and manager["nvswitches"] is True
    assert verdict(explained(RESTART_FAILED)) == ("fail", "NVLINK_DOWN", "host")


def test_nothing_to_do_is_a_node_without_nvswitches_and_no_fault():
    """gpu-operator#610 (A40 pair on a bridge) and cube-studio#29 (two RTX 4090s): the fabric manager's own word that
    there is no NVSwitch makes its failure by design: no drain, not even beside GPUs said to sit behind switches."""
    manager = fmstatus.parse(NOTHING_TO_DO)["fabric_manager"]
    assert manager["state"] == "failed" and manager["nvswitches"] is False and "NV_WARN_NOTHING_TO_DO" in manager["error"]
    r = explained(NOTHING_TO_DO)
    assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None)
    assert any("by design" in d for d in r.details)
    rtx = (CORPUS / "fabric-manager-nv-warn-nothing-to-do-two-rtx4090-no-nvswitch" / "raw.txt").read_text()
    assert fmstatus.parse(rtx)["fabric_manager"]["nvswitches"] is False
    assert verdict(explained(rtx)) == ("skip", "FACTS_INCOMPLETE", None)


def test_an_active_fabric_manager_is_said_and_proves_no_gpu_s_health():
    """bottlerocket-kernel-kit#142: active (running) on a healthy node; alone it is nothing to judge, never a pass."""
    assert fmstatus.parse(ACTIVE)["fabric_manager"]["state"] == "active"
    r = explained(ACTIVE)
    assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None)
    assert any("fabric manager is active" in d for d in r.details)
    r = gpu(fabric_manager={"state": "active", "nvswitches": True})
    assert r.status == "skip" and r.code != "NVLINK_DOWN"


def test_the_fabric_manager_s_own_failure_line_is_its_error():
    """akash-network/website#632: the fabric manager refusing a driver of another version; no switch shown: said."""
    manager = fmstatus.parse(MISMATCH)["fabric_manager"]
    assert manager["state"] == "failed"
    assert manager["error"].startswith("fabric manager NVIDIA GPU driver interface version 550.127.05 doesn't match")
    assert verdict(explained(MISMATCH)) == ("skip", "FACTS_INCOMPLETE", None)
    r = gpu(fabric_manager={**manager, "nvswitches": True})
    assert verdict(r) == ("fail", "NVLINK_DOWN", "host") and "550.127.05" in r.summary


def test_a_grace_tray_s_gpus_behind_nvswitches_are_no_proof_of_switches_of_its_own():
    """gb200-fabric-completed-success-no-local-fabric-manager: a GB200 compute tray registered with its rack's fabric and
    no local fabric manager (its switches and their fabric manager are the switch trays'): no fault, even where a
    translator marks its GPUs `nvswitch` true; an HGX H100 board's GPUs behind NVSwitches are."""
    facts = json.loads((CORPUS / "gb200-fabric-completed-success-no-local-fabric-manager" / "facts" / "gpu.json")
                       .read_text())["facts"]
    expected = json.loads((CORPUS / "gb200-fabric-completed-success-no-local-fabric-manager" / "expected.json")
                          .read_text())["verdicts"]["gpu"]
    devices = [{**d, "nvswitch": True} for d in facts["devices"]]
    r = judge(CHECKS["gpu"], {**facts, "devices": devices, "fabric_manager": {"state": "not_found"}}, Options())
    assert verdict(r) == (expected["status"], expected["code"], expected["owner"])
    assert not [f for f in r.data.get("findings", []) if "fabric manager" in f["text"]]
    hgx = [{**d, "name": "NVIDIA H100 80GB HBM3"} for d in devices]
    r = judge(CHECKS["gpu"], {**facts, "devices": hgx, "fabric_manager": {"state": "not_found"}}, Options())
    assert verdict(r) == ("fail", "NVLINK_DOWN", "host")


@pytest.mark.parametrize("bad", [{"state": "running"}, {"state": 1}, {"nvswitches": "yes"}, "failed"])
def test_an_implausible_fabric_manager_field_is_refused_never_judged(bad):
    r = gpu(fabric_manager=bad)
    assert r.code == "FACTS_INVALID" and "fabric_manager" in r.summary


# ---------------------------------------------------------------- Libfabric's providers (fi_info)
# https://github.com/ofiwg/libfabric/issues/5689 (`fi_info -p efa` on an EFA instance; fi_pingpong over it works)
EFA_LISTED = """\
provider: efa
    fabric: EFA-fe80::39:beff:fe6e:c23
    domain: efa_0-rdm
    version: 2.0
    type: FI_EP_RDM
    protocol: FI_PROTO_EFA
provider: efa;ofi_rxd
    fabric: EFA-fe80::39:beff:fe6e:c23
    domain: efa_0-dgrm
    version: 1.0
    type: FI_EP_RDM
    protocol: FI_PROTO_RXD
"""
# https://github.com/v6d-io/v6d/issues/2051 (an EFA instance: verbs answers -61 by design, efa lists each device)
VERBS_THEN_EFA = """\
$ FI_PROVIDER=verbs fi_info
fi_getinfo: -61 (No data available)
$ FI_PROVIDER=efa fi_info | head -n 20
provider: efa
    fabric: efa
    domain: rdmap79s0-rdm
    version: 121.0
    type: FI_EP_RDM
    protocol: FI_PROTO_EFA
"""
# https://github.com/ofiwg/libfabric/issues/7324 (`fi_info` on a host whose Libfabric offers TCP only)
TCP_ONLY = """\
$ fi_info
provider: tcp;ofi_rxm
    fabric: 192.168.1.2/24
    domain: eno1
    version: 112.10
    type: FI_EP_RDM
    protocol: FI_PROTO_RXM
provider: tcp;ofi_rxm
    fabric: 127.0.0.1/32
    domain: lo
    version: 112.10
    type: FI_EP_RDM
    protocol: FI_PROTO_RXM
"""
EFA_ADAPTER = {"name": "rdmap79s0", "driver": "efa", "ports": [{"port": 1, "state": "ACTIVE", "phys_state": "LinkUp",
                                                               "link_layer": "Unknown"}]}


def fabric(**facts):
    return judge(CHECKS["fabric"], facts, Options(), source="fabric.json")


def test_fi_info_listings_are_read_with_what_they_asked_for():
    assert fiinfo.parse(EFA_LISTED) == {"ofi_providers": ["efa", "ofi_rxd"], "ofi_query": None}
    assert fiinfo.parse(VERBS_THEN_EFA) == {"ofi_providers": ["efa"], "ofi_query": "efa"}     # verbs' -61 left out
    assert fiinfo.parse(TCP_ONLY) == {"ofi_providers": ["tcp", "ofi_rxm"], "ofi_query": "all"}
    assert fiinfo.parse("$ fi_info -p efa\nfi_getinfo: -61 (No data available)\n") == {"ofi_providers": [],
                                                                                       "ofi_query": "efa"}
    # Libfabric's and aws-ofi-nccl's own log lines are no listing (aws/aws-ofi-nccl#889, #1020)
    assert not fiinfo.detect("libfabric:85:1747438790::core:core:fi_getinfo_():1392<warn> fi_getinfo: provider efa "
                             "output empty list\n")
    assert not fiinfo.detect("[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN "
                             "NET/OFI OFI fi_getinfo() call failed: No data available\n")


@pytest.mark.parametrize("text", [EFA_LISTED, VERBS_THEN_EFA], ids=["libfabric-5689", "v6d-2051"])
def test_a_listing_that_holds_efa_passes_on_that_alone(text):
    r = explained(text)
    assert verdict(r) == ("pass", None, None) and "not assessed" in r.summary


def test_efa_adapters_whose_image_lists_no_efa_provider_are_the_image_s():
    """libfabric#7324's TCP-only listing, asked for every provider, in a container given the node's EFA device."""
    r = fabric(adapters=[EFA_ADAPTER], uverbs=["uverbs0"], libraries={"libfabric.so.1": "loaded"},
               **fiinfo.parse(TCP_ONLY))
    assert verdict(r) == ("fail", "FABRIC_EFA_PLUGIN_MISSING", "image") and "efa provider" in r.summary
    built = fabric(adapters=[EFA_ADAPTER], ofi_providers=["tcp", "udp", "shm"], ofi_query="list")
    assert verdict(built) == ("fail", "FABRIC_EFA_PLUGIN_MISSING", "image")


def test_no_data_alone_or_out_of_the_devices_reach_is_not_the_image_s():
    """`fi_info -p efa` answers -61 on an instance, or in a container, without EFA devices (ofiwg/libfabric#10794): with
    the devices' reach unknown no image fault is shown; given none (`uverbs` []) it is the job's, as ever."""
    alone = explained("$ fi_info -p efa\nfi_getinfo: -61 (No data available)\n")
    assert verdict(alone) == ("skip", "FACTS_INCOMPLETE", None)
    reach_unknown = fabric(adapters=[EFA_ADAPTER], ofi_providers=[], ofi_query="efa")
    assert reach_unknown.code != "FABRIC_EFA_PLUGIN_MISSING"
    not_given = fabric(adapters=[EFA_ADAPTER], uverbs=[], libraries={"libfabric.so.1": "loaded"}, ofi_providers=[],
                       ofi_query="efa")
    assert verdict(not_given) == ("fail", "FABRIC_NOT_PASSED", "job")


def test_a_healthy_efa_node_s_listing_beside_its_adapter_raises_nothing():
    """libfabric#5689's listing in a container given the device: no FABRIC_EFA_PLUGIN_MISSING."""
    r = fabric(adapters=[EFA_ADAPTER], uverbs=["uverbs0"], libraries={"libfabric.so.1": "loaded",
               "libibverbs.so.1": "loaded"}, **fiinfo.parse(EFA_LISTED))
    assert r.code != "FABRIC_EFA_PLUGIN_MISSING" and r.status in ("pass", "warn", "skip")
    assert any("fi_info" in d and "efa" in d for d in r.details)


@pytest.mark.parametrize("bad", [{"ofi_providers": "efa"}, {"ofi_providers": ["efa provider"]}, {"ofi_query": 3}])
def test_an_implausible_provider_listing_is_refused(bad):
    assert fabric(**bad).code == "FACTS_INVALID"


# ---------------------------------------------------------------- the cloud instance type's adapter count
# A100 VM, eight ConnectX-6 VFs (MT4124) Active at HDR 200: GPUd's real capture (the corpus's
# a100-azure-ibstat-eight-mt4124-vf-hdr-200-active-then-ibpanic-mlx5-8-exit-255,
# https://github.com/leptonai/gpud/blob/c9874d3491e39974b6fdb3bb88dfa8de0168f29c/components/accelerator/nvidia/infiniband/testdata/ibstat.39.0.a100.failed.ibpanic.exit-255.0),
# the eight rails an ND A100 v4 has (https://learn.microsoft.com/azure/virtual-machines/nda100-v4-series)
AZURE_A100 = CORPUS / "a100-azure-ibstat-eight-mt4124-vf-hdr-200-active-then-ibpanic-mlx5-8-exit-255"


def _azure_a100():
    return json.loads((AZURE_A100 / "facts" / "fabric.json").read_text())["facts"]


def test_an_nd_a100_v4_s_eight_rails_read_whole_raise_nothing():
    facts = _azure_a100()
    expected = json.loads((AZURE_A100 / "expected.json").read_text())["verdicts"]["fabric"]
    r = fabric(**{**facts, "instance_type": "Standard_ND96asr_v4"})
    assert verdict(r) == (expected["status"], expected["code"], expected["owner"]) == ("pass", None, None)
    assert any("8 of its 8 InfiniBand" in d for d in r.details)


def test_an_nd_vm_missing_an_infiniband_rail_fails_the_host():
    facts = _azure_a100()
    r = fabric(**{**facts, "adapters": facts["adapters"][:7], "instance_type": "Standard_ND96asr_v4"})
    assert verdict(r) == ("fail", "FABRIC_ADAPTERS_MISSING", "host") and "7 read" in r.summary


def test_a_p5_launched_with_fewer_efa_interfaces_warns_the_host_and_a_p4d_s_four_pass():
    """p5.48xlarge takes 32 EFA interfaces, p4d.24xlarge 4 (torchx's named resources; AWS's EFA guide)."""
    four = [{**EFA_ADAPTER, "name": f"rdmap{n}s0"} for n in (79, 80, 81, 82)]
    assert verdict(fabric(adapters=four, instance_type="p5.48xlarge")) == ("warn", "FABRIC_ADAPTERS_MISSING", "host")
    assert fabric(adapters=four, instance_type="ml.p4d.24xlarge").code != "FABRIC_ADAPTERS_MISSING"


def test_a_container_s_view_or_an_unknown_type_is_never_judged_short():
    """A container may see only the EFA devices it was given (the job's share); a type whose count is not published
    here is said, not guessed."""
    one = [EFA_ADAPTER]
    r = fabric(adapters=one, uverbs=["uverbs0"], instance_type="p5.48xlarge")
    assert r.code != "FABRIC_ADAPTERS_MISSING" and any("not judged here" in d for d in r.details)
    r = fabric(adapters=one, instance_type="a3-megagpu-8g")
    assert r.code != "FABRIC_ADAPTERS_MISSING" and any("not one this verify knows" in d for d in r.details)
    assert fabric(adapters=one, instance_type="p5 48xlarge; rm -rf").code == "FACTS_INVALID"


def test_the_node_s_own_switches_pasted_beside_a_dead_fabric_manager_decide():
    """NVSentinel#883's status pasted above a fabric manager's own report of an error on one of the node's NVSwitches
    (GPUd's real fabric-manager log of an HGX H100, https://github.com/leptonai/gpud/blob/e0d14b7dbe99f2c1442078165361757180b7508a/components/query/log/tail/testdata/fabric-manager.0.log):
    the switches are the node's, so the dead fabric manager is the host's."""
    sxid = (CORPUS / "hgx-h100-fabricmanager-535.161.08-log-sxid-12028-non-fatal-burst-all-four-nvswitches-then-restart-"
            "all-gpus-reprobed-18-links-gpud-fixture" / "raw.txt").read_text()
    line = next(x for x in sxid.splitlines() if "detected NVSwitch" in x)
    manager = fmstatus.parse(FAILED + line + "\n")["fabric_manager"]
    assert manager["state"] == "failed" and manager["nvswitches"] is True
    assert verdict(explained(FAILED + line + "\n")) == ("fail", "NVLINK_DOWN", "host")
