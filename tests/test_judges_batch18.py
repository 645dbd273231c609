"""Issue 35's sixteenth to nineteenth corpus batches (translated blind from real output): the readers and rules they
called for, by class (the batches' entries themselves replay in tests/test_gpu_rules.py and tests/test_explain.py).

- `verify explain` reads `nvidia-smi nvlink -s` (`verify/explain/nvlinks.py`), a `grep . /sys/class/infiniband/...`
  dump through the probe's own sysfs reader (`verify/explain/sysfsib.py`), `rdma link show`'s InfiniBand form (LIDs
  before the state) and libibverbs' refusal of a provider built for another kernel ABI.
- The kernel lists RDMA adapters and the image has their provider, yet libibverbs opens none: the image's userspace
  (FABRIC_USERSPACE_MISSING), unless the container's /dev/infiniband was read empty (the job's, FABRIC_NOT_PASSED).
- NVLS not used on an NVSwitch node is judged from NCCL's log alone, with or without figures; a log without a
  version that prints `N nvls channels` is from an NCCL that knows NVLS (2.17+).
- A hang written as `hung` is a timeout.
"""
from __future__ import annotations

import os
from typing import Any

import pytest

from tests.helpers import ROOT
from tests.judging import verdict
from verify import explain as ex
from verify.checks import CHECKS
from verify.explain import nvlinks, sysfsib
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

CORPUS = ROOT / "tests" / "data" / "real-world"


def test_nvlink_status_a_link_shown_inactive_is_down_and_a_link_not_shown_is_unknown():
    """Hand-made from the corpus's real A100 listing (NVIDIA/nccl-tests#228): link 3 of GPU 1 set `<inactive>`, and
    GPU 2's listing cut after link 0 (as the poster cut it)."""
    raw = (CORPUS / "a100-sxm4-80gb-hgx-nvlink-s-12-links-up-zero-nvls-channels-is-a100" / "raw.txt").read_text()
    lines = raw.splitlines()
    gpu1 = lines.index(next(line for line in lines if line.startswith("GPU 1:")))
    lines[gpu1 + 4] = "\t Link 3: <inactive>"
    devices = nvlinks.parse("\n".join(lines))["devices"]
    assert devices[1]["nvlink"][3] is False and devices[1]["nvlink"].count(True) == 11
    assert devices[2]["nvlink"] == [True]                   # the links after the cut are not shown: not listed
    r = ex.explain_text("\n".join(lines), "nvlink.txt", Options())
    assert (r.status, r.code, r.owner) == ("warn", "NVLINK_DOWN", "host")


def test_a_sysfs_dump_is_read_as_the_probe_reads_sysfs_and_a_hostile_path_is_skipped(tmp_path):
    text = ("/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE\n"
            "/sys/class/infiniband/mlx5_0/ports/1/rate:400 Gb/sec (4X NDR)\n"
            "/sys/class/infiniband/mlx5_0/ports/1/link_layer:InfiniBand\n"
            "/sys/class/infiniband/mlx5_1/ports/1/state:1: DOWN\n"
            "/sys/class/infiniband/mlx5_1/ports/1/phys_state:2: Polling\n"
            f"/sys/class/infiniband/../../../../{tmp_path}/x/ports/1/state:4: ACTIVE\n"
            "/sys/class/infiniband/mlx5_2/../ports/1/state:4: ACTIVE\n")
    assert sysfsib.detect(text)
    adapters = sysfsib.parse(text)["adapters"]
    assert [a["name"] for a in adapters] == ["mlx5_0", "mlx5_1"]
    assert adapters[0]["ports"][0]["rate_gbps"] == 400.0 and adapters[1]["ports"][0]["phys_state"] == "Polling"
    assert os.listdir(tmp_path) == []                       # nothing written outside the private folder
    r = ex.explain_text(text, "sysfs.txt", Options())
    assert (r.status, r.code, r.owner) == ("warn", "FABRIC_PORT_DOWN", "host")     # one port of two


def test_rdma_link_show_reads_an_infiniband_port_s_state_after_its_lids():
    """ROCm/rccl#1423's line: `link mlx5_7/1 subnet_prefix ... lid 3403 sm_lid 1 lmc 0 state DOWN physical_state
    POLLING` (the corpus entry replays it); the Ethernet form has no LIDs."""
    from verify.explain import ib
    text = ("link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state DOWN physical_state POLLING\n"
            "link mlx5_8/1 state ACTIVE physical_state LINK_UP netdev ens8")
    ports = {a["name"]: a["ports"][0] for a in ib.parse(text)["adapters"]}
    assert (ports["mlx5_7"]["state"], ports["mlx5_7"]["phys_state"]) == ("DOWN", "Polling")
    assert (ports["mlx5_8"]["state"], ports["mlx5_8"]["phys_state"]) == ("ACTIVE", "LinkUp")


def _adapters(n: int) -> list[dict]:
    return [{"name": f"bnxt_re{i}", "driver": None, "hca_type": None, "ports": [
        {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": None, "width": None, "speed": None,
         "link_layer": None}]} for i in range(n)]


@pytest.mark.parametrize("uverbs, want", [(None, ("fail", "FABRIC_USERSPACE_MISSING", "image")),
                                          ([], ("fail", "FABRIC_NOT_PASSED", "job"))], ids=["not-read", "not-passed"])
