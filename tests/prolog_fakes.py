"""The prolog's outside world replaced in-process for its unit tests (tests/test_prolog_hardening.py,
tests/test_prolog_hostile.py): Slurm's commands (argv recorded, drain states kept), verify (writes a given report),
the host name, syslog and the GPU reset records."""
from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from verify.prolog import cli, history, repair, slurm

XID79 = "[ 5000.000001] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."


class FakeSlurm:
    """sinfo and scontrol as the prolog calls them (slurm.run), each argv recorded; the drain states kept here."""

    def __init__(self, nodes: dict[str, tuple[str, str]], info: dict[str, str] | None = None) -> None:
        self.nodes = dict(nodes)              # name -> (state, reason)
        self.info = info or {}
        self.calls: list[list[str]] = []

    def run(self, argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
        self.calls.append(argv[1:])
        name, args = os.path.basename(argv[0]), argv[1:]
        if dry_run:
            return 0, ""
        if name == "sinfo":
            return 0, "".join(f"{n}|{s}|{r}\n" for n, (s, r) in self.nodes.items())
        if args[:2] == ["show", "node"]:
            # Slurm's NodeHostName defaults to the NodeName (slurm.conf)
            fields = " ".join(f"{k}={v}" for k, v in {"NodeName": args[-1], "NodeHostName": args[-1],
                                                      **self.info}.items())
            return 0, fields + "\n"
        if args and args[0] == "update":
            node = args[1].split("=", 1)[1]
            if args[2] == "state=drain":
                self.nodes[node] = ("drained", args[3].split("=", 1)[1])
            elif args[2] == "state=resume":
                self.nodes[node] = ("idle", "none")
        return 0, ""

    def verbs(self) -> list[str]:
        return [" ".join(a[:3]) if a and a[0] == "update" else (a[0] if a else "") for a in self.calls]


# Slurm's environment for a prolog run by slurmd (Prolog=) and for the prolog as a job's first step
PROLOG_ENV = {"SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURMD_NODENAME": "n1"}
STEP_ENV = {"SLURM_STEP_ID": "0", "SLURMD_NODENAME": "n1", "SLURM_JOB_ID": "7"}


def install_fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    """Slurm's commands, the host name, syslog and the GPU reset records replaced (tests/test_prolog_hostile.py too)."""
    f = FakeSlurm({"n1": ("idle", "none"), "n2": ("idle", "none"), "n3": ("idle", "none"), "n4": ("idle", "none")})
    monkeypatch.setattr(slurm, "run", f.run)
    monkeypatch.setattr(cli, "_syslog", lambda line: None)
    monkeypatch.setattr(socket, "gethostname", lambda: "n1")      # the tests run "on" n1, as Slurm knows it
    monkeypatch.setattr(repair, "read_resets", lambda timeout: ([], ""))     # journalctl: no GPU reset recorded
    return f


def _report(*checks: dict[str, Any], whole: bool = True) -> dict[str, Any]:
    """A report as verify writes one: its status, its checks and when it was made (every report has `created`).
    `whole`: as a whole verify --preflight writes it (a result for each check asked: verify/runner.py run_all), a
    judged gpu check given without shm or nccl gets theirs as passes, and any other passing one the checks a CPU node's
    preflight writes (gpu and nccl skipped), so that a test names only what it is about (a pass lacking one is
    refused: tests/test_cluster_hunt76.py); whole=False for a confirmation's (--checks) report."""
    failed = any(c["status"] == "fail" for c in checks)
    names = {c.get("name") for c in checks if isinstance(c.get("name"), str)}
    if whole and any(c.get("name") == "gpu" and c.get("status") in ("pass", "warn") for c in checks):
        checks += tuple(made() for name, made in (("shm", _shm), ("nccl", _nccl)) if name not in names)
    elif whole and not failed and any(c.get("status") in ("pass", "warn") for c in checks):
        # a CPU node's passing preflight: its gpu check skipped GPU_NOT_VISIBLE, its all-reduce verified over gloo
        # (NCCL_NOT_EXERCISED), as verify writes them beside the check a test names (a pass lacking one is refused:
        # tests/test_hunt103_inputs.py)
        checks += tuple(made() for name, made in (("gpu", _gpu_unseen), ("shm", _shm), ("nccl", lambda: _nccl("skip")))
                        if name not in names)
    return {"status": "fail" if failed else "pass", "checks": list(checks),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


# a preflight's nccl check measured slow alone: the host's figure a prolog drains on, or excuses beside another run
SLOW = {"name": "nccl", "status": "fail", "code": "BANDWIDTH_LOW", "owner": "host", "summary": "peak busbw 40 GB/s",
        "metrics": {"busbw_max": {"value": 40.0, "unit": "GB/s"}}}


def _gpu(status: str = "pass", devices: int | None = 8, **kw: Any) -> dict[str, Any]:
    """verify's gpu check: its NVML device count and, as verify lists them in data, each device with ECC on (the
    facts a memory-error drain's return reads again)."""
    metrics = {"nvml_devices": {"value": devices, "unit": "count"}} if devices is not None else {}
    if devices and isinstance(devices, int) and "data" not in kw:
        kw["data"] = {"devices": [{"index": i, "ecc": [True, True]} for i in range(devices)]}
    return {"name": "gpu", "status": status, "metrics": metrics, "summary": "gpu", **kw}


def _nccl(status: str = "pass") -> dict[str, Any]:
    """The preflight's nccl check as verify writes it on one 8-GPU node (a pass: right values at a bandwidth), or, on a
    CPU node ("skip"), NCCL_NOT_EXERCISED over gloo: the all-reduce ran and returned the right values."""
    if status == "skip":
        return {"name": "nccl", "status": "skip", "code": "NCCL_NOT_EXERCISED", "owner": "job", "metrics": {},
                "summary": "no GPU visible: NCCL not exercised; all-reduce verified over gloo, world size 2"}
    return {"name": "nccl", "status": "pass", "code": None, "owner": None, "summary": "all-reduce verified",
            "data": {"backend": "nccl", "world_size": 8},
            "metrics": {"busbw_max": {"value": 100.0, "unit": "GB/s"}, "wrong": {"value": 0.0, "unit": ""}}}


def _gpu_unseen() -> dict[str, Any]:
    """The preflight's gpu check on a node without a GPU, as verify writes it."""
    return {"name": "gpu", "status": "skip", "code": "GPU_NOT_VISIBLE", "owner": "job", "summary": "no GPU visible",
            "metrics": {}}


def _shm() -> dict[str, Any]:
    """The preflight's shm check as verify writes a pass."""
    return {"name": "shm", "status": "pass", "code": None, "owner": None, "summary": "/dev/shm ok", "metrics": {}}


def _verify_writes(monkeypatch: pytest.MonkeyPatch, body: bytes | None, seen: list[Any] | None = None,
                   rc: int | None = 0) -> None:
    """verify replaced: it writes `body` where --json says (None: nothing) and exits rc (None: ran past its limit)."""
    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        if seen is not None:
            seen.append((cmd, limit))
        if body is not None and rc is not None:
            Path(cmd[cmd.index("--json") + 1]).write_bytes(body)
        return rc, ""
    monkeypatch.setattr(cli, "_run_verify", run)


def _verify_runs(monkeypatch: pytest.MonkeyPatch, bodies: list[bytes]) -> list[Any]:
    """verify replaced: its n-th run writes bodies[n] (the last one after that); the runs are counted (their limits)."""
    runs: list[Any] = []

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        runs.append(limit)
        Path(cmd[cmd.index("--json") + 1]).write_bytes(bodies[min(len(runs), len(bodies)) - 1])
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    return runs


def _undrain(state: str, *extra: str) -> list[str]:
    """make undrain NODE=n1's arguments, the kernel log left out."""
    return ["--state-dir", state, "--no-kernel-log", "--revalidate", "--node", "n1", *extra]


def _args(tmp_path: Path, *extra: str) -> list[str]:
    return ["--state-dir", str(tmp_path / "state"), "--no-kernel-log", *extra]


def history_events(tmp_path: Any, node: str = "n1") -> list[tuple[str, str | None]]:
    """(event, code) of each line of the node's drain history under tmp_path/state, in order."""
    from verify.prolog import history
    return [(e["event"], e["code"]) for e in history.read(str(tmp_path / "state"), node).events]


def allow_test_hooks(state_dir: Path) -> None:
    """The operator's switch for verify's test hooks in a job's first step (verify/prolog/verifyrun.py
    TEST_HOOKS_FILE): a file in the prolog's state folder, which no job writes."""
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "test-hooks").write_text("")
    # the operator's only where no job could have written it: neither it nor its folder group- or other-writable
    # (verify/prolog/settings.py), whatever the umask of the machine running the tests
    state_dir.chmod(0o755)
    (state_dir / "test-hooks").chmod(0o644)


def slurm_prefix(folder: Path, programs: dict[str, str]) -> dict[str, str]:
    """Slurm's commands (and the kernel log's) where a real host has them for the prolog: `<folder>/slurm/bin`,
    beside the `<folder>/slurm/etc/slurm.conf` that slurmd's SLURM_CONF names (SchedMD's `--prefix` layout), every
    folder 0755 and root's. The prolog looks there and in the system's folders, never on a job's PATH
    (verify/prolog/verifyrun.py system_path); `programs` maps a name to its shell body. The environment to add.
    A job's step trusts a prefix only root owns (a job's user owns its own folders): these tests need root."""
    if os.geteuid() != 0:
        pytest.skip("a job's step finds Slurm only in a folder root owns, as on a real host: run the tests as root")
    prefix = folder / "slurm"
    for sub in ("bin", "etc"):
        (prefix / sub).mkdir(parents=True, exist_ok=True)
    for name, body in programs.items():
        (prefix / "bin" / name).write_text(body if body.startswith("#!") else f"#!/bin/sh\n{body}\n")
        (prefix / "bin" / name).chmod(0o755)
    (prefix / "etc" / "slurm.conf").write_text("ClusterName=c\n")
    for path in (folder, prefix, prefix / "bin", prefix / "etc"):
        path.chmod(0o755)
    return {"SLURM_CONF": str(prefix / "etc" / "slurm.conf")}


# Slurm and verify as shell programs, for the tests that run the prolog as a real process (slurm_prefix: where a host
# has them): sinfo lists $FAKE_DIR/nodes/<node> (state|reason), scontrol writes it and shows a node as slurmd's
# default does (NodeHostName is the NodeName's host: this one, uname -n as gethostname says), verify writes a lost
# GPU's report
SINFO_SH = """#!/bin/sh
for f in "$FAKE_DIR"/nodes/*; do printf '%s|%s\\n' "$(basename "$f")" "$(cat "$f")"; done
"""
# sinfo as SINFO_SH answers, each call's argv kept in $FAKE_DIR/argv (the race tests read who asked what)
SINFO_ARGV_SH = """#!/bin/sh
printf '%s\\n' "sinfo $*" >> "$FAKE_DIR/argv"
for f in "$FAKE_DIR"/nodes/*; do printf '%s|%s\\n' "$(basename "$f")" "$(cat "$f")"; done
"""
SCONTROL_SH = """#!/bin/sh
[ "$1 $2" = "show node" ] && { printf 'NodeName=%s NodeHostName=%s\\n' "$4" "$(uname -n)"; exit 0; }
[ "$1" = update ] || exit 0
node=${2#nodename=}
case "$3" in
  state=drain) printf 'drained|%s' "${4#reason=}" > "$FAKE_DIR/nodes/$node" ;;
  state=resume) printf 'idle|none' > "$FAKE_DIR/nodes/$node" ;;
esac
"""
# verify as --python runs it (python -I -c <runpy> <root> --preflight ... --json OUT): writes a lost GPU's report
LOST_GPU_SH = """#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --json ] && out=$2; shift; done
printf '{"status": "fail", "created": "%s", "checks": [{"name": "gpu", "status": "fail", "code": "GPU_LOST", \
"owner": "host", "summary": "GPU 3 is lost", "metrics": {"nvml_devices": {"value": 8.0, "unit": "count"}}}]}' \
"$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$out"
"""


def drained(tmp_path: Path, fake: FakeSlurm, code: str, check: str) -> str:
    """n1 drained by torchimages for `code` of `check` an hour ago: Slurm's reason and the history's record of it
    (the state folder returned)."""
    t0 = time.time() - 3600
    fake.info = {"Gres": "gpu:8"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", code, "x", t0))
    state = str(tmp_path / "state")
    history.record(state, "n1", "drain", code, "x", now=t0, extra={"gpus": 8, "check": check})
    return state


def refused_as_a_first_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                            fake: Any, report: dict[str, Any]) -> Path:
    """Slurm's prolog semantics for a report no verify writes: not assessed (REPORT_INVALID, exit 3 as a job's first
    step), the node left in service; the report saved as a fleet folder's `n1.json`, whose folder is returned."""
    import json
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), {**STEP_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 3
    assert "REPORT_INVALID" in capsys.readouterr().out and fake.nodes["n1"] == ("idle", "none")
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "n1.json").write_text(json.dumps(report))
    return folder
