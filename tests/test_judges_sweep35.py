"""Issue 35, sweep35: the parked mismatches grouped by class, and the two classes of `verify explain` fixed for the
class, not the example (hidden items of the same classes hit the same gaps):
- several hosts' outputs of one kind in one paste (two `nvidia-smi` tables, two `ibstatus` listings, pdsh's or
  clush's output of two nodes) were read as one list: a GPU index twice ended FACTS_INVALID, and a port named
  `mlx5_0` on the second host was merged into the first's and its DOWN dropped: a false pass. Now the paste is cut
  where a host's output starts (a prompt naming its host, a clush/dshbak header, pdsh's prefix, a tool's banner
  printed again) and each host is judged on its own: a fault on either is the file's, a pass only where each passes
  (verify/explain/hosts.py);
- a `ulimit -l` transcript that runs on into the next tool's output (`ulimit -l; ibstatus`, a paste that dropped the
  next prompt) lost its figure, so the 64 KiB limit went unjudged beside a healthy listing, and a conda or virtualenv
  prompt (`(base) user@host:~$ ulimit -l`) was no prompt at all
  (verify/explain/shellimit.py), and two hosts' `ulimit -a` (no banner, no host) kept the first host's figure: the
  lowest memlock line is read (verify/explain/ulimit.py);
- a `topo -m` matrix quoted without its header line was not read (b200-x8-570.124.06-topo-m-gpu2-...): behind
  NVSwitches its rows' `X` diagonal names the GPUs' columns (verify/explain/topo.py).
The pastes are built from real lines of the corpus's entries (each source.md gives its URL), named by slug."""
from __future__ import annotations

import pytest

from tests.helpers import ROOT
from tests.judging import explained, raw, verdict
from verify.explain import hosts

pytestmark = pytest.mark.unit

IBSTATUS = "hdr-ibstatus-two-hcas-mlx5-0-active-200-mlx5-1-down-disabled-lid-0xffff"
HEALTHY_TABLE = "h100-80gb-hbm3-x8-550-90-07-table-volatile-uncorr-ecc-zero-all-eight-idle"
ECC_TABLE = "h100x8-gpu-operator-allocatable-7-of-8-xid94-gpu0-volatile-uncorr-ecc-2-plugin-keeps-it-unhealthy"
DEVINFO_TWICE = "cx3-two-dual-port-hcas-port2-down-one-polling-ibv-devinfo"
SNAP = "slurm-snap-srun-ulimit-l-16384-on-both-nodes-login-node-unlimited-slurmd-unit-without-limitmemlock"



def _ports() -> tuple[str, str]:
    """The entry's two ibstatus blocks: mlx5_0 ACTIVE at 200, mlx5_1 DOWN/Disabled; the second renamed mlx5_0, as the
    first adapter of another node of the rail is named."""
    lines = raw(IBSTATUS).splitlines()
    return "\n".join(lines[:8]), "\n".join(lines[9:17]).replace("mlx5_1", "mlx5_0")


def _table(slug: str) -> str:
    text = raw(slug)
    return text[text.index("$ nvidia-smi") + len("$ nvidia-smi\n"):] if "$ nvidia-smi" in text else text


def test_the_class_is_real_one_listing_read_of_two_hosts_withholds_the_down_port():
    """Before sweep35 this read as one adapter, ACTIVE: a pass over the second host's DOWN port."""
    up, down = _ports()
    assert "state:           1: DOWN" in down and "'mlx5_0'" in up and "'mlx5_0'" in down


