"""A real Slurm for the tests: munged, slurmctld and one slurmd per node, on this host, from a temporary folder.

Debian's `slurm-wlm` and `munge` (installed with apt-get when missing, as root). Every daemon runs in the
foreground as a child of this process, so it is stopped by its own PID; several "nodes" on one host are several
`slurmd -N <name>`, each on its own port and in its own UTS namespace (its host name is the node's), their names
added to /etc/hosts at loopback addresses of their own (127.0.0.11, .12, ...; those lines removed after).
Nothing else on the machine is touched: its own munge socket and key, its own ports, its own spool and state
folders, all under one temporary folder removed at the end. Clients find it through SLURM_CONF (`cluster.env`).
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers import free_port

PROGRAMS = {"slurmctld": "slurmctld", "slurmd": "slurmd", "sbatch": "slurm-client", "munged": "munge"}
PACKAGES = ("slurm-wlm", "munge")
HOSTS = Path("/etc/hosts")
UP_TIMEOUT_S = 60.0


class Unavailable(Exception):
    """Slurm cannot be had here (not root, no apt-get, an install failed): the reason a test skips with."""


def missing_programs() -> list[str]:
    return [name for name in PROGRAMS if shutil.which(name) is None and not Path("/usr/sbin", name).exists()]


def ensure_installed() -> None:
    """slurm-wlm and munge, installed with apt-get as root when missing; else Unavailable with the reason."""
    missing = missing_programs()
    if not missing:
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise Unavailable(f"Slurm is not installed ({', '.join(missing)} missing) and this is not a root Debian/Ubuntu "
                          f"machine to install it on: apt-get install {' '.join(PACKAGES)}")
    # packages' postinst scripts start services through invoke-rc.d: a policy-rc.d saying 101 keeps them from it
    # (these daemons are started below, by PID, from a config of their own)
    policy = Path("/usr/sbin/policy-rc.d")
    added_policy = not policy.exists()
    if added_policy:
        policy.write_text("#!/bin/sh\n# torchimages tests: no service starts during apt-get install\nexit 101\n")
        policy.chmod(0o755)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive", "NEEDRESTART_SUSPEND": "1"}
    try:
        steps = [["apt-get", "update", "-qq"],
                 ["apt-get", "install", "-y", "-qq", "-o", "DPkg::Lock::Timeout=600", *PACKAGES]]
        for argv in steps:
            proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900, check=False)
            if proc.returncode != 0:
                raise Unavailable(f"{' '.join(argv)} failed: {(proc.stderr or proc.stdout).strip()[-400:]}")
    finally:
        if added_policy:
            policy.unlink(missing_ok=True)
    if missing_programs():
        raise Unavailable(f"{', '.join(missing_programs())} still missing after apt-get install {' '.join(PACKAGES)}")


def program(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


@dataclass
class Cluster:
    """A running Slurm: its folder, its nodes, the environment its clients need."""

    root: Path
    nodes: list[str]
    env: dict[str, str]
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    uts: bool = False           # each slurmd runs under its node's own host name (unshare --uts)

    def as_node(self, node: str, argv: list[str]) -> list[str]:
        """argv run as on `node`: under its host name, as its slurmd runs (where the cluster gives each one)."""
        return ["unshare", "--uts", "--", "sh", "-c", 'hostname "$0" && exec "$@"', node, *argv] if self.uts else argv

    @property
    def conf(self) -> Path:
        return self.root / "slurm.conf"

    def run(self, *argv: str, timeout: float = 60, check: bool = True, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(list(argv), env={**self.env, **(env or {})}, capture_output=True, text=True,
                              timeout=timeout, check=False, cwd=cwd)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stdout}{proc.stderr}\n{self.logs()}")
        return proc

    def sbatch(self, script: Path, *args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
        """Submit; the job id."""
        out = self.run("sbatch", "--parsable", *args, str(script), cwd=cwd, env=env).stdout.strip()
        return out.split(";")[0]

    def job(self, job_id: str) -> dict[str, str]:
        """scontrol's fields of a job (JobState, ExitCode, NodeList, ...)."""
        text = self.run("scontrol", "-o", "show", "job", job_id).stdout
        return dict(re.findall(r"(\w+)=(\S*)", text))

    def wait(self, job_id: str, timeout: float) -> dict[str, str]:
        """The job's fields once it has ended; AssertionError (with the daemons' logs) when it runs past timeout."""
        deadline = time.monotonic() + timeout
        while True:
            fields = self.job(job_id)
            if fields.get("JobState") not in ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED"):
                return fields
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job_id} still {fields.get('JobState')} after {timeout:.0f} s\n{self.logs()}")
            time.sleep(0.5)

    def node_states(self) -> dict[str, str]:
        out = self.run("sinfo", "-h", "-N", "-o", "%N %T").stdout
        return dict(line.split() for line in out.splitlines() if line.strip())

    def reasons(self) -> str:
        """`sinfo -R`: the drained nodes and why."""
        return self.run("sinfo", "-R", "-h", "-o", "%N|%T|%E").stdout

    def resume(self, node: str) -> None:
        self.run("scontrol", "update", f"nodename={node}", "state=resume")

    def enable_oci(self) -> Path:
        """oci.conf beside slurm.conf: Slurm's native containers through runc (read by each step when it starts)."""
        runc = shutil.which("runc") or "/usr/sbin/runc"
        state = self.root / "runc"
        name = "%n.%u.%j.%s.%t"
        conf = self.root / "oci.conf"
        conf.write_text(f'RunTimeQuery="{runc} --root={state} state {name}"\n'
                        f'RunTimeKill="{runc} --root={state} kill -a {name}"\n'
                        f'RunTimeDelete="{runc} --root={state} delete --force {name}"\n'
                        f'RunTimeRun="{runc} --root={state} run {name} -b %b"\n')
        return conf

    def disable_oci(self) -> None:
        (self.root / "oci.conf").unlink(missing_ok=True)

    def logs(self, tail: int = 3000) -> str:
        parts = []
        for log in sorted(self.root.glob("*.log")):
            parts.append(f"--- {log.name}\n{log.read_text(errors='replace')[-tail:]}")
        return "\n".join(parts)


