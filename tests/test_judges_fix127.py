"""Issue 35, batch 127 (RDMA from docs and threads). The classes fixed:
- libibverbs naming a kernel verbs device no provider of the image drives (`no userspace device-specific driver
  found for /sys/class/infiniband_verbs/uverbs0`) beside a device list that opened none (`verbs_devices` []): the
  image's, fail FABRIC_USERSPACE_MISSING, as FACTS.md's `verbs_error` says "whatever else was read", never FABRIC_NONE;
- an application's own memory registration failing with ENOMEM (Mooncake's transfer engine: `Failed to register
  memory ...: Cannot allocate memory`) is a call that pins memory running out: `memlock_error`, FABRIC_MEMLOCK_LOW;
  its EFAULT (`Bad address [14]`) is not;
- `verify explain` reads `mlxlink -d <dev>`'s Operational Info (one port's state, rate and width) where the command
  line names the device, and the OpenMMLab-style environment report (sglang's `check_env`: `CUDA available`,
  `GPU 0,1,...: <name>`, `PyTorch`), an inventory of the GPUs that a read of them beside it answers.
Real lines are quoted with their slugs (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, fabric, raw, replayed, verdict
from verify.explain import kind_of, mlxlink, mmcvenv
from verify.shared import rdma

pytestmark = pytest.mark.unit

SOFT_ROCE = "soft-roce-rxe0-ibv-devices-cannot-load-librxe-rdmav2-so-no-userspace-driver-for-uverbs0-lib64-path-kernel-4.7"
MOONCAKE_STORE = ("mooncake-store-service-two-ib-hcas-ibp12s0-ibp75s0-failed-to-register-memory-cannot-allocate-memory-"
                  "ulimit-l-doc-fix")
CX6 = "cx6-mlx5-0-mlxlink-state-active-eth-an-fsm-enable-200g-4x-rs-fec-544-514-blog-walkthrough"
H800 = ("h800-x8-sglang-pd-mooncake-register-memory-bad-address-14-expandable-segments-vmm-memory-not-peermem-"
        "registrable-job-env")
B200 = "b200-x8-575.57.08-topo-nv18-every-pair-sglang-deepseek-r1-tp8-watchdog-timeout-gpus-fine"
CX4 = "cx4-hpe-840qsfp28-mlxlink-physical-linkup-rs-fec-100gbe-switch-port-oper-down"
NO_PROVIDER = "libibverbs: Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0"





# ----------------------------------------------------- a verbs device no provider drives, the list empty
def test_a_kernel_verbs_device_no_provider_drives_with_an_empty_device_list_is_the_images():
    """SOFT_ROCE: `ibv_devices` lists nothing under its header and libibverbs warns of uverbs0."""
    assert replayed(SOFT_ROCE) == {"fabric": ("fail", "FABRIC_USERSPACE_MISSING", "image")}
    r = fabric(verbs_devices=[], verbs_error=NO_PROVIDER)
    assert verdict(r) == ("fail", "FABRIC_USERSPACE_MISSING", "image") and "uverbs0" in r.summary


def test_an_empty_device_list_without_the_warning_stays_no_device():
    assert verdict(fabric(verbs_devices=[])) == ("skip", "FABRIC_NONE", "host")
    assert verdict(fabric(verbs_devices=[], verbs_error="Failed to get IB devices list: Permission denied"))[1] \
        != "FABRIC_USERSPACE_MISSING"


# ----------------------------------------------------- an application's registration out of locked memory
@pytest.mark.parametrize("line", [
    "Failed to register memory: Cannot allocate memory",                           # MOONCAKE_STORE's title
    "E0115 11:21:21.391443 3662714 rdma_context.cpp:198] Failed to register memory 0x7f2e00000000: Cannot allocate "
    "memory [12]",
])
def test_an_applications_memory_registration_out_of_memory_is_the_locked_memory_limit(line):
    assert rdma.pinning_failed(line)
    assert verdict(fabric(memlock_error=line))[:2] == ("fail", "FABRIC_MEMLOCK_LOW")


def test_the_same_registration_refused_as_a_bad_address_is_no_memlock_evidence():
    """h800-x8-sglang-pd-mooncake-...: `Failed to register memory 0x2e1cbac200: Bad address [14]` (EFAULT)."""
    assert rdma.pinning_failed("E0511 07:42:36.355509 10240 rdma_context.cpp:198] Failed to register memory "
                               "0x2e1cbac200: Bad address [14]") is None


def test_the_mooncake_store_record_fails_the_limit_read_outside_a_container_as_the_nodes():
    assert replayed(MOONCAKE_STORE) == {"fabric": ("fail", "FABRIC_MEMLOCK_LOW", "host")}


# ----------------------------------------------------- mlxlink -d <dev>
def test_mlxlink_of_an_active_200g_port_passes_as_its_translation():
    """CX6: `State : Active`, `Physical state : ETH_AN_FSM_ENABLE`, `Speed : 200G`, `Width : 4x`."""
    text = raw(CX6)
    assert (k := kind_of(text)) is not None and k.name.startswith("mlxlink")
    port = mlxlink.parse(text)["adapters"][0]["ports"][0]
    assert port == {"port": None, "state": "ACTIVE", "phys_state": None, "rate_gbps": 200.0, "width": 4,
                    "speed": None, "link_layer": "Ethernet"}
    assert verdict(explained(text)) == ("pass", None, None) == replayed(CX6)["fabric"]


def test_mlxlink_of_a_port_whose_phy_is_up_and_port_is_not_fails_the_host():
    """CX4's Operational Info (`State : Physical LinkUp`), under a command line that names the device."""
    text = "mlxlink -d 0000:37:00.0 -p 1\n" + raw(CX4).split("\n\n", 1)[1]
    port = mlxlink.parse(text)["adapters"][0]["ports"][0]
    assert port["state"] == "DOWN" and port["phys_state"] == "LinkUp" and port["port"] == 1
    assert verdict(explained(text)) == ("fail", "FABRIC_PORT_DOWN", "host")


