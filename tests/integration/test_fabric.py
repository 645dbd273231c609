"""Issue 25 against the real engine, on the small distro base (no CUDA image needed):
- a site's NCCL net plugin (matrix net_plugin): the rendered install step (templates/partials/net_plugin.j2), built by
  BuildKit from the wheel folder as `make build` stages it, with a handmade .so and a handmade .deb (which depends
  on libfabric1, so its dependencies come from the distro); a .deb without a plugin fails the build in one line;
- the docker launcher's fabric flags do in a container what the README says (memlock unlimited where the engine may
  raise it, CAP_IPC_LOCK); --device /dev/infiniband needs an adapter, which no test host has.
The CUDA images' RDMA userspace is checked in test_images.py and test_arm64.py, in the images CI builds anyway."""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from scripts.builder.buildkit import _network
from scripts.builder.engine import find_build_client
from scripts.builder.netplugin import stage_net_plugin
from scripts.fleet.slurm import FABRIC_FLAGS
from scripts.plan.spec import NET_PLUGIN_LINK
from scripts.render import environment, load_rendered
from tests.helpers import ROOT, run_cli

pytestmark = pytest.mark.docker

CAP_IPC_LOCK = 14       # linux/capability.h


@pytest.fixture(scope="module")
def base(docker_client, tmp_path_factory) -> str:
    """The bootstrapped Debian 12 base every runtime image of the matrix builds on (`make base`; present in CI)."""
    spec = next(s for s in load_rendered(ROOT / "images") if s.default)
    scratch = tmp_path_factory.mktemp("base")
    proc = run_cli("base", env={"BUILD_DIR": str(scratch / "b"), "REPORTS_DIR": str(scratch / "r")}, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert spec.bootstrap_base
    return spec.bootstrap_base


def _cuda_spec(plugin: str):
    spec = next(s for s in load_rendered(ROOT / "images") if s.tag == "2.14.1-cuda13.0-cudnn9-runtime-debian12")
    return dataclasses.replace(spec, net_plugin=plugin)


def _handmade_so(folder: Path, name: str) -> Path:
    if not shutil.which("gcc"):
        pytest.fail("gcc missing: scripts/bootstrap.sh test-tools installs it (the handmade plugin is compiled)")
    source = folder / "handmade.c"
    source.write_text("/* handmade stand-in for a NCCL net plugin: only its file and name are tested */\n"
                      "int torchimages_handmade_net_plugin = 1;\n")
    out = folder / name
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(source)], check=True, capture_output=True)
    return out


def _handmade_deb(folder: Path, with_plugin: bool) -> Path:
    """A .deb laid out like aws-ofi-nccl's (/opt/<vendor>/lib/libnccl-net-ofi.so), depending on libfabric1."""
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    tree = folder / "deb"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        f"Package: handmade-nccl-net\nVersion: 0.1-1\nArchitecture: {arch}\nDepends: libfabric1\n"
        f"Maintainer: torchimages tests <tests@invalid>\nDescription: handmade stand-in for a site's NCCL net plugin\n")
    lib = tree / "opt" / "handmade" / "lib"
    lib.mkdir(parents=True)
    if with_plugin:
        _handmade_so(lib, "libnccl-net-ofi.so")
    else:
        (lib / "README").write_text("no plugin in here\n")
    name = f"handmade-nccl-net_0.1-1_{arch}{'' if with_plugin else '-empty'}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(tree), str(folder / name)], check=True,
                   capture_output=True)
    return folder / name


def _build(docker_client, base: str, plugin: Path, context: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    """The rendered net_plugin step on the base, staged and built the way `make build` does; (the build, its tag)."""
    spec = _cuda_spec(plugin.name)
    assert stage_net_plugin(spec, [plugin.parent], context / "build" / "wheels") == plugin.name
    step = environment().get_template("partials/net_plugin.j2").render(spec=spec)
    (context / "Dockerfile").write_text(
        f'FROM {base}\nSHELL ["/bin/bash", "-o", "pipefail", "-c"]\n'
        f'ENV NCCL_NET_PLUGIN="{spec.env["NCCL_NET_PLUGIN"]}"\n{step}')
    tag = f"torchimages-test-net-plugin:{uuid.uuid4().hex[:12]}"
    client = find_build_client()
    network = _network(docker_client, None)
    argv = [*client.argv, "--progress", "plain", "--no-cache", "-t", tag, *(["--network", network] if network else []),
            str(context)]
    proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **client.env}, timeout=900,
                          check=False)
    return proc, tag


