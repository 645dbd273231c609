# mypy: disable-error-code="arg-type, typeddict-item, list-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's known gaps, fixed by class:
- nccl: a failure's words that say "failed or timed out" (torch's teardown), a watchdog thread ended by an exception,
  ETIMEDOUT's errno text of a call that returned, are no hang; the watchdog's own timeout and a wait that ran out are;
- gpu: CUDA initialising alone and torch's `is_available()` (or count) alone are one rule, a program's run with no
  device and no health read: nothing to judge (FACTS.md, "How unknown is judged"); beside a read of the node, the
  unread health warns;
- `nvidia-smi -q`'s power limits (R525's `Power Readings`, R530's `GPU Power Readings`, text and XML) are read into
  FACTS.md's fields, the limit set (`Requested Power Limit`) beside them: an enforced limit equal to it is the
  owner's cap, below it another's;
- PCIe AER events of the kernel log (FACTS.md `PcieAerEvent`), read by `verify explain` and judged on a GPU's bus: an
  uncorrected fatal error fails (the GPU lost where recovery failed), non-fatal warns, corrected errors only as a storm.
"""
from __future__ import annotations

import pytest

from tests.helpers import ROOT
from tests.judging import explained, verdict
from verify import judging, replay
from verify.checks import CHECKS, gpu, nccl
from verify.checks.gpu.powercap import power_cap
from verify.checks.nccl.hang import is_timeout
from verify.explain import aer, smi
from verify.findings import Findings
from verify.options import Options

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------------------- nccl: a timeout said, not guessed
# real lines: https://github.com/wenet-e2e/wenet/issues/959 (refused), https://github.com/Oneflow-Inc/oneflow/issues/3586
# (ETIMEDOUT's retry), https://github.com/huggingface/accelerate/issues/2183 (torch's teardown),
# https://github.com/NVIDIA/nccl-tests/issues/166 (a connect that failed)
REFUSED = "NCCL INFO Call to connect returned Connection refused, retrying"
ETIMEDOUT = "worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying"
TEARDOWN = ("[E ProcessGroupNCCL.cpp:475] Some NCCL operations have failed or timed out. Due to the asynchronous nature "
            "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
ABORT = ("ubuntu:39964:40075 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : "
         "Software caused connection abort")
# https://github.com/hiyouga/LlamaFactory/issues/2424 (the corpus's llama2-7b-lora-... entry), and torch's heartbeat
# monitor (the corpus's xdit-pipefusion-... entry), c10d's store (the corpus's init timeout)
WATCHDOG = ("[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
            "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800572 milliseconds before timing out.")
HEARTBEAT = ("[PG 5 Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info. "
             "workMetaList_.size()=3")
STORE = "TimeoutError: The client socket has timed out after 1800s while trying to connect to (127.0.0.1, 48391)."


@pytest.mark.parametrize("error", [f"init: {REFUSED} | {TEARDOWN}", f"init: {ETIMEDOUT} | {ABORT}", TEARDOWN,
                                   "NCCL watchdog thread terminated with exception: NCCL error: remote process exited "
                                   "or there was a network error",
                                   "Exception (either an error or timeout) detected by watchdog at work: 5",
                                   "all_reduce: NCCL error: unhandled system error, WorkNCCL(SeqNum=5, "
                                   "OpType=ALLREDUCE, Timeout(ms)=600000)"])
def test_a_failure_that_says_failed_or_timed_out_is_no_hang(error):
    assert not is_timeout(error)
    r = nccl.judge({"backend": "nccl", "error": error}, Options())
    assert r.status == "fail" and r.code != "NCCL_TIMEOUT", r.summary


@pytest.mark.parametrize("error", [f"all_reduce: {WATCHDOG}", f"[PG 5 Rank 0] {HEARTBEAT}", f"init: {STORE}",
                                   f"all_reduce: {WATCHDOG} | {TEARDOWN}",
                                   "init: DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients "
                                   "joined.", "all_reduce: hangs (never completes) whenever GPU 3 is in the group"])
def test_a_watchdog_timeout_or_a_wait_that_ran_out_is_a_hang(error):
    assert is_timeout(error)
    assert nccl.judge({"backend": "nccl", "error": error}, Options()).code == "NCCL_TIMEOUT"


def test_connection_refused_at_init_with_torch_s_teardown_was_a_hang_and_is_now_a_failure():
    r = nccl.judge({"backend": "nccl", "error": f"init: {REFUSED} | {TEARDOWN}"}, Options())
    assert verdict(r)[:2] == ("fail", "NCCL_FAILED") and "hung" not in r.summary


# ------------------------------------------------------------------ gpu: a program's run alone, one rule for each
# the corpus's b200-class-bottlerocket-... (CUDA's sample ran: `cuda_init_error` "none", `cuda_errors` []) and
# h100-80gb-hbm3-ollama-... (Ollama's discovery): a program's run, no NVML device and no health field
RUN_ALONE = [{"cuda_init_error": "none"}, {"cuda_init_error": "none", "cuda_errors": []}, {"cuda_available": True},
             {"cuda_available": True, "cuda_init_error": "none"}, {"torch_devices": 2},
             {"torch": "2.9.0+cu128", "torch_cuda": "12.8", "cuda_available": True, "torch_devices": 2}]


@pytest.mark.parametrize("facts", RUN_ALONE, ids=str)
def test_cuda_initialising_and_torch_s_availability_alone_are_judged_alike_nothing_to_judge(facts):
    for source in (None, "r/gpu.json"):
        r = judging.judge(CHECKS["gpu"], {"devices": None, **facts}, Options(), source=source)
        assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None), (facts, r.summary)
        assert "program's run is no health read" in r.summary


@pytest.mark.parametrize("facts", RUN_ALONE, ids=str)
def test_a_program_s_run_beside_a_read_of_the_node_warns_the_unread_health(facts):
    r = gpu.judge({"devices": None, **facts, "xid_events": [], "driver": "580.95.05"}, Options())
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host"), r.summary


@pytest.mark.parametrize("facts", [{"cuda_available": True, "torch_devices": 0}, {"cuda_init_error": "none", "torch_devices": 0},
                                   {"cuda_available": False}, {"cuda_init_error": "no CUDA-capable device is detected"}])
def test_a_program_s_run_that_shows_a_fault_is_still_judged(facts):
    r = gpu.judge({"devices": None, **facts}, Options())
    assert r.status in ("warn", "fail") and r.code != "HEALTH_NOT_ASSESSED", r.summary


# ----------------------------------------------------------------------- nvidia-smi -q: the power limits, read
CORPUS = ROOT / "tests" / "data" / "real-world"
# https://github.com/thamada/gls/blob/b2f1cedeb098383fb647ea9bc7b51e3fec596989/gls/GH200_smi.py (R550 layout: the GPU's
# own readings, then the memory's and the Grace Hopper module's, whose 1000 W budget is not the GPU's limit)
GH200 = """GPU 00000009:01:00.0
    Product Name                          : NVIDIA GH200 480GB
    GPU Power Readings
        Power Draw                        : 87.88 W
        Current Power Limit               : 700.00 W
        Requested Power Limit             : 900.00 W
        Default Power Limit               : 900.00 W
        Min Power Limit                   : 100.00 W
        Max Power Limit                   : 900.00 W
    GPU Memory Power Readings
        Power Draw                        : 18.51 W
    Module Power Readings
        Power Draw                        : 169.77 W
        Current Power Limit               : 1000.00 W
        Requested Power Limit             : 1000.00 W
        Default Power Limit               : 1000.00 W
        Min Power Limit                   : 200.00 W
        Max Power Limit                   : 1000.00 W
