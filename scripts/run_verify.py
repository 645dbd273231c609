"""`make verify`: start the image through the Docker SDK, run `verify` inside it, collect the reports.

The container runs with no network, a read-only root (a tmpfs /tmp for the checks' data), the image's own
non-root user, --shm-size (SHM_SIZE) and --gpus all when the host has NVIDIA GPUs. It is removed on every
path out, Ctrl-C included; a run that outlasts its timeout is killed and reported.
"""
from __future__ import annotations

import contextlib
import glob
import json
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any

from . import ROOT
from .builder.engine import image_exists
from .errors import UserError
from .fsutil import atomic_write
from .plan.spec import ImageSpec, Target
from .settings import Settings

REPORTS = Settings.reports
REPORT_SCHEMAS = ROOT / "verify"          # report.schema*.json, read as data (verify/ is never imported)
IN_CONTAINER_JSON, IN_CONTAINER_XML = "/tmp/report.json", "/tmp/report.xml"
Echo = Callable[..., None]


def spec_mismatches(spec: ImageSpec, env: dict[str, Any]) -> list[str]:
    """Where the versions torch reports inside the image differ from the ones its spec promised."""
    def base(version: Any) -> str | None:
        return str(version).split("+")[0] if version else None
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
    statuses: dict[str, str] = field(default_factory=dict)   # check name → status, in the report's order
    mismatches: list[str] | None = None
    problem: str | None = None         # why it could not run at all (e.g. not built)
    json_path: Path | None = None
    junit_path: Path | None = None


def host_gpus() -> int:
    """NVIDIA GPUs on this host (device nodes), so that --gpus all is asked for only where it can work."""
    return len(glob.glob("/dev/nvidia[0-9]*")) if shutil.which("nvidia-smi") or Path("/dev/nvidiactl").exists() else 0


def _gpu_args(extra_args: list[str]) -> tuple[int, list[str]]:
    """The host's GPU count, and verify's arguments with --expect-gpus of that count unless the user gave one."""
    gpus = host_gpus()
    args = list(extra_args)
    if gpus and "--expect-gpus" not in " ".join(args):
        args += ["--expect-gpus", str(gpus)]
    return gpus, args


def engine_failure(what: str, exc: BaseException) -> UserError:
    """An engine fault while verifying `what`, as the one line the user reads (the fault's first line)."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    return UserError(f"the Docker Engine failed while verifying {what}: {first}")


def run_options(label: str, shm_size: str, gpus: int, tmp_size: str) -> dict[str, Any]:
    """Container options of a verify run; `label` names what is verified (a tag, or any image reference)."""
    import docker
    opts: dict[str, Any] = {
        "command": ["sleep", "infinity"],
        "detach": True,
        "shm_size": shm_size,
        "network_mode": "none",
        "read_only": True,
        "tmpfs": {"/tmp": f"rw,exec,nosuid,size={tmp_size}"},
        "labels": {"io.torchimages.verify": label},
        "init": True,
    }
    if gpus:
        opts["device_requests"] = [docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]
    return opts


def _exec_streaming(container: Any, cmd: list[str], timeout: float, echo: Echo,
                    environment: dict[str, str] | None = None) -> int | None:
    """Run cmd in the container, echoing its output; its exit code, or None when it ran past `timeout`.
    A stream that drops before the command ended is a UserError naming the cause, not a wait for the timeout."""
    api = container.client.api
    exec_id = api.exec_create(container.id, cmd, stdout=True, stderr=True, environment=environment)["Id"]
    done = threading.Event()
    failure: list[BaseException] = []

    def pump() -> None:
        try:
            for chunk in api.exec_start(exec_id, stream=True):
                echo(chunk.decode("utf-8", "replace"), end="")
        except BaseException as exc:  # noqa: BLE001 - reported by the caller's thread
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=pump, daemon=True).start()
    if not done.wait(timeout):
        return None
    state = api.exec_inspect(exec_id)
    if state.get("Running") or state.get("ExitCode") is None:
        cause = f": {str(failure[0]).splitlines()[0][:200]}" if failure and str(failure[0]) else ""
        raise UserError(f"the output stream of verify in the container dropped before it finished{cause}")
    code: int = state["ExitCode"]
    return code


def _read_file(container: Any, path: str) -> bytes | None:
    result = container.exec_run(["cat", path], stdout=True, stderr=False)
    output: bytes | None = result.output if result.exit_code == 0 else None
    return output


def report_schemas(folder: Path = REPORT_SCHEMAS) -> list[dict[str, Any]]:
    """verify's report schemas (verify/report.schema*.json), loaded as data files."""
    schemas = []
    for path in sorted(folder.glob("report.schema*.json")):
        with contextlib.suppress(OSError, ValueError):
            schemas.append(json.loads(path.read_text(encoding="utf-8")))
    return schemas


