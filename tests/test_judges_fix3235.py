# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's thirty-second and thirty-fifth corpus batches, fixed by class:
- dcgm-exporter's Prometheus scrape is read whole (its `# HELP`/`# TYPE` lines name fields and hold no value; its
  temperature, power and SM clock series are the GPU's readings, its driver label the driver): an idle GPU whose every
  exported health series is nominal passes, as its translation does;
- GKE's device plugin's `XidCriticalError` node condition relays NVML's Xids, judged by the one catalog;
- a corrupted InfoROM (nvidia-smi's warning and exit 14, DCGM health's incident, NVML's CorruptedInforom) warns the
  host, whichever tool says it;
- `dcgmi nvlink --link-status` is read: a link down beside up ones is the host's, every link down on GPUs of unknown
  model is not assessed;
- the driver's `NVRM: The NVIDIA probe routine was not called for N device(s)` (another kernel driver, nouveau, holds
  GPUs that are on the bus) fails the host (DRIVER_ERROR), from the kernel log alone.
The one new failure (the unbound GPUs) is a line only a node whose GPUs the nvidia driver cannot reach prints; the
InfoROM and NVLink verdicts warn, and the relay's Xids are the catalog's."""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify import explain as ex
from verify.options import Options

pytestmark = pytest.mark.unit


def explained(text: str, name: str = "scrape.txt"):
    return ex.explain_text(text, name, Options())


# ------------------------------------------------------------------ dcgm-exporter's scrape, as `curl :9400/metrics`
_LABELS = ('{gpu="1",UUID="GPU-0d9e3c4a-1111-2222-3333-444455556666",pci_bus_id="00000000:41:00.0",device="nvidia1",'
           'modelName="NVIDIA A10G",Hostname="node-a",DCGM_FI_DRIVER_VERSION="570.86.15"}')


def _scrape(**values: str) -> str:
    lines = []
    for field, value in values.items():
        lines += [f"# HELP {field} Number of remapped rows for uncorrectable errors", f"# TYPE {field} gauge",
                  f"{field}{_LABELS} {value}"]
    return "\n".join(lines) + "\n"


IDLE = {"DCGM_FI_DEV_SM_CLOCK": "210", "DCGM_FI_DEV_GPU_TEMP": "29", "DCGM_FI_DEV_POWER_USAGE": "15.250000",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": "0", "DCGM_FI_DEV_ROW_REMAP_FAILURE": "0"}


def test_an_idle_gpu_scraped_from_dcgm_exporter_is_read_with_its_readings_and_passes():
    r = explained(_scrape(**IDLE))
    assert verdict(r) == ("pass", None, None), r.summary
    assert "NVIDIA A10G" in r.summary and "570.86.15" in r.summary


def test_the_exporters_help_and_type_lines_are_no_gpu_of_their_own():
    facts = ex.dcgm.parse(_scrape(**IDLE))
    (dev,) = facts["devices"]
    assert dev["index"] == 1 and dev["temperature_c"] == 29.0 and dev["power_w"] == 15.25 and dev["sm_clock_mhz"] == 210
    assert facts["driver"] == "570.86.15"
    # a HELP line alone names a field and no value: no device comes of it
    assert ex.dcgm.parse("# HELP DCGM_FI_DEV_ECC_DBE_VOL_TOTAL Total double-bit volatile ECC errors.\n")["devices"] is None


def test_a_fault_in_the_scrape_still_fails_beside_its_help_lines():
    r = explained(_scrape(**IDLE, DCGM_FI_DEV_ECC_DBE_VOL_TOTAL="2"))
    assert verdict(r) == ("fail", "ECC_UNCORRECTABLE", "host")


def test_a_blank_figure_of_the_exporter_is_not_a_reading():
    # DCGM_FP64_BLANK (2^47) for a power draw the GPU does not report: unknown, never a 140 TW draw
    facts = ex.dcgm.parse(_scrape(DCGM_FI_DEV_POWER_USAGE="140737488355328.000000", DCGM_FI_DEV_GPU_TEMP="30"))
    assert "power_w" not in facts["devices"][0]


# ------------------------------------------------------------------ GKE's XidCriticalError node condition
_ROW = ('  XidCriticalError     {status}    Tue, 04 Mar 2025 09:12:40 +0000   Tue, 04 Mar 2025 09:02:11 +0000   '
        '{reason}                  0b6c7d52-91e3-4c7e-a1f0-5f3e2d1c0b9a')
_YAML = """  - lastHeartbeatTime: "2025-03-04T09:12:40Z"
    lastTransitionTime: "2025-03-04T09:02:11Z"
    message: 0b6c7d52-91e3-4c7e-a1f0-5f3e2d1c0b9a
    reason: '{reason}'
    status: "{status}"
    type: XidCriticalError
  - lastHeartbeatTime: "2025-03-04T09:12:40Z"
    lastTransitionTime: "2025-03-01T00:00:00Z"
    message: kubelet has sufficient memory available
    reason: KubeletHasSufficientMemory
    status: "False"
    type: MemoryPressure
