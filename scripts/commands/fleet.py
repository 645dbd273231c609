"""The cluster stage's commands: k8s-verify, slurm, isolate, oci-bundle, sqsh, fleet-report."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .common import (
    cluster_image,
    node_platform,
    one_platform,
    out,
    selected,
    shown,
)

if TYPE_CHECKING:
    from ..fleet.slurm import Job
    from ..plan.spec import ImageSpec

import argparse
import shlex
from dataclasses import replace
from pathlib import Path

from ..errors import UserError
from ..settings import Settings


def _gpus_each(settings: Settings, specs: list[ImageSpec]) -> dict[str, int]:
    """Each selected image's GPU count, every one checked before anything is written (GPUS of a CPU image refused)."""
    from ..fleet.cluster import default_gpus
    from ..render import load_rendered
    every = load_rendered(settings.images) if settings.gpus else []
    if settings.gpus is None and any(spec.cuda for spec in specs):
        # the default asks each node for one GPU: a job that passes verified that one, and the report of a node whose
        # other GPUs were never touched reads as the whole node's; said where the job is written
        out("note: GPUS not given: each node is given and verified with 1 GPU (a CUDA image's default), its other "
            "GPUs never touched: GPUS=<GPUs per node> verifies every GPU of each node")
    return {spec.tag: default_gpus(spec, settings.gpus, every) for spec in specs}


# the launcher targets' knobs, each with the values that mean "not given" and the targets that read it: make exports
# every variable to every target, so one a target does not read (make isolate SQSH=..., make slurm RDMA_RESOURCE=...)
# is said, never dropped without a word (the job written would read as the knob applied)
LAUNCH_KNOBS: dict[str, tuple[tuple[str, ...], str]] = {
    "RDMA_RESOURCE": (("",), "make k8s-verify"), "SQSH": (("",), "make slurm and make isolate"),
    "PREFLIGHT": (("", "0"), "make slurm"), "VERIFY_ARGS": (("",), "make slurm and make verify"),
    "LAUNCHER": (("", "pyxis"), "make slurm and make isolate"),
    "TORCHIMAGES_JOIN_TIMEOUT": (("",), "make slurm and make isolate"),
    "TORCHIMAGES_ISOLATE_TIMEOUT": (("",), "make isolate")}


def _unread(settings: Settings, target: str, reads: tuple[str, ...]) -> None:
    from ..fleet.job_knobs import misspelt
    for line in misspelt(settings.child_env):
        out(f"note: {line}")
    for name, (unset, readers) in LAUNCH_KNOBS.items():
        value = settings.child_env.get(name, "")
        if name not in reads and value.strip() not in unset:
            out(f"note: {name}={value!r} is not read by make {target} (it is read by {readers}): the job is written "
                "without it")


def cmd_k8s(settings: Settings, args: argparse.Namespace) -> int:
    import yaml

    from ..fleet.cluster import job_name, k8s_manifests, k8s_quantity, k8s_wait, rdma_hint
    from ..fsutil import atomic_write
    from ..settings import engine_bytes
    specs = selected(settings)
    nodes, counts = settings.nodes, _gpus_each(settings, specs)
    # SHM_SIZE, read by the one parser (settings.parse_size) and given as bytes: the pods' /dev/shm emptyDir sizeLimit
    shm = k8s_quantity(engine_bytes(settings.shm_size) or 0)
    for spec in specs:
        gpus = counts[spec.tag]
        docs = k8s_manifests(spec, cluster_image(settings, spec, "kubernetes"), nodes, gpus, shm=shm,
                             platform=node_platform(settings, spec), rdma=settings.rdma_resource)
        name = job_name(spec.tag, nodes)
        path = settings.k8s_dir / f"{name}.yaml"
        atomic_write(path, yaml.safe_dump_all(docs, sort_keys=False))
        written = shown(settings, path)
        out(f"wrote {written}\n  kubectl apply -f {shlex.quote(written)} && {k8s_wait(name)}\n  kubectl logs -l job-name={name} --tail=-1   # reports between the BEGIN/END VERIFY REPORT lines")
        # each job's own RDMA request (a CUDA image's pods request it, a CPU image's do not): said of the job it is
        # true of, never of the last image alone (IMAGE=<cuda>,<cpu> said "not requested" of a job requesting it)
        if hint := rdma_hint(nodes, gpus, settings.rdma_resource):
            out(hint if len(specs) == 1 else f"{name}: {hint}")
    _unread(settings, "k8s-verify", ("RDMA_RESOURCE",))
    if nodes > 1:
        out(f"note: one pod per node (a required pod anti-affinity on kubernetes.io/hostname: two pods on one node "
            f"would all-reduce over its own links, the fabric never crossed): the job needs {nodes} schedulable nodes, "
            "or its pods pend until its 30-minute deadline fails it")
    return 0


