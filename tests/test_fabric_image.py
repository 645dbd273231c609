"""Issue 25, image side: the RDMA userspace in every CUDA image (not in CPU images), a site's NCCL net plugin from
the wheel folder (matrix net_plugin), and builds under emulation that end at a time limit with the cause and fix.
The built images are checked in tests/integration (test_images.py, test_arm64.py, test_net_plugin.py)."""
from __future__ import annotations

import dataclasses
import re
import sys
import time

import pytest

from scripts.builder.buildkit import BuildRequest, _run_logged
from scripts.builder.emulation import EMULATED_LIMIT_S, overrun
from scripts.builder.engine import BuildClient
from scripts.builder.netplugin import stage_net_plugin
from scripts.errors import UserError
from scripts.plan.spec import FABRIC_PACKAGES, NET_PLUGIN_LINK
from scripts.render import load_rendered, render_dockerfile
from tests.helpers import CPU_DEFAULT, ROOT, matrix_problems, write_matrix


def _system_install(text: str) -> list[str]:
    """The packages the system stage's apt-get install line names."""
    line = next(line for line in text.splitlines() if "apt-get install -y --no-install-recommends python" in line)
    return line.split("--no-install-recommends", 1)[1].rstrip(" \\").split()


@pytest.mark.unit
def test_every_shipped_cuda_image_installs_the_rdma_userspace_and_no_cpu_image_does():
    specs = load_rendered(ROOT / "images")
    assert {s.flavor for s in specs if s.cuda} == {"runtime", "devel"}
    assert {s.distro for s in specs if s.cuda} >= {"debian12", "ubuntu24.04", "ubuntu22.04"}
    assert any("linux/arm64" in s.platforms for s in specs if s.cuda)
    for spec in specs:
        text = (ROOT / "images" / spec.tag / "Dockerfile").read_text()
        assert text == render_dockerfile(spec)
        installed = _system_install(text)
        if spec.cuda:
            rdmacm = "librdmacm1" if spec.codename in ("bookworm", "jammy") else "librdmacm1t64"
            assert installed[-4:] == ["libibverbs1", "ibverbs-providers", rdmacm, "libfabric1"], spec.tag
        else:
            assert not {*FABRIC_PACKAGES, "librdmacm1t64"} & set(installed), spec.tag
            assert "ibverbs" not in text and "NCCL_NET_PLUGIN" not in text
        # one layer, nothing recommended, and neither the package lists nor apt's cache (.debs, pkgcache) kept
        assert "apt-get clean && rm -rf /var/lib/apt/lists/*" in text


@pytest.mark.unit
def test_the_matrix_docs_say_cpu_images_leave_the_fabric_out():
    readme = (ROOT / "docs" / "matrix.md").read_text() + (ROOT / "docs" / "fabric.md").read_text()
    assert all(p in readme for p in FABRIC_PACKAGES)
    assert "CPU images leave them out" in readme


def _net_plugin_spec(tmp_path, plugin: str):
    from scripts.plan.matrix import load_matrix
    from tests.helpers import TEST_COMPAT
    body = (f'  - {{torch: "2.15.0", cuda: pypi, flavor: runtime, distro: debian12, net_plugin: {plugin}}}\n'
            + CPU_DEFAULT)
    return next(s for s in load_matrix(write_matrix(tmp_path, body), TEST_COMPAT) if s.cuda)


@pytest.mark.unit
@pytest.mark.parametrize("plugin", ["aws-ofi-nccl_1.14.0-1_amd64.deb", "libnccl-net-ofi.so"])
def test_a_net_plugin_renders_its_install_and_sets_nccl_net_plugin(tmp_path, plugin):
    spec = _net_plugin_spec(tmp_path, plugin)
    assert spec.net_plugin == plugin and spec.env["NCCL_NET_PLUGIN"] == "site"
    text = render_dockerfile(spec)
    assert 'NCCL_NET_PLUGIN="site"' in text
    assert f"file=/wheels/{plugin}" in text and f'ln -sf "$plugin" {NET_PLUGIN_LINK}' in text
    assert ("apt-get install -y --no-install-recommends \"$file\"" in text) == plugin.endswith(".deb")
    # after the venv, before the verify layer: changing the plugin never reinstalls torch
    assert text.index("FROM builder AS image") < text.index(f"file=/wheels/{plugin}") < text.index("COPY verify")
    assert "NCCL_NET_PLUGIN" not in render_dockerfile(dataclasses.replace(spec, net_plugin=None))


