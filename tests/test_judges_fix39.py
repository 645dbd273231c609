"""Issue 35's thirty-ninth corpus batch (translated blind from real output): the readers and rules it called for, by
class (the entries themselves replay in tests/test_gpu_rules.py and tests/test_explain.py).

- `nvidia-smi -L` is read (GPUs and their MIG devices, both drivers' wordings): the GPUs are there and NVML answered,
  their health is not read: warn, never healthy. A listing whose lines all have one length is no terminal's wrap.
- A device a host tool read itself (topo's NUMA affinity, beside the UUID and the bus id) is there: with no health
  field it is not assessed (warn), where a device a program only names is still nothing to judge. `topo -mp`, the
  PCIe-only matrix, says nothing of NVLink; a row the excerpt cut is a GPU the header still lists.
- lspci's link lines quoted without its header line are one device's, read as the GPU's; a port facing down (the
  bridge above it, unmarked where pciutils marks a downgraded device) is not the GPU; an idle Gen1 at full width passes.
- A power limit below the default is the owner's setting: named, but a link trained narrow is the headline.
"""
from __future__ import annotations

from typing import Any, cast

import pytest

from verify import explain as ex
from verify.checks.gpu.verdict import judge as judge_gpu
from verify.explain import lspci, smilist, topo, wrap
from verify.options import Options

pytestmark = pytest.mark.unit


def verdict(r: Any) -> tuple[Any, Any, Any]:
    return r.status, r.code, r.owner


def _gpu(devices: list[dict[str, Any]], **facts: Any) -> Any:
    return judge_gpu(cast(Any, {"torch": None, "nvml_error": None, "driver": None, "devices": devices, **facts}),
                     Options())


# ----------------------------------------------------------------------------- nvidia-smi -L
LIST_470 = """GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0)
  MIG 3g.40gb     Device  0: (UUID: MIG-11111111-2222-5333-8444-555555555555)
  MIG 2g.20gb     Device  1: (UUID: MIG-66666666-7777-5888-9999-aaaaaaaaaaaa)
GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-f0e9d8c7-b6a5-9483-7261-504f3e2d1c0b)
"""
LIST_450 = """GPU 0: A100-SXM4-40GB (UUID: GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f)
  MIG 1g.5gb Device 0: (UUID: MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/7/0)
"""


def test_nvidia_smi_l_lists_gpus_and_mig_devices_not_their_health_handmade():
    facts = smilist.parse(LIST_470)
    h100 = facts["devices"][0]
    assert facts["nvml_error"] == "none" and [d["index"] for d in facts["devices"]] == [0, 1]
    assert h100["mig"] == [True, None] and [(m["profile"], m["slices"], m["mig_index"]) for m in h100["mig_devices"]] \
        == [("3g.40gb", 3, 0), ("2g.20gb", 2, 1)]
    assert "mig" not in facts["devices"][1]                     # no MIG line under it: its mode is not shown
    r = ex.explain_text(LIST_470, "smi-L.txt", Options())
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host") and "not healthy" in r.summary


def test_the_older_drivers_mig_uuid_names_its_instances_handmade():
    mig = smilist.parse(LIST_450)["devices"][0]["mig_devices"][0]
    assert (mig["profile"], mig["slices"], mig["gpu_instance"], mig["compute_instance"]) == ("1g.5gb", 1, 7, 0)


def test_a_richer_report_of_the_same_gpus_is_read_instead_of_the_list_handmade():
    """`nvlink -s` prints the same header lines: its links are judged, the list adds no "not assessed" over them."""
    text = LIST_470.splitlines()[0] + "\n\t Link 0: 26.562 GB/s\n\t Link 1: 26.562 GB/s\n"
    assert not smilist.detect(text)
    assert [k.name for k in ex.kinds_in(ex.views(text))] == ["nvidia-smi nvlink -s"]


def test_lines_all_of_one_length_are_no_terminal_wrap_handmade():
    """A GPU line and its MIG lines can all have one length (UUIDs are fixed-width): no row is cut short there, so
    none is joined to the next, and the listing is read as printed."""
    gpu = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-2a4c6e80-1b3d-4f57-9a8b-c0d1e2f3a4b5)"
    migs = [f"  MIG 1g.10gb     Device  {n}: (UUID: MIG-{n}d2e4f60-7a8b-5c9d-8e0f-a1b2c3d4e5f6)" for n in range(3)]
    assert {len(x) for x in [gpu, *migs]} == {len(gpu)} and wrap.unwrap([gpu, *migs]) == [gpu, *migs]
    facts = smilist.parse(ex.pasted.bare("\n".join([gpu, *migs])))
    assert len(facts["devices"][0]["mig_devices"]) == 3


