"""Hunt 86: bad input against `verify explain`'s readers changed on the day (the toolkit's unknown device, a program not
on PATH, lspci beside kernel lines, `Attached GPUs`) and the judges they feed; then the explain CLI's report paths.

Each finding, its rating, repro and fix:

1. (high, withheld fault) The toolkit's `nvidia-container-cli: device error: 3: unknown device` beside the kernel's
   Xid 79 for that GPU, in one facts record (a replay, a live run): judged the job's request (GPU_NOT_VISIBLE, job)
   and the GPU fallen off the bus never judged. `verify explain` of the same text was right (the kernel kind wins the
   tie); the facts road was not. checks/gpu/node.toolkit_symptom: the unknown device is a symptom too, and the kernel's
   cause decides, as for the hook's driver timeout.
2. (medium, wrong owner) Any program's `command not found` (and execve ENOENT, OCI `exec: "x"`) was TRAIN_FAILED, owner
   image: a probe's `numactl`/`ibstat`/`lspci`, the environment modules' `module`/`ml` (Lmod not set up in the job's
   shell: envmodules/modules#339, snakemake/snakemake#2802), `git`, `sudo`. Repro: `bash: numactl: command not found`.
   imagefault: only the interpreter and the launchers a PyTorch image installs are "the program the job starts"; any
   other not found is not this rule's (explain: not recognised). And a launcher missing beside the modules' own
   `module: command not found` is that failure's consequence, not the image's (explain/importfail._NO_MODULES).
3. (medium, wrong program) zsh's `zsh: command not found: torchrun` was read as the program `zsh` (bash's form matched
   first): `zsh: command not found: nvidia-smi` was filed to the image. zsh's form is read before bash's.
4. (medium, not recognised) dash's `/bin/sh: 1: torchrun: not found` (hiyouga/LlamaFactory#5216) and crun's
   `executable file `x` not found in $PATH` (containers/crun#1688) were not read. Both read.
5. (medium, not recognised) lspci link lines quoted without a header beside the kernel's own PCI-core lines of the same
   GPU (`pci 0000:01:00.0: [10de:2204] type 00 class 0x030000`, `pci ...: 63.008 Gb/s available PCIe bandwidth,
   limited by ...`) or nouveau's: the GPU taken for another driver's device, its downgrade not read. lspci._GPU_SIDE:
   the PCI core and nouveau name the GPU as NVIDIA's driver does; the core's line naming another vendor still excludes.
6. (medium, quadratic) imagefault.WORDS' program name was retried after every `+` (the look-behind lacked it): a run of
   `a+` (a base64 blob's line) took 3.7 s at 40,000 characters, 92 s at 160,000 in importfail.detect. The name's class
   in the look-behind; verify/explain/bench.py prints it.
7. (medium, the log lost) `verify explain job.log --json job.log` replaced the log with its own report (exit 1, the
   evidence gone); `--json ""` wrote nothing and said nothing; `--json r --junit r` wrote one report over the other.
   cli._report_clash: one line, exit 2, nothing written.
8. (high, false pass) Two link lines naming no device (`lspci -vv | grep Lnk`, pasted alone) beside an RDMA adapter's
   kernel lines (`mlx5_core 0000:41:00.0: ...`) or ibstat's `CA 'mlx5_0'` passed as a healthy GPU: the lines may be
   the NIC's (batch 261's class, where `-s` named no bus). lspci._unnamed reads them only where the text shows no
   other device they could be.
9. (medium, the node's files replaced) A report path that is a stream, `--json /dev/stdout` (a link to
   /proc/self/fd/1), `--json /dev/null`, a FIFO a reader waits on, passed report.check_writable (its folder writable)
   and write_atomic renamed a regular file over it: the link or pipe replaced, the stream never written; as root,
   /dev/null or /dev/stdout replaced for every later program on the node (verify run shares the check). Refused in
   check_writable: one line, exit 2.
10. (medium, a fail from prose) A how-to page's title quoting the shell's words, `Fix: torchrun: command not found`,
   `torchrun: command not found error fix`, failed TRAIN_FAILED (image): the shell form took any word as the shell's
   name and any text after. importfail._DIED: led by a shell's or a script's name, ending the line, as the shells
   print it.
Low, left: `Attached GPUs` beside dmidecode's `Product Name` reads as an empty nvidia-smi -q (skip, nothing judged);
a localised shell's `torchrun：未找到命令` is not read; `pip`/`conda`/`nvcc` not found are not read (not the program
the job starts).
"""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify import cli
from verify.checks import CHECKS
from verify.checks.train.imagefault import image_fault
from verify.explain import importfail
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit


def _train(message: str) -> tuple[str, str | None, str | None]:
    failure = {"rank": 0, "node": "n1", "phase": "init", "type": "Exited with exit code 2", "message": message}
    return verdict(judge(CHECKS["train"], {"failures": [failure]}, Options()))


