# mypy: disable-error-code="arg-type, typeddict-item, index"
# (judges take their TypedDict facts; these tests hand them partial facts, as a JSON record would)
"""verify/FACTS.md and verify/facts/ say the same, field for field; schema 3 gives each value one meaning.

FACTS.md's `### `TypedDict`` tables are parsed and compared with the TypedDicts' keys and types; every TypedDict a
check's facts reach is documented; the one rule for older records is the table FACTS.md shows; a misspelt key is
refused in one line naming it; a record whose health is all unknown warns and is never called healthy.
"""
from __future__ import annotations

import json
import re
import types
import typing
from typing import Any, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from tests.helpers import ROOT, run_cli
from tests.verify_handmade import CPU_BUILD, gpu_facts, nccl_facts
from verify import facts as facts_module
from verify import factschema, judging
from verify.checks import CHECKS, TABLE, gpu, nccl
from verify.checks.nccl import probing as nccl_probing
from verify.options import Options

pytestmark = pytest.mark.unit

FACTS_MD = ROOT / "verify" / "FACTS.md"


def render(kind: Any) -> str:
    """An annotation in FACTS.md's notation: `str | null`, `list[NvmlDevice] | null`, `dict[str, str]`."""
    if get_origin(kind) in (typing.Union, types.UnionType):
        arms = [render(a) for a in get_args(kind) if a is not type(None)]
        return " | ".join(arms + (["null"] if type(None) in get_args(kind) else []))
    if get_origin(kind) is list:
        return f"list[{render(get_args(kind)[0])}]"
    if get_origin(kind) is dict:
        return "dict[" + ", ".join(render(a) for a in get_args(kind)) + "]"
    if is_typeddict(kind):
        return str(kind.__name__)
    return {str: "str", int: "int", float: "float", bool: "bool", Any: "any"}[kind]


def documented() -> dict[str, dict[str, str]]:
    """TypedDict name -> {field: type} from FACTS.md's `### `Name`` tables (`\\|` is a | inside a cell)."""
    tables: dict[str, dict[str, str]] = {}
    current = None
    for line in FACTS_MD.read_text(encoding="utf-8").splitlines():
        if m := re.fullmatch(r"### `(\w+)`", line.strip()):
            current = m.group(1)
            tables[current] = {}
        elif current and (m := re.fullmatch(r"\| `(\w+)` \| (.+?) \| .*\|", line.strip())):
            assert m.group(1) not in tables[current], f"{current}.{m.group(1)} documented twice"
            tables[current][m.group(1)] = m.group(2).replace("\\|", "|").strip()
        elif line.startswith("## "):
            current = None
    return tables


def reachable(kind: Any, seen: dict[str, Any]) -> dict[str, Any]:
    seen[kind.__name__] = kind
    for hint in get_type_hints(kind).values():
        inner, _ = factschema._declared(hint)
        if inner is not None and inner.__name__ not in seen:
            reachable(inner, seen)
    return seen


def test_facts_md_and_facts_py_say_the_same_field_for_field():
    tables = documented()
    kinds: dict[str, Any] = {}
    for check in TABLE:
        if check.facts_type is not None:
            reachable(check.facts_type, kinds)
    assert {"GpuFacts", "NvmlDevice", "XidEvent", "MigDevice", "NcclFacts", "SizeRow", "FabricFacts", "TrainFacts",
            "TrainRank", "TrainStep"} <= set(kinds)
    for name, kind in kinds.items():
        assert name in tables, f"{name} (verify/facts/) has no table in FACTS.md"
        typed = {k: render(v) for k, v in get_type_hints(kind).items()}
        assert tables[name] == typed, (name, set(tables[name].items()) ^ set(typed.items()))
    for name in tables:
        assert getattr(facts_module, name, None) is not None, f"FACTS.md documents {name}, verify/facts/ has no such type"


def test_the_one_rule_for_older_records_is_the_table_facts_md_shows():
    text = FACTS_MD.read_text(encoding="utf-8")
    section = text[text.index("## Older records"):text.index("## gpu facts")]
    for check, rules in factschema.UPGRADE.items():
        for path, value, _ in rules:
            row = next((line for line in section.splitlines() if f"`{path}`" in line and line.startswith(f"| {check} ")),
                       None)
            assert row is not None, f"{check} {path} is upgraded but not in FACTS.md's table"
            shown = f"0x{value:X}" if isinstance(value, int) and value > 255 else json.dumps(value)
            assert f"`{shown}`" in row, (row, shown)


