# mypy: disable-error-code="arg-type, typeddict-item, list-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's hundred-and-twelfth and hundred-and-thirteenth corpus batches (what GPU monitoring already prints),
fixed by class:
- `verify explain` reads NVIDIA NVSentinel's health events (fault-quarantine's and platform-connectors' JSON lines,
  the event escaped inside a node annotation or not): the Xid a DCGM health message names (`(XID 95)`, `(XID 79)`) is
  one relayed Xid event of the GPU its entities name, judged by the one Xid catalog; the monitor's `isFatal` and
  recommended action are not read, and an event marked healthy holds none;
- a GPU whose whole live table row reads `ERR!` (fan, temperature, performance state, MIG mode) with nothing live read
  beside it is lost, even with its name printed (the driver keeps the name from the board's attach); `verify
  explain` reads the table's MIG M. `ERR!` too. A fan alone in error on a GPU that reads its temperature is not;
- a driver status line no catalog entry judges (`NV_ERR_STATE_IN_USE` from the profiler), with no device read and
  nothing else wrong, is not assessed (warn, host), never a pass, and never a drain.
The batches' other disagreements are strict expected failures (tests/test_gpu_rules.py, tests/test_explain.py)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.judging import explained, verdict
from verify import replay
from verify.checks import gpu
from verify.explain import nvsentinel, smitable
from verify.options import Options

pytestmark = pytest.mark.unit

CORPUS = Path(__file__).parent / "data" / "real-world"

# ---------------------------------------------------------- NVSentinel's health events
# a100-sxm4-80gb-nd96amsr-nvsentinel-gpuxiderror-xid79-fallen-off-bus-gpu0-fault-quarantine (its raw line, trimmed)
XID79 = ('{"time":"2026-03-06T09:34:56.504042516Z","level":"INFO","msg":"Handling event for ruleset","module":'
         '"fault-quarantine","version":"dev","event":{"CreatedAt":"2026-03-06T09:34:56.45Z","HealthEvent":{"version":1,'
         '"agent":"gpu-health-monitor","componentClass":"GPU","checkName":"GpuXidError","isFatal":true,"message":"GPU '
         'has fallen off the bus (XID 79). Node requires reboot.","recommendedAction":15,"errorCode":'
         '["DCGM_FR_GPU_FALLEN_OFF_BUS"],"entitiesImpacted":[{"entityType":"GPU","entityValue":"0"},{"entityType":"PCI",'
         '"entityValue":"0002:00:00.0"},{"entityType":"GPU_UUID","entityValue":"GPU-3d7408b2-d525-643f-5bfc-45a761045e14"}'
         '],"metadata":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"},"nodeName":"10.0.15.233"}}}\n')
# a100-sxm4-80gb-nd96amsr-570.148.08-nvsentinel-gpumemwatch-xid95-uncontained-gpu1-quarantine-annotation (trimmed):
# the event escaped once inside the quarantine annotation, the line cut where it was pasted
XID95 = ('{"time":"2026-02-18T08:11:02.865202189Z","level":"INFO","msg":"Setting annotations on node","module":'
         '"fault-quarantine","annotations":{"quarantineHealthEvent":"[{\\"version\\":1,\\"agent\\":\\"gpu-health-monitor'
         '\\",\\"componentClass\\":\\"GPU\\",\\"checkName\\":\\"GpuMemWatch\\",\\"isFatal\\":true,\\"message\\":\\"GPU had'
         ' an uncontained error (XID 95) Drain the GPU and reset it or reboot the node.\\",\\"recommendedAction\\":15,'
         '\\"errorCode\\":[\\"DCGM_FR_UNCONTAINED_ERROR\\"],\\"entitiesImpacted\\":[{\\"entityType\\":\\"GPU\\",'
         '\\"entityValue\\":\\"1\\"},{\\"entityType\\":\\"PCI\\",\\"entityValue\\":\\"0002:00:00.0\\"},{\\"entityType\\":'
         '\\"GPU_UUID\\",\\"entityValue\\":\\"GPU-3d7408b2-d525-643f-5bfc-45a761045e14\\"}],\\"metadata\\":{\\"nvidia.com/'
         'gpu.product\\":\\"NVIDIA-A100-SXM4-80GB\\",\n')


def test_an_nvsentinel_xid_event_is_the_relayed_xid_of_the_gpu_it_names():
    rows = nvsentinel.events(XID79)
    assert [(r["xid"], r["uuid"], r["pci_bus_id"], r["index"], r["time"], r["source"]) for r in rows] == [
        (79, "GPU-3d7408b2-d525-643f-5bfc-45a761045e14", "0002:00:00.0", None, "2026-03-06T09:34:56.45Z", "nvml")]
    assert verdict(explained(XID79, "fault-quarantine.log")) == ("fail", "GPU_LOST", "host")


def test_an_nvsentinel_event_escaped_inside_a_cut_annotation_is_read():
    rows = nvsentinel.events(XID95)
    assert [(r["xid"], r["uuid"], r["time"]) for r in rows] == [
        (95, "GPU-3d7408b2-d525-643f-5bfc-45a761045e14", "2026-02-18T08:11:02.865202189Z")]
    assert rows[0]["text"].startswith("GPU had an uncontained error (XID 95)")
    assert verdict(explained(XID95, "fault-quarantine.log")) == ("fail", "ECC_UNCORRECTABLE", "host")


def test_the_monitors_fatal_flag_is_not_the_verdict_the_xid_catalog_is():
    """An application's Xid 13 that a monitor marks fatal is still the job's, as the kernel's NVRM line would be."""
    app = XID79.replace("GPU has fallen off the bus (XID 79). Node requires reboot.",
                        "Graphics Engine Exception (XID 13). Run field diagnostics.")
    assert nvsentinel.events(app)[0]["xid"] == 13
    assert explained(app, "fault-quarantine.log").code != "GPU_LOST"


def test_an_nvsentinel_event_marked_healthy_or_naming_no_xid_holds_none():
    healthy = XID79.replace('"isFatal":true,', '"isFatal":false,"isHealthy":true,')
    assert nvsentinel.events(healthy) == []
    assert nvsentinel.events(XID79.replace("(XID 79)", "")) == []
    assert explained(healthy, "fault-quarantine.log").status != "fail"


def test_nvsentinels_relay_of_dcgms_xid_wording_is_read_once():
    """nvsentinel-preflight-dcgm-diag-xid145-rlw-src-track-nonfatal-link17-reported-fatal: `Detected XID 145 for GPU 0`
    inside the event is DCGM_FR_XID_ERROR's wording, read by the relay's own pattern, not a second time here; the
    monitor's isFatal does not make the driver's Nonfatal link error a drain."""
    raw = (CORPUS / "nvsentinel-preflight-dcgm-diag-xid145-rlw-src-track-nonfatal-link17-reported-fatal" / "raw.txt")
    assert nvsentinel.events(raw.read_text()) == []
    assert verdict(explained(raw.read_text(), "raw.txt")) == ("warn", "XID_ERROR", "host")


# ---------------------------------------------------------- a table row of ERR!
# a10g-g5-48xlarge-535.154.05-dcgm-exporter-3.3.5-gpu0-err-fan-temp-perf-mig-gpu1-idle-28c
A10G = """\
| NVIDIA-SMI 535.154.05             Driver Version: 535.154.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  NVIDIA A10G                    On  | 00000000:00:16.0 N/A |                  N/A |
|ERR!  ERR! ERR!               N/A /  N/A |      0MiB / 23028MiB |     N/A      Default |
|                                         |                      |                 ERR! |
+-----------------------------------------+----------------------+----------------------+
|   1  NVIDIA A10G                    On  | 00000000:00:17.0 Off |                    0 |
|  0%   28C    P8               9W / 300W |      0MiB / 23028MiB |      0%      Default |
|                                         |                      |                  N/A |
"""


def test_a_gpu_whose_whole_live_row_reads_err_is_lost_though_its_name_prints():
    devices = smitable.parse(A10G)["devices"]
    assert devices[0]["nvml_errors"] == {"fan_speed": "ERR!", "temperature_c": "ERR!", "performance_state": "ERR!",
                                         "mig": "ERR!"}
    assert "mig" not in devices[1].get("nvml_errors", {})
    r = explained(A10G, "nvidia-smi.txt")
    assert verdict(r) == ("fail", "GPU_LOST", "host") and "device 0" in r.summary and "device 1" not in r.summary


def test_the_healthy_gpu_beside_it_is_not_lost():
    """GPU 1 of the same excerpt, alone: every live read answers; no drain."""
    lines = A10G.splitlines()
    healthy = "\n".join(lines[:6] + lines[10:]) + "\n"
    assert explained(healthy, "nvidia-smi.txt").status == "pass"


def test_a_fan_alone_in_error_on_a_gpu_that_reads_its_temperature_is_not_lost():
    """rtx4090-ecc-on-23028mib-525.125.06-table-fan-err-only-e-process-38c-p5-49w-of-450w-gpud-valid-fixture: its
    cooling is unwatched (warn, host), not a GPU lost."""
    row = A10G.replace("|ERR!  ERR! ERR!               N/A /  N/A |", "|ERR!   38C    P5              49W / 450W |")
    row = row.replace("|                 ERR! |", "|                  N/A |")
    assert verdict(explained(row, "nvidia-smi.txt")) == ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_a_name_read_beside_a_row_of_errors_is_no_sign_the_gpu_answers():
    dev: dict[str, Any] = {"index": 0, "name": "NVIDIA A10G", "pci_bus_id": "00000000:00:16.0", "lost": None,
                           "persistence": True, "memory_bytes": 23028 << 20,
                           "nvml_errors": {k: "ERR!" for k in ("fan_speed", "temperature_c", "performance_state", "mig")}}
    assert verdict(gpu.judge({"driver": "535.154.05", "devices": [dev]}, Options())) == ("fail", "GPU_LOST", "host")
    answered = {**dev, "power_w": 60.0}             # a live read answered: the GPU still talks
    assert gpu.judge({"driver": "535.154.05", "devices": [answered]}, Options()).code != "GPU_LOST"


# ---------------------------------------------------------- a driver status no catalog entry judges
# rtx6000-ada-590.48.01-idle-node-dcgm-exporter-profiler-nv-err-state-in-use-0x63-crashloop
IN_USE = ("[Thu Mar  5 16:55:27 2026] NVRM: GPU0 nvCheckOkFailedNoLog: Check failed: State in use [NV_ERR_STATE_IN_USE] "
          "(0x00000063) returned from pRmApi->Control(pRmApi, pClient->hClient, hObject, "
          "NVB0CC_CTRL_CMD_INTERNAL_ALLOC_PMA_STREAM, &internalParams, sizeof(internalParams)) @ "
          "kern_profiler_v2_ctrl.c:315\n")


def test_a_driver_status_the_catalog_does_not_judge_is_not_assessed_never_a_pass_nor_a_drain():
    r = explained(IN_USE, "dmesg.txt")
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host") and "NV_ERR_STATE_IN_USE" in r.summary


def test_a_status_the_catalog_judges_still_decides():
    reset = IN_USE.replace("State in use [NV_ERR_STATE_IN_USE] (0x00000063)",
                           "Reset required [NV_ERR_RESET_REQUIRED] (0x00000062)")
    assert verdict(explained(reset, "dmesg.txt")) == ("fail", "GPU_RESET_REQUIRED", "host")


def test_a_clean_kernel_log_still_passes():
    """nvswitch-node-dev-kmsg-nvswitch-open-calico-ipv6-perf-lines-no-xid-gpud-fixture: a healthy host's kernel log
    (no Xid, no SXid, no driver status) keeps its pass: the new warning needs a status the driver logged."""
    item = CORPUS / "nvswitch-node-dev-kmsg-nvswitch-open-calico-ipv6-perf-lines-no-xid-gpud-fixture"
    folder = replay.load(str(item / "facts"), None, {})
    got = {r.name: verdict(replay.judge(r, folder.options)) for r in folder.records}
    assert got["gpu"] == ("pass", None, None)
    assert json.loads((item / "expected.json").read_text())["verdicts"]["gpu"]["status"] == "pass"