@pytest.mark.parametrize("paste", [
    "[root@gpu01 ~]# ibstatus\n{up}\n\n[root@gpu02 ~]# ibstatus\n{down}\n",               # prompts naming the hosts
    "user@gpu01:~$ ibstatus\n{up}\nuser@gpu02.cluster:~$ ibstatus\n{down}\n",
    "----------------\ngpu01\n----------------\n{up}\n----------------\ngpu02\n----------------\n{down}\n",  # clush -b
    "{up_pdsh}\n{down_pdsh}\n",                                                              # pdsh's prefixes
    "{up}\n\n{down}\n",                                                                       # no host named: run twice
])
def test_two_hosts_ibstatus_in_one_paste_judges_the_down_port_on_either(paste):
    up, down = _ports()
    text = paste.format(up=up, down=down, up_pdsh="\n".join(f"gpu01: {x}" for x in up.splitlines()),
                        down_pdsh="\n".join(f"gpu02: {x}" for x in down.splitlines()))
    r = explained(text)
    assert verdict(r) == ("fail", "FABRIC_PORT_DOWN", "host")
    assert r.summary.startswith(("gpu02: ", "run 2: ")) and "host by host" in r.details[0]
    swapped = explained(text.replace(up, "\0").replace(down, up).replace("\0", down))     # the faulty host first
    assert verdict(swapped) == ("fail", "FABRIC_PORT_DOWN", "host")


def test_two_hosts_nvidia_smi_tables_are_no_facts_invalid_and_the_ecc_host_fails():
    healthy, faulty = _table(HEALTHY_TABLE), _table(ECC_TABLE)
    assert "|                    2 |" in faulty           # GPU 0's volatile uncorrectable ECC count
    for text in (f"user@node-a:~$ nvidia-smi\n{healthy}\nuser@node-b:~$ nvidia-smi\n{faulty}\n",
                 f"{healthy}\n{faulty}\n", f"{faulty}\n{healthy}\n"):
        r = explained(text)
        assert verdict(r) == ("fail", "ECC_UNCORRECTABLE", "host"), r.summary


def test_two_healthy_hosts_tables_pass_each_named_where_one_list_was_facts_invalid():
    healthy = _table(HEALTHY_TABLE)
    other = healthy.replace("00000000:", "00000001:")        # the second node's GPUs on other bus ids
    one_list = explained(f"{healthy}\n{other.replace('NVIDIA-SMI', 'NVIDIA SMI')}\n")    # no banner twice: one list
    assert verdict(one_list)[1] == "FACTS_INVALID"
    r = explained(f"user@node-a:~$ nvidia-smi\n{healthy}\nuser@node-b:~$ nvidia-smi\n{other}\n")
    assert verdict(r) == ("pass", None, None) and r.summary.startswith("each of the 2 hosts passes")


def test_one_host_read_twice_is_not_split():
    """`ibv_devinfo` then `ibv_devinfo -d mlx4_1 -i 2 -v`: one adapter read again, one host (its verdict kept)."""
    assert hosts.sections(raw(DEVINFO_TWICE)) is None
    assert verdict(explained(raw(DEVINFO_TWICE), "raw.txt")) == ("warn", "FABRIC_PORT_DOWN", "host")
    up, _ = _ports()
    assert hosts.sections(f"user@gpu01:~$ ulimit -l\nunlimited\nuser@gpu01:~$ ibstatus\n{up}\n") is None


def test_a_host_whose_part_holds_nothing_read_leaves_the_other_s_verdict():
    up, down = _ports()
    r = explained(f"user@gpu01:~$ ssh gpu02\nuser@gpu02:~$ ibstatus\n{down}\n")
    assert verdict(r) == ("fail", "FABRIC_PORT_DOWN", "host")
    assert verdict(explained(f"[a@gpu01 ~]$ ibstatus\n{up}\n[a@gpu02 ~]$ ibstatus\n{up}\n")) == ("pass", None, None)


@pytest.mark.parametrize("transcript", [
    "$ ulimit -l\n64\n{listing}\n",                      # the next prompt dropped by the paste
    "[user@gpu01 ~]$ ulimit -l; ibstatus\n64\n{listing}\n",
    "$ ulimit -l\n64\n$ ibstatus\n{listing}\n",          # read before sweep35 too
    "(pytorch) root@gpu01:/workspace# ulimit -l\n64\n{listing}\n",      # a conda or virtualenv prompt
    "(base) [user@gpu01 ~]$ ulimit -l\n64\n(base) [user@gpu01 ~]$ ibstatus\n{listing}\n",
    "➜  ~ ulimit -l\n64\n{listing}\n",                 # oh-my-zsh
])
def test_a_memlock_transcript_that_runs_on_into_the_next_tool_keeps_its_limit(transcript):
    """The snap-slurm entry's own transcript (`$ ulimit -l` with its figure under it) is read as it was."""
    up, _ = _ports()
    r = explained(transcript.format(listing=up))
    assert verdict(r) == ("fail", "FABRIC_MEMLOCK_LOW", "host") and "64 KiB" in r.summary
    assert verdict(explained(raw(SNAP), "raw.txt")) == ("fail", "FABRIC_MEMLOCK_LOW", "host")


