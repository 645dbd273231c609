"""`make bench-start`'s run: both images through one loopback registry into two runtimes, one table of phases, the
ratios against the targets, and what the image shares with a sibling of the family (SHARE_WITH)."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..plan.spec import ImageSpec
from .coldstart import (
    RAM_FREE_BYTES,
    TARGETS,
    Start,
    containerd,
    cri_start,
    ctr_start,
    docker_start,
    dockerd,
    layer_digests,
    layer_sizes,
    ram_available,
    registry,
    require_cri_client,
    workspace,
    write_json,
    zstd_copy,
)
from .sqshstart import go_of, modern_bin, runtime_version, sqsh_start, sqsh_tools

Echo = Callable[[str], None]
# make sqsh's writer (image, tag, folder, echo) -> the file: handed in by the CLI, the release side sitting above
Squash = Callable[[str, str, Path, Echo], Path]
REPOSITORY = "torchimages-bench-start"
ROOT = Path(__file__).resolve().parents[2]
MODERN = "containerd-1.7"       # the runtime column of the modern containerd's rows


@dataclass(frozen=True)
class Contestant:
    """One image in the run: who it is, its local tag (kept), its name in the registry (gzip and zstd tags)."""

    who: str             # project, plain, sibling
    local: str
    remote: str          # <registry>/torchimages-bench-start/<who>:<tag>

    @property
    def zstd(self) -> str:
        return f"{self.remote}-zstd"


def _docker(*args: str, what: str) -> None:
    proc = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=3600, check=False)
    if proc.returncode != 0:
        raise UserError(f"bench-start: {what} failed: {' '.join(proc.stderr.split())[-300:]}")


def _present(image: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", image], capture_output=True, check=False).returncode == 0


def _gpu() -> bool:
    """A GPU this node can hand to a container (nvidia-smi answers)."""
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _push(c: Contestant, echo: Echo) -> None:
    """Push under the registry name, then drop that name again (the pulls go to engines that start empty)."""
    echo(f"  pushing {c.local} as {c.remote} ...")
    _docker("tag", c.local, c.remote, what=f"docker tag {c.local}")
    try:
        _docker("push", "--quiet", c.remote, what=f"docker push {c.remote}")
    finally:
        subprocess.run(["docker", "rmi", c.remote], capture_output=True, check=False)


def _row(runtime: str, label: str, start: Start, sizes: list[int]) -> dict[str, Any]:
    return {"runtime": runtime, "image": label, "layers": len(sizes), "compressed_bytes": sum(sizes),
            "pull_s": round(start.pull, 2), "start_s": round(start.start, 2), "import_torch_s": round(start.import_torch, 2),
            "cuda_init_s": None if start.cuda_init is None else round(start.cuda_init, 2),
            "first_batch_s": None if start.first_batch is None else round(start.first_batch, 2),
            "cold_s": round(start.cold, 2), **start.extra}


def _docker_rows(contestants: list[Contestant], reg: str, gpu: bool, workdir: Path, echo: Echo) -> list[dict[str, Any]]:
    """Each image cold through a private Docker Engine (gzip), started afresh for each image."""
    rows = []
    for c in contestants:
        with dockerd(workdir) as env:
            echo(f"  docker: pull + start {c.remote} ...")
            start = docker_start(env, c.remote, gpu)
        rows.append(_row("docker", f"{c.who} (gzip)", start, _sizes(reg, c.remote)))
        echo(_line(rows[-1]))
    return rows


def _line(r: dict[str, Any]) -> str:
    """One measured row as soon as it is measured (a long run stopped midway keeps its figures)."""
    return (f"    {r['runtime']} {r['image']}: {r['compressed_bytes'] / 1e9:.3f} GB in {r['layers']} layers; pull "
            f"{r['pull_s']}s" + (f" (fetch {r['fetch_s']}s, unpack {r['unpack_s']}s)" if "fetch_s" in r else "") +
            f", start {r['start_s']}s, import torch {r['import_torch_s']}s: cold {r['cold_s']}s")


def _sizes(reg: str, ref: str) -> list[int]:
    repo, tag = ref[len(reg) + 1:].rsplit(":", 1)
    return layer_sizes(reg, repo, tag)


def _containerd_rows(contestants: list[Contestant], reg: str, gpu: bool, workdir: Path,
                     echo: Echo, *, ram: bool = False, bin_dir: Path | None = None) -> list[dict[str, Any]]:
    """Each image cold through containerd (removed after each): the plain one, the project's zstd copy, then (the
    host's containerd on disk) the project's gzip image, what the zstd alone is worth. With `ram`, containerd's root
    is a tmpfs; with `bin_dir`, the containerd is the modern one unpacked there."""
    plain, project = contestants
    refs = [(plain.remote, "plain (gzip)"), (project.zstd, "project (zstd)")]
    refs += [] if ram or bin_dir else [(project.remote, "project (gzip)")]
    runtime = "containerd-ram" if ram else MODERN if bin_dir else "containerd"
    rows = []
    with containerd(workdir, ram=ram, bin_dir=bin_dir) as ctr:
        for ref, label in refs:
            echo(f"  {runtime}: pull + start {ref} ...")
            rows.append(_row(runtime, label, ctr_start(ctr, ref, gpu), _sizes(reg, ref)))
            echo(_line(rows[-1]))
    return rows


def _cri_rows(contestants: list[Contestant], reg: str, gpu: bool, workdir: Path, echo: Echo) -> list[dict[str, Any]]:
    """The plain image and the project's zstd copy pulled as the kubelet pulls them (containerd's CRI: each layer
    unpacked while the later ones still download), each by a containerd of its own."""
    plain, project = contestants
    rows = []
    for ref, label in [(plain.remote, "plain (gzip)"), (project.zstd, "project (zstd)")]:
        with containerd(workdir, registry_addr=reg) as ctr:
            echo(f"  containerd-cri: pull + start {ref} ...")
            rows.append(_row("containerd-cri", label, cri_start(ctr, ref, gpu), _sizes(reg, ref)))
        echo(_line(rows[-1]))
    return rows


def _sqsh_row(project: Contestant, tag: str, gpu: bool, workdir: Path, echo: Echo,
              squash: Squash | None) -> dict[str, Any] | None:
    """The project's image as a squashfs on local disk (make sqsh, not timed): mount, then import torch under runc
    as enroot starts it. None (and a line saying why) where this node cannot mount or run it."""
    lacking = sqsh_tools() if squash else "no squashfs writer given"
    if lacking or squash is None:
        echo(f"  squashfs: left out ({lacking})")
        return None
    sqsh = squash(project.local, tag, workdir / "sqsh", lambda line: echo(f"  {line}"))
    try:
        echo(f"  squashfs: squashfuse mount + runc run {sqsh.name} ...")
        start = sqsh_start(sqsh, workdir)
    finally:
        sqsh.unlink(missing_ok=True)
    row = _row("squashfs", "project (sqsh)", start, [int(start.extra["sqsh_bytes"])])
    if gpu:
        row["note"] = "runc without the NVIDIA hook: import torch only"
    echo(_line(row))
    return row


def _modern_rows(contestants: list[Contestant], reg: str, gpu: bool, workdir: Path,
                 echo: Echo) -> list[dict[str, Any]]:
    """The same pulls through Debian 13's containerd (Go >= 1.21), where scripts/bootstrap.sh modern-containerd
    unpacked it; none (and a line saying why) where it did not."""
    bin_dir = modern_bin(ROOT)
    if bin_dir is None:
        echo(f"  {MODERN}: left out (no containerd unpacked in {ROOT / 'build' / 'containerd-trixie'}: run "
             f"scripts/bootstrap.sh modern-containerd, which says why it cannot)")
        return []
    return _containerd_rows(contestants, reg, gpu, workdir, echo, bin_dir=bin_dir)


def runtimes() -> dict[str, dict[str, str]]:
    """Each containerd's version and the Go release that built it (what sets its sha256 rate)."""
    out = {"containerd": {"version": runtime_version(["containerd"]), "go": go_of("containerd")}}
    bin_dir = modern_bin(ROOT)
    if bin_dir is not None:
        binary = str(bin_dir / "containerd")
        out[MODERN] = {"version": runtime_version([binary]), "go": go_of(binary)}
    return out