def check_report(data: bytes, schemas: list[dict[str, Any]]) -> dict[str, Any]:
    """The parsed report, or a UserError saying why it is not one (truncated, foreign, wrong schema)."""
    import jsonschema
    try:
        report = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"the report verify wrote is not JSON ({exc}); it was not accepted") from None
    if not isinstance(report, dict):
        raise UserError("the report verify wrote is not a JSON object; it was not accepted")
    if not schemas:
        raise UserError(f"no report schema under {REPORT_SCHEMAS} (verify/report.schema*.json); cannot check the report")
    errors = []
    for schema in schemas:
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(report))
        if error is None:
            return report
        errors.append(f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message[:200]}")
    raise UserError(f"the report verify wrote does not match its schema ({errors[0]}); it was not accepted")


def retire_reports(reports: Path, tag: str) -> list[Path]:
    """A run that wrote no whole report: the previous one stays, renamed `<tag>.previous.*` so that no stale pass
    reads as this run's; the new paths. (A whole new report replaces the old one by rename, never a gap.)"""
    moved = []
    for suffix in (".json", ".xml"):
        old = reports / f"{tag}{suffix}"
        if old.is_file():
            new = reports / f"{tag}.previous{suffix}"
            old.replace(new)
            moved.append(new)
    return moved


# verify writes its partial report on SIGTERM (the interrupted check marked INTERRUPTED); this finds it by its
# command line (the image may have no pkill) and waits for it to exit
SALVAGE = ("import os, signal, time\n"
           "mine = [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()\n"
           "        and b'--json\\0' + {json!r}.encode() in open(f'/proc/{{p}}/cmdline', 'rb').read()]\n"
           "for pid in mine: os.kill(pid, signal.SIGTERM)\n"
           "end = time.monotonic() + 10\n"
           "while time.monotonic() < end and any(os.path.exists(f'/proc/{{p}}') for p in mine): time.sleep(0.2)\n")


def partial_name(tag: str) -> str:
    return f"{tag}.partial.json"


def salvage_partial(container: Any, reports: Path, tag: str, echo: Echo, python: str = "python3") -> Path | None:
    """After a timeout or an interrupt: stop verify so it writes what it has, and keep that as `<tag>.partial.json`
    (never under the report's own name: it is no whole run). None when it wrote nothing."""
    with contextlib.suppress(Exception):
        container.exec_run([python, "-c", SALVAGE.format(json=IN_CONTAINER_JSON)])
    data = _read_file(container, IN_CONTAINER_JSON)
    if not data:
        return None
    path = reports / partial_name(tag)
    atomic_write(path, data)
    echo(f"{tag}: the interrupted run's partial report kept as {_shown(path)}")
    return path


def verify_image(client: Any, target: Target, *, shm_size: str, timeout: float, extra_args: list[str],
                 reports: Path = REPORTS, tmp_size: str = "2g", echo: Echo = print,
                 schemas: list[dict[str, Any]] | None = None) -> VerifyOutcome:
    """Run verify inside the target's image (its local tag: torchimages:<tag>[-<arch>], reports <tag>[-<arch>].*)
    and collect the validated reports; engine faults become UserErrors."""
    from docker.errors import DockerException
    from requests.exceptions import RequestException

    from .builder.emulation import verify_run_options
    outcome = None
    try:
        more = verify_run_options(client, target)
        outcome = _verify_image(client, target, shm_size=shm_size, timeout=timeout, extra_args=extra_args,
                                reports=reports, tmp_size=tmp_size, echo=echo,
                                schemas=report_schemas() if schemas is None else schemas, more=more)
        return outcome
    except (DockerException, RequestException) as exc:
        raise engine_failure(target.spec.image, exc) from None
    finally:
        if outcome is None or outcome.json_path is None:
            for path in retire_reports(reports, target.report_name):
                echo(f"{target.report_name}: no whole report this run; the previous one is now {_shown(path)}")