def node_address(index: int) -> str:
    """Each node its own loopback address (all of 127/8 is this host): a reverse lookup names the node, as torchrun's
    rendezvous needs to tell two nodes apart (one 127.0.0.1 for all names reads back as 'localhost' for each)."""
    return f"127.0.0.{11 + index}"


def _hosts_add(names: list[str], token: str) -> None:
    text = HOSTS.read_text()
    lines = "".join(f"{node_address(i)} {name}  # {token}\n" for i, name in enumerate(names))
    HOSTS.write_text(text + ("" if text.endswith("\n") or not text else "\n") + lines)


def _hosts_remove(token: str) -> None:
    """Drop exactly the line this cluster added (other lines, other clusters' included, stay)."""
    lines = HOSTS.read_text().splitlines(keepends=True)
    HOSTS.write_text("".join(line for line in lines if not line.rstrip().endswith(f"# {token}")))


def slurm_conf(root: Path, nodes: list[str], ports: dict[str, int], host: str, cpus: int = 2,
               prolog: str | None = None, uts: bool = False) -> str:
    node_lines = "\n".join(
        f"NodeName={n} NodeHostname={n if uts else host} NodeAddr={node_address(i)} Port={ports[n]} CPUs={cpus} "
        f"RealMemory=1000 State=UNKNOWN" for i, n in enumerate(nodes))
    return f"""# torchimages tests: a throwaway Slurm on this host ({len(nodes)} node(s))
ClusterName=torchimages{os.getpid()}
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ports['ctld']}
SlurmdPort={ports[nodes[0]]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root}/munge.socket
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool-%n
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd-%n.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MinJobAge=600
KillWait=15
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
{f'Prolog={prolog}' if prolog else ''}
{node_lines}
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


@contextmanager
def cluster(nodes: int = 1, cpus: int = 2, prolog: str | None = None) -> Iterator[Cluster]:
    """A Slurm with `nodes` nodes (n1, n2, ...) on this host, up and idle; every daemon stopped after, by PID."""
    ensure_installed()
    if os.geteuid() != 0:
        raise Unavailable("the test Slurm runs its daemons as root (SlurmUser=root): run the tests as root")
    root = Path(tempfile.mkdtemp(prefix="torchimages-slurm-"))
    root.chmod(0o755)       # jobs of the submitting user read slurm.conf; munged wants no group/other write
    names = [f"n{i + 1}" for i in range(nodes)]
    host = socket.gethostname().split(".")[0]
    ports = {"ctld": free_port(), **{n: free_port() for n in names}}
    token = f"torchimages-slurm-{os.getpid()}-{root.name}"
    env = {**os.environ, "SLURM_CONF": str(root / "slurm.conf")}
    for var in [v for v in env if v.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_")) and v != "SLURM_CONF"]:
        del env[var]        # a test run inside a job must not hand that job's settings to ours
    result = Cluster(root, names, env)
    hosts_added = False
    try:
        for folder in ("state", *(f"spool-{n}" for n in names)):
            (root / folder).mkdir()
        uts = result.uts = shutil.which("unshare") is not None
        (root / "slurm.conf").write_text(slurm_conf(root, names, ports, host, cpus, prolog, uts))
        (root / "cgroup.conf").write_text("CgroupPlugin=autodetect\nIgnoreSystemd=yes\n")
        key = root / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        _hosts_add(names, token)
        hosts_added = True
        munge_log = open(root / "munged.log", "wb")      # noqa: SIM115 - closed with the process, below
        result.procs["munged"] = subprocess.Popen(
            [program("munged"), "--foreground", f"--socket={root}/munge.socket", f"--key-file={key}",
             f"--pid-file={root}/munged.pid", f"--log-file={root}/munged.log", f"--seed-file={root}/munge.seed",
             "--force"], stdout=munge_log, stderr=subprocess.STDOUT, start_new_session=True)
        _wait_for(lambda: Path(f"{root}/munge.socket").exists(), 15, "munged's socket", result)
        result.procs["slurmctld"] = subprocess.Popen(
            [program("slurmctld"), "-D", "-i", "-f", str(root / "slurm.conf")], env=env, stdout=subprocess.DEVNULL,
            stderr=open(root / "slurmctld.stderr.log", "wb"), start_new_session=True)   # noqa: SIM115
        for name in names:
            slurmd = [program("slurmd"), "-D", "-N", name, "-f", str(root / "slurm.conf")]
            if uts:     # each node its own host name, as on a real cluster (its steps, and runc containers, see it)
                slurmd = ["unshare", "--uts", "--", "sh", "-c", 'hostname "$0" && exec "$@"', name, *slurmd]
            result.procs[f"slurmd-{name}"] = subprocess.Popen(slurmd, env=env,
                stdout=subprocess.DEVNULL, stderr=open(root / f"slurmd-{name}.stderr.log", "wb"),  # noqa: SIM115
                start_new_session=True)
        _wait_for(lambda: _all_idle(result), UP_TIMEOUT_S, "every node idle in sinfo", result)
        yield result
    finally:
        _stop(result)
        if hosts_added:
            _hosts_remove(token)
        shutil.rmtree(root, ignore_errors=True)


def _all_idle(c: Cluster) -> bool:
    for name, proc in c.procs.items():
        if proc.poll() is not None:
            raise AssertionError(f"{name} exited {proc.returncode} while starting\n{c.logs()}")
    try:
        states = c.node_states()
    except (AssertionError, subprocess.TimeoutExpired):
        return False
    return sorted(states) == sorted(c.nodes) and all(s == "idle" for s in states.values())


def _wait_for(ready, timeout: float, what: str, c: Cluster) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}\n{c.logs()}")
        time.sleep(0.3)


def _stop(c: Cluster) -> None:
    """Jobs cancelled (their steps end with them), then each daemon by its PID: slurmds first, slurmctld, munged."""
    if c.procs.get("slurmctld") and c.procs["slurmctld"].poll() is None:
        try:
            c.run("scancel", "--partition=test", check=False, timeout=20)
            deadline = time.monotonic() + 30
            while c.run("squeue", "-h", check=False, timeout=20).stdout.strip() and time.monotonic() < deadline:
                time.sleep(0.5)
        except subprocess.TimeoutExpired:
            pass
    order = sorted(c.procs, key=lambda n: (0 if n.startswith("slurmd-") else 1 if n == "slurmctld" else 2))
    for name in order:
        proc = c.procs[name]
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


# ---- what the tests do with it: write a job with `make slurm`, submit it, read what it left ----

ROOT = Path(__file__).resolve().parent.parent
CPU_IMAGE_TAG = "2.13.0-cpu-debian12"


def write_job(work: Path, launcher: str, nodes: int, *, env: dict[str, str] | None = None, tag: str = CPU_IMAGE_TAG,
              gpus: int = 0, command: str = "slurm") -> Path:
    """`python -m scripts slurm` (what `make slurm` runs; `command="isolate"`: make isolate) into work/build/slurm;
    the script's path."""
    import sys
    run_env = {**os.environ, "BUILD_DIR": str(work / "build"), "REPORTS_DIR": str(work / "reports"),
               "LOCAL_IMAGE": "1", **(env or {})}      # the nodes are this host: they hold the local image
    proc = subprocess.run([sys.executable, "-m", "scripts", command, "--launcher", launcher, "--nodes", str(nodes),
                           "--gpus", str(gpus), "--image", tag], cwd=ROOT, env=run_env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    prefix = "isolate" if command == "isolate" else "verify"
    return next((work / "build" / "slurm").glob(f"{prefix}-*-{nodes}n*.sbatch"))


@contextmanager
def cpu_quota(pid: int, percent: int) -> Iterator[None]:
    """`pid` (and every process it starts from now on: a slurmd's steps) held to `percent` % of one CPU by a CPU
    cgroup of its own (v1 cpu controller, else v2), which is removed after; Unavailable where none can be made."""
    name = f"torchimages-test-{os.getpid()}-{pid}"
    v1, v2 = Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup")
    if (v1 / "cpu.cfs_quota_us").exists():
        group, parent = v1 / name, v1
    elif (v2 / "cgroup.controllers").exists() and "cpu" in (v2 / "cgroup.controllers").read_text().split():
        group, parent = v2 / name, v2
    else:
        raise Unavailable("no CPU cgroup controller to hold a node to a quota")
    try:
        group.mkdir()
        if parent is v1:
            (group / "cpu.cfs_period_us").write_text("100000")
            (group / "cpu.cfs_quota_us").write_text(str(1000 * percent))
        else:
            control = parent / "cgroup.subtree_control"
            if "cpu" not in control.read_text().split():
                control.write_text("+cpu")      # the children of the root get the cpu controller
            (group / "cpu.max").write_text(f"{1000 * percent} 100000")
        (group / "cgroup.procs").write_text(str(pid))
    except OSError as exc:
        with contextlib.suppress(OSError):
            group.rmdir()
        raise Unavailable(f"cannot make a CPU cgroup ({exc})") from None
    try:
        yield
    finally:
        for _ in range(50):         # move what is left back to the parent, then remove the group
            left = [p for p in (group / "cgroup.procs").read_text().split() if p]
            for p in left:
                try:
                    (parent / "cgroup.procs").write_text(p)
                except OSError:
                    pass
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.2)


def output(work: Path, script: Path, job_id: str) -> str:
    path = work / f"{script.stem}-{job_id}.out"
    return path.read_text(errors="replace") if path.exists() else f"(no output file {path})"


def reports(folder: Path) -> dict[str, dict]:
    """name → parsed JSON of every report a job wrote."""
    import json
    return {p.name: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}