def test_libibverbs_opening_none_of_the_kernel_s_adapters_is_the_image_s_unless_the_devices_were_not_passed(uverbs, want):
    """sriov-cni#348 (the corpus's bnxt_re pod): the image's provider supports kernel ABI 1, the host's driver 6."""
    facts = {"adapters": _adapters(2), "providers": ["bnxt_re"], "verbs_devices": [], "uverbs": uverbs}
    r = judge(CHECKS["fabric"], facts, Options())
    assert verdict(r) == want


@pytest.mark.parametrize("algo, owner", [("Tree,Ring,NVLS", "host"), ("Ring", "job")], ids=["asked", "excluded"])
def test_nvls_not_used_is_judged_from_nccl_s_log_alone(algo, owner):
    log: dict[str, Any] = {"nvls": False, "transports": ["P2P/direct pointer"],
                           "proof": ["n1:1:2 [0] NCCL INFO 16 coll channels, 0 nvls channels, 16 p2p channels"]}
    facts = {"backend": "nccl", "nvswitch": True, "nodes": 1, "world_size": 8, "nccl_version": None,
             "nccl_env": {"NCCL_ALGO": algo}, "nccl_log": log}
    assert verdict(judge(CHECKS["nccl"], facts, Options())) == ("warn", "NVLS_NOT_USED", owner)
    unknown = {**facts, "nccl_log": {**log, "proof": []}}      # no version, no NVLS line: not expected
    assert verdict(judge(CHECKS["nccl"], unknown, Options()))[1] != "NVLS_NOT_USED"


def test_a_hang_written_as_hung_is_a_timeout():
    facts = {"backend": "nccl", "error": "init: hung: nothing after '# Using devices'", "mode": "nccl-tests -g 1",
             "world_size": 1}
    assert verdict(judge(CHECKS["nccl"], facts, Options()))[:2] == ("fail", "NCCL_TIMEOUT")


@pytest.mark.parametrize("rc, words, code, owner", [
    (-22, "Invalid argument", "NCCL_FAILED", "image"),
], ids=["einval"])
def test_aws_ofi_nccl_refusing_a_registration_as_invalid_is_the_image_s_versions(rc, words, code, owner):
    """aws/aws-ofi-nccl#584 (the corpus's p4d entry): NCCL 2.19+ from a pip torch beside the libfabric of an EFA
    installer before 1.29: the registration's arguments are refused (EINVAL), not its size; the adapter answers."""
    line = (f"register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. RC: {rc}, "
            f"Error: {words}")
    r = judge(CHECKS["nccl"], {"backend": "nccl", "nodes": 2, "efa": True, "error": line}, Options())
    assert verdict(r) == ("fail", code, owner)
    assert verdict(ex.explain_text(line, "nccl.log", Options())) == ("fail", code, owner)


def test_aws_ofi_nccl_out_of_memory_is_not_read_as_a_version_mismatch():
    line = ("register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. RC: -12, "
            "Error: Cannot allocate memory")
    r = judge(CHECKS["nccl"], {"backend": "nccl", "nodes": 2, "efa": True, "error": line}, Options())
    assert r.status == "fail" and r.owner != "image"


def test_an_unknown_error_on_a_health_query_is_a_lost_gpu_and_on_a_descriptive_field_is_not():
    """dcgm-exporter#319 (the corpus's A10G): `Remapped Rows` and `GPU Current Temp` read `Unknown Error`: NVML cannot
    reach the GPU (FACTS.md `lost`). The V100s of thamada/gls print `Host Max : Unknown Error` under every healthy GPU
    (a field the driver cannot describe): no GPU is lost there."""
    from verify.explain import smi
    a10g = smi.parse((CORPUS / "a10g-gpu0-of-8-unknown-error-brand-remapped-rows-temp-err-in-table" / "raw.txt")
                     .read_text())["devices"][0]
    assert a10g["lost"] is True and set(a10g["nvml_errors"]) == {"row_remap", "temperature_c"}
    v100 = smi.parse((CORPUS / "v100-sxm2-16gb-x8-idle-one-sbe-page-retired-none-pending" / "raw.txt").read_text())
    assert not any(d.get("lost") for d in v100["devices"])


def test_nvidia_smi_unable_to_get_a_gpu_s_handle_because_it_is_lost_fails_the_host():
    """marian-nmt/marian#251: `Unable to determine the device handle for GPU 0000:03:00.0: GPU is lost.  Reboot the
    system to recover this GPU`."""
    text = ("Unable to determine the device handle for GPU 0000:03:00.0: GPU is lost.  Reboot the system to recover "
            "this GPU")
    r = ex.explain_text(text, "smi.txt", Options())
    assert verdict(r) == ("fail", "GPU_LOST", "host") and "00000000:03:00.0" in r.summary


@pytest.mark.parametrize("text", [
    "      GPU0  GPU1  CPU Affinity  NUMA Affinity\nGPU0   X    NV999999999   0-51  0\nGPU1  NV999999999   X  0-51  0\n",
    "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-ff8a40d4-abc6-08d1-f939-15848b5d4e05)\n\t Link 0: 25 GB/s\n"
    "\t Link 999999999: 25 GB/s\n",
], ids=["topo-bond", "nvlink-index"])
def test_a_link_count_no_gpu_has_is_not_read_and_never_passes(text):
    """Hand-made hostile input: a bond of 999,999,999 NVLinks, or link number 999,999,999, built a list that long
    (MemoryError). No GPU has more than 18 links: such text is no nvidia-smi output, not read, never a pass."""
    r = ex.explain_text(text, "hostile.txt", Options())
    assert (r.status, r.code) == ("skip", "FACTS_INCOMPLETE")
