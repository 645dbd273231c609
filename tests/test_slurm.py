"""make slurm: the launchers' scripts as rendered (pyxis cannot run here: its script and image references are tested
as text), the knobs, and the per-node script's exit status with stand-in commands. The real Slurm runs are in
test_slurm_cluster.py (a venv on the hosts) and integration/test_slurm_launchers.py (docker, oci)."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from scripts.errors import UserError
from scripts.fleet.slurm import NEEDS, Job, _docker_step, node_script, pyxis_image, slurm_script
from scripts.settings import LAUNCHERS, Settings, parse_launcher


@pytest.fixture
def cpu(test_specs):
    return next(s for s in test_specs if s.tag == "2.13.0-cpu-debian12")


@pytest.fixture
def gpu(test_specs):
    return next(s for s in test_specs if s.tag == "2.15.0-cuda13.2-cudnn9-runtime-debian12")


@pytest.mark.unit
@pytest.mark.parametrize(("ref", "expected"), [
    ("ghcr.io/acme/x:t", "ghcr.io#acme/x:t"),
    ("127.0.0.1:5000/x:t", "127.0.0.1:5000#x:t"),
    ("localhost/x:t", "localhost#x:t"),
    ("registry.example:443/team/sub/x:t", "registry.example:443#team/sub/x:t"),
    ("acme/x:t", "acme/x:t"),                        # Docker Hub: enroot's default registry
    ("x:t", "x:t"),
    ("docker.io/acme/x:t", "acme/x:t"),
    ("ghcr.io/acme/x@sha256:" + "a" * 64, "ghcr.io#acme/x@sha256:" + "a" * 64),
])
def test_pyxis_reads_registry_hash_image(ref, expected):
    assert pyxis_image(ref) == expected


@pytest.mark.unit
def test_launcher_is_a_validated_knob_defaulting_to_pyxis():
    assert Settings.load({}, {}, ("LAUNCHER",)).launcher == "pyxis"
    assert Settings.load({"LAUNCHER": " Docker "}, {}, ("LAUNCHER",)).launcher == "docker"
    assert Settings.load({"LAUNCHER": ""}, {}, ("LAUNCHER",)).launcher == "pyxis"
    with pytest.raises(UserError) as info:
        Settings.load({"LAUNCHER": "enroot"}, {}, ("LAUNCHER",))
    assert "LAUNCHER='enroot' is not a launcher: write one of pyxis, docker, oci, none" in str(info.value)
    assert "\n" not in str(info.value)
    assert Settings.load({"PREFLIGHT": "1"}, {}, ("PREFLIGHT",)).preflight is True
    with pytest.raises(UserError, match="PREFLIGHT='maybe' is not a yes/no word"):
        Settings.load({"PREFLIGHT": "maybe"}, {}, ("PREFLIGHT",))
    assert parse_launcher("none") == "none"


def _bash_n(text: str) -> None:
    proc = subprocess.run(["bash", "-n"], input=text, text=True, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.host
@pytest.mark.parametrize("launcher", LAUNCHERS)
@pytest.mark.parametrize(("nodes", "gpus"), [(1, 0), (2, 0), (4, 8)])
def test_every_launcher_renders_the_fixed_script(launcher, nodes, gpus, gpu):
    job = Job(gpu, f"ghcr.io/acme/{gpu.image}", nodes, gpus, launcher, bundle="/shared/b", python="/shared/venv/bin/python",
              checkout="/shared/torchimages")
    text = slurm_script(job)
    _bash_n(text)
    lines = text.splitlines()
    # what the cluster needs, said in the script; GPU gres only when GPUS>0
    assert f"# This cluster needs: {NEEDS[launcher]}" in text
    assert (f"#SBATCH --gres=gpu:{gpus}" in lines) == (gpus > 0) and "--gpus-per-node" not in text
    assert f"#SBATCH --nodes={nodes}" in lines and "#SBATCH --ntasks-per-node=1" in lines
    # the rendezvous port from the job id, a join timeout, a failed node ends the step
    assert "export RDZV_PORT=$(( 20000 + SLURM_JOB_ID % 20000 ))" in lines
    assert 'rdzv_conf="join_timeout=$RDZV_JOIN_TIMEOUT"' in text and '--rdzv-conf="$rdzv_conf"' in text
    assert "29500" not in text
    assert f"--nnodes={nodes} --nproc-per-node={max(gpus, 1)}" in text
    steps = [line for line in lines if line.startswith("srun ")]
    assert len(steps) == 2 and all("--kill-on-bad-exit=1" in s for s in steps)
    # the architecture guard is the first step, on every node, outside any container
    assert "uname -m" in steps[0] and "--container" not in steps[0]
    assert lines.index(steps[0]) < lines.index(steps[1])
    # the launcher and the step's start reach the step; reports are named by the node's host name
    assert f"export TORCHIMAGES_LAUNCHER={launcher}" in lines
    assert "TORCHIMAGES_T0=$(date +%s.%N); export TORCHIMAGES_T0" in lines
    assert lines.index("TORCHIMAGES_T0=$(date +%s.%N); export TORCHIMAGES_T0") < lines.index(steps[1])
    assert '"$out/node-$node.json"' in text and "SLURM_NODEID" not in text
    if launcher == "pyxis":
        assert f"export TORCHIMAGES_IMAGE=${{TORCHIMAGES_IMAGE:-'ghcr.io#acme/{gpu.image}'}}" in lines
        assert 'srun --ntasks-per-node=1 --kill-on-bad-exit=1 --export=ALL --container-image="$TORCHIMAGES_IMAGE"' in text
        assert '--container-mounts="$TORCHIMAGES_REPORTS:/reports"' in text
    if launcher == "docker":
        for needle in ("docker run --rm --init", "--network host", "--ipc host", '--user "$(id -u):$(id -g)"',
                       '--volume "$TORCHIMAGES_REPORTS:/reports"', "trap 'docker stop --time 10 \"$name\"",
                       'name="torchimages-$SLURM_JOB_ID-'):
            assert needle in text
        assert ('gpu_args=(--gpus "\\"device=$gpu_ids\\"")' in text) == (gpus > 0)
    if launcher == "oci":
        assert 'srun --ntasks-per-node=1 --kill-on-bad-exit=1 --export=ALL --container="$TORCHIMAGES_BUNDLE"' in text
        assert ". /etc/torchimages/bundle.env 2>/dev/null || {" in text and "REFUSED" in text
        assert "export TORCHIMAGES_BUNDLE=${TORCHIMAGES_BUNDLE:-/shared/b}" in lines
        assert "node=$(hostname -s)" in lines        # SLURMD_NODENAME there is the batch host's
    if launcher == "none":
        assert "export TORCHIMAGES_PYTHON=${TORCHIMAGES_PYTHON:-/shared/venv/bin/python}" in lines
        assert '"$TORCHIMAGES_PYTHON" -c ' in text and "' torch.distributed.run " in text and "' verify " in text
        assert "-m verify" not in text and "-m torch" not in text       # no working folder first (hunt74)


@pytest.mark.unit
def test_pyxis_without_a_registry_says_what_to_do(cpu):
    text = slurm_script(Job(cpu, cpu.image, 1, 0, "pyxis"))
    assert "No REGISTRY was given: pyxis looks" in text and "enroot import -o x.sqsh dockerd://" in text
    assert "No REGISTRY" not in slurm_script(Job(cpu, "127.0.0.1:5000/" + cpu.image, 1, 0, "pyxis"))


@pytest.mark.host
def test_preflight_renders_a_job_that_runs_only_the_preflight(cpu):
    for launcher in LAUNCHERS:
        text = slurm_script(Job(cpu, cpu.image, 2, 0, launcher, preflight=True, verify_args=("--budget", "20")))
        _bash_n(text)
        assert "--preflight --expect-gpus 0 --json \"$out/preflight-$node.json\" --budget 20" in text
        assert "torchrun" not in text and "torch.distributed.run" not in text and "--list" not in text
        assert "#SBATCH --job-name=verify-2-13-0-cpu-debian12-2n-preflight" in text


@pytest.mark.unit
def test_verify_args_cannot_end_the_node_script_early(cpu):
    with pytest.raises(UserError, match="VERIFY_ARGS"):
        slurm_script(Job(cpu, cpu.image, 1, 0, "none", verify_args=("x\nTORCHIMAGES_NODE_SCRIPT_END\ny",)))
    text = slurm_script(Job(cpu, cpu.image, 1, 0, "none", verify_args=("--checks", "shm; touch /tmp/pwned")))
    assert "'shm; touch /tmp/pwned'" in text


def _fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/bash\n{body}\n")
    path.chmod(0o755)


@pytest.mark.host
@pytest.mark.parametrize(("local", "nccl", "expected"), [(0, 0, 0), (1, 0, 1), (0, 1, 1), (143, 0, 143), (3, 1, 3)])
def test_the_node_exits_with_the_local_checks_then_the_collective(tmp_path, cpu, local, nccl, expected):
    """Stand-ins for verify and torchrun: the node's status keeps the local checks' result (the old script lost it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake(bin_dir, "verify", f'[ "$1" = --list ] && {{ echo "gpu x"; echo "nccl x"; echo "shm x"; exit 0; }}\n'
                             f'echo "verify $*" >> {tmp_path}/calls; exit {local}')
    _fake(bin_dir, "torchrun", f'echo "torchrun $*" >> {tmp_path}/calls; exit {nccl}')
    script = node_script(Job(cpu, cpu.image, 2, 0, "docker"))
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TORCHIMAGES_REPORTS_IN": str(tmp_path),
           "RDZV_ENDPOINT": "n1:20001", "RDZV_JOIN_TIMEOUT": "30", "SLURM_JOB_ID": "1", "SLURMD_NODENAME": "gpu-017"}
    proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == expected, proc.stdout + proc.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[0].startswith("torchrun --nnodes=2") and "--rdzv-conf=join_timeout=30 " in calls[0]
    assert calls[1] == f"verify --checks gpu,shm --expect-gpus 0 --json {tmp_path}/node-gpu-017.json --junit {tmp_path}/node-gpu-017.xml"
    assert f"node gpu-017 local checks exit {local}, collective exit {nccl}" in proc.stdout