def _after_row(sibling: Contestant, project: Contestant, reg: str, gpu: bool, workdir: Path,
               echo: Echo) -> dict[str, Any]:
    """The project's image pulled by a containerd that holds the sibling already: what it moves and takes (gzip:
    the layers Docker pushed, whose digests the family shares as the zstd copies' do)."""
    own, held = _digests(reg, project.remote), set(_digests(reg, sibling.remote))
    moved = sum(size for digest, size in own.items() if digest not in held)
    with containerd(workdir) as ctr:
        echo(f"  containerd: {sibling.remote} first (held), then {project.remote} ...")
        subprocess.run(ctr("images", "pull", "--plain-http", sibling.remote), capture_output=True, check=True,
                       timeout=3600)
        row = _row("containerd", "project after", ctr_start(ctr, project.remote, gpu), list(own.values()))
    row.update(after=sibling.local, moved_bytes=moved, moved_fraction=round(moved / sum(own.values()), 3),
               shared_layers=sum(1 for d in own if d in held))
    echo(_line(row) + f"; it moved {moved / 1e9:.3f} GB ({row['moved_fraction']:.1%})")
    return row


def _digests(reg: str, ref: str) -> dict[str, int]:
    repo, tag = ref[len(reg) + 1:].rsplit(":", 1)
    return layer_digests(reg, repo, tag)


