"""Hostile input to the parsers and rules added on the day of batch 124 (fuzz70): `verify explain`'s fi_info, fabric
manager, DCGM scrape, nccl-tests and CUDA parsers, and replayed facts with the new fields. Each ends in facts the
contract takes (or none), in bounded time, never a traceback; no invalid record passes; a host fault survives a
healthy tool's output pasted beside it."""
from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import ROOT
from tests.judging import contract, explained
from verify import explain as ex
from verify import figures, judging
from verify.checks import CHECKS
from verify.explain import dcgm, fiinfo, fmstatus, nccltests, peermem
from verify.options import Options

pytestmark = pytest.mark.unit

NEW = ("Libfabric's fi_info (its providers)", "the NVIDIA Fabric Manager service (systemctl status, its journal)",
       "DCGM field values", "nccl-tests output", "CUDA initialisation error", "CUDA error of a running program")
# numbers as hostile text writes them: another script's digits (`²` passes str.isdigit, int() refuses it), int64's
# edges, beyond a float, negative, NaN and infinity, 5,000 digits (past int()'s limit)
NUMBERS = st.sampled_from(["0", "1", "²", "٣", "-1", "-0", "nan", "NaN", "inf", "-inf", "1e400", "0.5", "9223372036854775807",
                           "9223372036854775808", "-9223372036854775809", "18446744073709551616", "9" * 5000, "4096",
                           "100001", "1e-300", ""])
TEMPLATES = (
    "$ fi_info -p {n}", "FI_PROVIDER={n} fi_info", "fi_info -l", "provider: {n}", "    fabric: efa", "{n}:",
    "    version: {n}", "fi_getinfo: -61 (No data available)", "provider: efa;{n}",
    "● nvidia-fabricmanager.service - NVIDIA fabric manager service", "     Active: failed (Result: {n})",
    "Nov 01 h systemd[{n}]: Started nvidia-fabricmanager.service.", "[ERROR] [tid {n}] fabric manager failed",
    "request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do "
    "[NV_WARN_NOTHING_TO_DO]", "Successfully configured all the available NVSwitches",
    'DCGM_FI_DEV_XID_ERRORS{{gpu="{n}",UUID="GPU-1",err_code="{n}"}} {n}', 'DCGM_EXP_XID_ERRORS_COUNT{{gpu="0",xid="{n}"}} {n}',
    'DCGM_FI_DEV_GPU_TEMP{{gpu="{n}",pci_bus_id="00000000:07:00.0"}} {n}', 'DCGM_FI_DEV_FB_FREE{{gpu="{n}"}} 1',
    "| DCGM_FI_DEV_ECC_DBE_VOL_TOTAL | {n} |", "ECC_SBE_VOL_TOTAL rising at {n}/s",
    "# Collective test starting: all_reduce_perf", "#  Rank  {n} Group  0 Pid  1 on h device  0 [0x07] NVIDIA A100",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
    "     {n}       2097152     float     sum      -1    {n}  132.06  132.10      {n}    63.11  132.92  132.61      0",
    "[src/host/x.cpp:{n}] cuda failed with an illegal memory access was encountered",
    "RuntimeError: CUDA error: uncorrectable ECC error encountered", "cuInit returned {n}", "# nvidia-smi -L",
    "GPU {n}: NVIDIA H100 80GB HBM3 (UUID: GPU-{n})",
)
LINE = st.one_of(st.tuples(st.sampled_from(TEMPLATES), NUMBERS).map(lambda t: t[0].format(n=t[1])),
                 st.text(max_size=40), st.sampled_from(["", "\0", "\r", "\ufffd", "`", "{" * 50, "  "]))
TEXT = st.lists(LINE, min_size=1, max_size=30).map(lambda lines: "\r\n".join(lines) if "\r" in lines[0] else "\n".join(lines))


def _kind(name: str) -> ex.Kind:
    return next(k for k in ex.KINDS if k.name == name)


@settings(max_examples=60, deadline=2000)
@given(TEXT)
def test_the_new_parsers_never_raise_and_give_facts_the_contract_takes(text):
    seen = ex.views(text)
    for kind in ex.KINDS:
        if kind.name in NEW and kind.detect(seen[kind.prefixed]):
            assert contract(kind, kind.parse(seen[kind.prefixed])) == [], kind.name
    result = ex.explain_text(text, "fuzz.txt", Options())
    assert result.code != "FACTS_INVALID" or result.status != "pass"


@pytest.mark.parametrize("text", [
    'DCGM_FI_DEV_FB_FREE{gpu="²",UUID="GPU-1"} 5',                         # str.isdigit took it, int() raised
    'DCGM_FI_DEV_GPU_TEMP{gpu="²"} 40',
    'DCGM_FI_DEV_XID_ERRORS{gpu="0",err_code="²"}',
    'DCGM_FI_DEV_FB_FREE{gpu="99999999999999999999999"} 5',                # an index past 4095: the contract refused
    'DCGM_FI_DEV_XID_ERRORS{gpu="0",err_code="99999999999999999999"}',     # an Xid past 100,000
    'DCGM_EXP_XID_ERRORS_COUNT{gpu="0",xid="99999999999999999999"} 1',
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL rising at " + "9" * 400 + "/s",         # round(inf) raised
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL rising at 99999999999999999999999999999999/s",
])
def test_hostile_dcgm_labels_and_rates_are_left_unread_never_a_traceback(text):
    facts = dcgm.parse(text)
    assert contract(_kind("DCGM field values"), facts) == []
    assert ex.explain_text(text + "\n", "x", Options()).code != "FACTS_INVALID"


