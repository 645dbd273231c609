"""Issue 35, item 3: the `verify explain` parsers on real public output (tests/data/explain/*.txt, each naming its
URL on its first line), old and new wordings side by side; what a parser cannot read is left null, never guessed."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.judging import verdict
from verify import explain as ex
from verify.explain import ib, smitable
from verify.options import Options

pytestmark = pytest.mark.unit

DATA = ROOT / "tests" / "data" / "explain"


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.txt")))
def test_every_sample_names_its_public_source(name):
    assert (DATA / name).read_text().startswith("# source: https://")


def test_the_driver_610_table_banner_and_the_older_one_give_the_same_facts():
    new = smitable.parse((DATA / "nvidia-smi-610-b200.txt").read_text())
    old = smitable.parse((DATA / "nvidia-smi-450-titan-xp.txt").read_text())
    assert (new["driver"], new["cuda_driver"], old["driver"], old["cuda_driver"]) == ("610.43.02", "13.3", "450.57", "11.0")
    b200 = new["devices"][1]
    assert (b200["index"], b200["name"], b200["pci_bus_id"], b200["ecc_volatile_uncorrectable"], b200["temperature_c"],
            b200["power_limit_w"]) == (1, "NVIDIA B200", "00000000:68:00.0", 0, 30.0, 1000.0)
    assert "ecc_volatile_uncorrectable" not in old["devices"][0]          # `N/A`: not read
    for f in ("nvidia-smi-610-b200.txt", "nvidia-smi-450-titan-xp.txt"):
        kind = ex.kind_of((DATA / f).read_text())
        assert kind is not None and kind.name == "nvidia-smi table"
        assert verdict(ex.explain(str(DATA / f), Options())) == ("pass", None, None)


def test_a_name_nvidia_smi_cut_short_is_not_completed():
    row = "|   0  NVIDIA RTX PRO 6000 Blac...    Off |   00000000:81:00.0 Off |                   On |"
    text = "| NVIDIA-SMI 610.43.02   KMD Version: 610.43.02     CUDA UMD Version: 13.3     |\n| Bus-Id |\n" + row
    dev = smitable.parse(text)["devices"][0]
    assert "name" not in dev and dev["pci_bus_id"] == "00000000:81:00.0" and "ecc_volatile_uncorrectable" not in dev


def test_the_nvidia_smi_q_header_of_driver_610_names_the_driver():
    from verify.explain import smi
    text = ("==============NVSMI LOG==============\nKMD Version                               : 610.43.02\n"
            "CUDA UMD Version                          : 13.3\nGPU 00000000:63:00.0\n    Product Name : NVIDIA B200\n")
    facts = smi.parse(text)
    assert (facts["driver"], facts["cuda_driver"]) == ("610.43.02", "13.3")


def test_ibv_devinfo_reads_hca_port_state_and_link_layer():
    facts = ib.parse((DATA / "ibv_devinfo-deepep-60.txt").read_text())
    a = facts["adapters"][0]
    assert (a["name"], a["hca_type"]) == ("mlx5_0", "MT4129")
    assert a["ports"] == [{"port": 1, "state": "DOWN", "phys_state": None, "rate_gbps": None, "width": None,
                           "speed": None, "link_layer": "InfiniBand"}]
    assert verdict(ex.explain(str(DATA / "ibv_devinfo-deepep-60.txt"), Options())) == ("fail", "FABRIC_PORT_DOWN", "host")


def test_ibv_devinfo_v_width_and_lane_speed_make_the_rate_and_the_generation():
    """`ibv_devinfo -v | grep` as posted (the `port:` line dropped): `active_width: 4X (2)`, `active_speed: 25.0 Gbps
    (32)` (rdma-core devinfo.c); the bracketed enum names FDR10 where the Gb/s (10.0) read as QDR."""
    text = ("hca_id:\tmlx5_0\n\tvendor_part_id:\t\t\t41692\n\tboard_id:\t\t\tMT_0000000965\n"
            "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\t25.0 Gbps (32)\n"
            "\t\t\tphys_state:\t\tLINK_UP (5)\n"
            "hca_id:\tmlx4_0\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tactive_width:\t\t4X (2)\n"
            "\t\t\tactive_speed:\t\t10.0 Gbps (8)\n"
            "hca_id:\tmlx5_9\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tactive_width:\t\t4X (2)\n")
    ports = {a["name"]: a["ports"][0] for a in ib.parse(text)["adapters"]}
    assert (ports["mlx5_0"]["rate_gbps"], ports["mlx5_0"]["width"], ports["mlx5_0"]["speed"]) == (100.0, 4, "EDR")
    assert (ports["mlx4_0"]["rate_gbps"], ports["mlx4_0"]["speed"]) == (40.0, "FDR10")
    assert ports["mlx5_9"]["rate_gbps"] is None                 # no lane speed: no rate, not a guess


def test_a_devinfo_rate_is_never_degraded_without_the_adapters_own_model():
    """Item 7: a 100 Gb/s port beside 400 Gb/s ones, of adapters whose model is not shown, is not 'below maximum'."""
    text = "".join(f"hca_id:\tmlx5_{n}\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tphys_state:\t\tLINK_UP (5)\n"
                   f"\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\t{speed}\n\t\t\tlink_layer:\t\tInfiniBand\n"
                   for n, speed in enumerate(("100.0 Gbps (128)", "100.0 Gbps (128)", "25.0 Gbps (32)")))
    r = ex.explain_text(text, "devinfo.txt", Options())
    assert r.status != "fail" and r.code != "FABRIC_RATE_LOW"
    known = text.replace("mlx5_2\n", "mlx5_2\n\tvendor_part_id:\t\t\t4129\n")     # ConnectX-7: rated 400 Gb/s
    assert verdict(ex.explain_text(known, "devinfo.txt", Options())) == ("warn", "FABRIC_RATE_DEGRADED", "host")


@pytest.mark.parametrize("name", ["cuda-802-torch7-1219.txt", "cuda-802-gpu-burn-133.txt"])
def test_cuda_802_in_each_programs_wording_is_the_hosts_fabric_manager(name):
    r = ex.explain(str(DATA / name), Options())
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host") and "fabric manager" in r.summary


def test_torchs_cuda_error_prefix_is_read_only_for_a_refusal():
    """No false drain: `CUDA error: an illegal memory access` is the job's kernel, not CUDA refusing the node."""
    refusal = ex.explain_text("RuntimeError: CUDA error: system not yet initialized\n", "log.txt", Options())
    assert verdict(refusal) == ("fail", "DRIVER_ERROR", "host")
    job = ex.explain_text("RuntimeError: CUDA error: an illegal memory access was encountered\n", "log.txt", Options())
    assert job.owner != "host" and job.status != "fail"