def _ratios(rows: list[dict[str, Any]]) -> dict[str, float]:
    """project / plain per runtime; containerd-ram only where it ran."""
    cold = {(r["runtime"], r["image"]): r["cold_s"] for r in rows}
    ratios = {"docker_gzip": cold[("docker", "project (gzip)")] / cold[("docker", "plain (gzip)")],
              "containerd_zstd": cold[("containerd", "project (zstd)")] / cold[("containerd", "plain (gzip)")]}
    if ("containerd-cri", "plain (gzip)") in cold:
        ratios["cri_zstd"] = cold[("containerd-cri", "project (zstd)")] / cold[("containerd-cri", "plain (gzip)")]
    if ("squashfs", "project (sqsh)") in cold:
        ratios["sqsh"] = cold[("squashfs", "project (sqsh)")] / cold[("containerd", "plain (gzip)")]
    if (MODERN, "plain (gzip)") in cold:
        ratios["modern_containerd_zstd"] = cold[(MODERN, "project (zstd)")] / cold[(MODERN, "plain (gzip)")]
    if ("containerd-ram", "plain (gzip)") in cold:
        ratios["containerd_zstd_ram"] = cold[("containerd-ram", "project (zstd)")] / cold[("containerd-ram", "plain (gzip)")]
    return ratios


def _print(rows: list[dict[str, Any]], ratios: dict[str, float], versions: dict[str, dict[str, str]],
           echo: Echo) -> None:
    def num(v: float | None, unit: str = "s") -> str:
        return "-" if v is None else f"{v:.2f}{unit}"
    echo(f"\n{'runtime':14} {'image':16} {'layers':>6} {'compressed':>11} {'pull':>8} {'start':>7} {'import':>7} "
         f"{'cuda':>6} {'batch':>6} {'cold':>8}")
    for r in rows:
        echo(f"{r['runtime']:14} {r['image']:16} {r['layers']:>6} {r['compressed_bytes'] / 1e9:>9.3f}GB "
             f"{num(r['pull_s']):>8} {num(r['start_s']):>7} {num(r['import_torch_s']):>7} {num(r['cuda_init_s']):>6} "
             f"{num(r['first_batch_s']):>6} {num(r['cold_s']):>8}")
    echo("cold = pull + start + first import torch; cuda/batch only where a GPU is visible")
    for r in rows:
        if "moved_bytes" in r:
            echo(f"after {r['after']}: {r['shared_layers']} of {r['layers']} layers held already; the pull moved "
                 f"{r['moved_bytes'] / 1e9:.3f} GB = {r['moved_fraction']:.1%} of the image's compressed size")
    echo(f"ratio docker (gzip) project/plain: {ratios['docker_gzip']:.2f}x (target <= {TARGETS['docker_gzip']}x); "
         f"containerd project (zstd) / plain (gzip): {ratios['containerd_zstd']:.2f}x (target <= "
         f"{TARGETS['containerd_zstd']}x)")
    if "cri_zstd" in ratios:
        echo(f"ratio containerd through its CRI (the kubelet's pull), project (zstd) / plain (gzip): "
             f"{ratios['cri_zstd']:.2f}x (target <= {TARGETS['cri_zstd']}x)")
    if "containerd_zstd_ram" in ratios:
        echo(f"ratio containerd with its root in RAM, project (zstd) / plain (gzip): "
             f"{ratios['containerd_zstd_ram']:.2f}x (target <= {TARGETS['containerd_zstd_ram']}x): the pull without "
             f"this host's disk, as on a node whose local disk writes faster than the layers decompress")
    if "sqsh" in ratios:
        echo(f"ratio squashfs on local disk (Slurm with pyxis/enroot: mount + import torch) / containerd plain (gzip) "
             f"pull + import: {ratios['sqsh']:.2f}x (target <= {TARGETS['sqsh']}x)")
    if "modern_containerd_zstd" in ratios:
        echo(f"ratio {MODERN} (a current node's runtime), project (zstd) / plain (gzip): "
             f"{ratios['modern_containerd_zstd']:.2f}x (target <= {TARGETS['modern_containerd_zstd']}x)")
    echo("runtimes: " + "; ".join(f"{name} {v['version']} built with {v['go']}" for name, v in versions.items()))