def test_a_figure_after_other_output_is_not_the_limit():
    """Only the figures right under `ulimit -l` are its output: a number further down is another tool's."""
    up, _ = _ports()
    r = explained(f"$ ulimit -l\nunlimited\n{up}\n64\n")
    assert verdict(r) == ("pass", None, None)


KERNEL = ROOT / "tests" / "data" / "kernel-log"


def test_a_central_syslog_of_two_hosts_names_the_host_of_the_fatal_xid():
    """A collector's `<time> host kernel: ` lines of two nodes (real NVRM lines of kernel-log's SOURCES.json): the
    fatal NVLink Xid 149 is gpu02's, the non-fatal 145 gpu01's, though both name a GPU in domain 0018/0019."""
    nonfatal = (KERNEL / "gpud-pr1174-xid-145-nonfatal.log").read_text().splitlines()
    fatal = (KERNEL / "gpud-pr1174-xid-149-fatal.log").read_text().splitlines()
    text = "\n".join([f"Oct 25 11:35:11 gpu01 kernel: {x}" for x in nonfatal] +
                     [f"Oct 25 11:35:12 gpu02.cluster kernel: {x}" for x in fatal]) + "\n"
    assert [h for h, _ in hosts.sections(text) or ()] == ["gpu01", "gpu02"]
    r = explained(text)
    assert r.status == "fail" and r.owner == "host" and r.summary.startswith("gpu02: ")
    one_host = text.replace("gpu02.cluster", "gpu01")
    assert hosts.sections(one_host) is None and explained(one_host).status == "fail"


EIGHT_RAILS = "h100-ibstat-eight-cx7-ndr-plus-bf3-bond-all-active"


def _rail_down(listing: str) -> str:
    """The entry's listing as another node of the rail prints it with mlx5_1 down and its last adapter gone."""
    blocks = listing.split("CA '")
    blocks[2] = blocks[2].replace("State: Active", "State: Down", 1).replace("Physical state: LinkUp",
                                                                            "Physical state: Disabled", 1)
    return "CA '".join(blocks[:-1]).rstrip() + "\n"


@pytest.mark.parametrize("paste", [
    "{a}\n{b}",                                                    # no host named: the listing printed again
    "gpu01:~$ ibstat\n{a}\ngpu02:~$ ibstat\n{b}",                  # a PS1 of `\\h:\\w\\$`
    "[root@login ~]# ssh gpu01 ibstat\n{a}\n[root@login ~]# ssh -t gpu02 sudo ibstat\n{b}",    # one login, two nodes
])
def test_another_node_s_listing_with_a_rail_down_and_one_gone_is_judged(paste):
    healthy = raw(EIGHT_RAILS)
    assert verdict(explained(healthy, "raw.txt")) == ("pass", None, None)
    r = explained(paste.format(a=healthy, b=_rail_down(healthy)))
    assert verdict(r) == ("fail", "FABRIC_PORT_DOWN", "host") and "mlx5_1" in r.summary


def test_ssh_names_the_host_its_command_ran_on():
    for line, host in (("$ ssh gpu02 ibstat", "gpu02"), ("[root@login ~]# ssh -p 2222 root@gpu02.local nvidia-smi -q",
                                                         "gpu02"), ("user@login:~$ ssh -t gpu03 sudo ibstat", "gpu03"),
                       ("$ ssh -tt -i key.pem ubuntu@10.0.0.5 nvidia-smi", "10.0.0.5")):
        assert hosts._marker([line], 0) == host, line
    for line in ("# ssh gpu02", "Port 1:", "GPU0:", "echo $ ssh", "        State: Active", "https://x.org/#"):
        assert hosts._marker([line], 0) is None, line


