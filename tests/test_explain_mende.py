"""Issue 35, branch mende: `verify explain`'s known mismatches mended by class, in the readers. Each class is fed its
real corpus excerpt (tests/data/real-world/<slug>/raw.txt, URL in its expected.json) and other real pastes of the
same tool cut the way the class describes, so the rule is the tool's, not the example's:
- `nvidia-smi -q` flattened onto one line by a quote (ggml-org/llama.cpp#4747): header and bus ids read, the rest not;
- `nvidia-smi -q` cut inside R525's Power Readings section (NVIDIA/nvidia-docker#1447): the section put back;
- `nvidia-smi topo -m` cut above its first rows (bytedance/flux#14): the rows read by their `X`;
- nccl-tests before `#wrong` (aws/aws-ofi-nccl#65): the `error` column judged by nccl-tests' own bound.
A cut, flattened, hostile or huge paste ends in a verdict (never a traceback), and never in a pass the text does not
prove."""
from __future__ import annotations

import re
import time

import pytest

from tests.judging import explained, raw, verdict
from verify.explain import nccltests, smi, topo

pytestmark = pytest.mark.unit

NOT_ASSESSED = ("warn", "HEALTH_NOT_ASSESSED", "host")
PASS = ("pass", None, None)
NOTHING = ("skip", "FACTS_INCOMPLETE", None)

FLATTENED = "a100-pcie-x4-535.129.03-q-d-clock-flattened-paste-sm-1410-applications-clocks-1410-equal-default-llama-cpp-multi-gpu-slowness"
POWER_CUT = "a40-x8-q-power-and-clocks-block-30w-of-300w-default-sm-1095-of-1740-applications-clocks-at-max-nvidia-docker-cgroup-thread"
TOPO_CUT = "h100-x8-topo-m-nv18-every-pair-flux-sm90-build-exception-not-supported-device-h100-80gb-hbm3-image"
ERROR_COLUMN = "p4d-2x8-a100-sxm4-40gb-nccl-2.7.8-ofi-1.1.2-efa-device-rdma-allreduce-32m-to-46m-32-to-34-busbw-healthy"
# other real pastes of the same tools, cut or flattened the way each class describes
REMAP_PENDING_Q = "a10-535-129-03-q-remapped-rows-uncorrectable-4-pending-yes-while-every-ecc-counter-reads-0-reset-required-no"
V100_Q_R470 = "v100-pcie-32gb-470.129.06-q-i-1-idle-lifetime-sbe-3-one-page-retired-none-pending-volatile-zero"
H100_NV18 = "h100-x8-topo-nv18-every-pair-no-nics-full-matrix-vllm-fp8-attention-illegal-memory-access-is-the-kernel"
A100_NV12_PAIRS = "a100-80gb-pcie-x8-slurm-c32-mem-128gb-topo-m-nv12-pairs-gpus-4-7-no-cpu-affinity-job-cpuset-on-socket-0"