def _quoted_smi_q(entry: str) -> str:
    """The `nvidia-smi -q` block a corpus entry's source.md quotes (its URL is the entry's)."""
    import re
    text = (ROOT / "tests" / "data" / "real-world" / entry / "source.md").read_text()
    return next(b for b in re.findall(r"```\n(.*?)```", text, re.S) if getattr(ex.kind_of(b), "name", "") == "nvidia-smi -q")


def test_both_clock_reason_wordings_of_real_nvidia_smi_q_output():
    """Old "Clocks Throttle Reasons" (a V100 SXM2 under a power brake, https://l4rz.net/reverse-engineering-dell-idrac-
    to-get-rid-of-gpu-throttling/) and new "Clocks Event Reasons" (an idle L40S, driver 595.80, nvidia_gpu_exporter's
    capture): the same nvml bits, each read bit recorded."""
    from verify.explain import smi
    old = smi.parse(_quoted_smi_q("v100-sxm2-32gb-power-brake-c4130"))["devices"][0]
    assert old["throttle_reasons"] == 0x8 | 0x80                       # HW Slowdown, HW Power Brake Slowdown
    new = smi.parse(_quoted_smi_q("l40s-vm-passthrough-idle-and-nvenc"))["devices"][0]
    assert (new["name"], new["throttle_reasons"], new["throttle_reasons_read"]) == ("NVIDIA L40S", 0, 0x1FF)


def test_cuda_804_read_from_an_excerpt_alone_is_the_driver_s_as_its_translation_is():
    """CUDA error 804 (forward compatibility attempted on a GPU without it) with nothing showing that the driver
    supports the image's CUDA: the driver is too old for the image, as through the translated facts of
    tests/data/real-world/rtx3090-driver-525-cuda-12-1-image-error-804 (the image's case, a driver that does support
    the build, is tests/test_partial_evidence.py's twin)."""
    r = ex.explain(str(DATA / "cuda-804-tensorrt-llm-1806.txt"), Options())
    assert verdict(r) == ("fail", "DRIVER_TOO_OLD", "host")


# `dcgmi health -c` as dcgmi/Health.cpp lays it out (the rows DCGM's own tests expect: dcgmi/tests/HealthTests.cpp),
# with messages of DCGM's catalog (dcgmlib/dcgm_errors.h); the real excerpt is the corpus's NVSentinel entry
def _health(*rows: tuple[str, str]) -> str:
    box = "+---------------------------+------------------------------------------------------------+"
    lines = [box, "| Health Monitor Report" + " " * 67 + "|", box.replace("-", "=")]
    lines += [f"| {left:<25} | {right:<58} |" for left, right in rows]
    return "\n".join(lines + [box]) + "\n"


def test_dcgmi_health_reads_the_catalog_s_incidents_per_gpu_and_never_a_connectx_entity_as_a_gpu():
    from verify.explain import dcgmhealth
    text = _health(("Overall Health", "Failure"), ("GPU", ""), ("-> 0", "Failure"), ("   -> Errors", ""),
                   ("      -> Memory system", "Failure"), ("", "Detected 2 volatile double-bit ECC error(s) in GPU"),
                   ("", "0."), ("-> 1", "Warning"), ("   -> Errors", ""), ("      -> NVLINK system", "Warning"),
                   ("", "GPU 1's NvLink link 3 is currently down"), ("ConnectX", ""), ("-> 0", "Failure"),
                   ("   -> Errors", ""), ("      -> ConnectX system", "Failure"),
                   ("", "ConnectX entity Id:0 uncorrectable fatal errors: 0x1010"))
    assert getattr(ex.kind_of(text), "name", None) == "dcgmi health"
    facts = dcgmhealth.parse(text)
    assert facts["devices"] == [{"index": 0, "ecc_volatile_uncorrectable": 2},
                                {"index": 1, "nvlink": [True, True, True, False]}]
    r = ex.explain_text(text, "health.txt", Options())
    assert verdict(r) == ("fail", "ECC_UNCORRECTABLE", "host")
    assert any(f["code"] == "NVLINK_DOWN" and f["device"] == 1 for f in r.data["findings"])