def test_an_old_record_is_read_as_schema_3_and_a_new_one_as_it_is():
    old = {"torch": "2.9.0", "torch_cuda": None, "nvml_error": None, "cuda_visible_devices": None,
           "devices": [{"index": 0, "nvlink": None, "throttle_reasons": 1}, {"index": 1}]}
    new = factschema.upgrade("gpu", old, 2)
    assert new["torch_cuda"] == "none" and new["nvml_error"] == "none" and new["cuda_visible_devices"] == "unset"
    assert new["devices"][0] == {"index": 0, "nvlink": [], "throttle_reasons": 1, "throttle_reasons_read": 0x1FF}
    assert "throttle_reasons_read" not in new["devices"][1] and old["devices"][0]["nvlink"] is None   # a copy
    assert factschema.upgrade("gpu", {"torch": None, "torch_cuda": None}, 1)["torch_cuda"] is None
    assert factschema.upgrade("gpu", {"torch": "2.5.1+cu124", "torch_cuda": None}, 2)["torch_cuda"] is None
    assert factschema.upgrade("gpu", old, 3) is old
    assert factschema.upgrade("nccl", {"nodes": None, "memlock_bytes": None, "error": None}, 2) == {
        "nodes": None, "memlock_bytes": "unlimited", "error": "none"}
    assert factschema.upgrade("nccl", {"nodes": None, "mode": "2 local process(es)"}, 2)["nodes"] == 1


@pytest.mark.parametrize("where,change,needle", [
    ("gpu", lambda f: f.update(nvml_eror="none"), "nvml_eror"),
    ("gpu", lambda f: f["devices"][2].update(temprature_c=30), "devices[2].temprature_c"),
    ("gpu", lambda f: f["perf"][0]["pcie_under_load"].update(wdth=16), "perf[0].pcie_under_load.wdth"),
    ("gpu", lambda f: f.update(xid_events=[{"xid": 79, "idx": 1}]), "xid_events[0].idx"),
    ("nccl", lambda f: f["sizes"][0].update(bus_bw=1.0), "sizes[0].bus_bw"),
    ("nccl", lambda f: f["nccl_log"].update(netwrk="IB"), "nccl_log.netwrk"),
])
def test_a_misspelt_key_is_refused_in_one_line_naming_it(where, change, needle):
    facts = gpu_facts() if where == "gpu" else nccl_facts()
    change(facts)
    replayed = judging.judge(CHECKS[where], facts, Options(), source=f"r/{where}.json")
    assert (replayed.status, replayed.code) == ("fail", "FACTS_INVALID") and needle in replayed.summary
    assert "\n" not in replayed.summary
    live = judging.judge(CHECKS[where], facts, Options())
    assert (live.status, live.code) == ("fail", "MEASUREMENT_INVALID") and needle in live.summary


@pytest.mark.host
def test_a_misspelt_key_in_a_record_is_refused_through_the_cli(tmp_path):
    d = tmp_path / "facts"
    d.mkdir()
    (d / "host.json").write_text(json.dumps({"facts_schema": 3, "checks": ["gpu"], "hostname": "n"}))
    facts = gpu_facts()
    facts["devices"][0]["ecc_volatile_uncorectable"] = 0
    (d / "gpu.json").write_text(json.dumps({"check": "gpu", "facts_schema": 3, "facts": facts, "result": None}))
    proc = run_cli("--from-facts", str(d), "--json", str(tmp_path / "r.json"), module="verify", timeout=60)
    check = json.loads((tmp_path / "r.json").read_text())["checks"][0]
    assert proc.returncode == 1 and check["code"] == "FACTS_INVALID"
    assert "devices[0].ecc_volatile_uncorectable" in check["summary"]


HEALTH = ("ecc", "ecc_volatile_uncorrectable", "ecc_aggregate_uncorrectable", "ecc_sram_uncorrectable",
          "ecc_dram_uncorrectable", "retired_pages_pending", "row_remap", "recovery_action", "throttle_reasons",
          "throttle_reasons_read", "samples", "pcie_gen", "pcie_width", "pcie_gen_max", "pcie_width_max",
          "pcie_gen_gpu_max", "nvlink", "nvlink_errors", "temperature_c", "temperature_slowdown_c",
          "memory_temperature_c", "memory_temperature_max_c", "power_w", "power_limit_w", "power_default_limit_w",
          "sm_clock_mhz", "sm_clock_max_mhz")


def _blind(unsupported: bool) -> dict:
    facts = gpu_facts(2)
    facts.update(perf=None, sdc=None)
    for dev in facts["devices"]:
        for key in HEALTH:
            dev[key] = None
            if unsupported:
                dev["unsupported"][key] = "NotSupported"
    return facts


def test_a_gpu_with_every_health_field_unknown_warns_and_is_never_called_healthy():
    r = gpu.judge(_blind(False), Options())
    assert (r.status, r.code) == ("warn", "HEALTH_NOT_ASSESSED") and "healthy" not in r.summary.replace("not healthy", "")
    assert "not assessed" in r.summary and "ECC" in r.summary and "temperature" in r.summary
    ok = gpu.judge(_blind(True), Options())          # the GPU does not have these fields: assessed, no alarm
    assert ok.status == "pass" and "not assessed" not in ok.summary, ok.summary


