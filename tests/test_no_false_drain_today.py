"""No false drain (issue 35): every host-owned rule added or changed on 2026-11-30 meets a real excerpt of the
corpus (tests/data/real-world/, each with its URL) whose host is healthy (kind healthy, or the job or the image at
fault) and whose text comes near the rule: the excerpt is read on both roads (`verify explain` of raw.txt, `replay` of
its facts) and no verdict is the host's. Each row names the rule, the entry, and a line of the excerpt that is the
rule's neighbour (asserted present, so the row keeps testing what it says)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.judging import explained, verdict
from verify import replay
from verify.checks.gpu.powercap import power_cap
from verify.facts import NvmlDevice
from verify.findings import Findings

pytestmark = pytest.mark.unit

CORPUS = Path(__file__).parent / "data" / "real-world"

# (the rule, the corpus entry, a text of its raw.txt near the rule)
NEAR = [
    # verify/checks/gpu/aer.py, verify/explain/aer.py: AER on a GPU's bus (fatal: GPU_LOST; a corrected storm warns)
    ("gpu/aer.py corrected AER storm", "asus-k501ux-geforce-laptop-journal-pcieport-1c-5-aer-corrected-receiver-"
     "error-physical-layer-repeating-benign", "Corrected error received"),
    ("gpu/aer.py AER status bits", "h100-hgx-lspci-vv-eight-gpus-gen5-x16-ok-sticky-correctable-aer", "CESta"),
    # verify/checks/gpu/unanswering.py: every live NVML read in error is a GPU that no longer answers (GPU_LOST)
    ("gpu/unanswering.py ERR! on a field", "v100-pcie-azure-power-draw-err-transient", "ERR!"),
    ("gpu/unanswering.py Unknown Error", "rtx4090-eight-idle-gen1-addressing-mode-unknown-error", "Unknown Error"),
    # verify/explain/fmlog.py: the fabric manager's SXid lines; its other lines fill no field
    ("explain/fmlog.py fabric manager's log", "a40-pair-nvlink-bridge-fabricmanager-520-nv-warn-nothing-to-do-no-"
     "nvswitch", "NV_WARN_NOTHING_TO_DO"),
    ("explain/fmlog.py fabric manager failing", "geforce-4gb-rocky8-kvm-fabricmanager-fails-to-start-no-nvswitch-"
     "nvidia-smi-51c-15w-driver-510", "fabricmanager"),
    ("explain/fmlog.py fabric manager active", "b200-class-bottlerocket-nvlsm-fabric-manager-active-gpu-probe-"
     "requests-unifiedmemoryperf-blackwell-cc-10.0-runs", "abric"),
    # verify/explain/nvlsbind.py: NCCL's NVLS multicast bind refused
    ("explain/nvlsbind.py NVLS multicast in use", "h100-x8-one-node-nvls-multicast-available-16-channels-init-"
     "complete-3s-small-message-regression-2.28-to-2.29", "NVLS multicast support is available"),
    ("explain/nvlsbind.py NVLS forced on", "gb200-tray-4gpu-570.124.06-nccl-mnnvl-state-3-healthmask-0xaa-all-health-"
     "bits-false-clique-0x7ffe-nvls-forced-on-errors-fabric-healthy", "NVLS"),
    # verify/checks/fabric/gdrready.py, verify/explain/peermem.py: the peer-memory module refused or missing
    ("fabric/gdrready.py peermem loaded", "gpud-lsmod-peermem-nvidia-peermem-loaded-ib-core-uses-it-fabric-manager-"
     "535-161-08-active-healthy", "nvidia_peermem"),
    ("fabric/gdrready.py peermem n/a by design", "gb10-dgx-spark-roce-200g-nccl-dmabuf-enabled-rdma-plugin-gdr-"
     "disabled-p2c-nvidia-peermem-n-a-by-design", "GPU Direct RDMA Disabled"),
    ("fabric/gdrready.py GDR disabled by design", "g5-8xlarge-two-a10g-nodes-efa-ofi-1.13.2-nccl-2.25.1-gdr-disabled-"
     "by-design", "NCCL INFO"),
    # verify/checks/fabric/check.py memlock, verify/explain/setlimit.py: an ENOMEM from a pinning call
    ("fabric memlock: ibv_create_cq ENOMEM", "700-nodes-nccl-2.20.3-alltoall-ibv-create-cq-enomem-with-ulimit-l-"
     "unlimited-allreduce-fine-job-scale", "ibv_create_cq failed with error Cannot allocate memory"),
    ("fabric memlock: ibv_create_qp ENOMEM", "mercury-libfabric-verbs-rxm-4050-clients-one-node-ibv-create-qp-enomem-"
     "ulimit-l-unlimited-job-scale-not-memlock", "Cannot allocate memory"),
    # verify/checks/nccl/regcap.py: a DMA-BUF registration refused (the image's NCCL)
    ("nccl/regcap.py ibv_reg_dmabuf_mr EOPNOTSUPP", "two-nodes-nccl-2.13-ibv-reg-dmabuf-mr-operation-not-supported-no-"
     "fallback-to-peermem-2.11-works", "ibv_reg_dmabuf_mr"),
    # verify/checks/fabric/splitrate.py: ConnectX split and half rates
    ("fabric/splitrate.py HDR100 by design", "kaust-ibex-login-cx6-mt4123-ibstat-rate-100-active-sm-lid-8-hdr100-by-"
     "design", "Rate: 100"),
    ("fabric/splitrate.py BlueField-3 bonds", "bf3-mt41692-roce-bonds-200-active", "Rate: 200"),
    ("fabric/splitrate.py ConnectX-7 beside a bond", "h100-ibstat-eight-cx7-ndr-plus-bf3-bond-all-active", "Rate:"),
    # verify/explain/ibdevnetdev.py: ibdev2netdev -v read by the RDMA port's own state (a port down: the host's)
    ("explain/ibdevnetdev.py port ACTIVE, netdev Down", "azure-nc24rs-v3-v100-ibdev2netdev-v-cx3-vf-mt4100-port-active-"
     "ib0-netdev-down-nccl-tests-openmpi-error", "(ACTIVE) ==> ib0 (Down)"),
    ("explain/ibdevnetdev.py IB netdevs Down by design", "h100-ibdev2netdev-eight-cx7-ib-netdevs-down-no-ipoib-by-"
     "design-cx6-eth-first-ports-up", "(Down)"),
    # verify/explain/mnnvl.py: NCCL's MNNVL fabric state and health mask
    ("explain/mnnvl.py health bits false, fabric healthy", "gb200-tray-4gpu-570.124.06-nccl-mnnvl-state-3-healthmask-"
     "0xaa-all-health-bits-false-clique-0x7ffe-nvls-forced-on-errors-fabric-healthy", "MNNVL"),
    # verify/explain/nvbandwidth.py: nvbandwidth's multinode failures
    ("explain/nvbandwidth.py multinode across nodes", "hgx-b200-two-nodes-nvbandwidth-multinode-cumemsetaccess-"
     "invalid-value-across-nodes-imex-connected-gpu0-nvlinks-50gbs-no-cross-node-nvlink", "nvbandwidth"),
    # verify/checks/nccl/transport.py's GPUDirect rule beside today's GDR plumbing: GDR used, or not offered by design
    ("nccl GDR level SYS, GDRDMA used", "deepseek-v2.5-vllm-tp8-pp2-k8s-lws-two-pods-8-ib-hcas-nccl-2.21.5-gdr-level-sys-"
     "pp-comm-gdrdma-serving", "GDRDMA"),
    ("nccl EFA without GDR support", "g6e-efa-ofi-gdr-not-supported-every-channel-without-gdrdma", "NET/OFI"),
    # a split ConnectX-8 in Ethernet, the image's NCCL slow
    ("fabric/splitrate.py CX8 split 2x400G Ethernet", "b300-16-nodes-cx8-split-2x400g-ethernet-nccl-2.29.7-nvlstree-"
     "200-gbps-from-4-nodes-ring-760-known-bug-fixed-2.30.3", "NVLSTree"),
    ("fabric/offport.py second RoCE port disabled", "a800-slurm-ibstatus-two-hdr-ib-rails-active-200-roce-100-active-"
     "second-roce-port-disabled-nccl-picks-ib", "3: Disabled"),
    # verify/checks/fabric/offport.py: an Ethernet port Disabled
    ("fabric/offport.py Ethernet Disabled beside IB", "h100-ibstat-eight-cx7-ndr-ib-active-beside-cx6dx-ethernet-"
     "three-disabled", "Disabled"),
    # verify/checks/gpu/node.py: nvidia-container-cli's load failure (the toolkit's hook, the host's)
    ("gpu/node.py NVML not loaded in the process", "microk8s-device-plugin-docker-default-runtime-nvidia-has-no-"
     "effect-could-not-load-nvml-library", "NVML"),
    # verify/checks/nccl/connect.py: a connect the stack aborted (ECONNABORTED) across nodes
    ("nccl/connect.py ECONNABORTED to a link-local peer", "n122-246-085-bootstrap-over-ib1-ipv6-link-local-fe80-"
     "socketstartconnect-software-caused-connection-abort", "Software caused connection abort"),
    # verify/checks/nccl/launchcfg.py: NCCL's build not fitting the GPU (the image's)
    ("nccl/launchcfg.py maxSharedMem", "rtx5090-x2-nccl-2.25.1-all-reduce-cuda-invalid-argument-maxsharedmem-82240-"
     "exceeds-79856-fixed-in-2.26", "maxSharedMem"),
    ("nccl/launchcfg.py maxSharedMem, P2P off", "rtx5090-x2-workstation-nccl-2.25.1-cuda12.2-p2p-disabled-still-fails-"
     "maxsharedmem-82240-exceeds-79856-needs-2.26", "maxSharedMem"),
    # verify/checks/gpu/powercap.py: an enforced power limit below the one set
    ("gpu/powercap.py SW power cap flag at idle", "a10-550.90.12-q-a-passthrough-vm-idle-p8-sm-0-mhz-sw-power-cap-flag-"
     "at-15w-of-150w-ecc-zero-gls-capture", "Power Limit"),
    ("gpu/powercap.py the owner's own cap", "rtx3090-pass-through-vm-525.147.05-xml-idle-p8-power-limit-200w-of-350w-"
     "default-owner-cap", "power_limit"),
    # verify/checks/gpu/xidsuspect.py: one program restarted into the same graphics exception
    ("gpu/xidsuspect.py one program's Xid 13 loop", "proton-space-marine-2-crash-loop-three-xid13-graphics-exception-"
     "class-c997-offset-0-one-gpu-journal-p-err", "Xid"),
]


def _roads(entry: str) -> dict[str, tuple]:
    """Both roads' verdicts of one entry: explain's of raw.txt and replay's of each record of facts/."""
    item = CORPUS / entry
    got = {"explain": verdict(explained((item / "raw.txt").read_text()))}
    folder = replay.load(str(item / "facts"), None, {})
    got.update({f"replay {r.name}": verdict(replay.judge(r, folder.options)) for r in folder.records})
    return got


