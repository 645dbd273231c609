"""`make bench-start`: from a cold node to `import torch`, the project's image against a plain one-stage pip image.

Both images go to a registry on loopback (Debian's docker-registry, its data in a temporary folder), are removed from
the node, then pulled and started, each phase timed apart: the pull, the container's start, `import torch` and (where
a GPU is visible) CUDA init and a first batch. Two runtimes read the same registry:
- the Docker Engine (20.10 here: gzip layers only), the images as `docker push` wrote them;
- containerd through `ctr` (a private daemon: its own root, state and socket, removed afterwards), reading the gzip
  images and the project's zstd copy that `skopeo copy --dest-compress-format zstd` writes under the tag
  <tag>-zstd (gzip stays under <tag> for runtimes that cannot read zstd); the same through containerd's CRI, as the
  kubelet pulls; and, where it fits, a containerd whose root is a tmpfs (the host's disk out of the pull).
Figures and ratios are printed side by side from one run; nothing asserts a speed (docs/release.md, "Cold start").
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..fsutil import atomic_write
from ..oci import DOCKER_MANIFEST, OCI_MANIFEST, layers_of

REGISTRY_BIN = "/usr/bin/docker-registry"
# cold start (pull + first import torch), project / plain; containerd_zstd_ram: containerd's root in RAM (where it
# fits); cri_zstd: containerd pulled through its CRI, as the kubelet pulls; sqsh: the squashfs mounted (Slurm with
# pyxis/enroot) against containerd's plain pull; modern_containerd_zstd: Debian 13's containerd (Go 1.24), both images
TARGETS = {"containerd_zstd": 0.5, "docker_gzip": 1.0, "containerd_zstd_ram": 0.5, "cri_zstd": 0.5, "sqsh": 0.2,
           "modern_containerd_zstd": 0.5}
# In the container: one `import torch`, then CUDA init and a first batch where a GPU is visible; one JSON line.
PROBE = """import json, time
t0 = time.perf_counter()
import torch
out = {"import_torch": time.perf_counter() - t0, "cuda_init": None, "first_batch": None}
if torch.cuda.is_available():
    t1 = time.perf_counter(); torch.cuda.init(); torch.zeros(1, device="cuda"); torch.cuda.synchronize()
    out["cuda_init"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    x = torch.randn(64, 1024, device="cuda", requires_grad=True); w = torch.randn(1024, 1024, device="cuda")
    (x @ w).relu().sum().backward(); torch.cuda.synchronize()
    out["first_batch"] = time.perf_counter() - t2
print(json.dumps(out))
"""
Echo = Callable[[str], None]


@dataclass
class Start:
    """One cold start: seconds per phase (None: not measured, e.g. no GPU) and what the pull moved."""

    pull: float
    start: float                  # the container's start: wall time of the run less what the probe timed inside
    import_torch: float
    cuda_init: float | None = None
    first_batch: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cold(self) -> float:
        """The target's measure: pull + start + first `import torch`."""
        return self.pull + self.start + self.import_torch


def _run(argv: list[str], what: str, timeout: float = 3600, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False, **kwargs)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"bench-start: {what} failed ({exc}); check that {argv[0]} is installed and works") from None
    if proc.returncode != 0:
        detail = " ".join((proc.stderr or proc.stdout).split())[-400:]
        raise UserError(f"bench-start: {what} failed: {detail}")
    return proc


def _timed(argv: list[str], what: str, **kwargs: Any) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.monotonic()
    proc = _run(argv, what, **kwargs)
    return time.monotonic() - t0, proc


def _probe(wall: float, stdout: str, pull: float, what: str) -> Start:
    """A Start from the run's wall time and the probe's JSON line (the last line of its output)."""
    try:
        inside = json.loads(stdout.strip().splitlines()[-1])
        import_torch = float(inside["import_torch"])
    except (IndexError, ValueError, KeyError, TypeError):
        raise UserError(f"bench-start: {what} printed no probe result: {stdout[-300:]!r}") from None
    optional = {k: float(inside[k]) if isinstance(inside.get(k), (int, float)) else None
                for k in ("cuda_init", "first_batch")}
    inner = import_torch + sum(v for v in optional.values() if v is not None)
    return Start(pull, max(wall - inner, 0.0), import_torch, optional["cuda_init"], optional["first_batch"])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(url: str, proc: subprocess.Popen[bytes], log: Path, what: str) -> None:
    """Wait until `url` answers; a UserError with the log's tail when the daemon exits or stays silent."""
    for _ in range(300):
        if proc.poll() is not None:
            break
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=1):
            return
        time.sleep(0.1)
    raise UserError(f"bench-start: {what} did not start; its log ends: {log.read_text(errors='replace')[-400:]}")