def _sqsh_sha256(settings: Settings, spec: ImageSpec) -> str:
    """SQSH's sha256 from its sidecar (make sqsh's <file>.json beside it), which must be of this image's tag."""
    from ..publish.sqsh import read_sidecar
    if settings.launcher != "pyxis":
        raise UserError(f"SQSH is for LAUNCHER=pyxis (enroot mounts the squashfs), not LAUNCHER={settings.launcher}")
    found = read_sidecar(Path(settings.sqsh + ".json"))
    if found.get("tag") != spec.tag:
        raise UserError(f"{settings.sqsh} was made from {str(found.get('tag'))[:80]!r}, not {spec.tag}: give IMAGE= "
                        f"its tag, or the squashfs of {spec.tag} (make sqsh IMAGE={spec.tag})")
    pushed = settings.push_dir / "pushed.json"
    if pushed.is_file():
        from ..publish.pushed import read_record
        from ..publish.sqsh import recorded_sha256s
        recorded = recorded_sha256s(read_record(pushed).get(spec.tag))
        if recorded and found["sha256"] not in recorded:
            raise UserError(f"{settings.sqsh}.json says sha256 {found['sha256'][:16]}..., but make push recorded (and "
                            f"make attest signs) {', '.join(r[:16] + '...' for r in recorded)} for {spec.tag}: make sqsh "
                            f"again from the pushed image, or push this one")
    out(f"  image: {settings.sqsh} (squashfs of {spec.tag}, sha256 {found['sha256'][:16]}..., checked before the step)")
    return str(found["sha256"])


def _slurm_job(settings: Settings, spec: ImageSpec, gpus: int) -> Job:
    from ..fleet.slurm import Job
    venv = Path(settings.child_env.get("VENV") or ".venv")
    venv = venv if venv.is_absolute() else settings.root / venv
    sha = _sqsh_sha256(settings, spec) if settings.sqsh else ""
    return Job(spec, settings.sqsh or cluster_image(settings, spec), settings.nodes, gpus,
               settings.launcher,
               platform=node_platform(settings, spec), preflight=settings.preflight,
               verify_args=settings.verify_args, python=str(venv / "bin" / "python"), checkout=str(settings.root),
               bundle=str((settings.slurm_dir / f"{spec.tag}.bundle").absolute()), sqsh=settings.sqsh,
               sqsh_sha256=sha)


def cmd_slurm(settings: Settings, args: argparse.Namespace) -> int:
    from ..fleet.slurm import slurm_script
    from ..fsutil import atomic_write
    specs = selected(settings)
    counts = _gpus_each(settings, specs)
    _shm_note(settings)
    knobs = _job_knobs(settings, isolate=False)
    for spec in specs:
        job = replace(_slurm_job(settings, spec, counts[spec.tag]), **knobs)
        path = settings.slurm_dir / f"{job.name}.sbatch"
        atomic_write(path, slurm_script(job))
        out(f"wrote {shown(settings, path)} (launcher {job.launcher})")
        _needs(job)
        if job.launcher == "oci" and not Path(job.bundle, "config.json").is_file():
            out(f"  first: make oci-bundle IMAGE={spec.tag}   # the runc bundle the job runs, {shown(settings, Path(job.bundle))}")
        out(f"  sbatch {shlex.quote(shown(settings, path))}")
    _unread(settings, "slurm", ("SQSH", "PREFLIGHT", "VERIFY_ARGS", "LAUNCHER", "TORCHIMAGES_JOIN_TIMEOUT"))
    return 0


