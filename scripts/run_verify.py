"""`make verify`: start the image through the Docker SDK, run `verify` inside it, collect the reports.

The container runs with no network, a read-only root (a tmpfs /tmp for the checks' data), the image's own
non-root user, --shm-size (SHM_SIZE) and --gpus all when the host has NVIDIA GPUs. It is removed on every
path out, Ctrl-C included; a run that outlasts its timeout is killed and reported.
"""
from __future__ import annotations

import glob
import json
import shutil
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from . import ROOT
from .engine import image_exists
from .errors import UserError
from .spec import ImageSpec

REPORTS = ROOT / "reports"
IN_CONTAINER_JSON, IN_CONTAINER_XML = "/tmp/report.json", "/tmp/report.xml"


def spec_mismatches(spec: ImageSpec, env: dict) -> list[str]:
    """Where the versions torch reports inside the image differ from the ones its spec promised."""
    def base(version: str | None) -> str | None:
        return version.split("+")[0] if version else None
    wanted = {"torch": spec.torch, "python": spec.python, "cuda": spec.cuda,
              "cudnn": ".".join(spec.cudnn.split(".")[:3]) if spec.cudnn else None, "nccl": spec.nccl,
              "cudnn_package": spec.cudnn, "nccl_package": spec.nccl}
    got = {"torch": base(env.get("torch")), "python": ".".join(str(env.get("python", "")).split(".")[:2]),
           "cuda": env.get("cuda"), "cudnn": env.get("cudnn"), "nccl": env.get("nccl"),
           "cudnn_package": env.get("cudnn_package"), "nccl_package": env.get("nccl_package")}
    return [f"{k}: spec {wanted[k] or 'none'}, image {got[k] or 'none'}" for k in wanted if wanted[k] != got[k]]


@dataclass
class VerifyOutcome:
    tag: str
    exit_code: int | None          # None: timed out
    seconds: float
    statuses: dict[str, str]
    mismatches: list[str] | None = None
    problem: str | None = None         # why it could not run at all (e.g. not built)
    json_path: Path | None = None
    junit_path: Path | None = None


def host_gpus() -> int:
    """NVIDIA GPUs on this host (device nodes), so that --gpus all is asked for only where it can work."""
    return len(glob.glob("/dev/nvidia[0-9]*")) if shutil.which("nvidia-smi") or Path("/dev/nvidiactl").exists() else 0


def run_options(spec: ImageSpec, shm_size: str, gpus: int, tmp_size: str) -> dict:
    import docker
    opts = {
        "command": ["sleep", "infinity"],
        "detach": True,
        "shm_size": shm_size,
        "network_mode": "none",
        "read_only": True,
        "tmpfs": {"/tmp": f"rw,exec,nosuid,size={tmp_size}"},
        "labels": {"io.torchimages.verify": spec.tag},
        "init": True,
    }
    if gpus:
        opts["device_requests"] = [docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]
    return opts


def _exec_streaming(container, cmd: list[str], timeout: float, echo) -> int | None:
    """Run cmd in the container, echoing its output; its exit code, or None when it ran past `timeout`."""
    api = container.client.api
    exec_id = api.exec_create(container.id, cmd, stdout=True, stderr=True)["Id"]
    done = threading.Event()

    def pump() -> None:
        for chunk in api.exec_start(exec_id, stream=True):
            echo(chunk.decode("utf-8", "replace"), end="")
        done.set()

    threading.Thread(target=pump, daemon=True).start()
    if not done.wait(timeout):
        return None
    return api.exec_inspect(exec_id)["ExitCode"]


def _read_file(container, path: str) -> bytes | None:
    result = container.exec_run(["cat", path], stdout=True, stderr=False)
    return result.output if result.exit_code == 0 else None


def verify_image(client, spec: ImageSpec, *, shm_size: str, timeout: float, extra_args: list[str],
                 reports: Path = REPORTS, tmp_size: str = "2g", echo=print) -> VerifyOutcome:
    if not image_exists(client, spec.image):
        raise UserError(f"image {spec.image} is not built yet: run `make build IMAGE={spec.tag}`")
    gpus = host_gpus()
    args = list(extra_args)
    if gpus and "--expect-gpus" not in " ".join(args):
        args += ["--expect-gpus", str(gpus)]
    echo(f"==> verify {spec.image}: --shm-size={shm_size}, {'--gpus all (' + str(gpus) + ' GPUs)' if gpus else 'no GPUs on this host'}, "
         f"network none, read-only root")
    start = time.monotonic()
    container = client.containers.run(spec.image, **run_options(spec, shm_size, gpus, tmp_size))
    try:
        cmd = ["verify", "--json", IN_CONTAINER_JSON, "--junit", IN_CONTAINER_XML, *args]
        code = _exec_streaming(container, cmd, timeout, lambda text, end="": echo(text, end=end))
        reports.mkdir(parents=True, exist_ok=True)
        outcome = VerifyOutcome(spec.tag, code, time.monotonic() - start, {})
        if code is None:
            echo(f"\n{spec.tag}: verify did not finish within {timeout:.0f} s; container killed")
            return outcome
        for src, suffix in ((IN_CONTAINER_JSON, ".json"), (IN_CONTAINER_XML, ".xml")):
            data = _read_file(container, src)
            if data is not None:
                dest = reports / f"{spec.tag}{suffix}"
                dest.write_bytes(data)
                if suffix == ".json":
                    outcome.json_path = dest
                    report = json.loads(data)
                    outcome.statuses = {c["name"]: c["status"] for c in report["checks"]}
                    outcome.mismatches = spec_mismatches(spec, report["environment"])
                else:
                    outcome.junit_path = dest
        copied = [str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p) for p in (outcome.json_path, outcome.junit_path) if p]
        echo(f"reports copied out of the container to {', '.join(copied) or 'nothing (none written)'}")
        return outcome
    finally:
        container.remove(force=True)


def format_summary(outcomes: list[VerifyOutcome]) -> str:
    names = ["gpu", "nccl", "shm", "hdf5", "arrow"]
    rows = [f"{'TAG':<46} {'VERDICT':<8} " + " ".join(f"{n:<5}" for n in names) + "  REPORT"]
    for o in outcomes:
        verdict = ("NOT RUN" if o.problem else "TIMEOUT" if o.exit_code is None
                   else "FAIL" if o.exit_code != 0 or o.mismatches else "pass")
        rows.append(f"{o.tag:<46} {verdict:<8} " + " ".join(f"{o.statuses.get(n, '-'):<5}" for n in names)
                    + f"  {o.json_path.relative_to(ROOT) if o.json_path else '-'}")
    for o in outcomes:
        if o.problem:
            rows.append(f"{o.tag}: {o.problem}")
        elif o.mismatches:
            rows.append(f"{o.tag}: versions differ from images/{o.tag}/spec.json: " + "; ".join(o.mismatches))
        elif o.mismatches is not None:
            rows.append(f"{o.tag}: torch, Python, CUDA, cuDNN and NCCL inside the image match its spec")
    return "\n".join(rows)


def echo_to_stdout(text: str = "", end: str = "\n") -> None:
    sys.stdout.write(text + end)
    sys.stdout.flush()