@pytest.mark.host
@pytest.mark.parametrize(("image", "pulled"), [("127.0.0.1:5000/torchimages:t", True), ("ghcr.io/acme/x:t", True),
                                               ("localhost/x:t", True), ("torchimages:t", False), ("acme/x:t", False)])
def test_the_docker_launcher_pulls_a_registry_image_apart_and_says_how_long(tmp_path, cpu, image, pulled):
    """A stand-in docker records its argv: an image from a registry is pulled first and the container gets
    TORCHIMAGES_PULL_S (the time-to-first-step record's pull phase); a local one is run as it is."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake(bin_dir, "docker", f'echo "docker $*" >> {tmp_path}/calls; exit 0')
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TORCHIMAGES_IMAGE": image, "SLURM_JOB_ID": "1",
           "SLURMD_NODENAME": "n1", "TORCHIMAGES_REPORTS": str(tmp_path), "TORCHIMAGES_NODE_SCRIPT": "true",
           "TORCHIMAGES_T0": "1"}
    proc = subprocess.run(["bash", "-c", _docker_step(Job(cpu, image, 1, 0, "docker"))], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert (calls[0] == f"docker pull --quiet {image}") == pulled
    assert calls[-1].startswith("docker run") and ("--env TORCHIMAGES_PULL_S" in calls[-1]) == pulled


@pytest.mark.host
def test_the_rendezvous_port_differs_between_jobs(cpu):
    text = slurm_script(Job(cpu, cpu.image, 1, 0, "none"))
    line = next(line for line in text.splitlines() if line.startswith("export RDZV_PORT="))
    ports = {job: int(subprocess.run(["bash", "-c", f"{line}; echo $RDZV_PORT"], env={"SLURM_JOB_ID": str(job)},
                                     capture_output=True, text=True, check=True).stdout) for job in (1, 2, 19999, 20001)}
    assert ports == {1: 20001, 2: 20002, 19999: 39999, 20001: 20001} and all(20000 <= p < 40000 for p in ports.values())


@pytest.mark.host
def test_make_slurm_writes_one_script_per_launcher(tmp_path, rendered, scratch_env):
    from tests.helpers import run_cli
    env = {**scratch_env, "IMAGES_DIR": str(rendered), "IMAGE": "2.13.0-cpu-debian12", "NODES": "2", "GPUS": "0",
           "LOCAL_IMAGE": "1"}
    for launcher in LAUNCHERS:
        proc = run_cli("slurm", "--launcher", launcher, env=env)
        assert proc.returncode == 0, proc.stderr
        assert f"(launcher {launcher})" in proc.stdout and "sbatch " in proc.stdout
        assert ("make oci-bundle IMAGE=2.13.0-cpu-debian12" in proc.stdout) == (launcher == "oci")
        path = tmp_path / "build" / "slurm" / "verify-2-13-0-cpu-debian12-2n.sbatch"
        assert f"export TORCHIMAGES_LAUNCHER={launcher}" in path.read_text()
    bad = run_cli("slurm", env={**env, "LAUNCHER": "srun"})
    assert bad.returncode == 2 and "LAUNCHER='srun' is not a launcher" in bad.stderr and "Traceback" not in bad.stderr
    pre = run_cli("slurm", "--preflight", env={**env, "LAUNCHER": "none"})
    assert pre.returncode == 0 and "verify-2-13-0-cpu-debian12-2n-preflight.sbatch" in pre.stdout


@pytest.mark.unit
def test_make_help_lists_the_launcher_knobs():
    from tests.helpers import ROOT
    text = (ROOT / "Makefile").read_text()
    assert re.search(r"^LAUNCHER \?= pyxis## make slurm: pyxis", text, re.M)
    assert re.search(r"^PREFLIGHT \?=## 1: make slurm", text, re.M)
    assert re.search(r"^oci-bundle: setup engine ## ", text, re.M)
    assert "LAUNCHER" in shlex.split(next(line for line in text.splitlines() if line.startswith("export EXTRA_BUILD_ARGS")))


@pytest.mark.unit
def test_a_long_tag_keeps_the_node_count_in_the_job_name():
    """NODES=10 and NODES=100 of a long tag wrote the same file (the name cut at 52 characters, count included)."""
    from scripts.fleet.cluster import job_name
    tag = "2.15.0-cuda13.2-cudnn9-runtime-debian12-with-a-long-suffix"
    names = {nodes: job_name(tag, nodes) for nodes in (1, 10, 100)}
    assert len(set(names.values())) == 3, names
    assert all(name.endswith(f"-{nodes}n") and len(name) <= 52 for nodes, name in names.items()), names
    # two long tags that share the first 52 characters still differ
    assert job_name(tag + "-a", 10) != job_name(tag + "-b", 10)
    assert job_name("2.13.0-cpu-debian12", 2) == "verify-2-13-0-cpu-debian12-2n"       # short names unchanged
    from scripts.fleet.slurm import job_name as slurm_job_name
    assert slurm_job_name is job_name                                                  # one name for both writers


@pytest.mark.host
def test_make_slurm_and_k8s_run_the_digest_make_push_recorded(tmp_path, rendered, scratch_env):
    from tests.helpers import run_cli
    tag, digest = "2.13.0-cpu-debian12", "sha256:" + "ab" * 32
    env = {**scratch_env, "IMAGES_DIR": str(rendered), "IMAGE": tag, "NODES": "2", "GPUS": "0",
           "REGISTRY": "127.0.0.1:5000"}
    script = tmp_path / "build" / "slurm" / "verify-2-13-0-cpu-debian12-2n.sbatch"
    refused = run_cli("slurm", "--launcher", "docker", env=env)                  # nothing pushed: refused
    assert refused.returncode == 2 and "make push IMAGE=2.13.0-cpu-debian12 REGISTRY=127.0.0.1:5000" in refused.stderr
    assert run_cli("slurm", "--launcher", "docker", env={**env, "UNPINNED": "1"}).returncode == 0
    assert "127.0.0.1:5000/" in script.read_text() and "@sha256:" not in script.read_text()   # asked for: the tag
    record = tmp_path / "reports" / "push" / "pushed.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({tag: {"reference": f"127.0.0.1:5000/torchimages@{digest}", "digest": digest}}))
    proc = run_cli("slurm", "--launcher", "docker", env=env)
    assert proc.returncode == 0 and "the digest make push recorded" in proc.stdout, proc.stderr
    assert f"TORCHIMAGES_IMAGE=${{TORCHIMAGES_IMAGE:-127.0.0.1:5000/torchimages@{digest}}}" in script.read_text()
    assert run_cli("k8s-verify", env=env).returncode == 0
    manifest = next((tmp_path / "build" / "k8s").glob("*.yaml")).read_text()
    assert f"image: 127.0.0.1:5000/torchimages@{digest}" in manifest
    isolate = run_cli("isolate", "--launcher", "pyxis", env={**env, "NODES": "4"})
    assert isolate.returncode == 0 and "at most 3 rounds" in isolate.stdout, isolate.stderr
    text = (tmp_path / "build" / "slurm" / "isolate-2-13-0-cpu-debian12-4n.sbatch").read_text()
    assert f"127.0.0.1:5000#torchimages@{digest}" in text and "#SBATCH --nodes=4" in text
    # pushed to another registry than REGISTRY: refused, unless the tag is asked for
    other = run_cli("slurm", "--launcher", "docker", env={**env, "REGISTRY": "ghcr.io/acme"})
    assert other.returncode == 2 and "not pushed to REGISTRY=ghcr.io/acme" in other.stderr
    other = run_cli("slurm", "--launcher", "docker", env={**env, "REGISTRY": "ghcr.io/acme", "UNPINNED": "1"})
    assert other.returncode == 0 and "UNPINNED=1" in other.stdout
    assert "@sha256:" not in script.read_text()
    one = run_cli("isolate", env={**env, "NODES": "1"})
    assert one.returncode == 2 and "NODES=2 or more" in one.stderr and "Traceback" not in one.stderr


@pytest.mark.host
@pytest.mark.parametrize(("value", "ok"), [("300", True), ("", True), ("600", True), ("\u0663\u0660\u0660", False),
                                           ("5m", False), ("0", False), ("-1", False), ("1_000", False),
                                           ("9999999", False), ("30 0", False)])
def test_the_join_timeout_read_at_submission_is_ascii_seconds_or_the_job_stops(cpu, value, ok):
    """TORCHIMAGES_JOIN_TIMEOUT is a launcher knob read by the batch script: bash's test refused '٣٠٠' and '5m' (no
    RDZV_TIMEOUT said) while torchrun's int() read '٣٠٠' as 300, and 0 timed every rendezvous out at once. The
    script now stops with one line (exit 2) before any step; unset, it is 300 s. make isolate's script does the same."""
    from scripts.fleet.isolate_job import isolate_script
    from scripts.fleet.slurm import JOIN_GUARD
    lines = slurm_script(Job(cpu, cpu.image, 2, 0, "pyxis")).splitlines()
    export = next(i for i, line in enumerate(lines) if line.startswith("export RDZV_JOIN_TIMEOUT="))
    assert lines[export + 1] == JOIN_GUARD and JOIN_GUARD in isolate_script(Job(cpu, cpu.image, 2, 0, "pyxis"))
    env = {**({"TORCHIMAGES_JOIN_TIMEOUT": value} if value else {}), "PATH": os.environ["PATH"]}
    proc = subprocess.run(["bash", "-c", "\n".join(lines[export:export + 2]) + '\necho "ok $RDZV_JOIN_TIMEOUT"'],
                          env=env, capture_output=True, text=True, timeout=30, check=False)
    assert (proc.returncode == 0) == ok, proc.stderr
    assert (ok and proc.stdout.strip() in ("ok 300", f"ok {value}")) or "REFUSED: TORCHIMAGES_JOIN_TIMEOUT=" in proc.stderr