B200_HEADERLESS = "b200-x8-570.124.06-topo-m-gpu2-no-nvlink-to-any-peer-node-sys-while-the-other-seven-nv18-vllm-env"
DGX1 = "v100-sxm2-32gb-x8-nvlink-all-gather-4gib-out-of-bounds-2-failed-maintainer-fixed-in-master"


def test_a_topo_matrix_quoted_without_its_header_is_read_from_its_x_diagonal_behind_switches():
    """The vLLM report's matrix has no header line and no GPU7 row: rows GPU0..GPU6, each with its `X` in its own
    column, are the GPUs' columns; GPU2 shows NODE/SYS to every peer while the others show NV18: its links are down."""
    from verify.explain import topo
    text = raw(B200_HEADERLESS)
    assert "GPU2    NODE    NODE     X      NODE    SYS" in text and "CPU Affinity" not in text
    devices = topo.parse(text)["devices"]
    assert [sum(d["nvlink"]) for d in devices] == [18, 18, 0, 18, 18, 18, 18]
    assert all(d.get("numa_node") is None for d in devices)            # the affinities are not named: unread
    assert verdict(explained(text, "raw.txt")) == ("fail", "NVLINK_DOWN", "host")


def test_a_headerless_direct_wired_matrix_says_nothing_of_nvlink():
    """A DGX-1's cube mesh (NV1/NV2 to some peers, SYS to others): without the header the bonds to the columns after
    the rows shown are unread, so no GPU's link count is known, and no link is called down."""
    from verify.explain import topo
    rows = [line for line in raw(DGX1).splitlines() if line.startswith("GPU")]
    assert rows[0].split() == ["GPU0", "X", "NV1", "NV1", "NV2", "SYS", "SYS", "NV2", "SYS", "0-95"]
    for shown in (rows[:4], rows):
        devices = topo.parse("\n".join(shown))["devices"]
        assert devices and all("nvlink" not in d for d in devices)
        assert explained("\n".join(shown)).status != "fail"


ULIMIT_64 = "ulimit-memlock-64k-ibv-create-cq-fails"
ULIMIT_UNLIMITED = "aws-parallelcluster-alinux-slurmd-init-d-limits-patch-ulimit-a-max-locked-memory-unlimited"


def test_two_hosts_ulimit_a_in_one_paste_judge_the_lower_limit_whichever_comes_first():
    """`ulimit -a` has no banner to cut at and names no host: every memlock line is read and the lowest is the
    limit a fault shows (a node's 64 KiB beside another's unlimited); one listing shown twice gives one figure."""
    low = raw(ULIMIT_64).replace("ulimit -a\n", "")
    high = raw(ULIMIT_UNLIMITED).split("\n", 1)[1]          # without the ec2-user prompt: no host named
    assert "max locked memory       (kbytes, -l) 64" in low and "(kbytes, -l) unlimited" in high
    for text in (f"{high}\n{low}", f"{low}\n{high}"):
        assert verdict(explained(text)) == ("fail", "FABRIC_MEMLOCK_LOW", "host")
    assert verdict(explained(f"{high}\n{high}")) == ("pass", None, None)


def test_two_hosts_rdma_link_show_judge_the_port_down_on_either():
    """iproute2's `rdma link show` as verify/explain/ib.py reads it (rdma/link.c's line): a port line names its
    adapter and port before its state, so another node's listing starts over at the same `link mlx5_0/1`."""
    healthy = ("link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ib0\n"
               "link mlx5_1/1 state ACTIVE physical_state LINK_UP netdev ib1\n")
    down = healthy.replace("mlx5_1/1 state ACTIVE physical_state LINK_UP", "mlx5_1/1 state DOWN physical_state DISABLED")
    for text in (healthy + down, down + healthy):
        assert verdict(explained(text)) == ("warn", "FABRIC_PORT_DOWN", "host")
    assert verdict(explained(healthy + healthy)) == ("pass", None, None)