def _verify_image(client: Any, target: Target, *, shm_size: str, timeout: float, extra_args: list[str],
                  reports: Path, tmp_size: str, echo: Echo, schemas: list[dict[str, Any]],
                  more: dict[str, Any]) -> VerifyOutcome:
    spec, image, name = target.spec, target.local_tag, target.report_name
    if not image_exists(client, image):
        raise UserError(f"image {image} is not built yet: run `make build IMAGE={spec.tag}"
                        + (f" PLATFORM={target.platform}`" if target.explicit else "`"))
    gpus, args = _gpu_args(extra_args)
    echo(f"==> verify {image}: --shm-size={shm_size}, {'--gpus all (' + str(gpus) + ' GPUs)' if gpus else 'no GPUs on this host'}, "
         f"network none, read-only root")
    start = time.monotonic()
    container = client.containers.run(image, **{**run_options(spec.tag, shm_size, gpus, tmp_size), **more})
    try:
        cmd = ["verify", "--json", IN_CONTAINER_JSON, "--junit", IN_CONTAINER_XML, *args]
        try:
            code = _exec_streaming(container, cmd, timeout, echo)
        except KeyboardInterrupt:
            salvage_partial(container, reports, name, echo)
            raise
        outcome = VerifyOutcome(name, code, time.monotonic() - start)
        if code is None:
            echo(f"\n{name}: verify did not finish within {timeout:.0f} s; container killed")
            salvage_partial(container, reports, name, echo)
            return outcome
        report = _collect_reports(container, name, reports, schemas, outcome, echo)
        if report is not None:
            environment = report.get("environment")
            outcome.mismatches = spec_mismatches(spec, environment if isinstance(environment, dict) else {})
        return outcome
    finally:
        with contextlib.suppress(Exception):
            container.remove(force=True)


def _collect_reports(container: Any, name: str, reports: Path, schemas: list[dict[str, Any]],
                     outcome: VerifyOutcome, echo: Echo) -> dict[str, Any] | None:
    """Copy the in-container reports to reports/<name>.{json,xml} once the JSON passed its schema; the report."""
    data = _read_file(container, IN_CONTAINER_JSON)
    xml = _read_file(container, IN_CONTAINER_XML)
    report = None
    if data is not None:
        report = check_report(data, schemas)       # nothing lands in reports/ before it passed
        checks = report.get("checks", [])
        outcome.statuses = {str(c.get("name")): str(c.get("status")) for c in checks if isinstance(c, dict)}
        outcome.json_path = reports / f"{name}.json"
        atomic_write(outcome.json_path, data)
        if xml is not None:
            outcome.junit_path = reports / f"{name}.xml"
            atomic_write(outcome.junit_path, xml)
    copied = [_shown(p) for p in (outcome.json_path, outcome.junit_path) if p]
    echo(f"reports copied out of the container to {', '.join(copied) or 'nothing (none written)'}")
    return report


def _shown(path: Path) -> str:
    """A report path as the user reads it: relative to the repository when inside it."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def verify_all(client: Any, targets: list[Target], *, shm_size: str, timeout: float, extra_args: list[str],
               reports: Path, echo: Echo) -> list[VerifyOutcome]:
    """Every target gets an outcome: a fault in one (a missing image, an engine error) is its row, not the end."""
    outcomes = []
    schemas = report_schemas()
    for target in targets:
        try:
            outcomes.append(verify_image(client, target, shm_size=shm_size, timeout=timeout, extra_args=extra_args,
                                         reports=reports, echo=echo, schemas=schemas))
        except UserError as exc:
            outcomes.append(VerifyOutcome(target.spec.tag, None, 0.0, problem=str(exc)))
    return outcomes


def echo_to_stdout(text: str = "", end: str = "\n") -> None:
    import sys
    sys.stdout.write(text + end)
    sys.stdout.flush()


# --- any PyTorch image, not only the matrix's ---------------------------------------------------------------
FOREIGN_VERIFY_DIR = "/opt/torchimages-verify"        # verify/ is mounted read-only at <this>/verify
PYTHONS = ("python3", "python")


@dataclass(frozen=True)
class LocalImage:
    """Whether IMAGE names an image of the local engine: the client that found it, or None and, when the lookup
    itself could not be made (no engine, not a reference), why."""

    client: Any | None
    why_not: str = ""


def find_local_image(ref: str, connect: Callable[[], Any]) -> LocalImage:
    """Look `ref` up in the local engine (nothing pulled)."""
    from docker.errors import APIError
    try:
        client = connect()
    except UserError as exc:
        return LocalImage(None, f"nor could a local image of that name be looked up: {exc}")
    try:
        exists = image_exists(client, ref)
    except APIError as exc:
        if exc.status_code != HTTPStatus.BAD_REQUEST:
            raise
        # "invalid reference format" (a space, an upper-case repository): neither a matrix tag nor an image name
        why = getattr(exc, "explanation", None) or str(exc)
        return LocalImage(None, f"{ref!r} is not an image name either: {why}; a list of tags is comma-separated")
    if exists:
        return LocalImage(client)
    # a matrix tag holds neither `/` nor `:`: a name with one is meant as an image, which make verify never pulls
    pull = f"nor is {ref} an image of this engine: `docker pull {ref}` first" if re.search(r"[/:]", ref) else ""
    return LocalImage(None, pull)


def report_name(ref: str) -> str:
    """reports/<name>.json for an image reference: `/` and `:` are not file-name material."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", ref).strip("_") or "image"


