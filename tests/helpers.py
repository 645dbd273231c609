"""What several test modules share: the repository's paths, a CLI runner, a free port, the small matrix files
the validation tests write, a Kubernetes model loader, and the disk hygiene of the integration builds.

Tests import from here (or from tests/verify_handmade.py and tests/slurm.py), never from another test module or a
conftest.py: those keep only pytest's hooks and fixtures. Nothing is loaded at import time beyond the standard library."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
TEST_MATRIX, TEST_COMPAT = DATA / "matrix.yaml", DATA / "compat.yaml"


EXAMPLES_SCALE = 30    # HYPOTHESIS_PROFILE=thorough runs each property this many times as often (conftest.py)


def examples(n: int) -> int:
    """A property test's own example count: n in CI's default profile, EXAMPLES_SCALE x n under `make test-thorough`."""
    return n * EXAMPLES_SCALE if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else n


# `make test` runs two pytest-xdist workers: a group of tests runs whole on one worker, in collection order. Two groups
# are lanes that must not overlap with themselves. The engine lane: the engine tests that build the multi-GB images
# (arm64 under qemu, the two CUDA images) or build, share or remove the default CPU image (test_release removes its
# image by id). One at a time: two of them at once on 2 cores ran each twice as long (2026-11-28: disk and CPU bound),
# and the run's peak disk is one of them. The Slurm lane: every real Slurm (fixed loopback addresses, ports and
# /etc/hosts names). Any other module is a group of its own, so its module fixtures are set up once: among them the
# engine modules whose images are their own and small or mostly waited on (ENGINE_OWN: the access image's browser
# and ssh, tiny test images); their builds take turns with the lane's on build/wheels (scripts/builder/wheels.py).
ENGINE_LANE, SLURM_LANE = "engine lane", "Slurm lane"
ENGINE_OWN = frozenset(f"tests/integration/test_{name}.py" for name in ("access", "fabric", "push_index",
                                                                       "lock_resolve"))
# The groups handed out first, longest first (minutes each, measured 2026-11-28): the rest, few tests first (a module
# of many tests is mostly unit cases of seconds), fill the end of both workers.
LONGEST_FIRST = (ENGINE_LANE, SLURM_LANE, "tests/integration/test_access.py")


def worker_group(nodeid: str) -> str:
    """The group (xdist's scope) a test runs in: a lane, or its own module."""
    path = nodeid.partition("::")[0]
    if "slurm" in path:
        return SLURM_LANE
    return ENGINE_LANE if path.startswith("tests/integration/") and path not in ENGINE_OWN else path


def dispatch_order(sizes: dict[str, int]) -> list[str]:
    """The groups (name: number of tests) in the order the scheduler hands them out: LONGEST_FIRST, then the others
    fewest tests first."""
    def rank(group: str) -> tuple[int, int]:
        return (LONGEST_FIRST.index(group) if group in LONGEST_FIRST else len(LONGEST_FIRST)), sizes[group]
    return sorted(sizes, key=rank)


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 1800,
            module: str = "scripts", cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`python -m <module> args` from the repository root, output captured as text. Past `timeout` the child is
    killed and the test fails in one line with what ran, its limit and the last output (never a bare traceback)."""
    try:
        return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True,
                              env={**os.environ, **(env or {})}, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        last = (exc.stdout or b"")[-600:]
        shown = last.decode(errors="replace") if isinstance(last, bytes) else last
        pytest.fail(f"`python -m {module} {' '.join(args)}` ran past its {timeout:.0f} s limit and was killed: a step "
                    f"hung (under qemu: an emulated build or verify; the build log in BUILD_DIR/logs says which); "
                    f"last output: {' '.join(shown.split())[-300:] or 'none'}", pytrace=False)


def assert_clean_failure(proc: subprocess.CompletedProcess[str], *needles: str, code: int | None = None) -> None:
    """Non-zero exit (or `code`), no traceback, and every needle in the output."""
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    if code is not None:
        assert proc.returncode == code, out
    assert "Traceback" not in out, out
    for needle in needles:
        assert needle in out, f"{needle!r} not in:\n{out}"


def status_of(check: dict[str, Any]) -> str:
    """A report's check status, arrow's ARROW_SLOW warn read as its pass: the zero-copy ratio measures the runner's
    memory under load (a fresh-clone CI here saw it warn on a loaded machine), never the image's fault."""
    return "pass" if (check["status"], check.get("code")) == ("warn", "ARROW_SLOW") else str(check["status"])


def wait_for(path: Path, text: str, timeout: float) -> None:
    """Until `text` is in the file at `path` (a child's output): what a test waits on instead of a fixed sleep."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in path.read_text():
            return
        time.sleep(0.2)
    raise AssertionError(f"{text!r} not seen in {path.read_text()!r}")


def alive(pid: int) -> bool:
    """Whether the process runs: it exists and is not a zombie waiting for its parent."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def load_launcher(name: str) -> ModuleType:
    """An access launcher of rootfs/access (a Python script without .py) as a module, to call its parsers."""
    path = ROOT / "rootfs" / "access" / "usr" / "local" / "bin" / name
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


# A matrix.yaml written by a test: this head, then its images (CPU_DEFAULT: the one default image it needs).
MATRIX_HEAD = """\
repository: torchimages
defaults:
  packages: {torchdata: "0.11.0", pyarrow: "26.0.1", h5py: "3.16.0", numpy: "2.4.6", nvidia-ml-py: "13.615.71"}
images:
"""
CPU_DEFAULT = """\
  - {torch: "2.13.0", cuda: cpu, flavor: cpu, distro: debian12, torchvision: false, default: true}
"""


def write_matrix(tmp_path: Path, body: str, head: str = MATRIX_HEAD) -> Path:
    path = tmp_path / "matrix.yaml"
    path.write_text(head + textwrap.dedent(body))
    return path


def matrix_problems(tmp_path: Path, body: str, head: str = MATRIX_HEAD) -> str:
    """The message of the UserError that loading this matrix (against the test compat.yaml) raises."""
    from scripts.errors import UserError
    from scripts.plan.matrix import load_matrix
    with pytest.raises(UserError) as info:
        load_matrix(write_matrix(tmp_path, body, head), TEST_COMPAT)
    return str(info.value)


def k8s_model(doc: dict[str, Any]) -> Any:
    """Load a manifest into the official client's model; field names and types must be right."""
    from kubernetes.client import ApiClient
    api = ApiClient()
    kind = {"Job": "V1Job", "Service": "V1Service"}[doc["kind"]]
    model = api._ApiClient__deserialize(doc, kind)  # type: ignore[attr-defined]
    assert api.sanitize_for_serialization(model) == doc, f"{kind}: fields lost or retyped"
    return model


@contextmanager
def dropped_when_built_here(client: Any, image: str, *folders: Path) -> Iterator[None]:
    """Around a test that builds a multi-GB image: when the image was absent before (a fresh CI machine), remove it
    after, with the build cache its build made (its layers stay in BuildKit's cache after the image is gone: GBs),
    BuildKit's cache mounts (the uv caches) and the given download folders. A CI machine's disk is shared and finite:
    the suite's peak must not be the sum of every image it ever built."""
    import shutil

    from docker.errors import ImageNotFound

    from scripts.builder.engine import image_exists
    present = image_exists(client, image)
    before = _build_cache_ids(client)
    try:
        yield
    finally:
        if not present:
            try:
                client.images.remove(image, force=True)
            except ImageNotFound:
                pass
            client.api.prune_builds(filters={"type": "exec.cachemount"})
            made = sorted(_build_cache_ids(client) - before)
            if made:    # the engine takes one regular expression for ids (moby: "id~=<value>"); only records no
                # image or running build holds are removed, so another worker's build keeps what it uses
                client.api.prune_builds(filters={"id": "^(" + "|".join(made) + ")$"})
            for folder in folders:
                shutil.rmtree(folder, ignore_errors=True)


def _build_cache_ids(client: Any) -> set[str]:
    return {record["ID"] for record in client.df().get("BuildCache") or []}


# Issue 25: what a CUDA image's RDMA userspace must show inside, on a host without adapters: both libraries load
# through ctypes (as NCCL dlopens them), the mlx5 provider is there, the distro packages are in the image's SBOM, and
# ibv_get_device_list() lists no device. Its error is none where the kernel has verbs (an empty list), and ENOSYS
# exactly where it has none (no /sys/class/infiniband_verbs: rdma-core's "no uverbs ABI", NULL): never anything else.
RDMA_PROBE = r"""
import ctypes, glob, json, os
verbs = ctypes.CDLL("libibverbs.so.1", use_errno=True)
ctypes.CDLL("librdmacm.so.1")
verbs.ibv_get_device_list.restype = ctypes.c_void_p
verbs.ibv_get_device_list.argtypes = [ctypes.POINTER(ctypes.c_int)]
verbs.ibv_free_device_list.argtypes = [ctypes.c_void_p]
count = ctypes.c_int(-1)
ctypes.set_errno(0)
listed = verbs.ibv_get_device_list(ctypes.byref(count))
errno = ctypes.get_errno()
if listed:
    verbs.ibv_free_device_list(listed)
sbom = json.load(open("/usr/share/torchimages/sbom.cdx.json"))
print(json.dumps({"listed": bool(listed), "count": count.value, "errno": errno,
                  "kernel_verbs": os.path.exists("/sys/class/infiniband_verbs/abi_version"),
                  "mlx5": glob.glob("/usr/lib/*/libibverbs/libmlx5-rdmav*.so"),
                  "deb": sorted(c["name"] for c in sbom["components"] if c.get("purl", "").startswith("pkg:deb/"))}))
"""


def assert_rdma_userspace(client: Any, image: str, platform: str | None = None) -> dict[str, Any]:
    """Run RDMA_PROBE in `image` (no network, no device) and assert what it must show; its findings."""
    import errno
    import json
    out = client.containers.run(image, ["python", "-c", RDMA_PROBE], remove=True, network_mode="none",
                                **({"platform": platform} if platform else {})).decode()
    found = json.loads(out.strip().splitlines()[-1])
    assert found["count"] == 0, found
    if found["kernel_verbs"]:
        assert found["listed"] and found["errno"] == 0, found
    else:
        assert not found["listed"] and found["errno"] == errno.ENOSYS, found
    assert len(found["mlx5"]) == 1, found
    assert {"libibverbs1", "ibverbs-providers", "libfabric1"} <= set(found["deb"]), found
    assert {"librdmacm1", "librdmacm1t64"} & set(found["deb"]), found     # the name after Debian's t64 transition
    return found
