"""Round 61 of issue 36's hunt: where the prolog finds the commands it runs (sinfo, scontrol, journalctl, dmesg).

Slurm's prolog semantics: Prolog= runs with no search path ("for security reasons, these programs do not have a
search path set": SchedMD's Prolog and Epilog Guide), and a job's first step runs with the job's PATH. A Slurm built
from source (/usr/local/bin) or under /opt/slurm was not found under Prolog= (Python's fallback is /bin:/usr/bin):
NVSentinel's breaker could not count, and every host fault was "not drained" (a broken node kept in service). In a
step the job's own `journalctl` or `sinfo` answered for the kernel log and Slurm. Class 1: a setting of ours (the
search path) is never the node's fault, nor the job's to choose.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

from tests.prolog_fakes import (
    LOST_GPU_SH,
    PROLOG_ENV,
    SCONTROL_SH,
    SINFO_SH,
    STEP_ENV,
    XID79,
    _gpu,
    _report,
    history_events,
    install_fake,
)
from verify.prolog import cli, kernlog, settings, verifyrun


@pytest.mark.host
def test_slurm_prolog_semantics_no_search_path_still_finds_slurm_beside_slurmd_s_conf(tmp_path):
    """Prolog= as slurmd starts it: no PATH at all, Slurm under <prefix>/bin with slurmd's SLURM_CONF in
    <prefix>/etc. A lost GPU drains the node (exit 1, our reason); it was 'the breaker cannot count: sinfo failed
    (exit 127)', exit 0, the broken node in service."""
    from tests.helpers import ROOT
    prefix = tmp_path / "slurm"
    for folder in (prefix / "bin", prefix / "etc", tmp_path / "nodes", tmp_path / "verify"):
        folder.mkdir(parents=True)
    for path, body in ((prefix / "bin" / "sinfo", SINFO_SH), (prefix / "bin" / "scontrol", SCONTROL_SH),
                       (tmp_path / "verify" / "verify", LOST_GPU_SH)):
        path.write_text(body)
        path.chmod(0o755)
    for folder in (tmp_path, prefix, prefix / "bin"):
        folder.chmod(0o755)
    (prefix / "etc" / "slurm.conf").write_text("ClusterName=c\n")
    for node in ("n1", "n2", "n3", "n4"):
        (tmp_path / "nodes" / node).write_text("idle|none")
    env = {**PROLOG_ENV, "FAKE_DIR": str(tmp_path), "SLURM_CONF": str(prefix / "etc" / "slurm.conf")}
    assert "PATH" not in env
    proc = subprocess.run([sys.executable, "-m", "verify.prolog", "--python", str(tmp_path / "verify" / "verify"),
                           "--no-kernel-log", "--state-dir", str(tmp_path / "state"), "--breaker", "0.5"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert (tmp_path / "nodes" / "n1").read_text().startswith("drained|torchimages:GPU_LOST #"), proc.stderr
    assert history_events(tmp_path)[-1] == ("drain", "GPU_LOST")


@pytest.mark.unit
def test_slurm_step_semantics_a_job_s_journalctl_never_answers_for_the_kernel_log(tmp_path, monkeypatch):
    """A job's PATH put a `journalctl` of its own first: it printed an Xid 79 (NVIDIA's catalog: GPU fallen off the
    bus, drain) and a healthy node was drained by a job's step. The step looks the kernel log up in the system's
    folders, never the job's; the job's PATH is back once the run ends."""
    fake = install_fake(monkeypatch)
    job_bin = tmp_path / "job-bin"
    job_bin.mkdir()
    (job_bin / "journalctl").write_text(f"#!/bin/sh\necho '{XID79}'\n")
    (job_bin / "journalctl").chmod(0o755)
    (job_bin / "dmesg").write_text(f"#!/bin/sh\necho '{XID79}'\n")
    (job_bin / "dmesg").chmod(0o755)
    job_path = f"{job_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    monkeypatch.setenv("PATH", job_path)
    seen: list[str] = []

    def spy(argv, *a, **kw):         # which journalctl and dmesg the run starts (none is started here)
        seen.append(argv[0])
        return None, f"{argv[0]}: not run"
    monkeypatch.setattr(kernlog, "_run", spy)
    paths: list[str] = []

    def verify_runs(cmd: list[str], limit: float) -> tuple[int | None, str]:
        paths.append(os.environ["PATH"])           # what verify and its checks inherit
        Path(cmd[cmd.index("--json") + 1]).write_text(json.dumps(_report(_gpu())))
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", verify_runs)
    status = cli.main(["--state-dir", str(tmp_path / "state")], {**STEP_ENV, "PATH": job_path})
    assert seen and not any(s.startswith(str(job_bin)) for s in seen), seen
    assert paths and all(str(job_bin) not in p for p in paths), paths
    assert fake.nodes["n1"][0] == "idle" and status == 0, (status, history_events(tmp_path))
    assert os.environ["PATH"] == job_path


@pytest.mark.unit
def test_the_search_path_is_the_system_s_in_a_step_and_without_one_the_operator_s_kept(tmp_path, monkeypatch):
    """Whose PATH finds Slurm's commands: a job's never (replaced), none at all (Prolog=) the system's folders and
    the prefix of slurmd's SLURM_CONF when only root writes it, an operator's by hand kept as given."""
    environ: dict[str, str] = {"PATH": "/home/u/bin:/usr/bin"}
    with verifyrun.system_path(environ, True, {"SLURM_CONF": "/home/u/etc/slurm.conf"}):
        assert environ["PATH"].split(os.pathsep) == list(verifyrun.SYSTEM_PATH)
    assert environ["PATH"] == "/home/u/bin:/usr/bin"
    with verifyrun.system_path(environ, False, {}):
        assert environ["PATH"] == "/home/u/bin:/usr/bin"
    prefix = tmp_path / "p"
    (prefix / "bin").mkdir(parents=True)
    for folder in (tmp_path, prefix, prefix / "bin"):
        folder.chmod(0o755)
    bare: dict[str, str] = {}
    with verifyrun.system_path(bare, False, {"SLURM_CONF": str(prefix / "etc" / "slurm.conf")}):
        assert bare["PATH"].split(os.pathsep) == [str(prefix / "bin"), *verifyrun.SYSTEM_PATH]
    assert "PATH" not in bare
    (prefix / "bin").chmod(0o777)           # a folder anyone can write is no slurmd's prefix
    with verifyrun.system_path(bare, False, {"SLURM_CONF": str(prefix / "etc" / "slurm.conf")}):
        assert bare["PATH"].split(os.pathsep) == list(verifyrun.SYSTEM_PATH)
    # a step: a prefix root owns is slurmd's; one the job's own user owns (its SLURM_CONF is the job's to set) never
    (prefix / "bin").chmod(0o755)
    job = {"PATH": "/home/u/bin"}
    with verifyrun.system_path(job, True, {"SLURM_CONF": str(prefix / "etc" / "slurm.conf")}):
        owned_by_root = os.stat(prefix / "bin").st_uid == 0
        assert job["PATH"].split(os.pathsep)[0] == (str(prefix / "bin") if owned_by_root else "/usr/local/sbin")
    if os.geteuid() == 0:
        os.chown(prefix / "bin", 4242, 4242)
        conf = {"SLURM_CONF": str(prefix / "etc" / "slurm.conf")}
        # the job's user, owning its folder
        with mock.patch.object(os, "geteuid", return_value=4242), verifyrun.system_path(job, True, conf):
            assert job["PATH"].split(os.pathsep) == list(verifyrun.SYSTEM_PATH)
    assert job["PATH"] == "/home/u/bin"


@pytest.mark.unit
@pytest.mark.parametrize("body", ["\ufeffTORCHIMAGES_BREAKER=0.5\n", "TORCHIMAGES_BREAKER=0.5   # half, for the pilot\n",
                                  "export TORCHIMAGES_BREAKER=0.5\t# a tab before the comment\r\n"])
def test_slurm_prolog_semantics_a_settings_file_is_read_as_the_shell_reads_it(tmp_path, body):
    """The operator's settings file, written as /etc/default's shell lines, with a comment after a value or by an
    editor that starts it with a byte-order mark, was CONFIG_ERROR: every prolog of the fleet ungated (NVSentinel's
    breaker and checker rule off) for a line the shell reads as the operator meant. A quoted value keeps its `#`."""
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o755)
    (state / "settings").write_text(body, encoding="utf-8")
    (state / "settings").chmod(0o644)
    assert settings.read(str(state)) == ({"TORCHIMAGES_BREAKER": "0.5"}, [])
    (state / "settings").write_text("TORCHIMAGES_METRICS_DIR='/srv/prom #1'\n")
    assert settings.read(str(state))[0] == {"TORCHIMAGES_METRICS_DIR": "/srv/prom #1"}


@pytest.mark.unit
def test_slurm_prolog_semantics_slurm_is_found_beside_the_slurmd_that_started_the_prolog(tmp_path):
    """A configless node's SLURM_CONF is slurmd's cache (/run/slurm/conf/slurm.conf): no prefix there. The slurmd
    that started Prolog= is the prolog's parent: <its prefix>/bin holds that Slurm's sinfo and scontrol."""
    prefix = tmp_path / "slurm-23.11"
    for folder in (prefix / "sbin", prefix / "bin"):
        folder.mkdir(parents=True)
    for folder in (tmp_path, prefix, prefix / "bin"):
        folder.chmod(0o755)
    proc = tmp_path / "proc" / str(os.getppid())
    proc.mkdir(parents=True)
    (proc / "exe").symlink_to(prefix / "sbin" / "slurmd")
    bare: dict[str, str] = {}
    with verifyrun.system_path(bare, False, {"SLURM_CONF": "/run/slurm/conf/slurm.conf"}, proc=str(tmp_path / "proc")):
        assert bare["PATH"].split(os.pathsep) == [str(prefix / "bin"), *verifyrun.SYSTEM_PATH]
    (proc / "exe").unlink()
    (proc / "exe").symlink_to(prefix / "sbin" / "bash")       # not slurmd: a shell's prefix is no Slurm's
    with verifyrun.system_path(bare, False, {}, proc=str(tmp_path / "proc")):
        assert bare["PATH"].split(os.pathsep) == list(verifyrun.SYSTEM_PATH)


@pytest.mark.unit
def test_a_trust_folder_s_large_file_is_never_read_whole(tmp_path, monkeypatch):
    """Files the tooling reads are hostile (class 8): a TRUST folder's file named .pem that is no key (a log, a
    bundle of gigabytes) was read whole before it was cut to a key's size. At most a key's size is read now, and a
    file past it is no public key; the folder's keys are still believed."""
    from scripts.publish import signing
    _, public, _ = signing.keygen(tmp_path / "keys", "ed25519")
    big = public.parent / "huge.pem"
    with big.open("wb") as handle:
        handle.write(b"-----BEGIN PUBLIC KEY-----\n")
        handle.truncate(256 << 20)          # sparse: 256 MiB on paper, nothing on disk
    reads: list[int] = []
    real_open = type(big).open

    def counting_open(self, *a, **kw):
        handle = real_open(self, *a, **kw)
        real_read = handle.read

        def read(size=-1):
            data = real_read(size)
            reads.append(len(data))
            return data
        handle.read = read
        return handle
    monkeypatch.setattr(type(big), "open", counting_open)
    assert [t.keyid for t in signing.load_trust([public.parent])] == [signing.load_trust([public])[0].keyid]
    assert reads and max(reads) <= (64 << 10) + 1, reads


@pytest.mark.unit
def test_slurm_step_semantics_a_job_s_slurmd_nodename_never_names_the_node_drained(tmp_path, monkeypatch):
    """A batch script runs with the job's environment, SLURMD_NODENAME included (exported, or carried from the head
    node by a launcher): this host's lost GPU drained the node it named, a healthy one. In a job's environment the
    drain needs Slurm's NodeHostName to name this host (as `make undrain` does); Prolog= is slurmd's word."""
    fake = install_fake(monkeypatch)           # this host is n1 (gethostname), Slurm's NodeHostName = NodeName
    lost = json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host")))

    def verify_runs(cmd: list[str], limit: float) -> tuple[int | None, str]:
        Path(cmd[cmd.index("--json") + 1]).write_text(lost)
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", verify_runs)
    args = ["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--breaker", "0.5"]
    batch = {"SLURM_JOB_ID": "7", "SLURMD_NODENAME": "n2"}
    assert cli.main(args, batch) == 0            # a batch script: mode prolog, not drained (exit 0)
    assert fake.nodes["n2"][0] == "idle" and fake.nodes["n1"][0] == "idle"
    assert history_events(tmp_path, "n2")[-1] == ("drain-refused", "GPU_LOST")
    assert cli.main(args, {**STEP_ENV, "SLURMD_NODENAME": "n2"}) == 4      # a step: refused, said
    assert fake.nodes["n2"][0] == "idle"
    assert cli.main(args, STEP_ENV) == 1 and fake.nodes["n1"][0] == "drained"    # its own node: drained