"""


@pytest.mark.parametrize("form", [_ROW, _YAML], ids=["describe", "yaml"])
def test_a_node_condition_of_an_application_xid_is_the_jobs(form):
    text = "$ kubectl describe node gke-pool-1-abcd | grep Xid\n" + form.format(status="True", reason='{"13":true}')
    r = explained(text)
    assert verdict(r) == ("warn", "XID_ERROR", "job"), r.summary
    assert "XidCriticalError node condition" in r.summary


@pytest.mark.parametrize("form", [_ROW, _YAML], ids=["describe", "yaml"])
def test_a_node_condition_of_a_gpu_fault_xid_fails_the_host(form):
    r = explained(form.format(status="True", reason='{"48":true,"13":false}'))
    assert verdict(r) == ("fail", "ECC_UNCORRECTABLE", "host"), r.summary    # Xid 48: a double-bit ECC error
    assert [e["xid"] for e in ex.xidrelay.events(form.format(status="True", reason='{"48":true,"13":false}'))] == [48]


def test_the_same_condition_shown_twice_is_one_event_and_a_false_one_none():
    both = _ROW.format(status="True", reason='{"31":true}') + "\n" + _YAML.format(status="True", reason='{"31":true}')
    assert [e["xid"] for e in ex.xidrelay.events(both)] == [31]
    assert ex.xidrelay.events(_ROW.format(status="False", reason='{"31":true}')) == []
    assert ex.xidrelay.events(_YAML.format(status="False", reason='{"31":true}')) == []


# ------------------------------------------------------------------ a corrupted InfoROM, as each tool reports it
_TABLE = """+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|=========================================+======================+======================|
|   0  Tesla V100-PCIE-16GB           On  | 00000000:3B:00.0 Off |                    0 |
| N/A   35C    P0              25W / 250W |      0MiB / 16384MiB |      0%      Default |
+-----------------------------------------+----------------------+----------------------+
|   1  Tesla V100-PCIE-16GB           On  | 00000000:D8:00.0 Off |                    0 |
| N/A   33C    P0              24W / 250W |      0MiB / 16384MiB |      0%      Default |
+-----------------------------------------+----------------------+----------------------+
"""


def test_nvidia_smis_infoROM_warning_is_that_gpus_and_warns_the_host():
    r = explained(_TABLE + "WARNING: infoROM is corrupted at gpu 0000:D8:00.0\n", "smi.txt")
    assert verdict(r) == ("warn", "ECC_UNCORRECTABLE", "host"), r.summary
    assert [f["device"] for f in r.data["findings"] if f["code"] == "ECC_UNCORRECTABLE"] == [1]
    facts = ex.smitable.parse(_TABLE + "WARNING: infoROM is corrupted at gpu 0000:D8:00.0\n")
    assert [d.get("nvml_errors") for d in facts["devices"]] == [None, {"inforom": "CorruptedInforom"}]
    # the same table without the warning: the GPUs' readings pass
    assert explained(_TABLE, "smi.txt").status == "pass"


def test_dcgm_healths_corrupt_infoROM_is_judged_as_nvidia_smis():
    box = "+---------------------------+------------------------------------------------------------+"
    rows = [("Overall Health", "Failure"), ("GPU", ""), ("-> 2", "Failure"), ("   -> Errors", ""),
            ("      -> InfoROM system", "Failure"), ("", "A corrupt InfoROM has been detected in GPU 2.")]
    text = "\n".join([box, "| Health Monitor Report" + " " * 67 + "|", box.replace("-", "="),
                      *(f"| {left:<25} | {right:<58} |" for left, right in rows), box]) + "\n"
    r = explained(text, "health.txt")
    assert verdict(r) == ("warn", "ECC_UNCORRECTABLE", "host"), r.summary
    assert not any("no field" in d for d in r.details)


def test_verifys_own_probe_records_a_corrupted_infoROM_and_nothing_else_of_it():
    import types

    from verify.checks.gpu import gpuprobe

    class NVMLError_CorruptedInforom(Exception):  # pynvml's own class name
        pass

    def corrupted(_h):
        raise NVMLError_CorruptedInforom("Corrupted infoROM")
    dev: dict = {"nvml_errors": {}}
    gpuprobe._inforom(dev, types.SimpleNamespace(nvmlDeviceValidateInforom=corrupted), "h0")
    assert dev["nvml_errors"] == {"inforom": "CorruptedInforom"}
    for nvml in (types.SimpleNamespace(), types.SimpleNamespace(nvmlDeviceValidateInforom=lambda _h: None)):
        dev = {"nvml_errors": {}}
        gpuprobe._inforom(dev, nvml, "h0")
        assert dev["nvml_errors"] == {}


def test_a_replayed_device_whose_nvml_answers_a_corrupted_infoROM_is_judged_on_that_alone():
    from verify.checks import gpu

    facts = {"nvml_error": "none", "devices": [{"index": 0, "pci_bus_id": "00000000:0B:00.0",
                                                "nvml_errors": {"inforom": "CorruptedInforom"}}]}
    assert verdict(gpu.judge(facts, Options())) == ("warn", "ECC_UNCORRECTABLE", "host")


# ------------------------------------------------------------------ `dcgmi nvlink --link-status`
def _link_status(*rows: str, switches: str = "    No NvSwitches found.") -> str:
    gpus = "".join(f"    gpuId {n}:\n        {row}\n" for n, row in enumerate(rows))
    return ("+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n" + gpus
            + "NvSwitches:\n" + switches + "\n\nKey: Up=U, Down=D, Disabled=X, Not Supported=_\n")


def test_dcgmis_link_status_is_read_per_gpu():
    text = _link_status("U U U U D U _ _", "U U U U U U _ _", switches="    physicalId 10:\n        U U U U")
    assert getattr(ex.kind_of(text), "name", None) == "dcgmi nvlink --link-status"
    facts = ex.dcgmlinks.parse(text)
    assert facts["devices"] == [{"index": 0, "nvlink": [True, True, True, True, False, True], "nvswitch": True},
                                {"index": 1, "nvlink": [True] * 6, "nvswitch": True}]


def test_one_link_down_beside_up_ones_in_dcgmis_listing_is_the_hosts():
    r = explained(_link_status(" ".join("U" * 17 + "D"), " ".join("U" * 18)), "links.txt")
    assert verdict(r) == ("warn", "NVLINK_DOWN", "host"), r.summary      # one read: not confirmed by a re-read


def test_every_link_down_on_gpus_of_unknown_model_is_not_assessed_never_a_pass():
    # a PCIe card without its bridge, or an SXM board with its links dead: the listing does not say which
    r = explained(_link_status(" ".join("D" * 18), " ".join("D" * 18)), "links.txt")
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host"), r.summary
    assert explained(_link_status(" ".join("U" * 12), " ".join("U" * 12)), "links.txt").status == "pass"


# ------------------------------------------------------------------ GPUs another kernel driver holds
_UNBOUND = """[   12.482113] nvidia: loading out-of-tree module taints kernel.
[   12.501937] NVRM: The NVIDIA probe routine was not called for 2 device(s).
[   12.502410] NVRM: This can occur when a driver such as:
               NVRM: nouveau, rivafb, nvidiafb or rivatv
               NVRM: was loaded and obtained ownership of the NVIDIA device(s).