def test_dcgmi_health_with_only_what_no_field_holds_is_not_assessed_never_a_pass():
    # (a corrupt InfoROM is read as NVML's error on it: tests/test_judges_fix3235.py)
    replays = _health(("Overall Health", "Warning"), ("GPU", ""), ("-> 2", "Warning"), ("   -> Errors", ""),
                      ("      -> PCIe system", "Warning"), ("", "Detected more than 8 PCIe replays per minute for GPU 2 : 16"))
    assert verdict(ex.explain_text(replays, "h.txt", Options())) == ("warn", "HEALTH_NOT_ASSESSED", "host")
    pending = _health(("Overall Health", "Failure"), ("-> 0", "Failure"), ("   -> Memory system", "Failure"),
                      ("", "GPU 0 had memory errors and row remappings are pending"))
    assert ex.explain_text(pending, "h.txt", Options()).status == "fail"
    healthy = _health(("Overall Health", "Healthy"))      # which GPUs and systems were watched is not shown
    assert getattr(ex.kind_of(healthy), "name", None) == "dcgmi health"
    assert verdict(ex.explain_text(healthy, "h.txt", Options())) == ("skip", "FACTS_INCOMPLETE", None)
    xid = _health(("Overall Health", "Failure"), ("-> 0", "Failure"), ("   -> Driver", "Failure"),
                  ("", "Detected XID 79 for GPU 0"))
    r = ex.explain_text(xid, "h.txt", Options())
    assert verdict(r) == ("fail", "GPU_LOST", "host") and not any("no field" in d for d in r.details)


def test_dcgmi_health_of_a_gpu_whose_every_link_is_down_is_not_assessed_without_its_model():
    # NVSentinel's PCIe A100 (no bridge): DCGM calls its 12 links a failure; the excerpt's rows name no model, so
    # whether the links should be up is not known: not assessed, never healthy (its translation, with the model the
    # poster names in prose, passes)
    raw = ROOT / "tests/data/real-world/a100-80gb-pcie-no-bridge-dcgm-health-all-12-nvlinks-down/raw.txt"
    r = ex.explain(str(raw), Options())
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host") and "read as dcgmi health" in r.details[0]


def test_rdma_link_show_gives_the_ports_another_listing_left_out():
    """iproute2's `rdma link show` (rdma/link.c) and `rdma dev` (its protocol: the link layer), beside an ibstat cut
    to one of two adapters (tests/data/real-world/bnxt-re-roce-100-active-second-port-disabled-memlock-unlimited)."""
    from verify.explain import ib
    text = ("link bnxt_re0/1 state ACTIVE physical_state LINK_UP netdev enp194s0f0np0\n"
            "link bnxt_re1/1 state DOWN physical_state DISABLED netdev enp194s0f1np1\n"
            "0: bnxt_re0: node_type ca protocol roce fw 231.0.154.0 node_guid 8e84:74ff:fe1f:2550\n"
            "1: bnxt_re1: node_type ca protocol roce fw 231.0.154.0 node_guid 8e84:74ff:fe1f:2551\n")
    ports = {a["name"]: a["ports"][0] for a in ib.parse(text)["adapters"]}
    assert (ports["bnxt_re1"]["state"], ports["bnxt_re1"]["phys_state"], ports["bnxt_re1"]["link_layer"]) == (
        "DOWN", "Disabled", "Ethernet")
    assert ports["bnxt_re0"]["rate_gbps"] is None and ports["bnxt_re0"]["phys_state"] == "LinkUp"
    kind = ex.kind_of(text)
    assert kind is not None and kind.name.startswith("ibstat")


# `dcgmi diag -r N` (dcgmi/Diag.cpp): real excerpts in tests/data/explain/dcgmi-diag-*.txt and the corpus's T4 pair;
# what no excerpt shows (4.x's per-GPU warnings, the catalog's ECC messages) is laid out as Diag.cpp prints it
T4 = ROOT / "tests/data/real-world/t4-dcgmi-diag-gpu0-context-refused"


def _diag(*rows: tuple[str, str]) -> str:
    """Rows as Diag.cpp prints them: each message cut into rows of DATA_INFO_TAG_LEN (45) characters."""
    box = "+---------------------------+------------------------------------------------+"
    lines = [box, f"| {'Diagnostic':<25} | {'Result':<46} |", box.replace("-", "=")]
    for name, info in rows:
        if name.startswith("-----"):
            lines.append(f"+{name:-<27}+{'':-<48}+")
            continue
        detail = name.split(":")[0] in ("Warning", "Info", "Error")        # a result is one row, cut with `...`
        chunks = [info[i:i + 45] for i in range(0, len(info), 45)] if detail else [info[:46]]
        lines += [f"| {name if n == 0 else '':<25} | {chunk:<46} |" for n, chunk in enumerate(chunks)]
    return "\n".join(lines + [box]) + "\n"