@pytest.mark.host
@pytest.mark.parametrize("tmpdir", ["given", "missing"])
def test_the_node_script_keeps_torchruns_temp_folders_to_the_step(tmp_path, cpu, tmpdir):
    """torchrun makes a torchelastic_* folder per launch under the temp folder and never removes it (isolate runs
    left one per pair on every node): the step gets a temp folder of its own, removed when it ends, even where the
    TMPDIR it was handed (the host's, exported into a container) does not exist."""
    bin_dir, tmp = tmp_path / "bin", tmp_path / "tmp"
    bin_dir.mkdir()
    tmp.mkdir()
    _fake(bin_dir, "verify", '[ "$1" = --list ] && { echo "gpu x"; exit 0; }; exit 0')
    _fake(bin_dir, "torchrun", f'd=$(mktemp -d "$TMPDIR/torchelastic_XXXX") && echo "$d" >> {tmp_path}/made')
    given = str(tmp) if tmpdir == "given" else str(tmp_path / "gone")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TORCHIMAGES_REPORTS_IN": str(tmp_path),
           "RDZV_ENDPOINT": "n1:20001", "RDZV_JOIN_TIMEOUT": "30", "SLURM_JOB_ID": "1", "SLURMD_NODENAME": "n1",
           "TMPDIR": given}
    proc = subprocess.run(["bash", "-c", node_script(Job(cpu, cpu.image, 2, 0, "docker"))], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    made = Path((tmp_path / "made").read_text().strip())
    assert made.name.startswith("torchelastic_") and "torchimages-step." in made.parent.name
    assert not made.parent.exists()                          # removed with the step
    if tmpdir == "given":
        assert made.parent.parent == tmp and list(tmp.iterdir()) == []
