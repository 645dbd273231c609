"""`make bench-build`: in one run, cold, this project's image against two plain one-stage Dockerfiles with the same
packages, one `pip install` and one `uv pip install` (the fastest plain peer). Prints build time, image size and the
in-container `python -c "import torch"` wall time (median of BENCH_RUNS runs, the images taking turns) for each, and
the ratios (targets: build <= 0.75x the pip peer and <= 1.0x the uv peer, size <= 1.0x, import <= 1.0x).

Cold: `--no-cache` for all, the project's uv told to ignore its cache mount (COLD=1), pip and the peer's uv without a
cache. All build FROM the same base and see the same wheel folder (build/wheels, staged from the lock; the peer
installs the same pinned uv wheel from it). Each is built `rounds` times, the order rotating round by round
(plain, uv, project; then uv, project, plain; ...): a later build finds the page cache and the network warm, so a
single ordered run favours whoever builds last. The median build time of each counts.
"""
from __future__ import annotations

import dataclasses
import json
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..fsutil import atomic_write
from ..plan.platforms import NATIVE_NAME
from ..plan.spec import ImageSpec, Target
from .base import resolve_base
from .buildkit import BuildRequest, _network, build_argv
from .engine import BuildClient
from .lock import UV_VERSION, requirements, stage_for_build
from .wheels import stage_wheels

BENCH_REPOSITORY = "torchimages-bench"
TARGETS = {"build": 0.75, "build_uv": 1.0, "size": 1.0, "import": 1.0}
WHO = ("plain", "uv", "project")     # the contestants, in the first round's order


def plain_dockerfile(spec: ImageSpec, base: str) -> str:
    """The plainest Dockerfile with the same packages: one stage, pip, venv."""
    reqs = " ".join(f'"{r}"' for r in requirements(spec))
    return f"""FROM {base}
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update \\
    && apt-get install -y --no-install-recommends python{spec.python} python{spec.python}-venv python3 ca-certificates \\
    && rm -rf /var/lib/apt/lists/*
RUN python{spec.python} -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
ARG TORCH_INDEX_URL=
RUN --mount=type=secret,id=ca --mount=type=bind,source=build/wheels,target=/wheels \\
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \\
    && PIP_EXTRA_INDEX_URL="$TORCH_INDEX_URL" pip install --no-cache-dir --find-links /wheels {reqs}
"""


def uv_dockerfile(spec: ImageSpec, base: str, uv_version: str) -> str:
    """The plainest Dockerfile with uv: one stage, the same pinned uv wheel the project stages, no uv cache."""
    reqs = " ".join(f'"{r}"' for r in requirements(spec))
    return f"""FROM {base}
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \\
    && apt-get install -y --no-install-recommends python{spec.python} python{spec.python}-venv python3 ca-certificates \\
    && rm -rf /var/lib/apt/lists/*
ENV PATH=/opt/venv/bin:$PATH
ARG TORCH_INDEX_URL=
RUN --mount=type=secret,id=ca --mount=type=bind,source=build/wheels,target=/wheels \\
    if [ -s /run/secrets/ca ]; then export SSL_CERT_FILE=/run/secrets/ca; fi \\
    && python{spec.python} -m zipfile -e /wheels/uv-{uv_version}-*manylinux*_"$(uname -m)".whl /tmp/uv \\
    && chmod +x /tmp/uv/uv-{uv_version}.data/scripts/uv \\
    && /tmp/uv/uv-{uv_version}.data/scripts/uv venv --python /usr/bin/python{spec.python} /opt/venv \\
    && UV_EXTRA_INDEX_URL="$TORCH_INDEX_URL" /tmp/uv/uv-{uv_version}.data/scripts/uv pip install --no-cache \\
        --compile-bytecode --python /opt/venv/bin/python --find-links /wheels {reqs} \\
    && rm -rf /tmp/uv
"""


def _build(argv: list[str], env: Mapping[str, str], log: Path, root: Path) -> float:
    start = time.monotonic()
    with open(log, "w", encoding="utf-8") as fh:
        proc = subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, env=dict(env), cwd=root, check=False)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(encoding="utf-8").splitlines()[-15:])
        raise UserError(f"bench build failed ({' '.join(argv[:3])} ...); last lines of {log}:\n{tail}", multiline=True)
    return seconds


ONE_IMPORT = ("import subprocess,sys,time\n"
              "t=time.perf_counter(); subprocess.run([sys.executable,'-c','import torch'],check=True)\n"
              "print(time.perf_counter()-t)\n")