def _inside(docker_client, tag: str, script: str) -> str:
    return docker_client.containers.run(tag, ["bash", "-c", script], remove=True, network_mode="none").decode()


@pytest.mark.parametrize("kind", ["so", "deb"])
def test_a_handmade_net_plugin_lands_in_the_image_with_nccl_net_plugin_set(docker_client, base, tmp_path, kind):
    site = tmp_path / "site"
    site.mkdir()
    plugin = _handmade_so(site, "libnccl-net-handmade.so") if kind == "so" else _handmade_deb(site, True)
    context = tmp_path / "context"
    context.mkdir()
    proc, tag = _build(docker_client, base, plugin, context)
    try:
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
        expected = ("/usr/local/lib/torchimages/libnccl-net-handmade.so" if kind == "so"
                    else "/opt/handmade/lib/libnccl-net-ofi.so")
        assert f"NCCL net plugin: {expected} as {NET_PLUGIN_LINK}" in proc.stdout + proc.stderr
        env = docker_client.images.get(tag).attrs["Config"]["Env"]
        assert "NCCL_NET_PLUGIN=site" in env
        # the link, the dynamic linker's cache resolving NCCL's name for it, the handmade library's own symbol in
        # the file it resolves to, and no apt list left
        out = _inside(docker_client, tag, f"readlink -f {NET_PLUGIN_LINK}; ldconfig -p | grep -c 'libnccl-net-site.so '; "
                                          f"grep -aq torchimages_handmade_net_plugin {NET_PLUGIN_LINK} && echo symbol; "
                                          "ls /var/lib/apt/lists | grep -vc '^partial$' || true")
        link, cached, symbol, lists = out.split()
        assert link == expected and cached == "1" and symbol == "symbol" and lists == "0", out
        if kind == "deb":      # installed as a package, its dependency from the distro
            status = _inside(docker_client, tag, "dpkg-query -W -f '${Status} ${Package}\\n' handmade-nccl-net libfabric1")
            assert status.splitlines() == ["install ok installed handmade-nccl-net", "install ok installed libfabric1"]
    finally:
        if proc.returncode == 0:
            docker_client.images.remove(tag, force=True)


def test_a_net_plugin_deb_without_a_plugin_fails_the_build_in_one_line(docker_client, base, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    context = tmp_path / "context"
    context.mkdir()
    proc, tag = _build(docker_client, base, _handmade_deb(site, False), context)
    if proc.returncode == 0:
        docker_client.images.remove(tag, force=True)
    assert proc.returncode != 0
    assert ("error: handmade-nccl-net_0.1-1_" in proc.stdout + proc.stderr
            and "holds no libnccl-net*.so NCCL could load" in proc.stdout + proc.stderr)


def _run(base: str, flags: list[str], probe: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", "run", "--rm", "--network", "none", "--user", "1000:1000", *flags, base,
                           "bash", "-c", probe], capture_output=True, text=True, timeout=120, check=False)


def test_the_docker_launchers_cap_add_ipc_lock_reaches_the_non_root_user(base):
    """--cap-add IPC_LOCK from FABRIC_FLAGS: in the container's bounding set with it, not without."""
    assert FABRIC_FLAGS.split()[-2:] == ["--cap-add", "IPC_LOCK"]
    probe = "grep CapBnd /proc/self/status | cut -f2"
    bits = {}
    for name, flags in (("with", ["--cap-add", "IPC_LOCK"]), ("without", [])):
        proc = _run(base, flags, probe)
        assert proc.returncode == 0, proc.stderr
        bits[name] = bool(int(proc.stdout.strip(), 16) >> CAP_IPC_LOCK & 1)
    assert bits == {"with": True, "without": False}


def test_the_docker_launchers_ulimit_memlock_unlimited(base):
    """--ulimit memlock=-1 from FABRIC_FLAGS: the non-root user's locked-memory limit is unlimited. An engine that
    may not raise its own hard limit (dockerd without CAP_SYS_RESOURCE, as in some nested test hosts) refuses to
    start the container with runc's rlimit error: then this host cannot show it, and the test says so."""
    assert "--ulimit memlock=-1" in FABRIC_FLAGS
    proc = _run(base, ["--ulimit", "memlock=-1"], "ulimit -l")
    if proc.returncode == 125 and "error setting rlimit type 8: operation not permitted" in proc.stderr:
        pytest.skip("this Docker Engine may not raise RLIMIT_MEMLOCK (runc: error setting rlimit type 8: operation "
                    "not permitted); a GPU node's dockerd runs with CAP_SYS_RESOURCE")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "unlimited"
    assert _run(base, [], "ulimit -l").stdout.strip() != "unlimited"