def _start_with_python(client: Any, ref: str, opts: dict[str, Any]) -> tuple[Any, str]:
    """Start the image kept alive by its own Python; (container, python) or a UserError when it has none."""
    from docker.errors import APIError
    tried = []
    for python in PYTHONS:
        try:
            container = client.containers.run(ref, entrypoint=[python, "-c", "import time; time.sleep(10**9)"],
                                              command=[], **opts)
        except APIError as exc:     # "executable file not found in $PATH"
            tried.append(f"{python}: {getattr(exc, 'explanation', None) or exc}")
            # the container was created but could not start: it must not stay behind
            for stale in client.containers.list(all=True, filters={"label": f"io.torchimages.verify={ref}",
                                                                   "status": "created"}):
                stale.remove(force=True)
            continue
        # With an init process as PID 1 the container runs for a moment even when python is missing:
        # only a command that ran through that python proves it is there.
        try:
            ran = container.exec_run([python, "-c", "pass"])
            if ran.exit_code == 0:
                return container, python
            tried.append(f"{python}: exit {ran.exit_code}")
        except APIError as exc:               # 409: the container already stopped
            tried.append(f"{python}: {getattr(exc, 'explanation', None) or exc}")
        with contextlib.suppress(APIError):
            container.remove(force=True)
    raise UserError(f"image {ref} has no Python to run verify with ({'; '.join(tried)[:300]}): verify runs inside "
                    "the image with the image's own python3 or python")


def verify_foreign_image(client: Any, ref: str, *, shm_size: str, timeout: float, extra_args: list[str],
                         reports: Path = REPORTS, tmp_size: str = "2g", echo: Echo = print) -> VerifyOutcome:
    """Run this checkout's verify/ inside any local image with its own Python; no spec comparison."""
    from docker.errors import DockerException
    from requests.exceptions import RequestException
    name = report_name(ref)
    outcome = None
    try:
        outcome = _verify_foreign_image(client, ref, name, shm_size=shm_size, timeout=timeout, extra_args=extra_args,
                                        reports=reports, tmp_size=tmp_size, echo=echo)
        return outcome
    except (DockerException, RequestException) as exc:
        raise engine_failure(ref, exc) from None
    finally:
        if outcome is None or outcome.json_path is None:
            for path in retire_reports(reports, name):
                echo(f"{name}: no whole report this run; the previous one is now {_shown(path)}")


def _verify_foreign_image(client: Any, ref: str, name: str, *, shm_size: str, timeout: float, extra_args: list[str],
                          reports: Path, tmp_size: str, echo: Echo) -> VerifyOutcome:
    gpus, args = _gpu_args(extra_args)
    opts = run_options(ref, shm_size, gpus, tmp_size)
    opts.pop("command")
    opts["volumes"] = {str(ROOT / "verify"): {"bind": f"{FOREIGN_VERIFY_DIR}/verify", "mode": "ro"}}
    echo(f"==> verify {ref} (not in the matrix: this checkout's verify/ mounted read-only, the image's own Python; "
         f"no spec comparison): --shm-size={shm_size}, {'--gpus all' if gpus else 'no GPUs on this host'}")
    start = time.monotonic()
    container, python = _start_with_python(client, ref, opts)
    try:
        probe = container.exec_run([python, "-c", "import torch, sys; print(torch.__version__, sys.version.split()[0])"])
        if probe.exit_code != 0:
            last = (probe.output or b"").decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise UserError(f"image {ref} has {python} but torch does not import there ({last[0][:200]}): verify "
                            "checks a PyTorch environment; install torch in the image")
        env_path = [e.split("=", 1)[1] for e in (container.attrs.get("Config", {}).get("Env") or [])
                    if e.startswith("PYTHONPATH=")]
        pythonpath = ":".join([FOREIGN_VERIFY_DIR, *env_path])
        cmd = [python, "-m", "verify", "--json", IN_CONTAINER_JSON, "--junit", IN_CONTAINER_XML, *args]
        try:
            code = _exec_streaming(container, cmd, timeout, echo, environment={"PYTHONPATH": pythonpath})
        except KeyboardInterrupt:
            salvage_partial(container, reports, name, echo, python)
            raise
        outcome = VerifyOutcome(ref, code, time.monotonic() - start)
        if code is None:
            echo(f"\n{ref}: verify did not finish within {timeout:.0f} s; container killed")
            salvage_partial(container, reports, name, echo, python)
            return outcome
        _collect_reports(container, name, reports, report_schemas(), outcome, echo)
        return outcome
    finally:
        with contextlib.suppress(Exception):
            container.remove(force=True)