def _gpu(**facts: object) -> tuple[str, str | None, str | None]:
    return verdict(judge(CHECKS["gpu"], {"torch": None, "devices": None, **facts}, Options()))


# 1 ------------------------------------------------------------------------------------------------------------------
UNKNOWN = "nvidia-container-cli: device error: 3: unknown device"
XID79 = {"xid": 79, "pci_bus_id": "0000:c1:00.0", "text": "NVRM: Xid (PCI:0000:c1:00): 79, pid='<unknown>', "
         "name=<unknown>, GPU has fallen off the bus.", "time": None, "source": "kernel_log"}


def test_the_toolkits_unknown_device_beside_the_kernels_xid_79_is_the_gpu_gone():
    assert _gpu(nvml_error=UNKNOWN) == ("fail", "GPU_NOT_VISIBLE", "job")
    assert _gpu(nvml_error=UNKNOWN, xid_events=[XID79]) == ("fail", "GPU_LOST", "host")
    assert _gpu(nvml_error=UNKNOWN, xid_events=[]) == ("fail", "GPU_NOT_VISIBLE", "job")


# 2 ------------------------------------------------------------------------------------------------------------------
NOT_THE_IMAGES = [
    # envmodules/modules#339 (https://github.com/envmodules/modules/issues/339), verbatim
    "/var/spool/slurmd/job00156/slurm_script: line 4: ml: command not found",
    "slurmstepd: error: execve(): ml: No such file or directory",
    # snakemake/snakemake#2802 (https://github.com/snakemake/snakemake/issues/2802), verbatim
    "/usr/bin/bash: line 1: module: command not found",
    "/usr/bin/bash: line 1: cellranger: command not found",
    # hand-made, bash's wording: an admin's probes on a node
    "bash: numactl: command not found", "bash: ibstat: command not found", "bash: lspci: command not found",
    "bash: sudo: command not found", "/var/spool/slurm/d/job123/slurm_script: line 5: git: command not found",
    'OCI runtime exec failed: exec failed: unable to start container process: exec: "ibstat": executable file not '
    'found in $PATH: unknown',
]


@pytest.mark.parametrize("line", NOT_THE_IMAGES)
def test_a_program_not_found_that_no_pytorch_image_starts_is_not_the_images(line):
    assert _train(line)[2] != "image"
    assert explained(line + "\n").name == "explain"          # not recognised: unknown text is said, never guessed


def test_a_launcher_missing_beside_the_modules_own_failure_is_not_the_images():
    # snakemake/snakemake#2802's two lines, the program renamed torchrun (hand-made): the module never loaded
    text = "/usr/bin/bash: line 1: module: command not found\n/usr/bin/bash: line 1: torchrun: command not found\n"
    assert not importfail.detect(text)
    assert explained(text).owner != "image"
    assert verdict(explained(text.splitlines()[1] + "\n")) == ("fail", "TRAIN_FAILED", "image")


# 3, 4 ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    "zsh: command not found: torchrun",                                          # hand-made, zsh's wording
    "/bin/sh: 1: torchrun: not found",       # hiyouga/LlamaFactory#5216 (https://github.com/hiyouga/LlamaFactory/issues/5216)
    # containers/crun#1688's wording (https://github.com/containers/crun/issues/1688), its program renamed torchrun
    "Error: crun: executable file `torchrun` not found in $PATH: No such file or directory: OCI runtime attempted to "
    "invoke a command that was not found",
    "bash: python3.10: command not found",
])
def test_every_shells_and_runtimes_not_found_of_a_launcher_is_read(line):
    r = explained(line + "\n")
    assert verdict(r) == ("fail", "TRAIN_FAILED", "image")
    assert "torchrun, the program" in r.summary or "python3.10, the program" in r.summary
    assert _train(line) == ("fail", "TRAIN_FAILED", "image")


def test_zshs_form_names_the_program_not_zsh():
    assert image_fault({"type": "Error", "message": "zsh: command not found: nvidia-smi"}) is None
    assert explained("zsh: command not found: nvidia-smi\n").owner != "image"


# 5 ------------------------------------------------------------------------------------------------------------------
LNK = ("$ sudo lspci -vv -s 01:00.0 | grep Lnk\n"
       "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n"
       "\t\tLnkSta:\tSpeed 16GT/s (ok), Width x8 (downgraded)\n")


