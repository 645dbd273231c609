"""`torchimages-prolog`: the preflight as a gate before a job, with the node drained on a host fault.

As Slurm's `Prolog=` (SLURM_SCRIPT_CONTEXT=prolog_slurmd) or as a job's first step (`srun --ntasks-per-node=1
torchimages-prolog`). It runs `verify --preflight`; then, by the owner of the failure that matters most:
- host (a lost GPU, ECC, a hang...): `scontrol update nodename=<node> state=drain reason="torchimages:<CODE> <summary>"`,
  then exit 1: a failing Prolog makes Slurm requeue the job; a first step also asks `scontrol requeue` for it.
- image or job: the node is left alone. A first step exits 1 (the job fails with the reason); a Prolog exits 0
  (a failing Prolog would drain the node for a fault that is not the node's).
- pass, warn or skip: exit 0.
Exit 2: bad arguments. The reason stays within Slurm's limits: one line, printable, at most 200 characters.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from typing import Any

from .gpuhealth import RANK

REASON_MAX = 200


def reason(code: str, summary: str) -> str:
    text = re.sub(r"[^\x20-\x7e]+", " ", f"torchimages:{code} {summary}").replace('"', "'")
    return text if len(text) <= REASON_MAX else text[:REASON_MAX - 3] + "..."


def decide(report: dict[str, Any] | None) -> tuple[str, str | None, str | None]:
    """(owner of what matters most | "ok" | "none", code, summary) from a verify report."""
    if not isinstance(report, dict) or not isinstance(report.get("checks"), list):
        return "host", "PREFLIGHT_NO_REPORT", "verify --preflight wrote no report on this node"
    failed = sorted((c for c in report["checks"] if isinstance(c, dict) and c.get("status") == "fail"),
                    key=lambda c: (c.get("owner") != "host", RANK.get(str(c.get("code")), 10)))
    if failed:
        c = failed[0]
        return str(c.get("owner") or "host"), str(c.get("code")), str(c.get("summary") or "")
    return "ok", None, None


def _mode(env: dict[str, str], forced: str) -> str:
    if forced != "auto":
        return forced
    return "prolog" if env.get("SLURM_SCRIPT_CONTEXT", "").startswith("prolog") or not env.get("SLURM_STEP_ID") else "step"


def _node(env: dict[str, str]) -> str:
    return env.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def _scontrol(args: list[str], dry_run: bool) -> int:
    cmd = [shutil.which("scontrol") or "scontrol", *args]
    print("torchimages-prolog: " + " ".join(cmd), file=sys.stderr, flush=True)
    if dry_run:
        return 0
    try:
        return subprocess.run(cmd, check=False, timeout=60).returncode
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"torchimages-prolog: scontrol failed: {exc}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="torchimages-prolog", description=__doc__.split("\n")[0])
    p.add_argument("--budget", default="30", help="the preflight's time budget in seconds (default 30)")
    p.add_argument("--mode", choices=("auto", "prolog", "step"), default="auto",
                   help="prolog (Slurm's Prolog=) or step (a job's first step); auto reads Slurm's environment")
    p.add_argument("--dry-run", action="store_true", help="print the scontrol commands instead of running them")
    args = p.parse_args(argv)
    env = dict(os.environ)
    mode = _mode(env, args.mode)
    with tempfile.TemporaryDirectory(prefix="torchimages-prolog-") as tmp:
        out = os.path.join(tmp, "preflight.json")
        cmd = [sys.executable, "-m", "verify", "--preflight", "--budget", args.budget, "--json", out]
        try:
            proc = subprocess.run(cmd, check=False, timeout=float(args.budget) + 60, capture_output=True, text=True)
            last = (proc.stdout.strip().splitlines() or [""])[-1]
            if proc.returncode == 2:              # verify refused its arguments: the caller's mistake, one line
                print(f"torchimages-prolog: {proc.stderr.strip()}", file=sys.stderr)
                return 2
        except (subprocess.TimeoutExpired, ValueError) as exc:
            last = f"verify --preflight did not finish: {exc}"
        try:
            with open(out, encoding="utf-8") as fh:
                report = json.load(fh)
        except (OSError, ValueError):
            report = None
    owner, code, summary = decide(report)
    print(last or f"preflight: {owner} {code}", flush=True)
    if owner == "ok":
        return 0
    node = _node(env)
    if owner == "host":
        _scontrol(["update", f"nodename={node}", "state=drain", f"reason={reason(str(code), str(summary))}"], args.dry_run)
        if mode == "step" and env.get("SLURM_JOB_ID"):
            _scontrol(["requeue", env["SLURM_JOB_ID"]], args.dry_run)
        return 1
    print(f"torchimages-prolog: {code} is the {owner}'s to fix; node {node} is left in service", file=sys.stderr)
    return 1 if mode == "step" else 0


if __name__ == "__main__":
    sys.exit(main())