def test_mlxlink_without_its_command_line_names_no_adapter_and_is_not_read():
    assert not mlxlink.detect(raw(CX4))


# ----------------------------------------------------- an OpenMMLab-style environment report
def test_sglang_check_env_alone_lists_gpus_and_reads_no_health():
    """H800: `CUDA available: True`, `GPU 0,1,2,3,4,5,6,7: NVIDIA H800`, `CUDA Driver Version: 535.230.02`."""
    text = raw(H800)
    facts = mmcvenv.parse(text)
    assert facts["torch"] == "2.6.0+cu124" and facts["torch_cuda"] == "12.4" and facts["driver"] == "535.230.02"
    assert [d["index"] for d in facts["devices"]] == list(range(8)) and facts["devices"][0]["name"] == "NVIDIA H800"
    assert verdict(explained(text)) == ("warn", "HEALTH_NOT_ASSESSED", "host") == replayed(H800)["gpu"]


def test_sglang_check_env_beside_its_topology_matrix_is_answered_by_it():
    """B200: the report's GPU names above `nvidia-smi topo -m` of the same eight GPUs: the topology's read decides."""
    assert mmcvenv.detect(raw(B200))
    assert verdict(explained(raw(B200))) == ("pass", None, None)


def test_torchs_collect_env_is_not_this_kind():
    assert not mmcvenv.detect("PyTorch version: 2.3.0+cu121\nIs CUDA available: True\n")


@pytest.mark.parametrize("command", ["$ sudo mlxlink -d mlx5_2 -p 1", "root@node:~# mlxlink -d mlx5_2 -p 1",
                                     "/usr/bin/mlxlink -d mlx5_2 -p 1"])
def test_mlxlink_typed_after_a_prompt_or_sudo_is_read_and_a_polling_port_fails_the_host(command):
    text = command + "\nOperational Info\n----------------\nState : Polling\nPhysical state : Polling\nSpeed : N/A\n"
    assert verdict(explained(text)) == ("fail", "FABRIC_PORT_DOWN", "host")


def test_an_environment_report_of_a_cpu_build_is_the_images_never_the_hosts():
    text = "Python: 3.10.12\nCUDA available: False\nPyTorch: 2.1.0+cpu\nsglang: 0.3.0\n"
    assert mmcvenv.parse(text)["torch_cuda"] == "none"
    assert verdict(explained(text)) == ("skip", "GPU_NOT_VISIBLE", "image")
