"""`make bench-start`'s run: both images through one loopback registry into two runtimes, one table of phases, the
ratios against the targets, and what the image shares with a sibling of the family (SHARE_WITH)."""
from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..plan.spec import ImageSpec
from .coldstart import (
    TARGETS,
    Start,
    containerd,
    ctr_start,
    docker_start,
    layer_digests,
    layer_sizes,
    registry,
    workspace,
    write_json,
    zstd_copy,
)

Echo = Callable[[str], None]
REPOSITORY = "torchimages-bench-start"


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


def _image_id(image: str) -> str:
    proc = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", image], capture_output=True, text=True,
                          check=False)
    return proc.stdout.strip()


def _push_and_drop(c: Contestant, echo: Echo) -> None:
    """Push under the registry name, then leave the node without the image (the local tag comes back after)."""
    echo(f"  pushing {c.local} as {c.remote} ...")
    image_id = _image_id(c.local)
    _docker("tag", c.local, c.remote, what=f"docker tag {c.local}")
    _docker("push", "--quiet", c.remote, what=f"docker push {c.remote}")
    _docker("rmi", c.local, c.remote, what=f"docker rmi {c.local}")
    if _present(image_id):      # another tag holds it: its layers stay, and the pull would not be cold
        subprocess.run(["docker", "tag", image_id, c.local], capture_output=True, check=False)
        raise UserError(f"bench-start: {c.local} is also tagged otherwise (docker images --filter "
                        f"reference=*:* | grep {image_id[7:19]}); remove the other tag, then run it again")


def _restore(c: Contestant) -> None:
    """The local tag again, from the image docker pulled (pulled now if the run stopped before), and no registry
    name left in the engine."""
    if not _present(c.remote):
        subprocess.run(["docker", "pull", "--quiet", c.remote], capture_output=True, check=False)
    subprocess.run(["docker", "tag", c.remote, c.local], capture_output=True, check=False)
    subprocess.run(["docker", "rmi", c.remote], capture_output=True, check=False)


def _row(runtime: str, label: str, start: Start, sizes: list[int]) -> dict[str, Any]:
    return {"runtime": runtime, "image": label, "layers": len(sizes), "compressed_bytes": sum(sizes),
            "pull_s": round(start.pull, 2), "start_s": round(start.start, 2), "import_torch_s": round(start.import_torch, 2),
            "cuda_init_s": None if start.cuda_init is None else round(start.cuda_init, 2),
            "first_batch_s": None if start.first_batch is None else round(start.first_batch, 2),
            "cold_s": round(start.cold, 2)}


def _docker_rows(contestants: list[Contestant], reg: str, gpu: bool, echo: Echo) -> list[dict[str, Any]]:
    rows = []
    for c in contestants:
        echo(f"  docker: pull + start {c.remote} ...")
        start = docker_start(c.remote, gpu)
        rows.append(_row("docker", f"{c.who} (gzip)", start, _sizes(reg, c.remote)))
        echo(_line(rows[-1]))
    return rows


def _line(r: dict[str, Any]) -> str:
    """One measured row as soon as it is measured (a long run stopped midway keeps its figures)."""
    return (f"    {r['runtime']} {r['image']}: {r['compressed_bytes'] / 1e9:.3f} GB in {r['layers']} layers; pull "
            f"{r['pull_s']}s, start {r['start_s']}s, import torch {r['import_torch_s']}s: cold {r['cold_s']}s")


def _sizes(reg: str, ref: str) -> list[int]:
    repo, tag = ref[len(reg) + 1:].rsplit(":", 1)
    return layer_sizes(reg, repo, tag)


def _containerd_rows(contestants: list[Contestant], reg: str, gpu: bool, workdir: Path,
                     echo: Echo) -> list[dict[str, Any]]:
    """Each image cold through containerd (removed after each): the plain one, the project's zstd copy, then the
    project's gzip image (what the zstd alone is worth)."""
    plain, project = contestants
    refs = [(plain.remote, "plain (gzip)"), (project.zstd, "project (zstd)"), (project.remote, "project (gzip)")]
    rows = []
    with containerd(workdir) as ctr:
        for ref, label in refs:
            echo(f"  containerd: pull + start {ref} ...")
            rows.append(_row("containerd", label, ctr_start(ctr, ref, gpu), _sizes(reg, ref)))
            echo(_line(rows[-1]))
    return rows


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
    cold = {(r["runtime"], r["image"]): r["cold_s"] for r in rows}
    return {"docker_gzip": cold[("docker", "project (gzip)")] / cold[("docker", "plain (gzip)")],
            "containerd_zstd": cold[("containerd", "project (zstd)")] / cold[("containerd", "plain (gzip)")]}


def _print(rows: list[dict[str, Any]], ratios: dict[str, float], echo: Echo) -> None:
    def num(v: float | None, unit: str = "s") -> str:
        return "-" if v is None else f"{v:.2f}{unit}"
    echo(f"\n{'runtime':11} {'image':16} {'layers':>6} {'compressed':>11} {'pull':>8} {'start':>7} {'import':>7} "
         f"{'cuda':>6} {'batch':>6} {'cold':>8}")
    for r in rows:
        echo(f"{r['runtime']:11} {r['image']:16} {r['layers']:>6} {r['compressed_bytes'] / 1e9:>9.3f}GB "
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


def run_start(spec: ImageSpec, plain: str, build_dir: Path, json_out: Path | None, *, after: str | None = None,
              echo: Echo = print) -> int:
    """The whole run; 0 when both targets are met. The local images are back under their tags afterwards."""
    missing = [image for image in (spec.image, plain, *([after] if after else [])) if not _present(image)]
    if missing:
        raise UserError(f"bench-start needs {' and '.join(missing)} in the engine: `make build IMAGE={spec.tag}` and "
                        f"`make bench-build IMAGE={spec.tag}` (it leaves the plain pip image {plain})")
    gpu = _gpu()
    with workspace(build_dir) as tmp, registry(Path(tmp)) as reg:
        contestants = [Contestant("plain", plain, f"{reg}/{REPOSITORY}/plain:{spec.tag}"),
                       Contestant("project", spec.image, f"{reg}/{REPOSITORY}/project:{spec.tag}")]
        sibling = Contestant("sibling", after, f"{reg}/{REPOSITORY}/sibling:{spec.tag}") if after else None
        echo(f"bench-start {spec.tag}: registry {reg}; GPU: {'yes' if gpu else 'none (no CUDA init, no batch)'}")
        try:
            for c in [*contestants, *([sibling] if sibling else [])]:
                _push_and_drop(c, echo)
            echo(f"  skopeo: the zstd copy {contestants[-1].zstd} ...")
            zstd_copy(contestants[-1].remote, contestants[-1].zstd, Path(tmp))
            rows = _containerd_rows(contestants, reg, gpu, Path(tmp), echo)
            rows += _docker_rows(contestants, reg, gpu, echo)
            if sibling:
                rows.append(_after_row(sibling, contestants[-1], reg, gpu, Path(tmp), echo))
        finally:
            for c in [*contestants, *([sibling] if sibling else [])]:
                _restore(c)
    ratios = _ratios(rows)
    _print(rows, ratios, echo)
    passed = {k: ratios[k] <= TARGETS[k] for k in TARGETS}
    result = {"image": spec.tag, "plain": plain, "gpu": gpu, "rows": rows,
              "ratios": {k: round(v, 3) for k, v in ratios.items()}, "pass": passed}
    if json_out is not None:
        write_json(json_out, result)
        echo(f"results: {json_out}")
    return 0 if all(passed.values()) else 1