def test_dcgmi_diag_of_the_t4_pair_gives_the_facts_of_its_translation():
    """go-dcgm#52: GPU 0 refuses every CUDA context, GPU 1 passes DCGM's memory test and copies at 13 GB/s; the
    messages are cut mid-word ("Rese" / "t GPU") and joined back by the cell's width."""
    from verify.explain import dcgmdiag
    text = ex.views((T4 / "raw.txt").read_text())[False]
    translated = json.loads((T4 / "facts" / "gpu.json").read_text())["facts"]
    facts = dcgmdiag.parse(text)
    assert getattr(ex.kind_of(text), "name", None) == "dcgmi diag"
    assert facts["driver"] == translated["driver"] == "535.129.03"
    assert facts["devices"] == [{"index": 0}, {"index": 1}]              # no model from a PCI id (1eb8)
    k0, k1 = facts["kernels"]
    assert (k0["index"], k0["max_abs_error"], k1) == (0, None, translated["kernels"][1])
    assert "cuCtxCreate" in k0["error"] and "Unable to create CUDA context: 'CUDA-capable device(s) is/are busy or " \
        "unavailable'" in k0["error"] and "Reset GPU" not in k0["error"]
    assert [{k: p.get(k) for k in ("index", "h2d_GBps", "d2h_GBps")} for p in facts["perf"]] == \
        [{k: p[k] for k in ("index", "h2d_GBps", "d2h_GBps")} for p in translated["perf"]]
    info = next(d for d in dcgmdiag.read(text).details if d.text.startswith("GPU 0 API call cudaStreamCreate"))
    assert "Check DCGM and system logs for errors. Reset GPU. Restart DCGM." in info.text
    said = dcgmdiag.unread(text)
    assert "Targeted Stress: Fail - All, no cause shown for GPU 0, 1" in said
    assert "Diagnostic: Fail - All, no cause shown for GPU 1" in said
    assert verdict(ex.explain(str(T4 / "raw.txt"), Options())) == ("fail", "KERNEL_FAILED", "host")


def test_dcgmi_diag_links_down_on_an_a100_without_nvlink_are_never_a_host_fail():
    """DCGM#49 (2.4.6): the PCIe test fails on every link of a PCIe A100 "currently down"; the model is not in the
    rows, so whether the links should be up is not known: not assessed, never a drain."""
    from verify.explain import dcgmdiag
    text = (DATA / "dcgmi-diag-2.4-a100-no-nvlink-links-down.txt").read_text()
    assert dcgmdiag.parse(ex.views(text)[False])["devices"] == [{"index": 0, "nvlink": [False] * 5}]
    assert dcgmdiag.unread(ex.views(text)[False]) == []          # each message read, the last row's blanks trimmed
    r = ex.explain(str(DATA / "dcgmi-diag-2.4-a100-no-nvlink-links-down.txt"), Options())
    assert r.status != "fail" and r.owner != "job" and "read as dcgmi diag" in r.details[0]


@pytest.mark.parametrize("name,driver,gpus", [("dcgmi-diag-3.3-h100nvl-all-links-down-passes.txt", "560.35.03", 2),
                                              ("dcgmi-diag-3.3-h100-eight-deployment.txt", "560.35.03", 8),
                                              ("dcgmi-diag-4.2-l40s-per-gpu-rows.txt", "570.148.08", 4)])
def test_a_dcgmi_diag_that_passes_gives_its_driver_and_gpus_and_never_fails(name, driver, gpus):
    """DCGM#198 (an H100 NVL pair whose `dcgmi nvlink` shows every link D: that listing is not this table's),
    nccl-tests#264 (3.3.8, an Info under a Pass is no fault), DCGM#253 (4.2.3's `GPU0: Pass` rows)."""
    from verify.explain import dcgmdiag
    text = ex.views((DATA / name).read_text())[False]
    facts = dcgmdiag.parse(text)
    assert (facts["driver"], facts["devices"]) == (driver, [{"index": i} for i in range(gpus)])
    assert dcgmdiag.unread(text) == [] and "kernels" not in facts       # no CUDA test in these excerpts
    assert ex.explain(str(DATA / name), Options()).status != "fail"


def _diag_4x(memory_warning: str) -> str:
    return _diag(("-----  Metadata  ", ""), ("DCGM Version", "4.2.3"), ("Driver Version Detected", "570.148.08"),
                 ("GPU Device IDs Detected", "2330, 2330, 2330"), ("-----  Deployment  ", ""), ("software", "Warn"),
                 ("", "GPU0: Pass"), ("", "GPU1: Pass"), ("", "GPU2: Warn"),
                 ("Warning: GPU2", "Persistence mode for GPU 2 is disabled. Enable persistence mode by running "
                                   "\"nvidia-smi -i <gpuId> -pm 1 \" as root."),
                 ("-----  Hardware  ", ""), ("memory", "Fail"), ("", "GPU0: Pass"), ("", "GPU1: Fail"),
                 ("Warning: GPU1", memory_warning), ("", "GPU2: Skip"),
                 ("-----  Integration  ", ""), ("pcie", "Pass"), ("", "GPU0: Pass"), ("", "GPU1: Pass"),
                 ("Info: GPU0", "GPU to Host bandwidth:\t\t24.61 GB/s"), ("", "GPU2: Skip"))


