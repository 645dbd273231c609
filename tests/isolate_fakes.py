"""`make isolate`'s runner run through its own entry as the batch script starts it (`python3 -I`, the checkout put
first by hand: isolate_job.RUNNER_BOOT; from a folder holding a `scripts/` package of its own, as a project's is) with srun and scontrol as stand-ins on PATH: Python scripts that record their argv and write the pair's
report as verify would (tests/test_isolate_runner.py, tests/test_cluster_hunt.py, tests/test_cluster_leftovers.py).
The scenario: `bad`, `flaky` (fails every other step), `slow` (busbw 2 GB/s) nodes, `pairbad` pairs; `as_verify`: a
failure written with its figure and owner as verify writes one (else with no figure: a report no verify writes)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from scripts.fleet.isolate_job import RUNNER_BOOT
from tests.helpers import ROOT

SRUN = r'''#!/usr/bin/env python3
import fcntl, json, os, sys, time
nodes = next(a for a in sys.argv if a.startswith("--nodelist=")).split("=", 1)[1].split(",")
scen = json.load(open(os.environ["ISO_SCEN"]))
with open(os.environ["ISO_SCEN"] + ".count", "a+") as fh:
    fcntl.flock(fh, fcntl.LOCK_EX); fh.seek(0)
    counts = json.loads(fh.read() or "{}")
    for n in nodes:
        counts[n] = counts.get(n, 0) + 1
    fh.seek(0); fh.truncate(); fh.write(json.dumps(counts))
fail = any(n in scen.get("bad", []) for n in nodes) or sorted(nodes) in scen.get("pairbad", [])
fail = fail or any(n in nodes and counts[n] % 2 == 1 for n in scen.get("flaky", []))
out = os.path.join(os.environ["TORCHIMAGES_REPORTS"], os.environ["TORCHIMAGES_GROUP"] + ".json")
if "raw" in scen:
    open(out, "w").write(scen["raw"])
else:
    check = {"name": "nccl", "status": "fail" if fail else "pass", "code": "NCCL_WRONG_RESULT" if fail else None,
             "summary": "x", "metrics": {"busbw_max": {"value": (10.0 if scen.get("as_verify") else None) if fail
                                                       else 2.0 if any(n in scen.get("slow", []) for n in nodes)
                                                       else scen.get("busbw", 10.0)},
                                         "wrong": {"value": 3 if fail else 0}},
             "data": {"nodes": len(nodes), "world_size": len(nodes) * scen.get("per_node", 1)}}
    if fail and scen.get("as_verify"):      # a wrong all-reduce as verify writes it: its figure, its owner
        check["owner"] = "host"
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    json.dump({"status": check["status"], "created": created, "checks": [check]}, open(out, "w"))
sys.exit(1 if fail else 0)
'''
SCONTROL = '#!/bin/sh\nprintf \'%s\\n\' "$ISO_HOSTS"\n'


def _isolate(tmp_path: Path, hosts: list[str], scen: dict[str, Any], env: dict[str, str] | None = None,
             args: tuple[str, ...] = ()) -> tuple[int, list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in (("srun", SRUN.replace("/usr/bin/env python3", sys.executable)), ("scontrol", SCONTROL)):
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "scen.json").write_text(json.dumps(scen))
    base = {"PATH": f"{bin_dir}:/usr/bin:/bin", "ISO_SCEN": str(tmp_path / "scen.json"), "ISO_HOSTS": "\n".join(hosts),
            "TORCHIMAGES_ISOLATE_STEP": json.dumps(["srun", "--", "bash", "-c", "x"]),
            "TORCHIMAGES_REPORTS": str(tmp_path), "RDZV_PORT": "20000", "SLURM_JOB_NODELIST": "n[1-9]",
            "TORCHIMAGES_ISOLATE_TIMEOUT": "30"}
    work = tmp_path / "submit-folder"       # sbatch runs the script where it was submitted: a project's folder
    (work / "scripts").mkdir(parents=True, exist_ok=True)
    (work / "scripts" / "__init__.py").write_text("raise SystemExit('the job folder scripts/ was imported')\n")
    proc = subprocess.run([sys.executable, "-I", "-c", RUNNER_BOOT, str(ROOT), *args], cwd=work,
                          env={**base, **(env or {})}, capture_output=True, text=True, timeout=300, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]


NODES = [f"n{i}" for i in range(1, 6)]