@pytest.mark.parametrize(("first", "second"), [("### gpu01", "### gpu02"), ("**gpu01**", "**gpu02**"),
                                                ("Node 1:", "Node 2:"), ("host: gpu01", "host: gpu02")])
def test_a_heading_or_label_naming_each_host_cuts_the_paste(first, second):
    up, down = _ports()
    r = explained(f"{first}\n{up}\n\n{second}\n{down}\n")
    assert verdict(r) == ("fail", "FABRIC_PORT_DOWN", "host") and r.summary.startswith(second.strip("#*: ")
                                                                                         .split()[-1] + ": ")
    for line in ("## Output", "**Note**", "### Step 2", "# 1", "nodes: 4", "# nThread 1 nGpus 8"):
        assert hosts._marker([line], 0) is None, line


NODE_EXPORTER = "node-exporter-e2e-node-infiniband-metrics-i40iw0-iwarp-10g-and-mlx4-0-cx3-two-qdr-40-ports-all-active-linkup"
PROCFS = "procfs-omni-path-hfi1-0-hpe-op101-no-hca-type-port-active-linkup-100-4x-edr-error-counters-zero"


def test_node_exporter_infiniband_series_are_the_ports_sysfs_states_and_rates():
    """Class: a monitoring format explain did not read. node_exporter's e2e scrape: ids as sysfs numbers them, the
    rate in bytes per second (5e+09 is 40 Gb/s), hca_type from node_infiniband_info."""
    from verify.explain import nodeib
    text = raw(NODE_EXPORTER)
    assert 'node_infiniband_rate_bytes_per_second{device="mlx4_0",port="1"} 5e+09' in text
    adapters = {a["name"]: a for a in nodeib.parse(text)["adapters"]}
    assert adapters["mlx4_0"]["hca_type"] == "MT4099"
    assert [(p["port"], p["state"], p["phys_state"], p["rate_gbps"]) for p in adapters["mlx4_0"]["ports"]] == [
        (1, "ACTIVE", "LinkUp", 40.0), (2, "ACTIVE", "LinkUp", 40.0)]
    assert verdict(explained(text, "raw.txt")) == ("pass", None, None)
    down = text.replace('node_infiniband_state_id{device="mlx4_0",port="2"} 4',
                        'node_infiniband_state_id{device="mlx4_0",port="2"} 1').replace(
        'node_infiniband_physical_state_id{device="mlx4_0",port="2"} 5',
        'node_infiniband_physical_state_id{device="mlx4_0",port="2"} 3')
    r = explained(down)
    assert r.status in ("warn", "fail") and r.code == "FABRIC_PORT_DOWN" and r.owner == "host"
    odd = text.replace('{device="i40iw0",port="1"} 4', '{device="i40iw0",port="1"} 9')     # no name the kernel gives
    assert nodeib.parse(odd)["adapters"][0]["ports"][0]["state"] is None


def test_a_ttar_or_head_dump_of_the_sysfs_files_is_the_sysfs_dump():
    from verify.explain import sysfsib
    text = raw(PROCFS)
    assert "Path: fixtures/sys/class/infiniband/hfi1_0/ports/1/state\nLines: 1\n4: ACTIVE" in text
    port = sysfsib.parse(text)["adapters"][0]["ports"][0]
    assert (port["state"], port["phys_state"], port["rate_gbps"]) == ("ACTIVE", "LinkUp", 100.0)
    assert verdict(explained(text, "raw.txt")) == ("pass", None, None)
    head = ("==> /sys/class/infiniband/mlx5_0/ports/1/state <==\n4: ACTIVE\n\n"
            "==> /sys/class/infiniband/mlx5_1/ports/1/state <==\n1: DOWN\n")
    assert hosts.sections(head) is None                       # a node's files, one host
    assert verdict(explained(head))[1:] == ("FABRIC_PORT_DOWN", "host")