_HEAD = ("# Collective test starting: all_reduce_perf\n#  Rank  0 Group  0 Pid  1 on h device  0 [0x07] NVIDIA A100\n"
         "#  Rank  1 Group  0 Pid  1 on h device  1 [0x08] NVIDIA A100\n#       size         count      type   redop    "
         "root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n")


@pytest.mark.parametrize("row", [
    "8388608 2097152 float sum -1 63.52 132.06 132.10 1e400 63.11 132.92 132.61 0",      # int(inf) raised
    "9" * 5000 + " 2097152 float sum -1 63.52 132.06 132.10 0 63.11 132.92 132.61 0",     # int() of 5,000 digits raised
    "8388608 2097152 float sum -1 1e400 132.06 132.10 0 63.11 132.92 132.61 0",          # time inf: contract refused
    "8388608 2097152 float sum -1 63.52 132.06 132.10 -5 63.11 132.92 132.61 0",         # -5 wrong: contract refused
    "8388608 2097152 float sum -1 63.52 132.06 132.10 0.5 63.11 132.92 132.61 0",        # 0.5 wrong read as 0
])
def test_an_nccl_tests_row_no_program_prints_is_no_row(row):
    facts = nccltests.parse(_HEAD + row + "\n")
    assert facts["sizes"] is None and contract(_kind("nccl-tests output"), facts) == []
    assert ex.explain_text(_HEAD + row + "\n", "x", Options()).status != "pass"


@pytest.mark.parametrize("listing", ["provider: ééé", "provider: " + "a" * 40, "provider: efa;ﬀ"])
def test_fi_info_names_no_provider_is_spelt_by_are_left_out(listing):
    facts = fiinfo.parse(f"$ fi_info\n{listing}\n    fabric: efa\n")
    assert all(len(p) <= 32 and p.isascii() for p in facts.get("ofi_providers") or [])
    assert figures.problems(facts, CHECKS["fabric"].figures) == []


def test_blank_lines_are_read_in_linear_time():
    """`^\\s*` under MULTILINE ran over every blank line below each line start: 2e4 blank lines took 14 s in the fabric
    manager's detect (the journal's view keeps blank lines), 0.7 s in peermem's."""
    text = "\n" * 40000 + "x\n"
    assert not fmstatus.detect(text) and not peermem.detect(text) and fiinfo.parse(text) == {}
    assert peermem.parse(text)["peermem"] is None         # how long: `python -m verify.explain.bench`
    unit = "\n" * 40000 + "● nvidia-fabricmanager.service - NVIDIA fabric manager service\n\n     Active: failed (Result: exit-code)\n"
    assert fmstatus.parse(unit)["fabric_manager"]["state"] == "failed"


def _record(check: str, **changes: Any) -> dict[str, Any]:
    folder = {"fabric": "g4dn-8xlarge-efa-installer-1.43.0-fi-info-efa-and-efa-direct-on-rdmap0s29-rdm-port-active-link-up-"
                        "pingpong-question",
              "nccl": "a100-x8-nvlink-nccl-tests-sendrecv-perf-128m-to-1g-195-gbs-busbw-zero-wrong"}[check]
    facts = json.loads((ROOT / "tests/data/real-world" / folder / "facts" / f"{check}.json").read_text())["facts"]
    return {**copy.deepcopy(facts), **changes}


@pytest.mark.parametrize("collective", ["ALL_REDUCE", "all-reduce", "foo", "", " sendrecv", "all_reduce_perf"])
def test_a_collective_no_nccl_tests_program_is_refused(collective):
    r = judging.judge(CHECKS["nccl"], _record("nccl", collective=collective), Options(), source="nccl.json")
    assert (r.status, r.code) == ("fail", "FACTS_INVALID") and "collective" in r.summary


@pytest.mark.parametrize("change", [{"ofi_providers": 5}, {"ofi_providers": ["ééé"]}, {"ofi_providers": [""]},
                                    {"ofi_query": ["efa"]}, {"instance_type": " p5.48xlarge "}, {"instance_type": 48},
                                    {"instance_type": "p5 48xlarge"}, {"ofi_providers": ["efa", 7]}])
def test_new_fabric_fields_of_the_wrong_shape_are_refused(change):
    r = judging.judge(CHECKS["fabric"], _record("fabric", **change), Options(), source="fabric.json")
    assert (r.status, r.code) == ("fail", "FACTS_INVALID")


def test_an_instance_type_in_any_case_is_the_same_type():
    rows = [judging.judge(CHECKS["fabric"], _record("fabric", instance_type=t), Options(), source="fabric.json")
            for t in ("p5.48xlarge", "P5.48XLARGE", "ml.P5.48xlarge")]
    assert {(r.status, r.code) for r in rows} == {("warn", "FABRIC_ADAPTERS_MISSING")}


