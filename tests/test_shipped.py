"""The shipped matrix.yaml, compat.yaml and images/: the one module that reads them (every other test uses
tests/data). Reads happen inside the tests, never at import."""
from __future__ import annotations

import json

import pytest
import yaml

from scripts.plan.compat import load_compat
from scripts.plan.matrix import load_matrix
from scripts.plan.platforms import NATIVE_NAME
from scripts.plan.spec import Target
from scripts.render import drift, load_rendered, rendered_files
from tests.helpers import ROOT, run_cli

WORKFLOW = ROOT / ".github" / "workflows" / "images.yml"


@pytest.fixture(scope="module")
def shipped():
    return load_matrix(ROOT / "matrix.yaml", load_compat(ROOT / "compat.yaml"))


@pytest.mark.unit
def test_the_shipped_matrix_expands_to_its_images(shipped):
    specs = shipped
    tags = [s.tag for s in specs]
    assert len(specs) >= 8 and len(set(tags)) == len(tags)
    assert {s.torch for s in specs} >= {"2.13.0", "2.14.1", "2.15.0"}
    assert [s.tag for s in specs if s.default] == ["2.13.0-cpu-debian12"]
    assert "2.15.0-cuda13.2-cudnn9-runtime-debian12" in tags
    assert any(s.flavor == "devel" for s in specs) and any(s.distro.startswith("ubuntu") for s in specs)
    # the excludes removed devel on Debian and 2.13.0 runtime on Ubuntu 24.04
    assert not any(s.flavor == "devel" and s.distro == "debian12" for s in specs)
    assert "2.13.0-cuda13.0-cudnn9-runtime-ubuntu24.04" not in tags


@pytest.mark.unit
def test_pypi_keyword_resolves_each_releases_default_build(shipped):
    by_tag = {s.tag: s for s in shipped}
    s = by_tag["2.15.0-cuda13.2-cudnn9-runtime-debian12"]
    assert (s.cuda, s.cuda_toolkit, s.cudnn, s.nccl, s.python) == ("13.2", "13.2.2", "9.26.0.51", "2.30.7", "3.11")
    assert s.torch_requirement == "torch==2.15.0" and s.torch_index_url is None
    assert by_tag["2.14.1-cuda13.0-cudnn9-runtime-debian12"].torchvision == "0.29.1"
    cpu = by_tag["2.13.0-cpu-debian12"]
    assert cpu.torch_requirement == "torch==2.13.0+cpu" and cpu.torch_index_url.endswith("/whl/cpu")
    assert cpu.env == {} and s.env["NVIDIA_REQUIRE_CUDA"] == "cuda>=13.0"



@pytest.mark.unit
def test_cuda_images_carry_their_driver_floor_from_compat(shipped):
    by_tag = {s.tag: s for s in shipped}
    assert by_tag["2.15.0-cuda13.2-cudnn9-runtime-debian12"].env["TORCHIMAGES_DRIVER_MIN"] == "580.65.06"
    assert by_tag["2.10.0-cuda12.8-cudnn9-runtime-ubuntu22.04"].env["TORCHIMAGES_DRIVER_MIN"] == "525.60.13"
    dockerfile = (ROOT / "images" / "2.15.0-cuda13.2-cudnn9-runtime-debian12" / "Dockerfile").read_text()
    assert 'TORCHIMAGES_DRIVER_MIN="580.65.06"' in dockerfile


@pytest.mark.unit
def test_committed_images_match_a_fresh_render(shipped):
    assert drift(rendered_files(shipped), ROOT / "images") == []


@pytest.mark.unit
def test_the_rendered_specs_are_the_matrix(shipped):
    assert sorted(s.tag for s in load_rendered(ROOT / "images")) == sorted(s.tag for s in shipped)


@pytest.mark.host
def test_the_workflow_matrix_is_the_matrix_of_the_rendered_images(shipped):
    proc = run_cli("ci-matrix")
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)["include"]
    assert sorted((i["tag"], i["platform"]) for i in printed) == sorted((s.tag, p) for s in shipped for p in s.platforms)
    assert {i["repository"] for i in printed} == {"torchimages"}
    flow = yaml.safe_load(WORKFLOW.read_text())
    text = json.dumps(flow)
    assert "make --silent ci-matrix" in json.dumps(flow["jobs"]["check"])
    for job in ("build", "verify"):
        assert flow["jobs"][job]["strategy"]["matrix"] == "${{ fromJSON(needs.check.outputs.images) }}"
    assert "make verify" in json.dumps(flow["jobs"]["verify"]) and "reports/" in json.dumps(flow["jobs"]["verify"])
    assert "torchimages" not in text.replace("torchimages-", "")   # the repository comes from the matrix
    build = json.dumps(flow["jobs"]["build"])
    assert "make bake" in build and "docker/bake-action" in build and "matrix.target" in build