"""
# https://github.com/Azure/azhpc-diagnostics/blob/006538315caa5c3842bb165f41582ef5bcfaebe2/Linux/test/samples/nvidia-smi-q.out
# (R460 layout: `Power Limit` set, `Enforced Power Limit` in force)
A100_OLD = """GPU 00000001:00:00.0
    Product Name                          : A100-SXM4-40GB
    Power Readings
        Power Management                  : Supported
        Power Draw                        : 55.63 W
        Power Limit                       : 400.00 W
        Default Power Limit               : 400.00 W
        Enforced Power Limit              : 400.00 W
        Min Power Limit                   : 100.00 W
        Max Power Limit                   : 400.00 W
"""


def test_the_gpu_s_own_power_readings_are_read_never_the_module_s():
    dev = smi.parse(GH200)["devices"][0]
    assert (dev["power_limit_w"], dev["power_default_limit_w"], dev["power_requested_limit_w"]) == (700.0, 900.0, 900.0)


def test_the_older_layout_s_enforced_limit_is_the_one_in_force():
    dev = smi.parse(A100_OLD)["devices"][0]
    assert (dev["power_limit_w"], dev["power_default_limit_w"], dev["power_requested_limit_w"]) == (400.0, 400.0, 400.0)
    capped = smi.parse(A100_OLD.replace("Enforced Power Limit              : 400.00", "Enforced Power Limit              "
                                        ": 250.00"))["devices"][0]
    assert capped["power_limit_w"] == 250.0 and capped["power_requested_limit_w"] == 400.0


def test_not_available_limits_are_unknown_never_zero():
    dev = smi.parse(GH200.replace("700.00 W", "N/A").replace(": 900.00 W", ": [N/A]"))["devices"][0]
    assert "power_limit_w" not in dev and "power_default_limit_w" not in dev


@pytest.mark.parametrize("entry", ["gh200-480gb-idle-one-dbe-row-remapped-pcie-x1-700w-of-900w",
                                   "rtx3090-pass-through-vm-525.147.05-xml-idle-p8-power-limit-200w-of-350w-default-owner-cap"])
def test_an_excerpt_s_power_limits_are_judged_as_its_facts_are(entry):
    folder = replay.load(str(CORPUS / entry / "facts"), None, {})
    facts_road = {r.name: verdict(replay.judge(r, folder.options)) for r in folder.records}
    assert {"gpu": verdict(explained((CORPUS / entry / "raw.txt").read_text()))} == facts_road


def test_an_enforced_limit_below_the_one_set_warns_the_host_and_the_owner_s_own_cap_does_not():
    base = {"index": 0, "name": "NVIDIA H200", "power_limit_w": 500.0, "power_default_limit_w": 700.0}
    found = Findings()
    power_cap({**base, "power_requested_limit_w": 700.0}, "device 0", found)
    assert [(f.code, f.owner) for f in found.items] == [("THROTTLED", "host")] and "below the 700 W set" in found.items[0].text
    found = Findings()
    power_cap({**base, "power_requested_limit_w": 500.0}, "device 0", found)        # `nvidia-smi -pl 500`: intended
    assert not found.items
    found = Findings()
    power_cap(base, "device 0", found)                  # the limit set not read: the cap's owner unknown, warned
    assert [(f.code, f.owner) for f in found.items] == [("THROTTLED", "host")]


# ------------------------------------------------------------------------ PCIe AER on a GPU's bus, read and judged
# https://github.com/rwth-i6/returnn/issues/1500 (the corpus's gpu-behind-broadwell-... entry): a fatal error under the
# GPU's root port, the nvidia device unable to take part, recovery failed
BROADWELL = (CORPUS / "gpu-behind-broadwell-root-port-00-03-0-aer-uncorrected-fatal-sdes-cmpltto-cant-recover-link-reset-"
             "training-hang" / "raw.txt")
# https://github.com/pop-os/pop/issues/3363 (6.x wording, `Correctable ... message received from`): the GPU's own
# corrected error beside its root port's, before the GPU fell off the bus
POPOS = """Sep 19 16:18:04 bubz kernel: [68185.875052] pcieport 0000:00:03.1: AER: Multiple Correctable error message received from 0000:00:00.0
Sep 19 16:18:04 bubz kernel: [68185.875237] pcieport 0000:00:03.1: PCIe Bus Error: severity=Correctable, type=Data Link Layer, (Transmitter ID)
Sep 19 16:18:04 bubz kernel: [68185.875244] pcieport 0000:00:03.1:   device [1022:1453] error status/mask=000011c0/00006000
Sep 19 16:18:04 bubz kernel: [68185.875252] pcieport 0000:00:03.1:    [ 6] BadTLP
Sep 19 16:18:04 bubz kernel: [68185.875259] pcieport 0000:00:03.1:    [ 7] BadDLLP
Sep 19 16:18:04 bubz kernel: [68185.875295] nvidia 0000:07:00.0: PCIe Bus Error: severity=Correctable, type=Data Link Layer, (Transmitter ID)
Sep 19 16:18:04 bubz kernel: [68185.875301] nvidia 0000:07:00.0:   device [10de:2184] error status/mask=00001000/0000a000
Sep 19 16:18:04 bubz kernel: [68185.875308] nvidia 0000:07:00.0:    [12] Timeout
"""
# https://github.com/minisforum-docs/MS-02-Ultra/issues/10: a non-fatal error on a port whose devices below are a USB
# controller and a Thunderbolt bridge (no GPU): not the GPU's bus
MINISFORUM = """Sep 22 09:59:09 pve kernel: xhci_hcd 0000:97:00.0: AER: can't recover (no error_detected callback)
Sep 22 09:59:09 pve kernel: pcieport 0000:80:1b.4: AER: device recovery failed
Sep 22 09:59:09 pve kernel: pcieport 0000:80:1b.4: AER: Uncorrectable (Non-Fatal) error message received from 0000:80:1b.4
Sep 22 09:59:09 pve kernel: pcieport 0000:80:1b.4: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), type=Transaction Layer, (Receiver ID)
Sep 22 09:59:09 pve kernel: pcieport 0000:80:1b.4:   device [8086:7f44] error status/mask=00200000/00000000
Sep 22 09:59:09 pve kernel: pcieport 0000:80:1b.4:    [21] ACSViol                (First)
Sep 22 09:59:09 pve kernel: thunderbolt 0000:84:00.0: AER: can't recover (no error_detected callback)
"""


def test_a_fatal_aer_under_the_gpu_s_port_whose_recovery_failed_is_the_gpu_lost():
    events = aer.events(BROADWELL.read_text())
    assert [(e["port"], e["severity"], e["gpu"], e["recovered"], e["link_reset"], e["errors"]) for e in events] == [
        ("0000:00:03.0", "fatal", True, False, True, ["SDES", "CmpltTO"])]
    assert verdict(explained(BROADWELL.read_text(), "dmesg.txt")) == ("fail", "GPU_LOST", "host")


def test_corrected_errors_on_the_gpu_s_bus_alone_are_no_fault_and_a_storm_only_warns():
    events = aer.events(POPOS)
    assert [(e["driver"], e["severity"], e["gpu"], e["device_id"]) for e in events] == [
        ("pcieport", "corrected", True, "1022:1453"), ("nvidia", "corrected", True, "10de:2184")]
    r = gpu.judge({"devices": None, "pcie_aer_events": events}, Options())
    assert r.status == "pass", r.summary                    # a few corrected retries: the link's own, no fault
    storm = [{**e, "count": 40} for e in events]
    r = gpu.judge({"devices": None, "pcie_aer_events": storm}, Options())
    assert verdict(r) == ("warn", "PCIE_DOWNGRADED", "host") and "storm" in r.summary


def test_an_aer_error_on_another_device_s_bus_is_not_judged():
    events = aer.events(MINISFORUM)
    assert [(e["severity"], e["gpu"], e["errors"]) for e in events] == [("non_fatal", None, ["ACSViol"])]
    assert verdict(explained(MINISFORUM, "journal.txt")) == ("skip", "FACTS_INCOMPLETE", None)


@pytest.mark.parametrize(("severity", "recovered", "want"), [
    ("fatal", False, ("fail", "GPU_LOST", "host")), ("fatal", True, ("fail", "PCIE_DOWNGRADED", "host")),
    ("fatal", None, ("fail", "PCIE_DOWNGRADED", "host")), ("non_fatal", None, ("warn", "PCIE_DOWNGRADED", "host")),
    ("non_fatal", False, ("warn", "PCIE_DOWNGRADED", "host")), ("corrected", None, ("pass", None, None))])
def test_an_aer_event_on_a_gpu_s_bus_is_judged_by_its_severity(severity, recovered, want):
    event = {"severity": severity, "port": "0000:00:03.0", "driver": "pcieport", "gpu": True, "recovered": recovered,
             "count": 3}
    for source in (None, "r/gpu.json"):
        assert verdict(judging.judge(CHECKS["gpu"], {"devices": None, "pcie_aer_events": [event]}, Options(),
                                     source=source)) == want


def test_a_corrected_storm_is_never_a_drain_and_a_fatal_one_beside_listed_gpus_still_fails():
    storm = {"severity": "corrected", "port": "0000:00:03.0", "driver": "pcieport", "gpu": True, "count": 500}
    r = gpu.judge({"devices": None, "pcie_aer_events": [storm]}, Options())
    assert r.status == "warn"
    fatal = {"severity": "fatal", "port": "0000:00:03.0", "driver": "pcieport", "gpu": True, "recovered": False}
    facts = {"devices": [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "pci_bus_id": "00000000:03:00.0",
                          "temperature_c": 40.0}], "pcie_aer_events": [fatal]}
    assert verdict(gpu.judge(facts, Options()))[:2] == ("fail", "GPU_LOST")