def import_seconds(client: Any, images: Mapping[str, str], runs: int) -> dict[str, float]:
    """Median wall time of `python -c "import torch"` per image, measured inside one long-lived container of each
    (no network), the images taking turns run by run and alternating who goes first: a drift of the machine
    (another process, the page cache) then hits both alike instead of whichever was measured second."""
    containers = {who: client.containers.run(image, ["sleep", "infinity"], detach=True, remove=True,
                                             network_mode="none") for who, image in images.items()}
    times: dict[str, list[float]] = {who: [] for who in images}
    try:
        order = list(images)
        for run in range(runs):
            for who in order if run % 2 == 0 else reversed(order):
                code, out = containers[who].exec_run(["python", "-c", ONE_IMPORT])
                if code != 0:
                    raise UserError(f"`import torch` failed in {images[who]}: {out.decode(errors='replace')[-300:]}")
                times[who].append(float(out.decode().strip().splitlines()[-1]))
    finally:
        for container in containers.values():
            container.remove(force=True)
    return {who: float(statistics.median(ts)) for who, ts in times.items()}


def _drop(client: Any, image: str) -> None:
    """Remove `image` (a bench tag) and its layers, if it exists."""
    from docker.errors import ImageNotFound
    try:
        client.images.remove(image, force=True)
    except ImageNotFound:
        pass


def round_order(rounds: int, who: tuple[str, ...] = WHO) -> list[tuple[str, ...]]:
    """The build order of each round, rotating: plain, uv, project; then uv, project, plain; ... (each builds first,
    and last, as often as the others over len(who) rounds)."""
    return [who[i % len(who):] + who[:i % len(who)] for i in range(rounds)]


@dataclass(frozen=True)
class Contest:
    """The cold builds being compared: argv and image of each, as `who` (plain, uv, project) names them."""

    argvs: dict[str, list[str]]
    images: dict[str, str]


def _peer_argv(cli: BuildClient, dockerfile: Path, image: str, torch_index: str, ca: str | None,
                network: str | None, root: Path) -> list[str]:
    argv = [*cli.argv, "--progress", "plain", "--no-cache", "-f", str(dockerfile), "-t", image,
            "--build-arg", f"TORCH_INDEX_URL={torch_index}"]
    argv += ["--secret", f"id=ca,src={ca}"] if ca else []
    argv += ["--network", network] if network else []
    return argv + [str(root)]


def _build_rounds(client: Any, contest: Contest, rounds: int, env: Mapping[str, str], logs: Path, tag: str,
                  root: Path, echo: Callable[[str], None]) -> dict[str, list[float]]:
    """Build seconds per `who`, round by round in rotating order, each image dropped before its next build."""
    times: dict[str, list[float]] = {who: [] for who in contest.images}
    for number, order in enumerate(round_order(rounds), 1):
        for who in order:
            _drop(client, contest.images[who])     # the last round's image: GBs of layers nothing needs any more
            echo(f"  round {number}/{rounds}: building the {who} Dockerfile (cold) ...")
            times[who].append(_build(contest.argvs[who], env, logs / f"bench-{tag}-{who}-{number}.log", root))
            echo(f"    {times[who][-1]:.1f}s")
    return times


def _ratios(build: dict[str, float], sizes: dict[str, int], imports: dict[str, float]) -> dict[str, float]:
    """project / plain pip peer for each measure, and the build against the uv peer (the targets' keys)."""
    return {"build": build["project"] / build["plain"], "build_uv": build["project"] / build["uv"],
            "size": sizes["project"] / sizes["plain"], "import": imports["project"] / imports["plain"]}


def _results(spec: ImageSpec, base: str, offline: bool, runs: int, rounds: int, times: dict[str, list[float]],
             sizes: dict[str, int], imports: dict[str, float], images: dict[str, str]) -> dict[str, Any]:
    """The JSON record of a bench run: medians, per-round ratios, the ratios and whether each target is met."""
    build = {who: float(statistics.median(ts)) for who, ts in times.items()}
    ratios = _ratios(build, sizes, imports)
    result: dict[str, Any] = {
        "image": spec.tag, "base": base, "offline": offline, "runs": runs, "rounds": rounds,
        "order": [list(order) for order in round_order(rounds)],
        "round_ratios": [round(pr / pl, 3) for pr, pl in zip(times["project"], times["plain"], strict=True)],
        "round_ratios_uv": [round(pr / pu, 3) for pr, pu in zip(times["project"], times["uv"], strict=True)],
        **{who: {"build_s": round(build[who], 2), "builds_s": [round(t, 2) for t in times[who]],
                 "size_bytes": sizes[who], "import_torch_s": round(imports[who], 3), "image": images[who]}
           for who in WHO},
    }
    result["ratios"] = {k: round(v, 3) for k, v in ratios.items()}
    result["pass"] = {k: ratios[k] <= TARGETS[k] for k in TARGETS}
    return result