@pytest.mark.parametrize(("rule", "entry", "near"), NEAR, ids=[row[0] for row in NEAR])
def test_a_healthy_host_s_real_excerpt_near_the_rule_drains_nothing(rule, entry, near):
    item = CORPUS / entry
    expected = json.loads((item / "expected.json").read_text())
    assert expected["url"].startswith("https://")
    assert all(v["owner"] != "host" for v in expected["verdicts"].values()), "the entry's host is not healthy"
    assert near in (item / "raw.txt").read_text(), f"{rule}: the excerpt no longer holds {near!r}"
    got = _roads(entry)
    assert not {road: v for road, v in got.items() if v[2] == "host"}, (rule, got)


def test_a_grace_module_s_steered_power_limit_is_no_cap():
    """gpu/powercap.py on the GH200 entry (NVIDIA GH200 480GB, Current 700 W, Requested and Default 900 W, the
    module's 1000 W budget printed beside it): the limit the superchip's power steering sets is by design, so the
    power rule names nothing on either road (its lifetime remapped uncorrectable count is another rule's, kept)."""
    entry = "gh200-480gb-idle-one-dbe-row-remapped-pcie-x1-700w-of-900w"
    item = CORPUS / entry
    assert "Requested Power Limit             : 900.00 W" in (item / "raw.txt").read_text()
    r = explained((item / "raw.txt").read_text())
    assert r.code != "THROTTLED" and "power limit" not in " ".join([r.summary, *r.details]), r.summary
    folder = replay.load(str(item / "facts"), None, {})
    for rec in folder.records:
        res = replay.judge(rec, folder.options)
        assert res.code != "THROTTLED" and "power limit" not in " ".join([res.summary, *res.details]), res.summary


