"""Issue 35's batches 213 and 214, fixed by class: NCCL's topology XML (`NCCL_TOPO_DUMP_FILE`, a vendor's
`NCCL_TOPO_FILE`) is read by `verify explain` (verify/explain/nccltopo.py) into the facts its translations take by
the letter of verify/FACTS.md: each `<gpu dev= sm=>` its index, `cc`, the enclosing `<pci>`'s bus id and
link_speed/link_width as `pcie_gen_max`/`pcie_width_max` (NCCL writes the lower of the device's and its port's
maxima, never the current link; width 0 is none), the `<cpu numaid>` as `numa_node`; a closed `<gpu/>` with no
`<nvlink>` has none, NVLinks to class 0x068000 go to NVSwitches. A hypervisor's virtual bridge (2.5 GT/s x1) is no
field and no degradation.
(amd-turin-dual-socket-sm120-gpu-nccl-topo-xml-32-gts-x16-erdma-nic-32-gts-x8-by-design-no-nvlink,
h200-hgx-bare-metal-nccl-topo-dump-gpu0-and-cx7-mlx5-0-400g-both-32-gts-x16-under-one-broadcom-switch-healthy,
ibm-vpc-h100-vsi-vendor-nccl-topo-file-virtual-bridges-2.5-gts-x1-gpus-32-gts-width-0-by-design).
A script's successive `nvidia-smi --query-gpu=... --format=csv,noheader` queries of one host are read by their quoted
commands and joined row by row (explain/smiquery.py); rows without their command have no known columns and are not
read (h100-sxm-runpod-1x-query-gpu-noheader-1980-of-1980-mhz-gen5-x16-idle-pod-benchmark-healthy, whose excerpt holds
the rows alone: a strict expected failure through `verify explain`)."""
from __future__ import annotations

import time

import pytest

from tests.judging import contract, explained, verdict
from verify import explain as ex
from verify.explain import nccltopo, smiquery

pytestmark = pytest.mark.unit

# h200-hgx-bare-metal-nccl-topo-dump-...: GPU 0 under a Broadcom Gen5 switch, NVLinks to four NVSwitches
H200 = """<system version="1">
  <cpu host_hash="0x16fe256e956b115c" numaid="0" affinity="00000000,00ffffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="207">
    <pci busid="0000:16:00.0" class="0x060400" vendor="0x1000" device="0xc030" subsystem_vendor="0x15d9" subsystem_device="0x1d25" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:18:00.0" class="0x030200" vendor="0x10de" device="0x2335" subsystem_vendor="0x10de" subsystem_device="0x18be" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="90" rank="0" gdr="1">
          <nvlink target="0000:07:00.0" count="5" tclass="0x068000"/>
          <nvlink target="0000:06:00.0" count="5" tclass="0x068000"/>
          <nvlink target="0000:05:00.0" count="4" tclass="0x068000"/>
          <nvlink target="0000:08:00.0" count="4" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:19:00.0" class="0x020000" vendor="0x15b3" device="0x1021" subsystem_vendor="0x15b3" subsystem_device="0x0023" link_speed="32.0 GT/s PCIe" link_width="16">
        <nic>
          <net name="mlx5_0" dev="0" speed="400000" port="1" latency="0.000000" guid="0xa87cb10003e1a258" maxconn="131072" gdr="1"/>
        </nic>
      </pci>
    </pci>
"""
# ibm-vpc-h100-vsi-...: a virtual TI bridge at 2.5 GT/s x1 above a passed-through GPU of width 0
IBM = """<system version="1">
  <cpu host_hash="0xa5f31daa95182da8" numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:a1:00.0" class="0x060400" vendor="0x104c" device="0x8232" subsystem_vendor="0x0000" subsystem_device="0x0000" link_speed="2.5 GT/s PCIe" link_width="1">
      <pci busid="0000:a4:00.0" class="0x030200" vendor="0x10de" device="0x2330" subsystem_vendor="0x10de" subsystem_device="0x16c1" link_speed="32.0 GT/s PCIe" link_width="0">
        <gpu dev="0" sm="90" rank="0" gdr="1">
          <nvlink target="0000:f5:00.0" count="5" tclass="0x068000"/>
        </gpu>
      </pci>
    </pci>
"""
# amd-turin-dual-socket-sm120-...: a Blackwell RTX PRO GPU, no NVLink ("No nvlink, and the topo XML:")
TURIN = """<system version="1">
  <cpu host_hash="0xe0e7749f4f598766" numaid="0" arch="x86_64" vendor="AuthenticAMD" familyid="191" modelid="2">
    <pci busid="0000:01:00.0" class="0x060400" vendor="0x1000" device="0xc030" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:03:00.0" class="0x030000" vendor="0x10de" device="0x2bb3" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="120" rank="0" gdr="1" mlopart="-1"/>
      </pci>
    </pci>
"""