# ----------------------------------------------------------------------------- a device a host tool read, topo -mp
TOPO_MP = """        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      NODE    SYS     SYS     0-31,64-95      0               N/A
GPU1    NODE     X      SYS     SYS     0-31,64-95      0               N/A
GPU2    SYS     SYS      X      NODE    32-63,96-127    1               N/A
"""


def test_topo_mp_is_no_nvlink_reading_and_its_gpus_are_not_assessed_handmade():
    devices = topo.parse(TOPO_MP)["devices"]
    assert [(d["index"], d.get("numa_node")) for d in devices] == [(0, 0), (1, 0), (2, 1), (3, None)]   # GPU3's row cut
    assert not any("nvlink" in d or "nvswitch" in d for d in devices)
    assert verdict(ex.explain_text(TOPO_MP, "topo.txt", Options())) == ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_a_device_a_host_tool_read_is_there_one_a_program_names_is_nothing_to_judge_handmade():
    assert verdict(_gpu([{"index": 0, "numa_node": 1}, {"index": 1}])) == ("warn", "HEALTH_NOT_ASSESSED", "host")
    assert _gpu([{"index": 0, "name": "NVIDIA H100 80GB HBM3"}]).status == "skip"


def test_a_cut_row_behind_switches_has_the_bond_its_column_shows_handmade():
    head = "        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity\n"
    rows = "".join(f"GPU{i}    " + "    ".join(" X  " if j == i else "NV18" for j in range(4)) + "    0-55    0\n"
                   for i in range(2))
    switched = {d["index"]: d for d in topo.parse(head + rows)["devices"]}
    assert sorted(switched) == [0, 1, 2, 3] and switched[3]["nvlink"] == [True] * 18 and switched[3]["nvswitch"]
    direct = head + "GPU0     X      NV4     NV4     SYS     0-55    0\nGPU1    NV4      X      SYS     NV4     0-55    0\n"
    cut = {d["index"]: d for d in topo.parse(direct)["devices"]}
    assert "nvlink" not in cut[2] and "nvlink" not in cut[3]    # wired directly: its bonds to the other cut row unread


# ----------------------------------------------------------------------------- lspci link lines without the header
ALONE = """\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM L1, Exit Latency L1 <4us
\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16 (ok)
"""
NARROW = ALONE.replace("Speed 2.5GT/s (downgraded), Width x16 (ok)", "Speed 32GT/s (ok), Width x8 (downgraded)")
ASKED = """$ sudo lspci -vv -s 0000:c1:00.0 | grep -E 'LnkCap:|LnkSta:'
\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L0s L1, Exit Latency L0s <1us, L1 <4us
\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16
$ sudo lspci -vv -s 0000:c0:01.1 | grep -E 'LnkCap:|LnkSta:'
\t\tLnkCap:\tPort #2, Speed 16GT/s, Width x16, ASPM L1, Exit Latency L1 <32us
\t\tLnkSta:\tSpeed 2.5GT/s, Width x16
"""


def test_one_device_s_link_lines_alone_are_the_gpu_s_and_idle_gen1_passes_handmade():
    dev = lspci.parse(ALONE)["devices"]
    assert dev == [{"index": None, "pci_bus_id": None, "pcie_gen_gpu_max": 5, "pcie_width_gpu_max": 16, "pcie_gen": 1,
                    "pcie_width": 16}]
    assert ex.explain_text(ALONE, "lnk.txt", Options()).status == "pass"
    assert verdict(ex.explain_text(NARROW, "lnk.txt", Options())) == ("warn", "PCIE_DOWNGRADED", "host")


def test_the_port_above_the_gpu_is_no_gpu_handmade():
    """pciutils 3.7+ marks `(downgraded)` on every device but a root or downstream port: the unmarked slow link is the
    bridge; the asked `-s` names the GPU's bus."""
    assert [d["pci_bus_id"] for d in lspci.parse(ASKED)["devices"]] == ["00000000:C1:00.0"]


def test_link_lines_of_several_unnamed_devices_are_not_guessed_handmade():
    assert not lspci.detect(ALONE + NARROW)
    nic = "41:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n" + ALONE
    assert not lspci.detect(nic)                              # lspci named it, and it is no GPU


# ----------------------------------------------------------------------------- a power cap beside a narrow link
def test_a_link_trained_narrow_heads_a_power_cap_handmade():
    dev = {"index": 0, "name": "NVIDIA GeForce RTX 3090", "pci_bus_id": "00000000:2B:00.0", "pcie_width": 8,
           "pcie_width_gpu_max": 16, "pcie_gen_gpu_max": 4, "power_limit_w": 280.0, "power_default_limit_w": 350.0}
    assert verdict(_gpu([dev], nvml_error="none")) == ("warn", "PCIE_DOWNGRADED", "host")
    capped = {**dev, "pcie_width": 16}
    assert verdict(_gpu([capped], nvml_error="none")) == ("warn", "THROTTLED", "host")      # still named alone
