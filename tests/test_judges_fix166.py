"""Issue 35, batches 166 to 168 (NCCL INFO/WARN logs, MIG machines, NVLink and PCIe link counters): the classes their
blind translations showed the judges or `verify explain` getting wrong.
- NVLink error counters judged whether or not the links' states were read (`nvidia-smi nvlink -e` alone), and
  `nvidia-smi nvlink -e` read by explain (nvlinkerrs.py): a count above 0 stands, zeros only where every link shows;
- an `nvidia-smi nvlink -s` listing the poster elided (`...`) under a GPU: that GPU's links unknown, never a shorter
  list of links up;
- `nvidia-smi mig -lgip`: a GPU in MIG mode NVML listed, with no GPU instance where every one-slice profile is free;
- nv-hostengine's cache-manager log storing DCGM's "not supported" value: the monitor's gap, not assessed;
- NCCL 2.7's `Call to ibv_create_cq failed` with no errno and nothing else: no cause shown, the job's, never a drain.
Real lines are quoted from corpus entries (by slug)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, raw, replayed, verdict
from verify.checks.gpu import gpuhealth
from verify.checks.nccl.verbscall import verbs_call_without_errno
from verify.explain import dcgmcache, migprofiles, nvlinkerrs, nvlinks
from verify.findings import Findings

pytestmark = pytest.mark.unit

V100_E = "v100-sxm2-32gb-ls-pair-nvlink-e-gpu2-link0-crc-65535-saturated-follows-slot-after-gpu-swap-gpu0-link3-replays-211"
GB300_E = "gb300-srt-slurm-hwinfo-before-snapshot-nvlink-e-gpu0-link0-replay-recovery-crc-zero-no-imex-channels-dir"
A6000_S = "rtx-a6000-pair-vast-container-nvlink-s-gpu0-four-links-14.062gbs-topo-nv4-nvlink-e-link0-zero-bridge-healthy"
B200_LGIP = "b200-mig-on-nvidia-smi-mig-lgip-1g-23gb-7-of-7-free-no-gpu-instance-yet-mig-parted-profile-pr"
GH200_LGIP = "gh200-144g-hbm3e-mig-on-nvidia-smi-mig-lgip-1g-18gb-7-of-7-free-no-gpu-instance-mig-parted-config-pr"
H100_DCGM = "h100-hgx-dcgm-3.3.0-nvlink-flit-crc-field-409-data-crc-419-not-supported-blank-gpu7-tool-gap-not-node"
XGB_CQ = "xgboost-spark-2x1-a100-nccl-2.7.8-roce-mlx5-1-net-ib-channels-then-warn-ibv-create-cq-failed-no-errno"


# ------------------------------------------------- NVLink error counters without the links' states (nvlink -e)
def test_nvlink_error_counters_are_judged_without_the_links_states():
    found = Findings()
    gpuhealth.nvlink({"index": 2, "nvlink": None, "nvlink_errors": {"crc": 65535, "replay": 2, "recovery": 0}},
                     True, found)
    assert [(f.severity, f.code, f.owner) for f in found.items] == [("fail", "NVLINK_ERRORS", "host")]
    few = Findings()
    gpuhealth.nvlink({"index": 0, "nvlink_errors": {"crc": 0, "replay": 3, "recovery": 0}}, True, few)
    assert [(f.severity, f.code) for f in few.items] == [("warn", "NVLINK_ERRORS")]


def test_nvlink_e_is_read_per_gpu_and_a_saturated_crc_counter_fails_the_host():
    text = raw(V100_E)
    assert "Link 0: CRC Errors: 65535" in text and "Link 3: Replay Errors: 211" in text
    devices = nvlinkerrs.parse(text)["devices"]
    assert [(d["index"], d["nvlink_errors"]) for d in devices] == [
        (0, {"crc": 0, "replay": 211, "recovery": 0}), (2, {"crc": 65535, "replay": 2, "recovery": 0})]
    assert verdict(explained(text)) == ("fail", "NVLINK_ERRORS", "host") == replayed(V100_E)["gpu"]


def test_one_links_zeros_of_a_many_link_gpu_are_no_clean_read():
    text = raw(GB300_E)
    assert "GPU 0: NVIDIA GB300\n\t Link 0: Replay Errors: 0" in text
    (dev,) = nvlinkerrs.parse(text)["devices"]
    assert dev["nvlink_errors"] is None          # link 0 of 18 (or a model whose count is unknown): not the device's
    shown = nvlinkerrs.parse("GPU 0: NVIDIA GB200 (UUID: GPU-x)\n Link 0: Replay Errors: 0\n Link 0: CRC Errors: 7\n")
    assert shown["devices"][0]["nvlink_errors"] == {"crc": 7, "replay": None, "recovery": None}   # a count stands


def test_counters_under_no_gpu_header_name_no_gpu():
    text = raw(A6000_S)
    assert "### nvidia-smi nvlink -e\n\t Link 0: Replay Errors: 0" in text
    assert not nvlinkerrs.detect(text)           # the block follows GPU 1's `nvlink -s` lines, not a header of its own


# ------------------------------------------------- a GPU's links the poster elided
def test_an_elided_link_listing_leaves_that_gpus_links_unknown():
    text = raw(A6000_S)
    assert "GPU 1: NVIDIA RTX A6000 (UUID: GPU-6c620167-...)\n\t Link 0: 14.062 GB/s\n\t ..." in text
    gpu0, gpu1 = nvlinks.parse(text)["devices"]
    assert gpu0["nvlink"] == [True] * 4 and "nvlink" not in gpu1
    assert verdict(explained(text)) == ("warn", "HEALTH_NOT_ASSESSED", "host") == replayed(A6000_S)["gpu"]


def test_an_inactive_link_before_the_elision_is_still_a_fault_shown():
    text = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-x)\n Link 0: 25 GB/s\n Link 1: <inactive>\n ...\n"
    (dev,) = nvlinks.parse(text)["devices"]
    assert dev["nvlink"][:2] == [True, False] and set(dev["nvlink"][2:]) <= {None}


# ------------------------------------------------- nvidia-smi mig -lgip
@pytest.mark.parametrize("slug", [B200_LGIP, GH200_LGIP])
def test_a_profile_listing_is_a_mig_gpu_with_no_instance_where_every_slice_is_free(slug):
    text = raw(slug)
    assert "| GPU instance profiles:" in text and "7/7" in text
    assert migprofiles.parse(text)["devices"] == [{"index": 0, "mig": [True, None], "mig_devices": []}]
    assert verdict(explained(text)) == ("warn", "HEALTH_NOT_ASSESSED", "host") == replayed(slug)["gpu"]


def test_a_one_slice_profile_partly_taken_leaves_the_instances_unknown():
    text = raw(B200_LGIP).replace("19     7/7", "19     5/7")
    assert migprofiles.parse(text)["devices"][0]["mig_devices"] is None


# ------------------------------------------------- DCGM's "not supported" value in the host engine's log
def test_dcgms_not_supported_value_is_the_monitors_gap_not_assessed():
    text = raw(H100_DCGM)
    assert "eid 7, fieldId 409" in text and "value1 9223372036854775794" in text
    assert dcgmcache.parse(text)["devices"] == [{"index": 7}]
    assert "'not supported'" in dcgmcache.unread(text)[0]
    assert verdict(explained(text)) == ("warn", "HEALTH_NOT_ASSESSED", "host")
    reading = text.replace("value1 9223372036854775794", "value1 0")
    assert dcgmcache.unread(reading) == []      # a number is a reading, no gap said


# ------------------------------------------------- a verbs call with no errno (NCCL 2.7)
def test_a_verbs_call_failed_with_no_errno_is_the_jobs_never_a_drain():
    text = raw(XGB_CQ)
    assert "misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed\n" in text + "\n"
    assert verbs_call_without_errno("init: misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed") == "ibv_create_cq"
    assert verbs_call_without_errno("Call to ibv_create_cq failed with error Cannot allocate memory") is None
    assert replayed(XGB_CQ)["nccl"] == ("fail", "NCCL_FAILED", "job") == verdict(explained(text))
    # an errno keeps the rules that read it: ENOMEM with the memlock unknown is not this class
    with_errno = nccl_verdict(backend="nccl", world_size=2, nodes=2,
                              error="init: misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed with error "
                                    "Cannot allocate memory")
    assert with_errno[0] == "fail"


def test_an_elision_after_every_link_of_the_model_cuts_nothing_of_that_gpu():
    links = "".join(f" Link {i}: 53.125 GB/s\n" for i in range(18))
    (dev,) = nvlinks.parse(f"GPU 0: NVIDIA GB200 (UUID: GPU-x)\n{links} ...\n")["devices"]
    assert dev["nvlink"] == [True] * 18          # the poster left out the other GPUs, not GPU 0's links