# hand-made in the kernel's formats (drivers/pci/probe.c's enumeration and pcie_print_link_status, nouveau's banner)
@pytest.mark.parametrize("kernel", [
    "[    1.234] pci 0000:01:00.0: [10de:2204] type 00 class 0x030000\n[    1.300] pci 0000:01:00.0: 63.008 Gb/s "
    "available PCIe bandwidth, limited by 16.0 GT/s PCIe x8 link at 0000:00:01.0 (capable of 252.048 Gb/s with 16.0 "
    "GT/s PCIe x16 link)\n",
    "[    2.100] nouveau 0000:01:00.0: NVIDIA GA102 (172000a1)\n",
    "[    5.100] nvidia 0000:01:00.0: enabling device (0000 -> 0003)\n",
])
def test_the_kernels_own_lines_of_the_gpu_leave_its_link_lines_the_gpus(kernel):
    assert verdict(explained(LNK)) == ("warn", "PCIE_DOWNGRADED", "host")
    for text in (kernel + LNK, LNK + kernel):
        assert verdict(explained(text)) == ("warn", "PCIE_DOWNGRADED", "host")


@pytest.mark.parametrize("kernel", [
    "[    1.234] pci 0000:01:00.0: [15b3:101b] type 00 class 0x020700\n",      # the PCI core naming Mellanox's NIC
    "[    5.100] mlx5_core 0000:01:00.0: firmware version: 20.31.1014\n",
])
def test_another_vendors_device_on_that_bus_is_still_no_gpu(kernel):
    assert explained(kernel + LNK).name == "explain"


# 6 ------------------------------------------------------------------------------------------------------------------
def _fast(fn, arg):
    """The reader on an input that once took it quadratic time; how long: `python -m verify.explain.bench`."""
    return fn(arg)


def test_a_run_of_plus_signs_is_read_in_linear_time():
    assert not _fast(importfail.detect, "a+" * 80_000 + "\n")
    assert _fast(image_fault, {"type": "Error", "message": "+" * 80_000 + ": command not found"}) is None


# 7 ------------------------------------------------------------------------------------------------------------------
def test_a_report_over_an_input_or_the_other_report_is_refused_before_anything_is_written(tmp_path, capsys):
    log = tmp_path / "job.log"
    log.write_text("bash: torchrun: command not found\n")
    link = tmp_path / "link.json"
    link.symlink_to(log)
    for argv in (["--json", str(log)], ["--junit", str(tmp_path / "." / "job.log")], ["--json", str(link)],
                 ["--json", ""], ["--junit", " "],
                 ["--json", str(tmp_path / "r"), "--junit", str(tmp_path / "r")]):
        assert cli.main(["explain", str(log), *argv]) == 2, argv
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert log.read_text() == "bash: torchrun: command not found\n"
        assert not (tmp_path / "r").exists()
    assert cli.main(["explain", str(log), "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml")]) == 1


# 8 ------------------------------------------------------------------------------------------------------------------
BARE = ("\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n"
        "\t\tLnkSta:\tSpeed 16GT/s (ok), Width x16 (ok)\n")


# hand-made: an RDMA adapter's kernel line and ibstat's listing in their tools' formats, two link lines naming no device
@pytest.mark.parametrize("other", [
    "[    5.100] mlx5_core 0000:41:00.0: firmware version: 20.31.1014\n",
    "CA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 200\n",
])
def test_link_lines_naming_no_device_beside_another_device_pass_no_gpu(other):
    assert verdict(explained(BARE)) == ("pass", None, None)          # alone, or beside NVIDIA's lines: the GPU's
    assert explained(other + BARE).name != "gpu"
    assert explained("[    5.100] nvidia 0000:41:00.0: enabling device (0000 -> 0003)\n" + BARE).name == "gpu"


# 9 ------------------------------------------------------------------------------------------------------------------
def test_a_report_path_that_is_a_stream_is_refused_never_replaced(tmp_path, capsys):
    import os

    log = tmp_path / "job.log"
    log.write_text("bash: torchrun: command not found\n")
    stdout = tmp_path / "stdout"
    stdout.symlink_to("/dev/null")    # a link to a device, as /dev/stdout is one to the terminal; /dev is not touched
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    for flag, target in (("--json", stdout), ("--junit", pipe)):
        assert cli.main(["explain", str(log), flag, str(target)]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "device or pipe" in err
    assert stdout.is_symlink() and os.readlink(stdout) == "/dev/null"
    assert pipe.is_fifo()


# 10 -----------------------------------------------------------------------------------------------------------------
# hand-made: a how-to page's titles quoting the words, and the shells' own lines (bash at a login, a script, dash)
@pytest.mark.parametrize("title", ["Fix: torchrun: command not found", "torchrun: command not found error fix",
                                   "Solved - bash: torchrun: command not found in conda"])
def test_a_page_title_quoting_a_shells_words_is_no_failure(title):
    assert explained(title + "\n").status != "fail"


@pytest.mark.parametrize("line", ["-bash: torchrun: command not found", "./run.sh: 3: torchrun: not found",
                                  "scripts/train.sh: line 5: deepspeed: command not found"])
def test_the_shells_own_lines_are_read(line):
    assert verdict(explained(line + "\n")) == ("fail", "TRAIN_FAILED", "image")