def test_what_was_not_read_is_named_in_a_passing_summary():
    facts = gpu_facts(2)
    for dev in facts["devices"]:
        dev.update(temperature_c=None, temperature_slowdown_c=None, pcie_gen=None, pcie_width=None)
    facts["perf"] = facts["sdc"] = None
    r = gpu.judge(facts, Options())
    assert r.status == "pass" and "healthy" not in r.summary
    assert "not assessed: temperature (all 2 devices), PCIe link (all 2 devices)" in r.summary, r.summary
    assert "healthy" in gpu.judge(gpu_facts(), Options()).summary


def test_explicit_nothing_differs_from_unknown():
    cpu = gpu.judge({**gpu_facts(), "torch_cuda": "none", "devices": [], **CPU_BUILD}, Options())
    assert (cpu.code, cpu.owner) == ("GPU_NOT_VISIBLE", "image") and "CPU build" in cpu.summary
    unknown = gpu.judge({**gpu_facts(), "torch_cuda": None}, Options())
    assert unknown.status == "pass" and "CPU build" not in unknown.summary
    four = {**gpu_facts(), "torch_devices": 4, "capabilities": ["9.0"] * 4}
    for key in ("kernels", "perf", "sdc"):
        four[key] = four[key][:4]
    assert gpu.judge(four, Options()).status == "fail"                                   # unset: 4 of 8 is wrong
    assert gpu.judge({**four, "cuda_visible_devices": None}, Options()).status == "warn"  # unknown: it may hide them
    r = nccl.judge({**nccl_facts(), "memlock_bytes": "unlimited"}, Options())
    assert r.status == "pass" and any("memlock unlimited" in d for d in r.details)
    # nodes unknown: low for one node warns (the ranks may span nodes); low even across nodes fails
    unknown_nodes = nccl.judge({**nccl_facts(peak=100.0), "nodes": None}, Options())
    assert (unknown_nodes.status, unknown_nodes.code) == ("warn", "BANDWIDTH_LOW"), unknown_nodes.summary
    assert "nodes not recorded" in unknown_nodes.summary
    assert nccl.judge({**nccl_facts(peak=100.0), "nodes": 1}, Options()).status == "fail"
    assert nccl.judge({**nccl_facts(peak=20.0), "nodes": None}, Options()).status == "fail"
    assert nccl.judge({**nccl_facts(), "nodes": None}, Options()).status == "pass"


@pytest.mark.host
def test_the_probes_write_schema_3_live(monkeypatch):
    """On this machine (CPU torch, no NVML): nothing is left null that the probe knows; every key is declared."""
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR"):
        monkeypatch.delenv(name, raising=False)
    facts = gpu.probe(Options(gpu_perf=False))
    assert factschema.unknown_keys(facts, facts_module.GpuFacts) == []
    assert facts["cuda_visible_devices"] == "unset" and facts["nvml_error"] not in (None, "")
    assert isinstance(facts["torch_cuda"], str) and facts["torch_cuda"]        # a version, or "none" (a CPU build)
    assert facts["cuda_init_error"] == "none" if facts["cuda_available"] else True
    env = nccl_probing._environment_facts()
    assert env["nodes"] == 1 and (env["memlock_bytes"] == "unlimited" or isinstance(env["memlock_bytes"], int))
    assert factschema.unknown_keys(env, facts_module.NcclFacts) == []


@pytest.mark.host
def test_a_misspelt_key_of_the_record_itself_is_one_line(tmp_path):
    d = tmp_path / "facts"
    d.mkdir()
    (d / "host.json").write_text(json.dumps({"facts_schema": 3, "checks": ["gpu"], "hostname": "n"}))
    (d / "gpu.json").write_text(json.dumps({"check": "gpu", "facts_schema": 3, "fatcs": gpu_facts(), "result": None}))
    proc = run_cli("--from-facts", str(d), module="verify", timeout=60)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "`fatcs`" in proc.stderr


@pytest.mark.parametrize("change,needle", [
    (lambda f: f.update(world_sise=1), "world_sise"),
    (lambda f: f["ranks"][0]["steps"][3].update(los=1.0), "ranks[0].steps[3].los"),
    (lambda f: f["config"].update(d_modle=64), "config.d_modle"),
])
def test_a_misspelt_key_of_the_real_h100_train_record_is_refused(change, needle):
    """The train check declares its facts too: a real H100 record passes as recorded and fails on one misspelt key."""
    record = json.loads((ROOT / "tests" / "data" / "gpu" / "h100-80gb-hbm3-2026-11-25-train" / "facts" / "train.json")
                        .read_text())
    assert judging.judge(CHECKS["train"], record["facts"], Options(), source="r/train.json").status == "pass"
    change(record["facts"])
    replayed = judging.judge(CHECKS["train"], record["facts"], Options(), source="r/train.json")
    assert (replayed.status, replayed.code) == ("fail", "FACTS_INVALID") and needle in replayed.summary
