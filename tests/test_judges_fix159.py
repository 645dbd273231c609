# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35, batches 159 (GPU instances on clouds) and 162 (kernel-log Xid excerpts): the classes their blind
translations showed the judges or `verify explain` getting wrong.
- the NVIDIA Container Toolkit's prestart hook, on the host, failing a query of a loaded driver
  (`nvidia-container-cli: detection error: driver error: timed out`, `driver rpc error`): the host's driver or a GPU
  behind it does not answer, fail DRIVER_ERROR (host) whatever was expected, as its `driver not loaded` is;
- an nvidia-smi table quoted as an indented block (each row led by blanks): its rows are read as any table's;
- a poster's digest of kernel-log Xid records (`08-04 06:43:55 Xid 31 GPC1 ... FAULT_PDE ACCESS_TYPE_VIRT_READ`): one
  Xid event per line, judged by the catalog; `Xid 79` in a sentence stays prose.
Real lines are quoted from corpus entries (by slug)."""
from __future__ import annotations

import pytest

from tests.judging import explained, raw, replayed, verdict
from verify.checks.gpu.node import why_no_gpu
from verify.explain import nvml, smitable, xiddigest

pytestmark = pytest.mark.unit

# ---------------------------------------------------------- the toolkit's hook: a driver that does not answer
A100_HOOK = "aws-a100-8gpu-k8s-node-gpu-operator-crashloop-nvidia-container-cli-detection-error-driver-timed-out"


def test_the_toolkit_hook_timing_out_on_the_driver_is_the_hosts_driver_error():
    text = raw(A100_HOOK)
    line = "nvidia-container-cli: detection error: driver error: timed out: unknown"
    assert f"kubelet[33460]: {line}" in text
    assert nvml.error_of(text) == line
    cause, _, owner, code = why_no_gpu({"nvml_error": line})
    assert (owner, code) == ("host", "DRIVER_ERROR") and "hung or failing" in cause
    assert replayed(A100_HOOK) == {"gpu": ("fail", "DRIVER_ERROR", "host")}
    assert verdict(explained(text)) == ("fail", "DRIVER_ERROR", "host")


@pytest.mark.parametrize("line", [
    "nvidia-container-cli: initialization error: driver rpc error: timed out: unknown",
    "nvidia-container-cli: detection error: driver error: failed to process request",
])
def test_the_same_hook_failing_its_driver_query_otherwise_is_the_same_fault(line):
    assert why_no_gpu({"nvml_error": line})[2:] == ("host", "DRIVER_ERROR")
    assert verdict(explained(f"stderr: {line}\n")) == ("fail", "DRIVER_ERROR", "host")


def test_a_process_of_its_own_refusing_nvml_is_not_the_hook():
    # NVML's own refusal in a container stays "no GPU visible" (no code): the hook rule names the toolkit only
    assert why_no_gpu({"nvml_error": "Failed to initialize NVML: Unknown Error"})[3] is None
    assert why_no_gpu({"nvml_error": "driver error: timed out"})[3] is None


# ---------------------------------------------------------- an indented nvidia-smi table
RTX_PRO = "rtx-pro-4500-blackwell-bottlerocket-r595-595.71.05-smi-table-p8-34c-17w-of-165w-ecc-0-kmod-6.1-driver-smoke-test"


def test_an_indented_smi_table_is_read_as_any_table():
    text = raw(RTX_PRO)
    assert "   |   0  NVIDIA RTX PRO 4500 Blac...    On  |   00000000:33:00.0 Off |                    0 |" in text
    [dev] = smitable.parse(text)["devices"]
    # the name nvidia-smi cut is no name (never completed by a guess); the rest of the rows is read
    assert "name" not in dev
    assert (dev["temperature_c"], dev["power_w"], dev["power_limit_w"], dev["ecc_volatile_uncorrectable"]) == \
        (34.0, 17.0, 165.0, 0)
    assert verdict(explained(text)) == ("pass", None, None)


# ---------------------------------------------------------- a poster's digest of kernel-log Xids
GB10 = "gb10-dgx-spark-vllm-0.27.1-mtp-async-kern-log-digest-xid31-fault-pde-virt-read-gpc1-same-race-as-rtx3090-job"


def test_a_digest_of_kernel_log_xids_is_read_one_event_a_line():
    text = raw(GB10)
    assert text.startswith("08-04 06:43:55 Xid 31 GPC1 GPCCLIENT_T1_9  @ 0xede3_7fa00000  FAULT_PDE ACCESS_TYPE_VIRT_READ")
    [event] = xiddigest.events(text)
    assert (event["xid"], event["time"], event["pci_bus_id"]) == (31, "08-04 06:43:55", None)
    assert verdict(explained(text)) == ("warn", "XID_ERROR", "job")
    two = text + "08-19 11:02:10 Xid 31 GPC1 GPCCLIENT_T1_3  @ 0xedf0_12c00000  FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n"
    assert [e["xid"] for e in xiddigest.events(two)] == [31, 31]


def test_a_kernel_record_without_its_nvrm_prefix_is_read_with_its_gpu():
    # the same record cut at `NVRM: ` (a digest that kept the rest of the line), and a digest naming the address
    [event] = xiddigest.events("08-04 06:43:55 Xid (PCI:0000:0a:00): 31, pid=1234, name=VLLM::EngineCor, Ch 00000002\n")
    assert (event["xid"], event["pci_bus_id"], event["time"]) == (31, "0000:0a:00", "08-04 06:43:55")
    [event] = xiddigest.events("Aug  4 06:43:55 Xid 79 (PCI:0000:3b:00) GPU has fallen off the bus\n")
    assert event["xid"] == 79
    assert verdict(explained("Aug  4 06:43:55 Xid 79 (PCI:0000:3b:00) GPU has fallen off the bus\n"))[::2] == \
        ("fail", "host")


@pytest.mark.parametrize("text", [
    "Xid 79 means the GPU has fallen off the bus; see the docs.\n",
    "Xid 31 is usually an application bug\n",
    "The guide says `Xid 48 DBE FAULT_PDE` is rare.\n",
])
def test_xid_words_in_prose_are_no_digest(text):
    assert xiddigest.events(text) == []