@contextlib.contextmanager
def registry(workdir: Path) -> Iterator[str]:
    """host:port of a docker-registry on loopback serving from workdir/registry; stopped and its data removed after."""
    if not Path(REGISTRY_BIN).exists():
        raise UserError("bench-start needs Debian's docker-registry: `apt-get install docker-registry` "
                        "(or `scripts/bootstrap.sh bench-tools` as root)")
    port, root = _free_port(), workdir / "registry"
    root.mkdir(parents=True)
    config = root / "config.yml"
    config.write_text(f"version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
                      f"  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n  secret: bench-only\n")
    log = root / "registry.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([REGISTRY_BIN, "serve", str(config)], stdout=out, stderr=subprocess.STDOUT)
    try:
        _answers(f"http://127.0.0.1:{port}/v2/", proc, log, "docker-registry")
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(root / "data", ignore_errors=True)


@dataclass(frozen=True)
class Ctr:
    """The argv of `ctr` talking to the private containerd, in its own namespace."""

    argv: tuple[str, ...]

    @property
    def address(self) -> str:
        """The daemon's socket (the CRI client talks to it too)."""
        return self.argv[self.argv.index("--address") + 1]

    def __call__(self, *args: str) -> list[str]:
        return [*self.argv, *args]


@contextlib.contextmanager
def _daemon(name: str, argv: list[str], base: Path, ready: list[str], env: dict[str, str] | None, *,
            tries: int, stop_s: float) -> Iterator[None]:
    """Run a private daemon in its own session (its log under base) until `ready` answers, or say that it did not
    start with the end of its log; afterwards stop it, unmount what it left under base/root and remove base."""
    log = base / f"{name}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    try:
        for _ in range(tries):
            if proc.poll() is not None or subprocess.run(ready, env=env, capture_output=True, check=False).returncode == 0:
                break
            time.sleep(0.1)
        if proc.poll() is not None:
            raise UserError(f"bench-start: {name} did not start; its log ends: {log.read_text(errors='replace')[-400:]}")
        yield
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=stop_s)
        subprocess.run(["umount", "-R", str(base / "root")], capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)


RAM_ROOT_BYTES = 12 * 2**30     # containerd's root in RAM: one image's blobs and snapshots at a time (~9.5 GB for CUDA)
RAM_FREE_BYTES = 18 * 2**30     # and what the node must have free besides for it, the page cache and the registry


def ram_available() -> int:
    """MemAvailable in bytes (0 where /proc/meminfo says nothing)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


# The kubelet's pull: the CRI's ImageService/PullImage on containerd's socket (client.Pull with unpack: each layer is
# unpacked as soon as it and the layers under it are fetched, while the rest still download; ctr fetches all, then
# unpacks). The request (pull_request) is encoded here, so that no generated stubs are needed; the script sends it.
CRI_PYTHON = "/usr/bin/python3"   # the distro's Python, whose python3-grpcio sends the request
CRI_PULL = """import sys, grpc
with grpc.insecure_channel("unix://" + sys.argv[1]) as channel:
    channel.unary_unary("/runtime.v1.ImageService/PullImage")(bytes.fromhex(sys.argv[2]), timeout=3600)