def _print_results(result: dict[str, Any], rounds: int, ratios: dict[str, float], echo: Callable[[str], None]) -> None:
    passed = result["pass"]
    echo(f"\n{'':10} {'build':>9} {'size':>10} {'import torch':>13}")
    for who in ("project", "plain", "uv"):
        r = result[who]
        echo(f"{who:10} {r['build_s']:8.1f}s {r['size_bytes'] / 1e9:8.3f}GB {r['import_torch_s']:12.3f}s")
    echo(f"{'ratio':10} {ratios['build']:8.2f}x {ratios['size']:9.3f}x {ratios['import']:12.2f}x   (project / plain pip)")
    uv, project = result["uv"], result["project"]
    echo(f"{'ratio uv':10} {ratios['build_uv']:8.2f}x {project['size_bytes'] / uv['size_bytes']:9.3f}x "
         f"{project['import_torch_s'] / uv['import_torch_s']:12.2f}x   (project / plain uv)")
    echo(f"build: median of {rounds} cold build(s) each; per-round ratios to pip, uv: " +
         ", ".join(f"{r:.2f}x, {u:.2f}x ({' then '.join(o)})" for r, u, o in
                   zip(result["round_ratios"], result["round_ratios_uv"], round_order(rounds), strict=True)))
    echo("targets: build <= 0.75x pip and <= 1.0x uv, size <= 1.0x, import <= 1.0x: " +
         ", ".join(f"{k} {'ok' if ok else 'MISSED'}" for k, ok in passed.items()))


def run_bench(client: Any, cli: BuildClient, spec: ImageSpec, req: BuildRequest, *, runs: int = 5, rounds: int = 2,
              json_out: Path | None = None, bench_dir: Path | None = None,
              echo: Callable[[str], None] = print) -> int:
    """Build the three images cold, `rounds` times in rotating order, and compare; 0 when every target is met."""
    bench_spec = dataclasses.replace(spec, repository=BENCH_REPOSITORY)
    base, why = resolve_base(client, spec, req.base_override)
    folders = list(req.folders)
    stage_wheels(spec, folders, req.wheels_stage)
    staged, offline = stage_for_build(Target(spec, NATIVE_NAME), req.images_dir, folders, req.wheels_stage,
                                      req.uv_cache or req.root / "build" / "cache" / "uv")
    local_torch = any(n.startswith("torch-") for n in staged)
    torch_index = "" if local_torch else (spec.torch_index_url or "")
    network = _network(client, req.network)
    req.logs.mkdir(parents=True, exist_ok=True)
    echo(f"bench-build {spec.tag}: base {base} ({why}); wheels staged: {len(staged)}; offline: {offline}")

    project = bench_spec.targets(None)[0]
    project_argv = build_argv(cli, project, req.images_dir / spec.tag / "Dockerfile", base, torch_index, req.ca,
                              network, req.root)
    project_argv[-1:-1] = ["--no-cache", "--build-arg", "COLD=1"] + (["--build-arg", "OFFLINE=1"] if offline else [])
    images = {"plain": f"{BENCH_REPOSITORY}:{spec.tag}-plain-pip", "uv": f"{BENCH_REPOSITORY}:{spec.tag}-plain-uv",
              "project": bench_spec.image}
    texts = {"plain": plain_dockerfile(spec, base), "uv": uv_dockerfile(spec, base, UV_VERSION)}
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        argvs = {"project": project_argv}
        for who, text in texts.items():
            dockerfile = Path(tmp) / f"Dockerfile.plain-{'pip' if who == 'plain' else who}"
            dockerfile.write_text(text, encoding="utf-8")
            argvs[who] = _peer_argv(cli, dockerfile, images[who], torch_index, req.ca, network, req.root)
            if bench_dir is not None:        # the peers' Dockerfiles, kept for reading
                atomic_write(bench_dir / dockerfile.name, text)
        contest = Contest(argvs, images)
        times = _build_rounds(client, contest, rounds, {**req.env, **cli.env}, req.logs, spec.tag, req.root, echo)
    sizes = {who: client.images.get(images[who]).attrs["Size"] for who in WHO}
    imports = import_seconds(client, {who: images[who] for who in WHO}, runs)
    result = _results(spec, base, offline, runs, rounds, times, sizes, imports, images)
    build = {who: float(statistics.median(ts)) for who, ts in times.items()}
    _print_results(result, rounds, _ratios(build, sizes, imports), echo)
    if json_out:
        atomic_write(json_out, json.dumps(result, indent=2) + "\n")
        echo(f"results: {json_out}")
    return 0 if all(result["pass"].values()) else 1