# Near gpu/node.py's toolkit rule, with the host kept by an older rule: NVML's driver/library version mismatch alone
# is the node's (an upgrade without a reboot) where no field shows the image brought the library (strict xfails in
# test_gpu_rules.py and test_explain.py since batch 53). The toolkit's rule itself must not be what speaks.
TOOLKIT_NEAR = ["biop-desktop-image-build-pulls-libnvidia-compute-570.86-nvml-library-version-mismatch-in-container",
                "e4s-cuda-release-image-bundles-driver-610.43-via-ollama-installer-nvml-version-mismatch-in-container",
                "fedora25-container-cuda9-installer-driver-384.81-on-host-kernel-module-384.90-nvml-mismatch-cuinit-"
                "no-device"]


@pytest.mark.parametrize("entry", TOOLKIT_NEAR)
def test_an_image_s_nvml_mismatch_is_never_read_as_the_toolkit_s_missing_library(entry):
    item = CORPUS / entry
    assert "mismatch" in (item / "raw.txt").read_text()
    folder = replay.load(str(item / "facts"), None, {})
    for res in [explained((item / "raw.txt").read_text()), *(replay.judge(r, folder.options) for r in folder.records)]:
        assert "Container Toolkit" not in " ".join([res.summary, *res.details]), res.summary


@pytest.mark.parametrize("name", ["NVIDIA GH200 480GB", "NVIDIA GB200", "NVIDIA GB300"])
def test_only_a_grace_module_s_gpu_is_spared_the_cap_rule(name):
    dev: NvmlDevice = {"index": 0, "name": name, "power_limit_w": 700.0, "power_default_limit_w": 900.0,
           "power_requested_limit_w": 900.0}
    found = Findings()
    power_cap(dev, "device 0", found)
    assert not found.items
    power_cap({**dev, "name": "NVIDIA H200"}, "device 0", found)
    assert [(f.code, f.owner) for f in found.items] == [("THROTTLED", "host")]
    found = Findings()
    power_cap({**dev, "power_requested_limit_w": None}, "device 0", found)
    assert [(f.code, f.owner) for f in found.items] == [("THROTTLED", "host")], "the limit set unread: still warned"