def cmd_isolate(settings: Settings, args: argparse.Namespace) -> int:
    from ..fleet.isolate_job import isolate_name, isolate_script
    from ..fsutil import atomic_write
    if settings.nodes < 2:
        raise UserError(f"NODES={settings.nodes}: isolation all-reduces in pairs; give NODES=2 or more")
    specs = selected(settings)
    counts = _gpus_each(settings, specs)
    _shm_note(settings)
    skew = _skew_given(settings, args)
    knobs = _job_knobs(settings, isolate=True)
    for spec in specs:
        job = replace(_slurm_job(settings, spec, counts[spec.tag]), clock_skew=skew, **knobs)
        path = settings.slurm_dir / f"{isolate_name(job)}.sbatch"
        atomic_write(path, isolate_script(job))
        out(f"wrote {shown(settings, path)} (launcher {job.launcher}; pairs of nodes, at most "
            f"{_rounds(settings.nodes)} rounds)")
        _needs(job)
        out(f"  sbatch {shlex.quote(shown(settings, path))}")
    _unread(settings, "isolate", ("SQSH", "LAUNCHER", "TORCHIMAGES_JOIN_TIMEOUT", "TORCHIMAGES_ISOLATE_TIMEOUT"))
    return 0


def _job_knobs(settings: Settings, isolate: bool) -> dict[str, Any]:
    """The job's own knobs make was given (TORCHIMAGES_JOIN_TIMEOUT; make isolate's TORCHIMAGES_ISOLATE_TIMEOUT),
    checked now and written into the job (scripts/fleet/job_knobs.py): a bad one is one line before any job is
    written, an empty one is unset and said."""
    from ..fleet.isolate_run import STEP_TIMEOUT_S, TIMEOUT_MAX_S
    from ..fleet.job_knobs import isolate_timeout, join_timeout
    from ..fleet.slurm import JOIN_TIMEOUT_S
    join, notes = join_timeout(settings.child_env, JOIN_TIMEOUT_S)
    knobs: dict[str, Any] = {"join_timeout": join}
    if isolate:
        knobs["isolate_timeout"], more = isolate_timeout(settings.child_env, STEP_TIMEOUT_S, TIMEOUT_MAX_S)
        notes += more
    for note in notes:
        out(f"note: {note}")
    return knobs


def _skew_given(settings: Settings, args: argparse.Namespace) -> float | None:
    """The clock tolerance make isolate writes into its job (and make fleet-report applies): CLOCK_SKEW (make report's, gate's and fleet-report's
    name), else the TORCHIMAGES_CLOCK_SKEW make was run with (the runner's own name, read again when the job runs);
    None: neither given, the runner's default. One setting under two names: given to make isolate under either, it
    is applied, never dropped (the job read only the environment sbatch had)."""
    if _make_skew(settings, args):
        return settings.clock_skew
    if settings.child_env.get("TORCHIMAGES_CLOCK_SKEW", "").strip():
        from ..fleet.isolate_facts import skew
        return skew(dict(settings.child_env))
    if "TORCHIMAGES_CLOCK_SKEW" in settings.child_env:      # empty is unset, said (scripts/fleet/job_knobs.py)
        from ..fleet.job_knobs import blank_note
        out(f"note: {blank_note('TORCHIMAGES_CLOCK_SKEW', 'CLOCK_SKEW, else 5m')}")
    return None


def _make_skew(settings: Settings, args: argparse.Namespace) -> bool:
    """CLOCK_SKEW, make's own name for the clock tolerance, was given (it wins over TORCHIMAGES_CLOCK_SKEW)."""
    return getattr(args, "CLOCK_SKEW", None) is not None or bool(settings.child_env.get("CLOCK_SKEW", "").strip())


def _needs(job: Job) -> None:
    """What the cluster needs for the launcher (the default, pyxis, too), printed where a user reads it before
    sbatch, not only in the script's comments: a job that cannot start is a failure on every node."""
    from ..fleet.slurm import NEEDS, docker_hub_note
    out(f"  needs: {NEEDS['pyxis-sqsh' if job.sqsh else job.launcher]}")
    if note := docker_hub_note(job):
        out(f"  first: {note}")


def _shm_note(settings: Settings) -> None:
    """A SHM_SIZE other than the default is said not to apply (it was checked already): under Slurm every launcher
    runs with the node's own /dev/shm, which the job cannot size; the shm check reports what the node has."""
    from ..settings import DEFAULT_SHM
    if settings.shm_size != DEFAULT_SHM:
        out(f"note: SHM_SIZE={settings.shm_size} sizes no /dev/shm under Slurm: each launcher uses the node's own "
            f"(pyxis: enroot's tmpfs; docker: --ipc host; oci, none: the host's); the job's shm check reports its size")