[   12.503118] NVRM: No NVIDIA graphics adapter probed!
"""


def test_gpus_another_kernel_driver_holds_fail_the_host_from_the_kernel_log_alone():
    r = explained(_UNBOUND, "dmesg.txt")
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host"), r.summary
    assert "2 NVIDIA device(s)" in r.summary
    facts = ex.kernel.parse(_UNBOUND)
    assert [(e["status"], e["code"]) for e in facts["driver_errors"]] == [("probe_not_called", None)]


def test_beside_nvidia_smis_refusal_the_unbound_gpus_decide_it():
    smi = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
           "NVIDIA driver is installed and running.\n\n")
    assert verdict(explained(smi + _UNBOUND, "node.txt")) == ("fail", "DRIVER_ERROR", "host")
    # nvidia-smi's refusal alone is also what a node without GPUs prints: no GPU visible, none expected
    assert explained(smi, "node.txt").status == "skip"
    from verify.checks import gpu
    facts = {"nvml_error": smi.strip(), "driver_errors": [
        {"status": "probe_not_called", "code": None, "text": _UNBOUND.splitlines()[1], "time": None,
         "source": "kernel_log"}]}
    assert verdict(gpu.judge(facts, Options())) == ("fail", "DRIVER_ERROR", "host")


def test_the_prolog_and_a_driver_that_bound_its_gpus_are_not_moved_by_it():
    from verify.prolog import xid as xidlog
    bound = "[   12.6] nvidia-nvlink: Nvlink Core is initialized, major device number 235\n" \
            "[   12.7] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.86.15\n"
    assert ex.kernel.detect(bound) is False
    # the prolog reads only the statuses that describe a GPU's state (RM_STATUS): no GPU, no drain of its own
    assert not [f for f in xidlog.parse(_UNBOUND.splitlines()) if f.kind == "status"]
