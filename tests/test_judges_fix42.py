# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's forty-second corpus batch, fixed by class:
- NVML refusing to initialise beside CUDA refusing a program the GPU (46: busy or unavailable, no owner in its words;
  or a refusal the catalog gives the host): both roads to a GPU that is there are refused, so the node's driver stack
  refuses it: fail DRIVER_ERROR (host), GPUs expected or not; `verify explain` reads NVML's refusal quoted beside
  CUDA's. Either refusal alone is judged as before (NVML's alone: no GPU visible, a failure only where expected);
- a GPU listed only by its MIG instances (`nvidia-smi mig -lgi`, `-lci`) is a GPU NVML read: there, its health not
  read, so not assessed (warn), never "nothing to judge"; explain reads both tables (never the profile lists);
- `nvidia-smi -mig 1`'s warning that the mode is pending is that GPU's `mig` [current, pending], said in the details:
  the change waits for a reset. No drain: GPU_RESET_REQUIRED stays NVML's recovery action, a failure only."""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify import explain as ex
from verify.checks import gpu
from verify.options import Options
from verify.prolog import verdict as prolog

pytestmark = pytest.mark.unit


def explained(text: str, name: str = "node.txt"):
    return ex.explain_text(text, name, Options())


# ------------------------------------------------------------------ NVML and CUDA both refuse the GPU
NVML_UNKNOWN = "Failed to initialize NVML: Unknown Error"
BUSY = "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"


@pytest.mark.parametrize("facts", [
    {"nvml_error": NVML_UNKNOWN, "cuda_errors": [{"index": None, "text": BUSY}]},
    {"nvml_error": NVML_UNKNOWN, "cuda_init_error": BUSY, "cuda_available": False},
    {"nvml_error": "NVMLError_Unknown: Unknown Error", "cuda_errors": [{"index": 0, "text": "cudaErrorDevicesUnavailable"}]},
], ids=["a-program-s-error", "cuda-s-first-call", "the-error-s-name"])
def test_nvml_and_cuda_both_refusing_a_gpu_fail_the_host_whether_gpus_were_expected_or_not(facts):
    r = gpu.judge(facts, Options())
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host"), r.summary
    assert "NVML does not initialise" in r.summary and "driver stack" in r.summary


def test_a_host_cause_the_catalog_decodes_beside_nvml_s_refusal_is_named():
    facts = {"nvml_error": NVML_UNKNOWN, "cuda_init_error": "cudaGetDeviceCount() Error 802: system not yet initialized"}
    r = gpu.judge(facts, Options())
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host") and "fabric" in r.summary


@pytest.mark.parametrize("facts", [
    {"nvml_error": NVML_UNKNOWN},                                                       # NVML's alone
    {"nvml_error": NVML_UNKNOWN, "cuda_errors": [{"index": None, "text": "CUDA error: no CUDA-capable device is "
                                                                          "detected"}]},   # 100: the process's start
    {"nvml_error": NVML_UNKNOWN, "cuda_errors": [{"index": None, "text": "torch.OutOfMemoryError: CUDA out of memory"}]},
    {"nvml_error": NVML_UNKNOWN, "cuda_init_error": "Found no NVIDIA driver on your system."},   # no GPU shown
])
def test_without_a_refusal_of_a_gpu_that_is_there_nvml_s_refusal_drains_nothing(facts):
    r = gpu.judge(facts, Options())
    assert (r.status, r.code) == ("skip", "GPU_NOT_VISIBLE"), r.summary


POD_AND_NODE = f"""2025-03-16T23:08:27Z {BUSY}
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1

$ kubectl debug node/gpu-node-1 -it --image=busybox
/ # chroot /host
root@gpu-node-1:/# nvidia-smi
{NVML_UNKNOWN}
"""


def test_explain_reads_nvml_s_refusal_quoted_beside_cuda_s():
    facts = ex.cuda.parse(POD_AND_NODE)
    assert facts["nvml_error"] == NVML_UNKNOWN and facts["devices"] is None
    assert verdict(explained(POD_AND_NODE)) == ("fail", "DRIVER_ERROR", "host")
    # each alone: CUDA's 46 alone the GPU refused to the job (a compute mode or sharing, tests/test_judges_fix52.py),
    # NVML's alone no GPU visible (skip)
    assert verdict(explained(POD_AND_NODE.split("$ kubectl")[0])) == ("fail", "GPU_NOT_VISIBLE", "job")
    assert explained(NVML_UNKNOWN + "\n").status == "skip"


def test_beside_devices_nvidia_smi_listed_no_nvml_refusal_is_taken():
    text = "GPU 0: Tesla K40m (UUID: GPU-8e2f2a65-1111-2222-3333-444455556666)\n" + POD_AND_NODE
    assert "nvml_error" not in ex.cuda.parse(text)


