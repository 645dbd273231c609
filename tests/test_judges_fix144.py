"""Issue 35, batches 144 to 146 (Slurm admin views, NVSwitch, GPUDirect RDMA): the class their blind translations
showed `verify explain` getting wrong.
- GPUDirect RDMA admin transcripts: `lsmod | grep <part of the module's name>` answered by the next prompt with no
  module line is the peer-memory module not loaded; the running kernel's release is read from `uname -a`, `uname -r`
  under its command, or `modinfo <name>`'s `filename: /lib/modules/<release>/...`; prose around them is never read.
Real lines are quoted from corpus entries (by slug)."""
from __future__ import annotations

import pytest

from tests.judging import explained, replayed, verdict
from verify.explain import peermem, peermemshell

pytestmark = pytest.mark.unit

CENTOS = "centos-7.5-cx3-nvidia-peer-memory-1.0-7-rpm-modprobe-nv-peer-mem-invalid-argument-kernel-3.10-gdr-off"
UBUNTU = "ubuntu-18.04-kernel-4.15-nv-peer-mem-1.0-8-dkms-built-not-in-lsmod-after-reboot-modules-load-d-fix-gdr-off"
GDR_OFF = ("warn", "FABRIC_GDR_OFF", "host")

# UBUNTU's transcript, as its raw.txt holds it (modinfo's signature lines left out)
EMPTY_GREP = ("# lsmod | grep nv_peer\n#\n\n# modinfo nv_peer_mem \n"
              "filename:       /lib/modules/4.15.0-46-generic/updates/dkms/nv_peer_mem.ko\nversion:        1.0-8\n"
              "depends:        ib_core\nname:           nv_peer_mem\nvermagic:       4.15.0-46-generic SMP mod_unload \n")
# CENTOS's transcript, as its raw.txt holds it (the rpm progress lines and nvcc left out)
REFUSED_UNAME = ("modprobe: ERROR: could not insert 'nv_peer_mem': Invalid argument\n\n"
                 "[user@bogon ~]$ uname -a\n"
                 "Linux gpu0 3.10.0-862.el7.x86_64 #1 SMP Fri Apr 20 16:44:24 UTC 2018 x86_64 x86_64 x86_64 GNU/Linux\n"
                 "[user@ bogon ~]$ lspci |grep mellanox -i\n"
                 "01:00.0 Network controller: Mellanox Technologies MT27500 Family [ConnectX-3]\n")


def test_an_empty_lsmod_grep_is_the_module_not_loaded_and_modinfo_by_name_gives_the_running_kernel():
    assert replayed(UBUNTU) == {"fabric": GDR_OFF}
    assert peermem.detect(EMPTY_GREP)
    assert peermem.parse(EMPTY_GREP) == {"peermem": False, "kernel": "4.15.0-46-generic"}
    assert verdict(explained(EMPTY_GREP)) == GDR_OFF


def test_a_refused_modprobe_beside_uname_a_is_gdr_off_on_a_kernel_without_dma_buf():
    assert replayed(CENTOS) == {"fabric": GDR_OFF}
    assert peermem.parse(REFUSED_UNAME) == {"peermem": False, "kernel": "3.10.0-862.el7.x86_64"}
    assert verdict(explained(REFUSED_UNAME)) == GDR_OFF


def test_uname_r_is_read_under_its_command_only():
    assert peermemshell.running_kernel("$ uname -r\n5.15.0-105-generic\n") == "5.15.0-105-generic"
    assert peermemshell.running_kernel("the node runs 5.15.0-105-generic\n") is None


def test_what_decides_nothing_is_not_read_as_the_module_unloaded():
    # the grep's output cut by the excerpt's end, prose after it, an inverted grep, a grep for another module
    assert peermemshell.grep_unloaded("# lsmod | grep nv_peer\n") is None
    assert peermemshell.grep_unloaded("# lsmod | grep nv_peer\nit printed nothing after the reboot\n# \n") is None
    assert peermemshell.grep_unloaded("# lsmod | grep -v nv_peer\n# \n") is None
    assert peermemshell.grep_unloaded("# lsmod | grep mlx5\n# \n") is None
    # lsmod rows of other modules only: grep listed every match and the module is not among them
    assert peermemshell.grep_unloaded("$ lsmod | grep -i NVIDIA\nnvidia_uvm 1404928 0\nnvidia 56418304 1 nvidia_uvm\n"
                                      "$ \n") is False
    # the module's own row is loaded (peermem.py's rule), never "unloaded"
    text = "$ lsmod | grep nv_peer\nnv_peer_mem 16384 0\n$ \n"
    assert peermemshell.grep_unloaded(text) is None and peermem.parse(text)["peermem"] is True
    # modinfo's filename gives the running kernel only for a bare module name (-k names another tree)
    assert peermemshell.running_kernel("# modinfo -k 5.4.0-1 nv_peer_mem\nfilename: /lib/modules/5.4.0-1/extra/"
                                       "nv_peer_mem.ko\n") is None


def test_a_version_under_sys_module_or_memory_peers_is_the_module_loaded_their_absence_decides_nothing():
    loaded = "$ cat /sys/module/nvidia_peermem/version\n550.54.15\n"
    assert peermem.detect(loaded) and peermem.parse(loaded)["peermem"] is True
    assert verdict(explained(loaded)) == ("pass", None, None)
    legacy = "# cat /sys/kernel/mm/memory_peers/nv_mem/version\n1.0-9\n"     # nv_peer_mem's registration
    assert peermemshell.sysfs_loaded(legacy)
    # H800's case: no memory_peers entry beside a loaded nvidia_peermem (the in-driver module creates none)
    absent = ("$ cat /sys/kernel/mm/memory_peers/nv_mem/version\n"
              "cat: /sys/kernel/mm/memory_peers/nv_mem/version: No such file or directory\n")
    assert not peermem.detect(absent)


def test_the_gpu_modules_flavour_decides_the_dma_buf_path_beside_an_unloaded_peermem():
    text = ("$ lsmod | grep peermem\n$ uname -r\n6.5.0-1018-nvidia\n$ cat /proc/driver/nvidia/version\n"
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  Release Build  "
            "(dvs-builder@U16-I3-B03-4-3)  Sat Aug 19 01:13:55 UTC 2023\n")
    assert peermem.parse(text) == {"peermem": False, "kernel": "6.5.0-1018-nvidia", "gpu_module": "open"}
    assert verdict(explained(text))[1] != "FABRIC_GDR_OFF"      # dma-buf carries GPUDirect RDMA
    proprietary = text.replace("Open Kernel Module for x86_64", "x86_64 Kernel Module")
    assert peermem.parse(proprietary)["gpu_module"] == "proprietary"
    assert verdict(explained(proprietary)) == GDR_OFF