def test_dcgmi_diag_4x_per_gpu_warnings_read_by_the_catalog_and_the_rest_said():
    from verify.explain import dcgmdiag
    text = _diag_4x("Detected 2 volatile double-bit ECC error(s) in GPU 1.")
    facts = dcgmdiag.parse(ex.views(text)[False])
    assert facts["devices"] == [{"index": 0}, {"index": 1, "ecc_volatile_uncorrectable": 2}, {"index": 2}]
    assert facts["kernels"] == [{"index": 0, "max_abs_error": None, "error": None},
                                {"index": 1, "max_abs_error": None, "error": None}]      # a Skip ran nothing
    assert facts["perf"] == [{"index": 0, "d2h_GBps": 24.61}]
    assert dcgmdiag.unread(ex.views(text)[False]) == [
        "software: GPU 2: Persistence mode for GPU 2 is disabled. Enable persistence mode by running \"nvidia-smi -i "
        "<gpuId> -pm 1 \" as root."]
    assert verdict(ex.explain_text(text, "diag.txt", Options())) == ("fail", "ECC_UNCORRECTABLE", "host")
    # GPU 1 failed DCGM's own memory test by name: the GPU's, whatever the message's words (no field reads them)
    r = ex.explain_text(_diag_4x("GPU 1 Faulty memory element!!"), "diag.txt", Options())
    assert verdict(r) == ("fail", "KERNEL_FAILED", "host") and "Faulty memory" in r.summary
    # a test that could not do its work (memory another process holds) judges no GPU: said, not assessed
    r = ex.explain_text(_diag_4x("GPU 1 Couldn't allocate 80% of the framebuffer: out of memory"), "diag.txt", Options())
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host") and any("allocate" in d for d in r.details)


def test_a_dcgmi_diag_fail_with_no_cause_shown_is_said_never_a_pass_or_nothing_to_judge():
    from verify.explain import dcgmdiag
    text = _diag(("-----  Integration  ", ""), ("PCIe", "Fail - All"), ("-----  Hardware  ", ""),
                 ("GPU Memory", "Skip - All"))
    assert dcgmdiag.unread(text) == ["PCIe: Fail - All, no cause shown"]
    assert verdict(ex.explain_text(text, "diag.txt", Options())) == ("warn", "HEALTH_NOT_ASSESSED", "host")
    skipped = text.replace("Fail - All", "Skip - All")                   # a Skip is no fault
    assert dcgmdiag.unread(skipped) == [] and ex.explain_text(skipped, "d.txt", Options()).status != "fail"
    refused = _diag(("GPU Device IDs Detected", "2321,2321"), ("-----  Hardware  ", ""), ("GPU Memory", "Pass - GPU: 0"),
                    ("", "Fail - GPU: 1"), ("Warning", "GPU 1 failed to create a CUDA context: out of memory"))
    facts = dcgmdiag.parse(refused)
    assert [k["error"] for k in facts["kernels"]] == [None, "GPU 1 failed to create a CUDA context: out of memory"]
    # a GPU list the cell cut (`...`, 46 characters), a global row naming its GPU, a CUDA call naming none
    cut = _diag(("-----  Stress  ", ""), ("Targeted Stress", "Fail - GPUs: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ..."),
                ("memory", "Fail"), ("Warning", "Detected 3 volatile double-bit ECC error(s) in GPU 4."),
                ("Warning", "API call cudaMalloc failed: 'out of memory'"))
    assert dcgmdiag.parse(cut)["devices"] == [{"index": 4, "ecc_volatile_uncorrectable": 3}]
    assert dcgmdiag.unread(cut) == ["memory: API call cudaMalloc failed: 'out of memory'",
                                    "Targeted Stress: Fail - GPUs: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ..., no cause shown"]


@pytest.mark.parametrize("garble", ["huge", "numbers", "ragged", "binary-ish"])
def test_hostile_dcgmi_diag_tables_never_traceback(garble):
    from verify.explain import dcgmdiag
    base = (T4 / "raw.txt").read_text()
    text = {"huge": base * 400,
            "numbers": base.replace("GPU 0", "GPU 99999999999999999999").replace("GPU: 1", "GPUs: 7, 123456789012345")
            + _diag(("Warning", "GPU 0's NvLink link 99999999999 is currently down, Only 9 NvLinks are up out of the "
                                "expected 99999999999"), ("Info", "GPU 1 Host to GPU bandwidth: 99999.99 GB/s")),
            "ragged": "\n".join(line[:n % 80] + "|" * (n % 3) for n, line in enumerate(base.splitlines())),
            "binary-ish": base.replace("a", "\x07|\ufffd").replace(" ", "|")}[garble]
    facts = dcgmdiag.parse(text)
    assert all(0 <= d["index"] < 32 and len(d.get("nvlink", [])) <= 36 for d in facts["devices"] or [])
    dcgmdiag.unread(text)
    ex.explain_text(text, "diag.txt", Options())