"""


def _field(number: int, data: bytes) -> bytes:
    """One length-delimited protobuf field: its key, the length as a varint, the bytes."""
    size, head = len(data), bytearray([number << 3 | 2])
    while size > 0x7F:
        head.append(size & 0x7F | 0x80)
        size >>= 7
    return bytes(head) + bytes([size]) + data


def require_cri_client() -> None:
    """A UserError naming the package when the distro Python cannot send the CRI request (no grpc)."""
    if subprocess.run([CRI_PYTHON, "-c", "import grpc"], capture_output=True, check=False).returncode != 0:
        raise UserError("bench-start needs the distro Python's grpc for the CRI pull: `apt-get install python3-grpcio` "
                        "(or `scripts/bootstrap.sh bench-tools` as root)")


def pull_request(ref: str) -> bytes:
    """PullImageRequest{image: ImageSpec{image: ref}} (k8s.io/cri-api runtime/v1 api.proto: field 1 of each)."""
    return _field(1, _field(1, ref.encode()))
CRI_NAMESPACE = "k8s.io"        # where the CRI keeps its images


@contextlib.contextmanager
def containerd(workdir: Path, *, ram: bool = False, registry_addr: str | None = None,
               bin_dir: Path | None = None) -> Iterator[Ctr]:
    """A private containerd (root, state and socket under workdir), stopped and its content removed after. With
    `ram`, its root (content store and snapshots) is a tmpfs: the node's writes cost what decompression and the
    unpack's own work cost, as on a node whose local disk outpaces them (NVMe), not what this host's disk costs.
    With `registry_addr`, its CRI plugin reads that loopback registry over http and the Ctr is in the CRI's
    namespace (make bench-start's kubelet-like pull). With `bin_dir`, containerd, ctr and the shim are those in that
    folder (a modern containerd unpacked privately), else the host's."""
    for tool in ("containerd", "ctr"):
        if bin_dir is None and not shutil.which(tool):
            raise UserError(f"bench-start needs {tool}: `apt-get install containerd` "
                            f"(or `scripts/bootstrap.sh bench-tools` as root)")
    base = workdir / ("containerd-ram" if ram else "containerd-modern" if bin_dir else "containerd")
    sock = base / "containerd.sock"
    base.mkdir(parents=True)
    if ram:
        (base / "root").mkdir()
        _run(["mount", "-t", "tmpfs", "-o", f"size={RAM_ROOT_BYTES},mode=0711", "tmpfs", str(base / "root")],
             "mounting a tmpfs for containerd's root")
    mirror = (f'[plugins."io.containerd.grpc.v1.cri".registry.mirrors."{registry_addr}"]\n'
              f'  endpoint = ["http://{registry_addr}"]\n') if registry_addr else ""
    (base / "config.toml").write_text(f'version = 2\nroot = "{base / "root"}"\nstate = "{base / "state"}"\n'
                                      f'[grpc]\n  address = "{sock}"\n[plugins."io.containerd.grpc.v1.cri"]\n'
                                      f'  disable_tcp_service = true\n{mirror}')
    namespace = CRI_NAMESPACE if registry_addr else "torchimages-bench"
    ctr = Ctr((str(bin_dir / "ctr") if bin_dir else "ctr", "--address", str(sock), "--namespace", namespace))
    # the daemon finds its shim on PATH: the private one first
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"} if bin_dir else None
    daemon = str(bin_dir / "containerd") if bin_dir else "containerd"
    try:
        with _daemon("containerd", [daemon, "--config", str(base / "config.toml")], base, ctr("version"), env,
                     tries=300, stop_s=60):
            yield ctr
    finally:        # the tmpfs goes with the daemon even when the daemon never started
        if ram:
            subprocess.run(["umount", str(base / "root")], capture_output=True, check=False)
            shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def dockerd(workdir: Path) -> Iterator[dict[str, str]]:
    """A private Docker Engine (its data root, exec root and socket under workdir, its own containerd), so a pull
    is cold: the engine that built the image keeps its layers in BuildKit's cache even after `docker rmi`, and a
    pull there finds them all. Yields the environment of a docker client that talks to it; removed after."""
    if not shutil.which("dockerd"):
        raise UserError("bench-start needs dockerd for a cold Docker Engine: `apt-get install docker.io`")
    base = workdir / "dockerd"
    base.mkdir(parents=True)
    sock = base / "docker.sock"
    argv = ["dockerd", "--data-root", str(base / "root"), "--exec-root", str(base / "exec"), "--pidfile",
            str(base / "dockerd.pid"), "--host", f"unix://{sock}", "--bridge=none", "--iptables=false", "--ip-masq=false"]
    env = {**os.environ, "DOCKER_HOST": f"unix://{sock}"}
    with _daemon("dockerd", argv, base, ["docker", "version"], env, tries=600, stop_s=120):
        yield env


def docker_start(env: dict[str, str], ref: str, gpu: bool) -> Start:
    """Pull `ref` into an engine that holds nothing of it, then one container: start, import torch (CUDA on a
    GPU)."""
    pull, _ = _timed(["docker", "pull", "--quiet", ref], f"docker pull {ref}", env=env)
    gpus = ["--gpus", "all"] if gpu else []
    wall, proc = _timed(["docker", "run", "--rm", "--network", "none", *gpus, ref, "python", "-c", PROBE],
                        f"docker run {ref}", env=env)
    return _probe(wall, proc.stdout, pull, f"docker run {ref}")


def ctr_start(ctr: Ctr, ref: str, gpu: bool) -> Start:
    """The same through containerd: the pull in its two parts, `ctr content fetch` (download and check) then
    `ctr images pull` (finds every blob present: it unpacks), which is what one `ctr images pull` does in turn (ctr
    1.6 fetches every layer, then unpacks); then `ctr run`. The image is removed after (with its snapshots,
    synchronously), so the next pull is cold too."""
    fetch, _ = _timed(ctr("content", "fetch", "--plain-http", ref), f"ctr content fetch {ref}")
    unpack, _ = _timed(ctr("images", "pull", "--plain-http", ref), f"ctr images pull {ref}")
    start = _ctr_run(ctr, ref, gpu, fetch + unpack)
    start.extra.update(fetch_s=round(fetch, 2), unpack_s=round(unpack, 2))
    return start


def cri_start(ctr: Ctr, ref: str, gpu: bool) -> Start:
    """The same with the kubelet's pull (CRI PullImage, through the distro Python's grpc), then `ctr run` in the
    CRI's namespace. Give it a containerd of its own per image: the CRI names an image three ways."""
    pull, _ = _timed([CRI_PYTHON, "-c", CRI_PULL, ctr.address, pull_request(ref).hex()],
                     f"CRI PullImage {ref} (needs python3-grpcio)")
    return _ctr_run(ctr, ref, gpu, pull)


def _ctr_run(ctr: Ctr, ref: str, gpu: bool, pull: float) -> Start:
    """One `ctr run` of the probe on a pulled image; the image removed after (with its snapshots, synchronously)."""
    gpus = ["--gpus", "0"] if gpu else []
    name = f"bench-{os.getpid()}-{int(time.time() * 1000)}"
    try:
        wall, proc = _timed(ctr("run", "--rm", *gpus, ref, name, "python", "-c", PROBE), f"ctr run {ref}")
    finally:
        subprocess.run(ctr("images", "rm", "--sync", ref), capture_output=True, check=False)
        subprocess.run(ctr("content", "prune", "references"), capture_output=True, check=False)
    return _probe(wall, proc.stdout, pull, f"ctr run {ref}")


def zstd_copy(src: str, dest: str, workdir: Path) -> None:
    """The zstd variant of a pushed image under another tag, written by skopeo (gzip stays under the source tag).

    Through an OCI layout on disk: copied registry to registry, skopeo (1.9) finds the gzip blobs already in the
    registry and reuses them instead of compressing anew."""
    if not shutil.which("skopeo"):
        raise UserError("bench-start needs skopeo for the zstd variant: `apt-get install skopeo`")
    layout = workdir / "zstd-layout"
    try:
        _run(["skopeo", "copy", "--quiet", "--src-tls-verify=false", "--dest-compress-format", "zstd",
              f"docker://{src}", f"oci:{layout}:zstd"], f"skopeo copy {src} (zstd)")
        _run(["skopeo", "copy", "--quiet", "--dest-tls-verify=false", f"oci:{layout}:zstd", f"docker://{dest}"],
             f"skopeo copy {dest} (zstd)")
    finally:
        shutil.rmtree(layout, ignore_errors=True)


def layer_sizes(registry_addr: str, repo: str, tag: str) -> list[int]:
    """Compressed size of each layer of a pushed image, from its manifest in the registry."""
    return list(layer_digests(registry_addr, repo, tag).values())


def layer_digests(registry_addr: str, repo: str, tag: str) -> dict[str, int]:
    """Digest -> compressed size of each layer of a pushed image, from its manifest in the registry."""
    req = urllib.request.Request(f"http://{registry_addr}/v2/{repo}/manifests/{tag}",
                                 headers={"Accept": f"{OCI_MANIFEST}, {DOCKER_MANIFEST}"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return dict(layers_of(resp.read()))


def workspace(build_dir: Path) -> contextlib.AbstractContextManager[str]:
    """A temporary folder under BUILD_DIR (the registry's and containerd's data: GBs, removed after); absolute,
    since containerd's configuration names its folders."""
    build_dir.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(prefix="bench-start-", dir=build_dir.resolve())


def write_json(path: Path, result: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(result, indent=2) + "\n")