def test_rows_of_the_whole_message_are_no_all_gather_s():
    """An all_gather's count is one rank's share: rows whose count is the whole message contradict it."""
    facts = _record("nccl", collective="all_gather")
    r = judging.judge(CHECKS["nccl"], facts, Options(), source="nccl.json")
    assert (r.status, r.code) == ("fail", "FACTS_INVALID")


def test_a_facts_folder_with_a_collective_outside_the_list_is_one_line_never_a_traceback(tmp_path, capsys):
    from verify.cli import main
    (tmp_path / "host.json").write_text(json.dumps({"facts_schema": 3, "checks": ["nccl"]}))
    (tmp_path / "nccl.json").write_text(json.dumps({"check": "nccl", "facts_schema": 3,
                                                     "facts": _record("nccl", collective="foo")}))
    assert main(["--from-facts", str(tmp_path)]) == 1          # a check failed (FACTS_INVALID), never a pass
    out = " ".join(capsys.readouterr().out.split())
    assert "FACTS_INVALID" in out and "collective is 'foo', not one of" in out and "Traceback" not in out


def test_a_pass_never_stands_over_a_part_verify_could_not_read():
    """Two hosts' pastes in one file: the H100 node's table with GPU 0's uncorrectable ECC, then an RTX 5070's table
    and -q. Read as one list, GPU index 0 is there twice (FACTS_INVALID), and the 5070's -q alone passed: the file
    was a pass over a fault it showed. verify's own parser trouble now outranks a pass (never a fault)."""
    corpus = ROOT / "tests" / "data" / "real-world"
    text = "".join((corpus / slug / "raw.txt").read_text(encoding="utf-8") for slug in (
        "h100x8-gpu-operator-allocatable-7-of-8-xid94-gpu0-volatile-uncorr-ecc-2-plugin-keeps-it-unhealthy",
        "rtx5070-freebsd-575.64.03-table-and-q-p0-39c-29w-of-250w-no-clock-event-reason-active-cuda-version-n-a-linux-shim"))
    r = explained(text)
    assert r.status != "pass", r.summary


# Older parsers read absurd numbers into facts the contract refused (FACTS_INVALID, "verify bug"): each now reads a
# figure only in the range verify/figures.py holds (figures.within), else leaves it null, never a traceback
_SMI = ("==============NVSMI LOG==============\nGPU 00000000:07:00.0\n    Product Name : NVIDIA A100\n    PCI\n"
        "        GPU Link Info\n            PCIe Generation\n                Current : {n}\n")
_IB = "CA 'mlx5_0'\n\tCA type: MT4123\n\tPort {p}:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: {n}\n"


@pytest.mark.parametrize("code", ["9" * 30, "100001", "9" * 5000])
def test_an_xid_past_the_facts_range_is_no_event(code):
    from verify.explain import kernel
    for line in (f"[ 1.0] NVRM: Xid (PCI:0000:3b:00): {code}, pid=1, name=x", f"XidCriticalError: Xid={code} on Device=GPU-1",
                 f"[ 1.0] nvidia-nvswitch3: SXid (PCI:0000:3b:00.0): {code}, Non-fatal"):
        facts = kernel.parse(line + "\n")
        assert not facts["xid_events"] and not facts["sxid_events"]
        assert contract(_kind("kernel log (NVRM Xid)"), facts) == [], line
    facts = kernel.parse(f"[ 1.0] NVRM: Xid (PCI:0000:3b:00): {code}, x\n[ 2.0] NVRM: Xid (PCI:0000:3b:00): 79, x\n")
    assert [e["xid"] for e in facts["xid_events"]] == [79]


@pytest.mark.parametrize(("port", "rate"), [("1", "9223372036854775807"), ("1", "9" * 400), ("1", "1.2.3 Gb/sec"),
                                            ("99999", "100"), ("9" * 5000, "100")])
def test_an_ib_rate_or_port_past_the_facts_range_is_unknown(port, rate):
    from verify.explain import ib
    facts = ib.parse(_IB.format(p=port, n=rate))
    assert figures.problems(facts, CHECKS["fabric"].figures) == []
    assert [p["state"] for a in facts["adapters"] for p in a["ports"]] == ["ACTIVE"]
    assert ex.explain_text(_IB.format(p=port, n=rate), "x", Options()).code != "FACTS_INVALID"


@pytest.mark.parametrize("value", ["16", "0", "-1", "9" * 30, "9" * 5000])
def test_an_smi_figure_past_the_facts_range_is_unknown(value):
    from verify.explain import smi
    facts = smi.parse(_SMI.format(n=value))
    assert facts["devices"] and "pcie_gen" not in facts["devices"][0]
    assert figures.problems(facts, CHECKS["gpu"].figures) == []
    assert smi.parse(_SMI.format(n="4"))["devices"][0]["pcie_gen"] == 4
    assert ex.explain_text(_SMI.format(n=value), "x", Options()).code != "FACTS_INVALID"