@pytest.mark.parametrize("name, model", [("nvidia-smi-query-gpu-h100-590-load.txt", "NVIDIA H100 80GB HBM3"),
                                         ("nvidia-smi-query-gpu-l40s-595-idle.txt", "NVIDIA L40S")])
def test_nvidia_smi_query_gpu_csv_reads_every_field_the_facts_hold(name, model):
    """nvidia_gpu_exporter's captures of `nvidia-smi --query-gpu=<every field> --format=csv` (its header is the longest
    line: not a terminal's wrap); `[N/A]` is no value; the active clock-event mask is NVML's, every bit read."""
    from verify.explain import smiquery
    text = (DATA / name).read_text()
    kind = ex.kind_of(text)
    assert kind is not None and kind.name == "nvidia-smi --query-gpu CSV"
    dev = smiquery.parse(text)["devices"][0]
    assert (dev["name"], dev["index"], dev["ecc_volatile_uncorrectable"], dev["throttle_reasons"],
            dev["throttle_reasons_read"], dev["row_remap"]["pending"], dev["recovery_action"]) == (
        model, 0, 0, 0, 0x1FF, 0, "none")
    assert "fabric" not in dev and verdict(ex.explain(str(DATA / name), Options())) == ("pass", None, None)


def test_a_query_without_its_header_is_read_by_the_command_quoted_above_it_and_a_fault_is_judged():
    text = ("$ nvidia-smi --query-gpu=index,name,ecc.errors.uncorrected.volatile.total,remapped_rows.pending,"
            "clocks_event_reasons.active --format=csv,noheader\n"
            "0, NVIDIA A100-SXM4-80GB, 0, No, 0x0000000000000000\n"
            "1, NVIDIA A100-SXM4-80GB, 12, Yes, 0x0000000000000008   <= the bad one\n"
            "2, NVIDIA A100-SXM4-80GB, [N/A], [N/A], [N/A]\n")
    from verify.explain import smiquery
    devices = smiquery.parse(text)["devices"]
    assert devices[1]["ecc_volatile_uncorrectable"] == 12 and devices[1]["row_remap"]["pending"] == 1
    assert devices[1]["throttle_reasons"] == 0x8 and "ecc_volatile_uncorrectable" not in devices[2]
    assert verdict(ex.explain_text(text, "q.txt", Options())) == ("fail", "ECC_UNCORRECTABLE", "host")


def test_a_csv_header_and_its_row_are_never_joined_as_a_terminal_s_wrap():
    from verify.explain import wrap
    lines = ["# source: a capture", "a" * 70 + ", b, c", "1, 2, 3"]
    assert wrap.unwrap(lines) == lines


def test_a_csv_of_generic_columns_is_not_read_as_nvidia_smi():
    text = "index, name, score\n0, resnet50, 0.76\n1, vit_b_16, 0.81\n"
    kind = ex.kind_of(text)
    assert kind is None or kind.name != "nvidia-smi --query-gpu CSV"


@pytest.mark.parametrize("text", [
    "model,batch,throughput,power.draw,temperature.gpu\nresnet50,256,2950.1,398.2,71\nvit_b_16,128,1210.4,401.7,73\n",
    "$ bench --query-gpu=model,power.draw,temperature.gpu\nresnet50, 398.2, 71\nvit_b_16, 401.7, 73\n",
])
def test_a_csv_naming_what_nvidia_smi_does_not_document_is_not_its_query(text):
    """A benchmark's CSV shares some of nvidia-smi's names (power.draw, temperature.gpu), but `model` is none of the
    fields `nvidia-smi --help-query-gpu` documents: the table is another tool's, never read as GPU facts."""
    kind = ex.kind_of(text)
    assert kind is None or kind.name != "nvidia-smi --query-gpu CSV"


def test_the_documented_fields_are_nvidia_smi_s_own_list_with_its_source():
    """smifields.txt: the names quoted in real `nvidia-smi --help-query-gpu` output, its source (URL and commit) on
    its first line; every name the parser reads is one of them."""
    from verify.explain import smiquery
    lines = (Path(smiquery.__file__).with_name("smifields.txt")).read_text().splitlines()
    assert re.search(r"https://github\.com/utkuozdemir/nvidia_gpu_exporter/tree/[0-9a-f]{40}/", lines[0])
    assert all(re.fullmatch(r"[A-Za-z_][\w.]*", name) for name in lines[1:]) and len(set(lines[1:])) == len(lines) - 1
    assert {"timestamp", "pci.bus_id", "gpu_name", "clocks_event_reasons.active", "power.draw.instant"} <= smiquery.DOCUMENTED
    assert set(smiquery.FIELDS) | set(smiquery._ALIASES) <= smiquery.DOCUMENTED