@pytest.mark.unit
def test_a_net_plugin_on_a_cpu_image_or_not_a_deb_or_so_is_refused(tmp_path):
    cpu = '  - {torch: "2.13.0", cuda: cpu, flavor: cpu, distro: debian12, torchvision: false, default: true, ' \
          'net_plugin: x.so}\n'
    assert "net_plugin x.so is for CUDA images" in matrix_problems(tmp_path, cpu)
    bad = '  - {torch: "2.15.0", cuda: pypi, flavor: runtime, distro: debian12, net_plugin: "../x.tar"}\n' + CPU_DEFAULT
    assert "net_plugin" in matrix_problems(tmp_path, bad)


@pytest.mark.unit
def test_the_net_plugin_is_staged_from_the_wheel_folders_or_named_missing(tmp_path):
    spec = _net_plugin_spec(tmp_path, "libnccl-net-handmade.so")
    empty, site, stage = tmp_path / "empty", tmp_path / "site", tmp_path / "build" / "wheels"
    empty.mkdir()
    site.mkdir()
    with pytest.raises(UserError, match=r"net_plugin libnccl-net-handmade.so is in no wheel folder .*WHEELS="):
        stage_net_plugin(spec, [empty], stage)
    (site / "libnccl-net-handmade.so").write_bytes(b"\x7fELF handmade")
    assert stage_net_plugin(spec, [empty, site], stage) == "libnccl-net-handmade.so"
    assert (stage / "libnccl-net-handmade.so").read_bytes() == b"\x7fELF handmade"
    assert [p.name for p in stage.iterdir()] == ["libnccl-net-handmade.so"]      # no .part left behind
    assert stage_net_plugin(dataclasses.replace(spec, net_plugin=None), [site], stage) is None


@pytest.mark.host
def test_a_build_past_its_limit_is_stopped_and_says_why(tmp_path):
    """A real child that outlasts a 1 s limit: killed within the limit's reach, status None, its output logged."""
    req = BuildRequest(images_dir=tmp_path, logs=tmp_path, wheels_stage=tmp_path, root=tmp_path, ca=None, folders=(),
                       base_override=None, network=None, env={})
    argv = [sys.executable, "-c", "import time; print('#1 [system 1/2] RUN apt-get update', flush=True); time.sleep(60)"]
    start = time.monotonic()
    status, tail = _run_logged(argv, tmp_path / "build.log", req, BuildClient((), {}, "test"), lambda _: None, 1.0)
    assert status is None and time.monotonic() - start < 30
    assert "apt-get update" in (tmp_path / "build.log").read_text() and tail == ["#1 [system 1/2] RUN apt-get update"]
    done, _ = _run_logged([sys.executable, "-c", "pass"], tmp_path / "ok.log", req, BuildClient((), {}, "t"),
                          lambda _: None, 30.0)
    assert done == 0
    assert req.limit(emulated=True) == EMULATED_LIMIT_S and req.limit(emulated=False) is None
    assert dataclasses.replace(req, timeout=5.0).limit(emulated=False) == 5.0
    line = overrun("building x", 2700, "linux/arm64")
    assert re.search(r"building x for linux/arm64 under emulation \(qemu\) ran past its 2700 s limit", line)
    assert "BUILD_TIMEOUT=<s>" in line and "native linux/arm64" in line


@pytest.mark.unit
def test_build_timeout_is_a_checked_knob():
    from scripts.settings import Settings
    assert Settings.load({"BUILD_TIMEOUT": "60"}, {}, ("BUILD_TIMEOUT",)).build_timeout == 60.0
    assert Settings.load({"BUILD_TIMEOUT": ""}, {}, ("BUILD_TIMEOUT",)).build_timeout is None
    with pytest.raises(UserError, match="BUILD_TIMEOUT='soon' is not a number of seconds"):
        Settings.load({"BUILD_TIMEOUT": "soon"}, {}, ("BUILD_TIMEOUT",))


@pytest.mark.host
def test_a_cli_step_past_its_limit_fails_the_test_in_one_line():
    """tests/helpers.run_cli, which every emulated build and verify of the integration tests goes through."""
    from tests.helpers import run_cli
    start = time.monotonic()
    with pytest.raises(pytest.fail.Exception) as info:
        run_cli("-c", "print('#7 [builder 1/1] RUN uv pip install', flush=True); import time; time.sleep(60)",
                module="timeit", timeout=1)
    assert time.monotonic() - start < 30
    assert "ran past its 1 s limit and was killed: a step hung" in str(info.value)


@pytest.mark.host
def test_hadolint_passes_on_dockerfiles_with_a_net_plugin(tmp_path):
    from scripts.lint import lint
    paths = []
    for plugin in ("aws-ofi-nccl_1.14.0-1_amd64.deb", "libnccl-net-ofi.so"):
        folder = tmp_path / plugin
        folder.mkdir()
        (folder / "Dockerfile").write_text(render_dockerfile(_net_plugin_spec(folder, plugin)))
        paths.append(folder / "Dockerfile")
    ok, output = lint(paths)
    assert ok, output