@pytest.mark.unit
def test_the_workflow_stages_the_locked_wheels_before_bake():
    """bake targets bind-mount build/wheels: uv's wheel (the lock's installer) must be there, as in make build."""
    flow = yaml.safe_load(WORKFLOW.read_text())
    steps = flow["jobs"]["build"]["steps"]
    stage = next(i for i, st in enumerate(steps) if "make stage-wheels" in st.get("run", ""))
    bakes = [i for i, st in enumerate(steps) if "docker/bake-action" in st.get("uses", "")]
    assert bakes and stage < min(bakes) and steps[stage]["env"]["IMAGE"] == "${{ matrix.tag }}"


@pytest.mark.unit
def test_every_shipped_image_has_a_current_lock_with_a_hash_for_every_pin_per_platform(shipped):
    from scripts.builder.lock import lock_problem, parse_lock, stray_locks
    images = ROOT / "images"
    for spec, platform in [(s, p) for s in shipped for p in s.platforms]:
        assert lock_problem(Target(spec, platform), images) is None, f"{spec.tag} {platform}"
        pins = {p.name: p for p in parse_lock(Target(spec, platform).lock_path(images).read_text())}
        assert all(p.hashes for p in pins.values()), spec.tag
        assert pins["torch"].version == spec.torch_requirement.split("==")[1]
        for name, version in spec.packages.items():
            assert pins[name].version == version, (spec.tag, name)
        assert {"sympy", "networkx", "filelock", "jinja2"} <= set(pins)     # torch's own dependencies too
        if spec.cuda:
            assert "triton" in pins and any(n.startswith("nvidia-cu") for n in pins)
        assert stray_locks(spec, images) == []
    multi = [s for s in shipped if "linux/arm64" in s.platforms]
    assert multi and all((images / s.tag / "requirements.arm64.lock").is_file() for s in multi)


@pytest.mark.unit
def test_the_cpu_lock_pins_the_local_wheel_by_its_own_hash(shipped):
    import hashlib
    from pathlib import Path

    from scripts.builder.lock import parse_lock
    wheel = next(iter(sorted(Path("/opt/wheels").glob("torch-2.13.0+cpu-*.whl"))), None)
    if wheel is None:
        pytest.skip("no /opt/wheels torch 2.13.0+cpu on this host")
    cpu = next(s for s in shipped if s.default)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    torch = next(p for p in parse_lock(Target(cpu, NATIVE_NAME).lock_path(ROOT / "images").read_text()) if p.name == "torch")
    assert torch.version == "2.13.0+cpu" and digest in torch.hashes


@pytest.mark.unit
def test_the_shipped_matrix_has_the_cpu_image_with_jupyter_and_ssh(shipped):
    by_tag = {s.tag: s for s in shipped}
    spec = by_tag["2.13.0-cpu-debian12-jupyter-ssh"]
    assert spec.access == ("jupyter", "ssh") and not spec.default and spec.access_packages.keys() == {"jupyterlab"}
    assert by_tag["2.13.0-cpu-debian12"].access == ()
    dockerfile = (ROOT / "images" / spec.tag / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["/usr/local/bin/torchimages-entrypoint"]' in dockerfile and "openssh-server" in dockerfile


@pytest.mark.unit
def test_the_shipped_matrix_has_one_tag_for_two_platforms(shipped):
    by_tag = {s.tag: s for s in shipped}
    assert by_tag["2.13.0-cuda13.0-cudnn9-runtime-debian12"].platforms == ["linux/amd64", "linux/arm64"]
    assert by_tag["2.13.0-cpu-debian12"].platforms == ["linux/amd64"]     # the default stays amd64 only
    spec = json.loads((ROOT / "images" / "2.13.0-cuda13.0-cudnn9-runtime-debian12" / "spec.json").read_text())
    assert spec["platforms"] == ["linux/amd64", "linux/arm64"]