def _flatten(text: str) -> str:
    """What GitHub's quote does to a paste: each run of lines joined by single spaces."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def _from(text: str, mark: str) -> str:
    """The paste cut above the first line starting with `mark`, indent aside (an excerpt that starts mid-output)."""
    lines = text.splitlines()
    return "\n".join(lines[next(n for n, line in enumerate(lines) if line.lstrip().startswith(mark)):]) + "\n"


# ------------------------------------------------------------------ nvidia-smi -q flattened onto one line by a quote
def test_a_flattened_q_reads_its_driver_and_gpu_and_warns_not_assessed_practice_real_excerpt():
    facts = smi.parse(raw(FLATTENED))
    assert (facts["driver"], facts["cuda_driver"]) == ("535.129.03", "12.2")
    assert facts["devices"] == [{"index": 0, "pci_bus_id": "00000000:4F:00.0"}]    # its fields: not read, not guessed
    assert verdict(explained(raw(FLATTENED))) == NOT_ASSESSED


def test_a_flattened_q_holding_a_fault_is_never_a_pass_practice_no_false_pass():
    """The same class on a report whose fault sits after the bus id: its keys lost their sections, so it is not read
    (warn, not assessed), and never a pass."""
    text = _flatten(raw(REMAP_PENDING_Q))
    assert "NVSMI LOG" in text and len(text.splitlines()) == 1
    facts = smi.parse(text)
    assert facts["driver"] == "535.129.03" and all(set(d) <= {"index", "pci_bus_id"} for d in facts["devices"])
    assert verdict(explained(text)) == NOT_ASSESSED


def test_one_header_key_per_line_is_no_flattened_report_practice_class_not_example():
    text = raw(V100_Q_R470)
    assert smi._unflatten(text).splitlines() == text.splitlines()      # a whole report's lines hold one mark each: left as printed


@pytest.mark.parametrize("text", [
    # cut mid-value, mid-key, or a bus id alone on the flattened line
    "==============NVSMI LOG==============\nTimestamp : Wed Jan 10 08:58:04 2024 Driver Version :",
    "==============NVSMI LOG==============\nDriver Version : 535.129.03 CUDA Vers",
    "==============NVSMI LOG==============\nAttached GPUs : 4 GPU 00000000:4F:00.0 Product Name : Evil Brand : x",
    # huge: five thousand bus ids on one line (135 KB)
], ids=["cut-value", "cut-key", "hostile-name"])
def test_a_cut_or_hostile_flattened_q_ends_in_a_verdict_practice_bad_input_one_line(text):
    r = explained(text)
    assert r.status != "pass" and r.summary and "Traceback" not in r.summary
    for dev in smi.parse(text)["devices"] or []:
        assert "name" not in dev                 # a key after a bus id on a flattened line is never read


def test_a_huge_flattened_q_is_read_in_one_pass_practice_bad_input_one_line():
    """A thousand bus ids on one 27 KB line: read once each (no line rescanned per GPU), none given a field."""
    text = "==============NVSMI LOG==============\nAttached GPUs : 4 " + "GPU 00000000:4F:00.0 x : 1 " * 1_000
    start = time.monotonic()
    assert len(smi._unflatten(text).splitlines()) == 1_003
    devices = smi.parse(text)["devices"]
    assert time.monotonic() - start < 5
    assert len(devices) == 1_000 and all(set(d) == {"index", "pci_bus_id"} for d in devices)


# ------------------------------------------------------------- nvidia-smi -q cut inside R525's Power Readings section
def test_power_lines_cut_above_their_section_are_the_power_readings_practice_real_excerpt():
    dev = smi.parse(raw(POWER_CUT))["devices"][0]
    assert (dev["power_limit_w"], dev["power_default_limit_w"], dev["power_requested_limit_w"]) == (300.0, 300.0, 300.0)
    assert verdict(explained(raw(POWER_CUT))) == PASS


def test_another_r470_report_cut_the_same_way_reads_alike_practice_class_not_example():
    dev = smi.parse(_from(raw(V100_Q_R470), "Power Management"))["devices"][0]
    assert (dev["power_limit_w"], dev["power_default_limit_w"]) == (250.0, 250.0)


def test_r530_power_lines_cut_above_their_section_stay_unplaced_practice_unknown_is_said():
    """R530's GPU and Module Power Readings share their keys (`Current Power Limit`): lines cut above either name no
    section, so no limit is taken from them (a module's budget is no GPU's)."""
    text = _from(raw(REMAP_PENDING_Q), "Power Draw")
    assert smi._cut_section(text) == text
    assert "power_limit_w" not in (smi.parse(text)["devices"] or [{}])[0]


@pytest.mark.parametrize("text", [
    "        Power Management                  : Supported\n",                       # cut to its first line
    "        Enforced Power Limit : 99999999999999999999.00 W\n    Clocks\n        SM : 1095 MHz\n",
], ids=["truncated", "hostile-watts"])
def test_a_cut_or_hostile_power_section_ends_in_a_verdict_practice_bad_input_one_line(text):
    r = explained(text)
    assert r.status != "pass" and "Traceback" not in r.summary
    assert "power_limit_w" not in {k for d in smi.parse(text)["devices"] or [] for k in d}


def test_a_huge_cut_power_section_is_placed_in_one_pass_practice_bad_input_one_line():
    text = "        Power Management : Supported\n" * 20_000 + "    Clocks\n"
    start = time.monotonic()
    assert smi._cut_section(text).startswith("    Power Readings\n")
    assert time.monotonic() - start < 2


# ----------------------------------------------------------------- nvidia-smi topo -m cut above its first rows
def test_a_matrix_cut_above_its_rows_reads_them_by_their_x_practice_real_excerpt():
    facts = topo.parse(raw(TOPO_CUT))
    assert [d["index"] for d in facts["devices"]] == list(range(8))
    assert all(d["nvlink"] == [True] * 18 and d["nvswitch"] for d in facts["devices"])
    assert verdict(explained(raw(TOPO_CUT))) == PASS


def test_a_switched_matrix_cut_at_any_row_reads_as_the_whole_one_practice_class_not_example():
    whole = topo.parse(raw(H100_NV18))["devices"]
    for first in range(1, 7):
        cut = topo.parse(_from(raw(H100_NV18), f"GPU{first} "))["devices"]
        assert [(d["index"], d["nvlink"]) for d in cut] == [(d["index"], d["nvlink"]) for d in whole]


def test_a_directly_wired_matrix_cut_above_leaves_the_cut_rows_unread_practice_no_false_pass():
    """NVLink bridge pairs (A100 PCIe, NV12): a cut row's bonds to rows also cut are not shown, so its links are unread
    (no pass rests on them) and the rows shown keep what they show."""
    devices = topo.parse(_from(raw(A100_NV12_PAIRS), "GPU4 "))["devices"]
    assert all("nvlink" not in d for d in devices if d["index"] < 4)
    assert verdict(explained(_from(raw(A100_NV12_PAIRS), "GPU4 "))) != PASS


@pytest.mark.parametrize("text", [
    "GPU99999999     X      NV18\nGPU100000000    NV18     X\n",                       # no node has such GPUs
    "GPU5    NV18    NV18    NV18    NV18    NV18     X      NV18\n",                    # one row: no matrix
    "".join(f"GPU{i}    " + "    ".join("X" if j == i else "NV18" for j in range(40)) + "\n" for i in range(3, 40)),
], ids=["hostile-index", "truncated", "huge-bond"])
def test_a_cut_hostile_or_huge_matrix_ends_in_a_verdict_practice_bad_input_one_line(text):
    r = explained(text)
    assert r.status != "pass" and "Traceback" not in r.summary


# --------------------------------------------------------- nccl-tests' `error` column (before #wrong), by its own bound
def test_an_error_column_within_nccl_tests_bound_is_no_wrong_element_practice_real_excerpt():
    facts = nccltests.parse(raw(ERROR_COLUMN))
    assert facts["world_size"] == 16 and facts["collective"] == "all_reduce"
    assert [s["wrong"] for s in facts["sizes"]] == [0] * 7
    assert verdict(explained(raw(ERROR_COLUMN))) == PASS


@pytest.mark.parametrize(("deviation", "judged"), [
    ("1e-04", True),       # 1.5e-4 <= 1e-5 x 15: within what nccl-tests itself counts right
    ("2e-04", False),      # beyond it: nccl-tests counted the row out of bounds, and its count is not shown
    ("1e+300", False),
])
def test_a_deviation_beyond_the_bound_is_never_read_as_right_practice_no_false_pass(deviation, judged):
    text = raw(ERROR_COLUMN).replace("5e-07", deviation)
    facts = nccltests.parse(text)
    assert bool(facts["sizes"]) is judged
    assert (verdict(explained(text)) == PASS) is judged


def test_for_integers_the_error_column_is_not_judged_practice_unknown_is_said():
    integers = re.sub(r"\bfloat\b", "int32", raw(ERROR_COLUMN))
    assert nccltests.parse(integers)["sizes"] is None      # nccl-tests bounds integers at 1e-200: any deviation counts


@pytest.mark.parametrize("cut", [0.5, 0.8], ids=["cut-mid-table", "cut-mid-row"])
def test_a_cut_error_table_ends_in_a_verdict_practice_bad_input_one_line(cut):
    text = raw(ERROR_COLUMN)
    r = explained(text[:int(len(text) * cut)])
    assert r.status in ("pass", "skip", "warn") and "Traceback" not in r.summary


# ----------------------------------------------- found on the way: one long line searched once per bus id (GPUd's RMA)
def test_a_long_line_of_bus_ids_is_searched_once_practice_bad_input_one_line():
    """gpudrma's bus id and product name were `[^\\n]*?` apart, so each of a line's bus ids rescanned the line to its
    end (2,000 bus ids: 2 s; a 1 MB line: minutes). GPUd puts 90 characters between them: the gap is bounded."""
    from verify.explain import gpudrma
    line = "GPU 00000000:4F:00.0 x " * 20_000
    start = time.monotonic()
    assert not gpudrma.detect(line)
    assert time.monotonic() - start < 1
    real = ('nvidia-smi GPU GPU 00000000:E1:00.0 failed to determine if it qualifies for RMA: invalid remapping failure '
            'occurred value: "", GPU product name "NVIDIA GeForce RTX 4090" does not support row remapping')
    assert gpudrma.parse(line + "\n" + real)["devices"][0]["pci_bus_id"] == "00000000:E1:00.0"