def _rounds(nodes: int) -> int:
    from ..fleet.isolate import max_rounds
    return max_rounds(nodes)


def cmd_oci_bundle(settings: Settings, args: argparse.Namespace) -> int:
    from ..builder.engine import connect
    from ..fleet.slurm import make_bundle
    specs = selected(settings)
    client = connect(settings.child_env)
    for spec in specs:
        folder = make_bundle(client, spec.image, (settings.slurm_dir / f"{spec.tag}.bundle").absolute(), echo=out)
        out(f"wrote {shown(settings, folder)} (rootfs, config.json, reports/); the job: make slurm LAUNCHER=oci "
            f"IMAGE={spec.tag}")
    return 0


def cmd_sqsh(settings: Settings, args: argparse.Namespace) -> int:
    from ..builder.engine import connect
    from ..publish.sqsh import make_sqsh, record_in_push
    client = connect(settings.child_env)
    platform = one_platform(settings, "sqsh")
    for spec in selected(settings):
        target = spec.targets(platform)[0]
        path, found = make_sqsh(client, target.local_tag, spec.tag, target.report_name, settings.sqsh_dir,
                                settings.sqsh_comp, echo=out)
        out(f"wrote {shown(settings, path)} ({found['size'] / 2**20:.0f} MiB, {found['compression']}), sha256 "
            f"{found['sha256']}\n  sidecar {shown(settings, path)}.json; on the cluster: copy both to shared storage, "
            f"then make slurm LAUNCHER=pyxis IMAGE={spec.tag} SQSH=/shared/path/{path.name}")
        if record_in_push(settings.push_dir / "pushed.json", spec.tag, found):
            out(f"  recorded beside {spec.tag}'s digest in {shown(settings, settings.push_dir / 'pushed.json')}; "
                f"make attest names it in the signed statements")
    return 0


def cmd_fleet_report(settings: Settings, args: argparse.Namespace) -> int:
    from ..fleet.fleet import fleet, format_fleet, write_fleet
    if settings.fleet_dir is None:
        raise UserError("no folder given: make fleet-report DIR=<the folder the job wrote its verify reports into>")
    # CLOCK_SKEW, else the prolog's name for it: one parser (durations.parse_skew), so a value one refuses, the other
    # does too (one line, exit 2), and 0 is a tolerance (never `or`: 0 is not "not given")
    given = _skew_given(settings, args)
    skew = settings.clock_skew if given is None else given
    if given is not None and not _make_skew(settings, args):
        out(f"note: TORCHIMAGES_CLOCK_SKEW={settings.child_env['TORCHIMAGES_CLOCK_SKEW'].strip()!r} (the prolog's and "
            "make isolate's name for CLOCK_SKEW) is the clock tolerance applied: CLOCK_SKEW is not given")
    from ..fleet.job_knobs import misspelt
    for line in misspelt(settings.child_env):
        out(f"note: {line}")
    report = fleet(settings.fleet_dir, skew_s=skew, max_age_s=settings.max_age)
    if settings.state_dir is not None:
        from ..fleet.history import read_state
        report.histories = read_state(settings.state_dir, [n.node for n in report.nodes], skew_s=skew)
    out(format_fleet(report))
    out(f"wrote {shown(settings, write_fleet(report))}")
    if settings.metrics_dir is None:
        out("metrics: not written (give METRICS_DIR=<node_exporter's textfile folder> to write them)")
    else:
        from ..fleet.metrics import skipped_nodes, write_metrics
        written = write_metrics(report, settings.metrics_dir, report.histories)
        out(f"metrics: {len(written)} file(s) written into {shown(settings, settings.metrics_dir)}")
        for name in skipped_nodes(report, report.histories):
            out(f"metrics: node name {name!r} cannot name a file: not written")
    if not report.ok:
        out(f"fleet: NOT PASSING: {report.why_not_ok} (listed above)")
    else:                   # the verdict is the last line read, after the files and metrics lines
        out(f"fleet: PASSING: {len({n.node for n in report.nodes})} node(s), every report valid and passing")
    return 0 if report.ok else 1