# ------------------------------------------------------------------ MIG instances listed, health not read
LGI = """+-------------------------------------------------------+
| GPU instances:                                        |
| GPU   Name             Profile  Instance   Placement  |
|                          ID       ID       Start:Size |
|=======================================================|
|   0  MIG 3g.40gb          9        2          4:4     |
+-------------------------------------------------------+
|   0  MIG 4g.40gb          5        1          0:4     |
+-------------------------------------------------------+
|   1  MIG 7g.80gb          0        0          0:8     |
+-------------------------------------------------------+
"""
LCI = """+--------------------------------------------------------------------+
| Compute instances:                                                 |
| GPU     GPU       Name             Profile   Instance   Placement  |
|       Instance                       ID        ID       Start:Size |
|         ID                                                         |
|====================================================================|
|   0      1       MIG 1c.3g.40gb       0         0          0:1     |
+--------------------------------------------------------------------+
|   0      1       MIG 2c.3g.40gb       1         1          1:2     |
+--------------------------------------------------------------------+
"""
LGIP = """+-----------------------------------------------------------------------------+
| GPU instance profiles:                                                      |
| GPU   Name             ID    Instances   Memory     P2P    SM    DEC   ENC  |
|                              Free/Total   GiB              CE    JPEG  OFA  |
|=============================================================================|
|   0  MIG 1g.10gb       19     7/7        9.50       No     14     0     0   |
+-----------------------------------------------------------------------------+
"""


def test_a_gpu_listed_by_its_mig_instances_alone_is_not_assessed_never_nothing_to_judge():
    facts = {"nvml_error": "none", "devices": [{"index": 0, "mig": [True, None], "mig_devices": [
        {"profile": "3g.40gb", "slices": 3, "gpu_instance": 2}]}]}
    assert verdict(gpu.judge(facts, Options())) == ("warn", "HEALTH_NOT_ASSESSED", "host")
    assert verdict(explained(LGI, "lgi.txt")) == ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_mig_instance_tables_are_read_gpu_instances_or_the_compute_instances_programs_use():
    gis = ex.miglist.parse(LGI)["devices"]
    assert [(d["index"], d["mig"], [m["profile"] for m in d["mig_devices"]]) for d in gis] == [
        (0, [True, None], ["3g.40gb", "4g.40gb"]), (1, [True, None], ["7g.80gb"])]
    assert gis[0]["mig_devices"][0] == {"profile": "3g.40gb", "slices": 3, "gpu_instance": 2}
    (dev,) = ex.miglist.parse(LGI + LCI)["devices"]          # both pasted: the compute instances are the MIG devices
    assert [(m["profile"], m["slices"], m["gpu_instance"], m["compute_instance"]) for m in dev["mig_devices"]] == [
        ("1c.3g.40gb", 1, 1, 0), ("2c.3g.40gb", 2, 1, 1)]
    cut = ex.miglist.parse(LGI + "|   2  MIG 1g.10gb")["devices"][-1]       # a row the paste cut keeps what it shows
    assert cut == {"index": 2, "mig": [True, None], "mig_devices": [{"profile": "1g.10gb", "slices": 1}]}


def test_the_profile_lists_are_no_instances():
    assert not ex.miglist.detect(LGIP)
    # read since fix166 by migprofiles.py: a GPU in MIG mode NVML listed, no instance (1g 7/7 free), health not read
    assert ex.migprofiles.parse(LGIP)["devices"] == [{"index": 0, "mig": [True, None], "mig_devices": []}]
    assert verdict(explained(LGIP, "lgip.txt")) == ("warn", "HEALTH_NOT_ASSESSED", "host")


# ------------------------------------------------------------------ a MIG mode pending a reset
PENDING = ("[root@nvidia-driver-daemonset-x drivers]# nvidia-smi -mig 1\nWarning: MIG mode is in pending enable state "
           "for GPU 00000000:07:00.0:In use by another client\n00000000:07:00.0 is currently being used by one or more "
           "other processes (e.g. CUDA application or a monitoring application such as another instance of nvidia-smi).")


def test_a_pending_mig_mode_is_read_said_and_drains_nothing():
    (dev,) = ex.miglist.parse_pending(PENDING)["devices"]
    assert dev == {"index": None, "pci_bus_id": "00000000:07:00.0", "mig": [False, True]}
    r = explained(PENDING)
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host")
    assert any("MIG mode pending" in d and "reset" in d for d in r.details)
    assert "GPU_RESET_REQUIRED" in prolog.FAILURES_ONLY          # NVML's recovery action, written only as a failure
    disable = ex.miglist.parse_pending(PENDING.replace("pending enable", "pending disable"))["devices"][0]
    assert disable["mig"] == [True, False]