def test_a_topology_dump_is_read_as_its_gpus_link_maxima_numa_node_and_nvswitches():
    (dev,) = nccltopo.parse(H200)["devices"]
    assert dev == {"index": 0, "pci_bus_id": "0000:18:00.0", "cc": "9.0", "pcie_gen_max": 5, "pcie_width_max": 16,
                   "numa_node": 0, "nvswitch": True}       # link counts per target are no per-link states: no nvlink
    kind = ex.kind_of(H200)
    assert kind is not None and kind.parse is nccltopo.parse


def test_a_virtual_bridges_gen1_x1_is_not_the_gpus_link_and_width_0_is_none():
    (dev,) = nccltopo.parse(IBM)["devices"]
    assert (dev["pci_bus_id"], dev["pcie_gen_max"], dev["pcie_width_max"]) == ("0000:a4:00.0", 5, None)
    assert verdict(explained(IBM, "topo.xml")) == ("warn", "HEALTH_NOT_ASSESSED", "host")     # never a degraded link


def test_a_closed_gpu_with_no_nvlink_has_none_and_sm_120_is_cc_12():
    (dev,) = nccltopo.parse(TURIN)["devices"]
    assert (dev["cc"], dev["nvlink"], dev.get("nvswitch")) == ("12.0", [], None)
    assert verdict(explained(TURIN, "topo.xml")) == ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_a_gpu_cut_before_its_close_tag_leaves_its_nvlink_unread():
    cut = TURIN.replace('mlopart="-1"/>', 'mlopart="-1">')
    (dev,) = nccltopo.parse(cut)["devices"]
    assert "nvlink" not in dev


@pytest.mark.parametrize("attrs", ['dev="²" sm="9²"', 'dev="99999999999999999999" sm="99999999"', 'dev="" sm=""'])
@pytest.mark.parametrize("width", ["1e9", "9999", "²"])
def test_figures_no_nccl_writes_are_left_unread(attrs, width):
    facts = nccltopo.parse(TURIN.replace('dev="0" sm="120"', attrs).replace('link_width="16"', f'link_width="{width}"'))
    (dev,) = facts["devices"]
    assert (dev["index"], dev["cc"], dev["pcie_width_max"]) == (None, None, None)
    assert contract(next(k for k in ex.KINDS if k.parse is nccltopo.parse), facts) == []


def test_text_without_nccls_root_or_a_gpu_is_not_this_kind():
    assert not nccltopo.detect(TURIN.replace("<system", "<sys"))
    assert not nccltopo.detect('<system version="1">\n  <cpu numaid="0">\n')


def test_a_hostile_paste_is_read_in_linear_time():
    text = ('<system version="1">\n' + '<pci busid="' + "a" * (4 << 20) + '\n' + '<gpu dev="0" ' * 200_000 + "\n"
            + "<pci" + '  a="1"' * 500_000 + "\n")
    start = time.monotonic()
    nccltopo.detect(text)
    assert time.monotonic() - start < 5


# h100-sxm-runpod-1x-query-gpu-noheader-...: pod-test.sh's three `--format=csv,noheader` queries of one GPU, with the
# commands the script runs (its README's sample output prints the rows alone)
POD = ("$ nvidia-smi --query-gpu=name,pci.bus_id,serial,uuid --format=csv,noheader\n"
       "NVIDIA H100 80GB HBM3, 00000000:1B:00.0, 1650724018113, GPU-74fd4d05-2bcc-aa9e-2691-5c3f13260073\n"
       "$ nvidia-smi --query-gpu=clocks.gr,clocks.max.gr,clocks.mem,clocks.max.mem --format=csv,noheader\n"
       "1980 MHz, 1980 MHz, 2619 MHz, 2619 MHz\n"
       "$ nvidia-smi --query-gpu=memory.total,memory.free,pcie.link.gen.current,pcie.link.width.current "
       "--format=csv,noheader\n"
       "81559 MiB, 81071 MiB, 5, 16\n")


def test_successive_noheader_queries_of_one_host_are_the_same_gpus_read_row_by_row():
    (dev,) = smiquery.parse(POD)["devices"]
    assert (dev["pci_bus_id"], dev["memory_bytes"], dev["pcie_gen"], dev["pcie_width"]) == (
        "00000000:1B:00.0", 81559 << 20, 5, 16)
    assert verdict(explained(POD)) == ("pass", None, None)       # as its translation: Gen5 x16, nothing degraded


def test_a_table_of_another_row_count_or_naming_its_own_gpus_is_not_merged():
    two = POD.replace("81559 MiB, 81071 MiB, 5, 16\n", "81559 MiB, 81071 MiB, 5, 16\n81559 MiB, 81071 MiB, 4, 8\n")
    assert len(smiquery.parse(two)["devices"]) == 3
    again = POD + POD.splitlines(keepends=True)[0] + POD.splitlines(keepends=True)[1]
    assert len(smiquery.parse(again)["devices"]) == 2        # a second identity table: its own rows (once() merges)


def test_noheader_rows_without_their_command_are_never_given_guessed_columns():
    rows = "".join(line for line in POD.splitlines(keepends=True) if not line.startswith("$"))
    assert not smiquery.detect(rows)
    assert verdict(explained(rows)) == ("skip", "FACTS_INCOMPLETE", None)