def test_lspci_vv_gives_each_nvidia_gpu_s_link_by_bus_id_and_a_downgraded_link_is_judged():
    """pciutils' `lspci -vv`: LnkCap is the GPU port's own maximum, LnkSta what the link trained to (the corpus's
    `h100-hgx-lspci-vv-eight-gpus-gen5-x16-ok-sticky-correctable-aer`, GPUd's fixture, passes: all eight Gen5 x16);
    the NVML index is not in it (null), and a non-NVIDIA device is no GPU."""
    from verify.explain import lspci
    text = ("0000:1b:00.0 3D controller: NVIDIA Corporation Device 2330 (rev a1)\n"
            "\tNUMA node: 0\n"
            "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM L1, Exit Latency L1 <4us\n"
            "\t\tLnkSta:\tSpeed 16GT/s (downgraded), Width x8 (downgraded)\n"
            "1c:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n"
            "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16\n"
            "\t\tLnkSta:\tSpeed 32GT/s, Width x16\n")
    assert lspci.parse(text)["devices"] == [{"index": None, "pci_bus_id": "00000000:1B:00.0", "numa_node": 0,
                                            "pcie_gen_gpu_max": 5, "pcie_width_gpu_max": 16, "pcie_gen": 4,
                                            "pcie_width": 8}]
    r = ex.explain_text(text, "lspci.txt", Options())
    assert (r.status, r.code, r.owner) == ("warn", "PCIE_DOWNGRADED", "host")


# ------------------------------------------------------------------------------------ what is given as FILE
@pytest.mark.parametrize("given, said", [("fifo", "empty"), ("/dev/zero", "a device"), ("/dev/urandom", "a device"),
                                         ("/dev/null", "a device"), ("dir", "a directory"), ("empty", "empty"),
                                         ("blanks", "empty")])
def test_a_file_that_is_no_log_is_refused_in_one_line_and_never_waited_on(tmp_path, given, said):
    """A FIFO no one writes to and /dev/zero once hung explain (an open that waits for a writer, a read to the end of
    an endless device); an empty file was `not recognised` with exit 0."""
    import os
    import signal
    path = {"fifo": tmp_path / "fifo", "dir": tmp_path, "empty": tmp_path / "e.txt", "blanks": tmp_path / "b.txt"}.get(
        given, given)
    if given == "fifo":
        os.mkfifo(path)
    elif given in ("empty", "blanks"):
        path.write_text("" if given == "empty" else "\n  \n\t\n")
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail(f"explain waited on {given}"))
    signal.alarm(10)
    try:
        with pytest.raises(ex.ExplainError, match=said) as refused:
            ex.read(str(path))
    finally:
        signal.alarm(0)
    assert "\n" not in str(refused.value)


def _read_through_a_pipe(data: bytes) -> str:
    """What `verify explain` reads of `data` written into a pipe by another thread (`explain <(dmesg)`)."""
    import os
    import threading
    r, w = os.pipe()

    def write() -> None:
        with os.fdopen(w, "wb") as out:
            out.write(data)
    writer = threading.Thread(target=write)
    writer.start()
    try:
        return ex.read(f"/dev/fd/{r}")
    finally:
        writer.join()
        os.close(r)


def test_a_pipe_and_a_procfs_file_are_read(tmp_path):
    """`verify explain <(dmesg)` gives a pipe; /proc/driver/nvidia/version seeks to no end: both are text."""
    text = (DATA / "nvidia-smi-610-b200.txt").read_text()
    assert _read_through_a_pipe(text.encode()) == text
    assert ex.read("/proc/self/status").startswith("Name:")


KERNEL_LINE = "[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n"


@pytest.mark.parametrize("run", [1, 4096, 3 << 20])
def test_a_log_logrotate_s_copytruncate_left_nuls_before_is_read_from_its_text(tmp_path, run):
    """copytruncate empties a log its program keeps writing at the old offset: the file starts with that many NULs
    and the lines follow. It was refused as binary; its text is read, as a file and through a pipe."""
    data = b"\0" * run + KERNEL_LINE.encode()
    f = tmp_path / "kern.log"
    f.write_bytes(data)
    assert ex.read(str(f)) == KERNEL_LINE
    assert verdict(ex.explain(str(f), Options())) == ("fail", "GPU_LOST", "host")
    assert _read_through_a_pipe(data) == KERNEL_LINE


@pytest.mark.parametrize("data", [b"\0ELF", b"\0" * 100, b"\0\0\x7fELF\x02\x01\x01\x00\n", b"text\0\0more\n",
                                  b"\0" * 10 + b"a\x01b\n"])
def test_nuls_that_are_not_a_leading_run_before_text_are_still_binary(tmp_path, data):
    f = tmp_path / "core"
    f.write_bytes(data)
    with pytest.raises(ex.ExplainError, match="binary"):
        ex.read(str(f))