def run_start(spec: ImageSpec, plain: str, build_dir: Path, json_out: Path | None, *, after: str | None = None,
              squash: Squash | None = None, echo: Echo = print) -> int:
    """The whole run; 0 when both targets are met. The local images stay as they were: the pulls go to a private
    containerd and a private Docker Engine that start empty."""
    missing = [image for image in (spec.image, plain, *([after] if after else [])) if not _present(image)]
    if missing:
        raise UserError(f"bench-start needs {' and '.join(missing)} in the engine: `make build IMAGE={spec.tag}` and "
                        f"`make bench-build IMAGE={spec.tag}` (it leaves the plain pip image {plain})")
    require_cri_client()       # before the pushes (minutes), not after them
    gpu = _gpu()
    with workspace(build_dir) as tmp, registry(Path(tmp)) as reg:
        contestants = [Contestant("plain", plain, f"{reg}/{REPOSITORY}/plain:{spec.tag}"),
                       Contestant("project", spec.image, f"{reg}/{REPOSITORY}/project:{spec.tag}")]
        sibling = Contestant("sibling", after, f"{reg}/{REPOSITORY}/sibling:{spec.tag}") if after else None
        echo(f"bench-start {spec.tag}: registry {reg}; GPU: {'yes' if gpu else 'none (no CUDA init, no batch)'}")
        for c in [*contestants, *([sibling] if sibling else [])]:
            _push(c, echo)
        echo(f"  skopeo: the zstd copy {contestants[-1].zstd} ...")
        zstd_copy(contestants[-1].remote, contestants[-1].zstd, Path(tmp))
        rows = _containerd_rows(contestants, reg, gpu, Path(tmp), echo)
        rows += _cri_rows(contestants, reg, gpu, Path(tmp), echo)
        if os.geteuid() == 0 and ram_available() >= RAM_FREE_BYTES:
            rows += _containerd_rows(contestants, reg, gpu, Path(tmp), echo, ram=True)
        else:
            echo(f"  containerd-ram: left out ({ram_available() / 2**30:.1f} GiB available, not root or under "
                 f"{RAM_FREE_BYTES / 2**30:.0f} GiB): its root would not fit in RAM")
        rows += _modern_rows(contestants, reg, gpu, Path(tmp), echo)
        sqsh = _sqsh_row(contestants[-1], spec.tag, gpu, Path(tmp), echo, squash)
        rows += [sqsh] if sqsh else []
        rows += _docker_rows(contestants, reg, gpu, Path(tmp), echo)
        if sibling:
            rows.append(_after_row(sibling, contestants[-1], reg, gpu, Path(tmp), echo))
    ratios, versions = _ratios(rows), runtimes()
    _print(rows, ratios, versions, echo)
    passed = {k: ratios[k] <= TARGETS[k] for k in TARGETS if k in ratios}
    result = {"image": spec.tag, "plain": plain, "gpu": gpu, "runtimes": versions, "rows": rows,
              "ratios": {k: round(v, 3) for k, v in ratios.items()}, "pass": passed}
    if json_out is not None:
        write_json(json_out, result)
        echo(f"results: {json_out}")
    return 0 if all(passed.values()) else 1
