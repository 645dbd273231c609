"""Scaling out: the CI workflow, the bake file, Kubernetes and Slurm manifests, and NCCL across two launchers."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scripts.errors import UserError
from scripts.fleet.cluster import k8s_manifests
from scripts.fleet.slurm import Job, slurm_script
from scripts.plan.spec import ImageSpec
from scripts.publish.bake import bake_file, target_name
from scripts.publish.ci_matrix import ci_matrix
from tests.helpers import ROOT, free_port, k8s_model, run_cli

WORKFLOW = ROOT / ".github" / "workflows" / "images.yml"


@pytest.fixture
def SPECS(test_specs):
    return test_specs


@pytest.mark.host
def test_actionlint_is_clean_on_the_workflow_and_catches_a_broken_one(tmp_path):
    from scripts.lint import actionlint, actionlint_argv
    try:
        actionlint_argv()
    except UserError as exc:
        if os.environ.get("REQUIRE_DOCKER") == "1":   # CI installs it
            raise
        pytest.skip(str(exc))
    ok, output = actionlint([WORKFLOW])
    assert ok, output
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("needs.check.outputs.images", "needs.check.outputs.imagez"))
    ok, output = actionlint([broken])
    assert not ok and "imagez" in output


@pytest.mark.unit
def test_ci_matrix_rows_carry_repository_and_bake_target(SPECS):
    rows = ci_matrix(SPECS)["include"]
    assert [r["tag"] for r in rows] == [s.tag for s in SPECS]
    assert {r["repository"] for r in rows} == {"testimages"} and rows[0]["image"] == f"testimages:{rows[0]['tag']}"
    assert all(r["target"] in bake_file(SPECS)["target"] for r in rows)


@pytest.mark.unit
def test_ci_matrix_has_one_row_per_platform_with_its_native_runner():
    from scripts.plan.compat import load_compat
    from scripts.plan.matrix import load_matrix
    from tests.helpers import DATA, TEST_COMPAT
    specs = load_matrix(DATA / "matrix-platforms.yaml", load_compat(TEST_COMPAT))
    rows = ci_matrix(specs)["include"]
    assert [(r["tag"], r["platform"]) for r in rows] == [(s.tag, p) for s in specs for p in s.platforms]
    assert {r["runner"] for r in rows if r["arch"] == "arm64"} == {"ubuntu-24.04-arm"}
    assert {r["runner"] for r in rows if r["arch"] == "amd64"} == {"ubuntu-24.04"}
    arm = next(r for r in rows if r["arch"] == "arm64")
    assert arm["local_image"] == f"{arm['image']}-arm64"
    tags = ci_matrix(specs, "tag")["include"]
    assert [r["tag"] for r in tags] == [s.tag for s in specs]
    assert tags[0]["platforms"] == "linux/amd64,linux/arm64" and "runner" not in tags[0]


@pytest.mark.unit
def test_workflow_builds_each_platform_natively_and_merges_one_tag():
    flow = yaml.safe_load(WORKFLOW.read_text())
    for job in ("build", "verify"):
        assert flow["jobs"][job]["strategy"]["matrix"] == "${{ fromJSON(needs.check.outputs.images) }}"
    assert flow["jobs"]["merge"]["strategy"]["matrix"] == "${{ fromJSON(needs.check.outputs.tags) }}"
    assert "make --silent ci-matrix PER=tag" in json.dumps(flow["jobs"]["check"])
    assert flow["jobs"]["build"]["runs-on"] == "${{ matrix.runner }}"
    bake = next(step for step in flow["jobs"]["build"]["steps"] if step.get("id") == "bake")
    assert bake["uses"].startswith("docker/bake-action@") and bake["with"]["targets"] == "${{ matrix.target }}"
    assert "*.platform=${{ matrix.platform }}" in bake["with"]["set"]
    assert "*.tags=${{ matrix.local_image }}" in bake["with"]["set"] and "type=docker" in bake["with"]["set"]
    # the push path is `make push` (the code tests/integration/test_push_index.py runs), never shell string-building
    text = json.dumps(flow)
    assert "imagetools" not in text and "push-by-digest" not in text and "docker push" not in text
    steps = flow["jobs"]["build"]["steps"]
    push = next(i for i, st in enumerate(steps) if st.get("run") == "make push")
    assert push > steps.index(bake) and steps[push]["if"] == "github.ref == 'refs/heads/main'"
    assert steps[push]["env"]["PLATFORM"] == "${{ matrix.platform }}" and steps[push]["env"]["REGISTRY"] == "${{ vars.REGISTRY }}"
    merge = flow["jobs"]["merge"]["steps"]
    index = next(st for st in merge if st.get("run") == "make push")
    assert index["env"]["INDEX_ONLY"] == "1" and index["env"]["REGISTRY"] == "${{ vars.REGISTRY }}"
    assert any(st.get("with", {}).get("path") == "reports/push/pushed.json" for st in merge)
    verify = json.dumps(flow["jobs"]["verify"])
    assert flow["jobs"]["verify"]["needs"] == ["check", "merge"] and "matrix.local_image" in verify
    vsteps = [st.get("run", "") for st in flow["jobs"]["verify"]["steps"]]
    assert vsteps.index("make attest") > next(i for i, r in enumerate(vsteps) if r.startswith("make verify"))
    assert flow["jobs"]["verify"]["env"]["PLATFORM"] == "${{ matrix.platform }}"


@pytest.mark.unit
def test_every_bake_target_matches_its_spec_json(rendered):
    specs = [ImageSpec.load(p) for p in sorted(rendered.glob("*/spec.json"))]
    bake = bake_file(specs, "ghcr.io/acme")
    assert len(bake["target"]) == len(specs)
    assert sorted(bake["group"]["default"]["targets"]) == sorted(target_name(s.tag) for s in specs)
    for tag_dir in rendered.iterdir():
        spec = json.loads((tag_dir / "spec.json").read_text())
        target = bake["target"][target_name(spec["tag"])]
        assert target["dockerfile"] == f"images/{spec['tag']}/Dockerfile"
        assert target["args"] == spec["build_args"]
        assert target["tags"] == [f"ghcr.io/acme/{spec['image']}"]
        assert target["context"] == "."
        assert target["cache-from"] == [f"type=registry,ref=ghcr.io/acme/testimages:buildcache-{spec['tag']}"]
        assert target_name(spec["tag"]) in bake["group"][spec["flavor"]]["targets"]


@pytest.mark.host
def test_make_bake_writes_the_file_from_images_alone(tmp_path, rendered, scratch_env, test_specs):
    """matrix.yaml and compat.yaml out of reach: bake, ci-matrix, k8s-verify and slurm work from images/."""
    env = {**scratch_env, "IMAGES_DIR": str(rendered), "MATRIX": str(tmp_path / "gone.yaml"),
           "COMPAT": str(tmp_path / "gone-compat.yaml")}
    assert run_cli("bake", env=env).returncode == 0
    written = json.loads((tmp_path / "build" / "docker-bake.json").read_text())
    assert written == json.loads(json.dumps(bake_file(sorted(test_specs, key=lambda s: s.tag))))
    proc = run_cli("ci-matrix", env=env)
    assert proc.returncode == 0 and len(json.loads(proc.stdout)["include"]) == len(test_specs)
    bad = run_cli("bake", env={**env, "REGISTRY": "Bad Registry/"})
    assert bad.returncode == 2 and "REGISTRY='Bad Registry/' is not a registry prefix" in bad.stderr


@pytest.mark.unit
@pytest.mark.parametrize("nodes,gpus", [(1, 1), (2, 8)])
def test_k8s_manifests_load_into_the_kubernetes_models(nodes, gpus, SPECS):
    spec = next(s for s in SPECS if s.tag == "2.15.0-cuda13.2-cudnn9-runtime-debian12")
    docs = k8s_manifests(spec, f"registry.example/{spec.image}", nodes, gpus)
    models = [k8s_model(json.loads(json.dumps(d))) for d in docs]
    job = models[-1]
    container = job.spec.template.spec.containers[0]
    assert container.resources.limits["nvidia.com/gpu"] == str(gpus)
    dshm = next(v for v in job.spec.template.spec.volumes if v.name == "dshm")
    assert dshm.empty_dir.medium == "Memory"
    assert any(m.mount_path == "/dev/shm" for m in container.volume_mounts)
    script = container.command[-1]
    if nodes == 1:
        assert len(models) == 1 and "torchrun" not in script and "--expect-gpus 1" in script
    else:
        service = models[0]
        assert service.spec.cluster_ip == "None" and job.spec.completion_mode == "Indexed"
        assert job.spec.completions == nodes == job.spec.parallelism
        assert job.spec.template.spec.subdomain == service.metadata.name
        assert f"--nnodes={nodes} --nproc-per-node={gpus} --rdzv-backend=c10d" in script
        assert f"--rdzv-endpoint={job.metadata.name}-0.{service.metadata.name}:29500" in script


@pytest.mark.host
def test_make_k8s_verify_writes_loadable_yaml(tmp_path, rendered, scratch_env):
    env = {**scratch_env, "IMAGES_DIR": str(rendered), "LOCAL_IMAGE": "1", "IMAGE": "2.15.0-cuda13.2-cudnn9-runtime-debian12"}
    proc = run_cli("k8s-verify", "--nodes", "2", "--gpus", "4", env=env)
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / "build" / "k8s" / Path(proc.stdout.split()[1]).name
    docs = list(yaml.safe_load_all(path.read_text()))
    assert [d["kind"] for d in docs] == ["Service", "Job"] and all(k8s_model(d) for d in docs)
    for args, extra, needle in ((("--nodes", "0"), {}, "must be a whole number, 1 or more"),
                                ((), {"NODES": ""}, "NODES is empty"),
                                ((), {"GPUS": "abc"}, "GPUS='abc'"),
                                ((), {"IMAGE": ","}, "names no image")):
        bad = run_cli("k8s-verify", *args, env={**env, **extra})
        assert bad.returncode == 2 and needle in bad.stderr and "Traceback" not in bad.stderr, bad.stderr


@pytest.mark.host
def test_slurm_script_runs_the_same_torchrun_through_pyxis(SPECS):
    spec = SPECS[0]
    text = slurm_script(Job(spec, spec.image, 4, 8))
    assert "#SBATCH --nodes=4" in text and "#SBATCH --gres=gpu:8" in text
    assert f"export TORCHIMAGES_IMAGE=${{TORCHIMAGES_IMAGE:-{spec.image}}}" in text
    assert '--container-image="$TORCHIMAGES_IMAGE"' in text
    assert 'torchrun --nnodes=4 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint="$RDZV_ENDPOINT"' in text
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0


@pytest.mark.host
def test_nccl_check_spans_two_torchrun_launchers_as_two_nodes(tmp_path):
    """Two `torchrun --nnodes 2` launchers meet at a c10d rendezvous on 127.0.0.1 (gloo on this CPU machine)."""
    port = free_port()
    # TMPDIR: torchrun's torchelastic_* folders (it never removes them) stay in the test's folder
    env = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}
    launchers = [subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "1",
         "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "two-nodes",
         "-m", "verify", "--checks", "nccl", "--json", str(tmp_path / f"node{n}.json")],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for n in range(2)]
    outputs = [p.communicate(timeout=300)[0] for p in launchers]
    assert [p.returncode for p in launchers] == [0, 0], "\n".join(outputs)
    reports = [json.loads(p.read_text()) for p in tmp_path.glob("node*.json")]
    assert len(reports) == 1, "global rank 0 alone writes the report"
    check = reports[0]["checks"][0]
    assert check["data"]["world_size"] == 2 and check["data"]["mode"].startswith("torchrun group: rank 0 of 2")
    assert check["metrics"]["wrong"]["value"] == 0 and check["data"]["sizes"]
    assert "all-reduce verified over gloo, world size 2" in check["summary"]
    assert all(row["busbw"] > 0 and row["wrong"] == 0 for row in check["data"]["sizes"])


@pytest.mark.unit
def test_the_model_check_catches_a_misspelled_field(SPECS):
    spec = SPECS[0]
    job = json.loads(json.dumps(k8s_manifests(spec, spec.image, 1, 1)[-1]))
    job["spec"]["template"]["spec"]["containers"][0]["volumeMount"] = job["spec"]["template"]["spec"]["containers"][0].pop("volumeMounts")
    with pytest.raises(AssertionError, match="fields lost or retyped"):
        k8s_model(job)