def test_the_patterns_made_linear_read_what_they_read_before():
    """Patterns that tried a `[\\w/]+`, `\\s+` or `[\\w.-]*` from every character of a long run (minutes on one long
    line; the timings are in the hunt's report, not asserted) now start only where such a run does: what they read
    is unchanged."""
    from verify.checks.nccl import ncclog
    from verify.explain import dcgm, launchers, nccl, pasted, smiquery
    trace = "node-1:12:34 [0] NCCL INFO x\n /src/bootstrap.cc:270 -> 2\nmisc/x.cc:1 -> 0\n"
    assert nccl.parse(trace)["error"] == "init: src/bootstrap.cc:270 -> 2; misc/x.cc:1 -> 0"
    warn = "h:1:2 [0] enqueue.cc:42 NCCL WARN Cuda failure 'an illegal memory access was encountered'\n"
    assert "enqueue.cc:42 NCCL WARN Cuda failure" in nccl.parse(warn)["error"] and nccl.detect_any(warn)
    assert ncclog.message("ab-1:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB  [repeated 3x across cluster]") == \
        "NET/IB : Using [0]mlx5_0:1/IB"
    assert launchers.hosts(["node-1: a", "gpu7: b", "x1: c"]) == ["a", "b", "c"]
    assert launchers.hosts(["NVRM: a", "hca_id: b", "a: c"]) == ["NVRM: a", "hca_id: b", "a: c"]
    assert pasted.markdown(["> > > x", ">  > y", "> z"]) == ["x", "y", "z"]
    assert smiquery._header("index, temperature.gpu, memory.total [MiB]") == ["index", "temperature.gpu", "memory.total"]
    assert smiquery._NOTE.sub("", "1, Reset   <= reset required") == "1, Reset"
    assert dcgm._LABEL.findall('gpu="0",UUID="GPU-1"') == [("gpu", "0"), ("UUID", "GPU-1")]
    for hostile in ("a" * 200_000, "1" * 200_000, "a/" * 100_000, " " * 100_000 + "x", "> " * 100_000, "[ " * 100_000):
        ex.explain_text(hostile, "long.txt", Options())


def _topo(name: str) -> dict:
    from verify.explain import topo
    text = (DATA / name).read_text()
    kind = ex.kind_of(text)
    assert topo.detect(text) and kind is not None and kind.name == "nvidia-smi topo -m"
    return topo.parse(text)


def test_topo_m_behind_nvswitches_gives_each_gpu_its_whole_bond_and_its_numa_node():
    """`nvidia-smi topo -m`: behind NVSwitches every pair shows the GPU's whole bond (a DGX A100's NV12, a DGX-2's
    NV6), never the sum of its cells; the NUMA Affinity column is the GPU's node, absent where the driver prints
    no such column (the DGX-2's). The rows the excerpt cut (GPU4-GPU7) are GPUs all the same, their bonds read from
    their columns, their NUMA node unread."""
    a100 = _topo("topo-m-dgx-a100-nv12.txt")["devices"]
    assert [(d["index"], len(d["nvlink"]), all(d["nvlink"]), d["nvswitch"], d.get("numa_node")) for d in a100] == \
        [(0, 12, True, True, 3), (1, 12, True, True, 3), (2, 12, True, True, 1), (3, 12, True, True, 1)] + \
        [(n, 12, True, True, None) for n in range(4, 8)]
    v100 = _topo("topo-m-dgx2-v100-nv6.txt")["devices"]
    assert {len(d["nvlink"]) for d in v100} == {6} and all(all(d["nvlink"]) for d in v100)
    assert all("numa_node" not in d for d in v100)


def test_topo_m_without_an_nv_cell_says_nothing_of_nvlink():
    """Eight RTX 4090s, every pair SYS: no NVLink field at all (a PCIe board and a board whose bridges are all down
    print the same matrix), so nothing about links is judged; NUMA nodes are read from the tab-separated columns."""
    devices = _topo("topo-m-8x-rtx4090-sys.txt")["devices"]
    assert [d["index"] for d in devices] == list(range(8))
    assert all("nvlink" not in d and "nvswitch" not in d for d in devices)
    assert [d["numa_node"] for d in devices] == [0, 0, 0, 0, 1, 1, 1, 1]


@pytest.mark.parametrize("down", [("NV16", [16, 17], "warn"), ("SYS", list(range(18)), "fail")],
                         ids=["two-links", "every-link"])
def test_topo_m_a_gpu_showing_a_smaller_bond_than_its_board_has_the_rest_down(down):
    """Hand-made from the corpus's real HGX H100 matrix (h100-eight-gpus-topo-nv18-every-pair-two-numa): GPU 3's
    cells lowered to NV16 (two links down) or to SYS (off the fabric). Its board's other GPUs still show NV18, so
    GPU 3 should have 18: the missing ones are down, and the gpu check says so (owner host): two links in one read
    warn (links retrain after a reset), every link down fails."""
    cell, missing, status = down
    raw = (ROOT / "tests/data/real-world/h100-eight-gpus-topo-nv18-every-pair-two-numa/raw.txt").read_text()
    lines = raw.splitlines()
    for n, line in enumerate(lines):
        cells = line.split()
        if line.startswith("GPU"):                 # a row, not the header
            if cells[0] == "GPU3":
                cells = [c if c == "X" or not c.startswith("NV") else cell for c in cells]
            else:
                cells[4] = cell            # the GPU3 column
            lines[n] = "  ".join(cells)
    from verify.explain import topo
    devices = topo.parse("\n".join(lines))["devices"]
    gpu3 = devices[3]["nvlink"]
    assert len(gpu3) == 18 and [i for i, up in enumerate(gpu3) if not up] == missing
    assert all(all(d["nvlink"]) and len(d["nvlink"]) == 18 for d in devices if d["index"] != 3)
    r = ex.explain_text("\n".join(lines), "topo.txt", Options())
    assert (r.status, r.code, r.owner) == (status, "NVLINK_DOWN", "host")
