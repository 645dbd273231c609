"""Platforms (linux/amd64, linux/arm64): matrix key, validation against compat.yaml facts, render, bake, cluster,
the emulated-base and build argv, and emulation detection in verify's environment. Pure logic, no engine; on the
test data (tests/data/matrix-platforms.yaml, tests/data/compat.yaml), not the shipped files."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts.builder import base
from scripts.builder.base import base_targets, debootstrap_argv, scratch_dockerfile, split_by_route
from scripts.builder.buildkit import platform_argv
from scripts.builder.emulation import emulation_problem
from scripts.errors import UserError
from scripts.plan.compat import load_compat
from scripts.plan.matrix import load_matrix
from scripts.plan.platforms import (
    arch_of,
    base_tag,
    check_platforms,
    parse_platforms,
    select_platforms,
)
from scripts.plan.spec import Release, Target, builds
from scripts.render import load_rendered, render_dockerfile
from scripts.settings import Settings
from tests.helpers import CPU_DEFAULT, DATA, TEST_COMPAT, k8s_model, matrix_problems, write_matrix

pytestmark = pytest.mark.unit

MULTI = "2.15.0-cuda13.2-cudnn9-runtime-debian12"
ARM_ONLY = "2.15.0-cuda13.2-cudnn9-runtime-ubuntu24.04"
CPU = "2.13.0-cpu-debian12"


@pytest.fixture(scope="module")
def facts():
    return load_compat(TEST_COMPAT).platforms


@pytest.fixture(scope="module")
def by_tag():
    return {s.tag: s for s in load_matrix(DATA / "matrix-platforms.yaml", load_compat(TEST_COMPAT))}


def test_platforms_on_defaults_entries_and_axes_groups(by_tag):
    assert by_tag[MULTI].platforms == ["linux/amd64", "linux/arm64"]                     # defaults
    assert by_tag["2.14.1-cuda13.0-cudnn9-runtime-debian12"].platforms == ["linux/amd64", "linux/arm64"]
    assert by_tag[ARM_ONLY].platforms == ["linux/arm64"]                                 # axes group
    assert by_tag[CPU].platforms == ["linux/amd64"]                                      # entry
    assert json.loads(by_tag[MULTI].to_json())["platforms"] == ["linux/amd64", "linux/arm64"]
    # Ubuntu's arm64 packages live on the ports archive: spec.json carries it for make base.
    assert by_tag[ARM_ONLY].platform_mirrors == {"linux/arm64": "http://ports.ubuntu.com/ubuntu-ports"}
    assert by_tag[MULTI].platform_mirrors == {}


def test_default_is_amd64_only(test_specs):
    assert {tuple(s.platforms) for s in test_specs} == {("linux/amd64",)}



@pytest.mark.parametrize("platforms", [[], None, "linux/amd64", [1], ["linux/amd64", "linux/amd64"],
                                       ["linux/amd64", "linux/../x"]])
def test_a_hand_edited_spec_json_platforms_is_refused_at_load(tmp_path, test_specs, platforms):
    """`make lock` would delete every lock of an image whose spec.json says platforms: [], and a non-list crashed
    every command: load_rendered says to re-render instead."""
    spec = test_specs[0]
    (tmp_path / spec.tag).mkdir()
    (tmp_path / spec.tag / "spec.json").write_text(json.dumps({**spec.to_dict(), "platforms": platforms}))
    with pytest.raises(UserError, match=r"not a spec written by `make render` \(platforms .* is not a list of "
                                        r"distinct linux/<arch> names\); run `make render`"):
        load_rendered(tmp_path)

def test_pypi_cpu_only_aarch64_wheel_is_rejected_with_the_choices(tmp_path):
    # torch 2.10.0: PyPI's x86_64 wheel is CUDA 12.8, its aarch64 wheel a CPU build (nvidia-* only on x86_64).
    msg = matrix_problems(tmp_path, '''\
  - {torch: "2.10.0", cuda: pypi, flavor: runtime, distro: debian12, platforms: [linux/amd64, linux/arm64]}
''' + CPU_DEFAULT)
    assert "images[0]: torch 2.10.0 CUDA 12.8 for linux/arm64 does not exist; builds for linux/arm64: cpu (index cpu)" in msg
    assert "matrix.yaml:5:" in msg


def test_build_from_another_index_is_rejected(tmp_path):
    # 2.14.1's CUDA 13.2 build comes from cu132 on both platforms: fine; a CPU arm64 build of 2.14.1 is not recorded.
    load_matrix(write_matrix(tmp_path, '''\
  - {torch: "2.14.1", cuda: "13.2", flavor: runtime, distro: debian12, platforms: [linux/amd64, linux/arm64]}
''' + CPU_DEFAULT), Settings.compat)      # the shipped compat.yaml
    msg = matrix_problems(tmp_path, '''\
  - {torch: "2.14.1", cuda: cpu, flavor: cpu, distro: debian12, torchvision: false, platforms: [linux/arm64]}
''' + CPU_DEFAULT)
    assert "torch 2.14.1 CPU for linux/arm64 does not exist; builds for linux/arm64: CUDA 13.0 (index pypi), " \
           "CUDA 12.6 (index cu126), CUDA 13.2 (index cu132)" in msg


def test_unknown_platform_and_bad_spelling(tmp_path):
    msg = matrix_problems(tmp_path, '''\
  - {torch: "2.15.0", cuda: pypi, flavor: runtime, distro: debian12, platforms: [linux/riscv64]}
''' + CPU_DEFAULT)
    assert "unknown platform linux/riscv64; known: linux/amd64, linux/arm64" in msg
    msg = matrix_problems(tmp_path, '''\
  - {torch: "2.15.0", cuda: pypi, flavor: runtime, distro: debian12, platforms: [arm64]}
''' + CPU_DEFAULT)
    assert "images[0].platforms[0]" in msg and "does not have the expected form" in msg


def test_arm64_devel_needs_an_arm64_nvidia_image(facts):
    assert check_platforms(facts, ["linux/arm64"], torch="2.14.1", cuda="13.0", index="pypi", flavor="devel",
                             distro="ubuntu24.04") == []
    handmade = {**facts, "linux/arm64": parse_platforms({"platforms": {"linux/arm64": {
        "arch": "arm64", "machine": "aarch64", "wheel_platform": "manylinux_2_28_aarch64", "devel_cuda": ["12.6", "13.0", "13.2"],
        "torch": {"2.11.0": {"12.8": {"index": "cu128"}}}}}})["linux/arm64"]}
    assert check_platforms(handmade, ["linux/arm64"], torch="2.11.0", cuda="12.8", index="cu128", flavor="devel",
                           distro="ubuntu24.04") == [
        "NVIDIA publishes no arm64 devel image for CUDA 12.8; for linux/arm64 use CUDA 12.6, 13.0, 13.2, or flavor runtime"]


HANDMADE = {"platforms": {
    "linux/amd64": {"arch": "amd64", "machine": "x86_64", "wheel_platform": "manylinux_2_28_x86_64"},
    "linux/arm64": {"arch": "arm64", "machine": "aarch64", "wheel_platform": "manylinux_2_28_aarch64",
                    "torch_from": "2.6.0", "distros": ["debian12"],
                    "torch": {"2.7.1": {"cpu": {"index": "pypi"}}, "2.6.0": {"cpu": {"index": "pypi"}}}}}}


def test_old_torch_without_aarch64_wheels_names_the_releases_that_have_them():
    facts = parse_platforms(HANDMADE)
    assert check_platforms(facts, ["linux/amd64", "linux/arm64"], torch="2.5.1", cuda="12.4", index="pypi",
                             flavor="runtime", distro="debian12") == [
        ("torch 2.5.1 has no aarch64 wheels (PyPI has them from 2.6.0); for linux/arm64 choose torch 2.7.1, 2.6.0, "
         "or drop linux/arm64")]
    assert "distro ubuntu24.04 is not published for linux/arm64; choose one of debian12" in check_platforms(
        facts, ["linux/arm64"], torch="2.7.1", cuda="cpu", index="pypi", flavor="cpu", distro="ubuntu24.04")
    assert check_platforms(facts, ["linux/amd64"], torch="2.5.1", cuda="12.4", index="pypi", flavor="runtime",
                             distro="debian12") == []


def test_dockerfile_is_one_file_whose_targetarch_picks_the_platforms_lock(by_tag):
    multi = render_dockerfile(by_tag[MULTI])
    assert "ARG TARGETARCH" in multi and "# Platforms: linux/amd64, linux/arm64." in multi
    for arch, name in (("amd64", "requirements.lock"), ("arm64", "requirements.arm64.lock")):
        assert f"source=images/{MULTI}/{name},target=/tmp/locks/{arch}" in multi
    assert f"source=images/{MULTI},target=/tmp/locks " in multi       # the install steps mount the lock folder
    assert 'lock=/tmp/locks/$name' in multi and '"$lock" >/tmp/uv/torch.txt' in multi
    single = render_dockerfile(by_tag[CPU])
    assert f"source=images/{CPU}/requirements.lock,target=/tmp/locks/amd64" in single
    assert "requirements.arm64.lock" not in single and "# Platforms:" not in single
    assert '/wheels/uv-0.13.9-*manylinux*_"$(uname -m)".whl' in multi     # uv for the machine being built


def test_base_tags_follow_the_platform_not_the_host():
    assert base_tag("debian12", "linux/amd64") == "torchimages-base/debian12:latest"
    assert base_tag("debian12", "linux/arm64") == "torchimages-base/debian12:latest-arm64"
    assert arch_of("linux/arm64/v8") == "arm64"
    with pytest.raises(UserError, match="expected linux/<arch>"):
        arch_of("arm64")


def test_platform_selection_and_local_tags(by_tag):
    spec, cpu = by_tag[MULTI], by_tag[CPU]
    assert select_platforms(spec.platforms, None, spec.tag) == ["linux/amd64"]
    assert select_platforms(spec.platforms, "linux/arm64", spec.tag) == ["linux/arm64"]
    with pytest.raises(UserError, match=r"2\.13\.0-cpu-debian12 is not built for linux/arm64; its platforms: linux/amd64"):
        select_platforms(cpu.platforms, "linux/arm64", cpu.tag)
    assert [t.platform for t in spec.targets(None)] == ["linux/amd64"]
    assert [t.platform for t in spec.targets("linux/arm64")] == ["linux/arm64"]
    with pytest.raises(UserError, match=r"2\.13\.0-cpu-debian12 is not built for linux/arm64"):
        cpu.targets("linux/arm64")
    assert Target(spec, "linux/arm64").local_tag == f"testimages:{MULTI}-arm64"
    assert Target(spec, "linux/amd64").local_tag == f"testimages:{MULTI}"
    assert [b.platforms for b in builds([spec], "all") if isinstance(b, Release)] == [("linux/amd64", "linux/arm64")]
    with pytest.raises(UserError, match="PLATFORM=all builds images with the same platforms together"):
        builds([spec, cpu], "all")
    assert [t.platform for t in base_targets([spec, cpu], None)] == ["linux/amd64", "linux/arm64", "linux/amd64"]
    assert [t.spec.tag for t in base_targets([spec, cpu], "linux/arm64")] == [MULTI]


def test_a_target_derives_every_name_of_an_image_on_a_platform(by_tag):
    spec = by_tag[MULTI]
    arm, amd = Target(spec, "linux/arm64"), Target(spec, "linux/amd64")
    assert (arm.report_name, arm.arch_tag, arm.lock_name, arm.base_tag) == (
        f"{MULTI}-arm64", f"{MULTI}-arm64", "requirements.arm64.lock", "torchimages-base/debian12:latest-arm64")
    assert (amd.report_name, amd.arch_tag, amd.lock_label) == (MULTI, f"{MULTI}-amd64",
                                                                  f"images/{MULTI}/requirements.lock")
    default = spec.targets(None)[0]          # no PLATFORM: the engine's default, plain names, no --platform
    assert not default.explicit and default.local_tag == spec.image and default.report_name == MULTI
    arm_only = by_tag[ARM_ONLY].targets(None)[0]
    assert arm_only.platform == "linux/arm64" and arm_only.local_tag == by_tag[ARM_ONLY].image
    assert arm.emulated("linux/amd64") and not arm.emulated("linux/arm64") and not amd.emulated("linux/amd64")
    assert Target(by_tag[ARM_ONLY], "linux/arm64").mirror == "http://ports.ubuntu.com/ubuntu-ports"
    assert [t.platform for t in spec.every_target] == ["linux/amd64", "linux/arm64"]


def test_base_route_never_imports_on_an_arm64_host(by_tag):
    """`docker import` labels the engine's architecture: only linux/amd64 on an amd64 host may take that way."""
    targets = base_targets([by_tag[MULTI], by_tag[CPU]], None)
    native, other = split_by_route(targets, "linux/amd64")
    assert [s.tag for s in native] == [MULTI, CPU] and [(t.spec.tag, t.platform) for t in other] == [(MULTI, "linux/arm64")]
    native, other = split_by_route(targets, "linux/arm64")
    assert native == [] and [t.platform for t in other] == ["linux/amd64", "linux/arm64", "linux/amd64"]
    assert {t.base_tag for t in other} == {"torchimages-base/debian12:latest",
                                                          "torchimages-base/debian12:latest-arm64"}


def test_emulated_build_stages_only_that_architectures_locked_wheels(tmp_path, by_tag):
    """Each platform has its own lock; staging for linux/arm64 takes the aarch64 (or pure) wheels whose hash is
    in requirements.arm64.lock, and the aarch64 uv wheel."""
    from scripts.builder.lock import DIGEST_LINE, input_digest, stage_for_build
    spec = by_tag[MULTI]
    folder, target, images = tmp_path / "wheels", tmp_path / "stage", tmp_path / "images"
    folder.mkdir()
    (images / spec.tag).mkdir(parents=True)
    names: tuple[str, ...] = ("torch-2.15.0-cp311-cp311-manylinux_2_28_aarch64.whl", "torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl",
             "filelock-4.2.11-py3-none-any.whl", "uv-0.13.9-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl",
             "uv-0.13.9-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
    for name in names:
        (folder / name).write_bytes(b"handmade " + name.encode())
    import hashlib
    digest = {n: hashlib.sha256(b"handmade " + n.encode()).hexdigest() for n in names}
    from scripts.builder.lock import requirements
    others = [r for r in requirements(spec) if not r.startswith("torch==")]   # every pin the spec asks for is locked
    for req in others:
        name = req.replace("==", "-").replace("-", "_", req.split("==")[0].count("-")) + "-py3-none-any.whl"
        names += (name,)
        (folder / name).write_bytes(b"handmade " + name.encode())
    digest = {n: hashlib.sha256(b"handmade " + n.encode()).hexdigest() for n in names}
    lock = (f"# handmade lock\n{DIGEST_LINE}{input_digest(Target(spec, 'linux/arm64'))}\n"
            f"torch=={spec.torch} \\\n    --hash=sha256:{digest[names[0]]}\n"
            f"filelock==4.2.11 \\\n    --hash=sha256:{digest[names[2]]}\n    # via torch\n" +
            "".join(f"{req} \\\n    --hash=sha256:{digest[name]}\n" for req, name in zip(others, names[5:], strict=True)))
    (images / spec.tag / "requirements.arm64.lock").write_text(lock)
    staged, offline = stage_for_build(Target(spec, "linux/arm64"), images, [folder], target, tmp_path / "uv")
    assert sorted(staged) == sorted([names[0], names[2], names[3], *names[5:]]) and offline
    assert sorted(p.name for p in target.iterdir()) == sorted(staged)
    with pytest.raises(UserError, match=r"requirements\.lock is missing"):       # amd64's lock is its own file
        stage_for_build(Target(spec, "linux/amd64"), images, [folder], tmp_path / "stage2", tmp_path / "uv")
    with pytest.raises(UserError, match="is not built for linux/s390x"):
        stage_for_build(Target(spec, "linux/s390x"), images, [folder], tmp_path / "stage3", tmp_path / "uv")


@pytest.mark.host
def test_build_argv_per_platform(by_tag, tmp_path):
    from scripts.builder.buildkit import build_argv, build_definition
    from scripts.builder.engine import BuildClient
    spec = by_tag[MULTI]
    classic = ("/usr/bin/docker", "build")
    arm, default, release = Target(spec, "linux/arm64"), spec.targets(None)[0], Release(spec, spec.every_target)
    assert platform_argv(classic, arm, tmp_path) == [
        "/usr/bin/docker", "build", "-t", f"testimages:{MULTI}-arm64", "--platform", "linux/arm64"]
    assert platform_argv(classic, default, tmp_path) == ["/usr/bin/docker", "build", "-t", f"testimages:{MULTI}"]
    buildx = ("docker", "buildx", "build", "--load")
    assert platform_argv(buildx, release, tmp_path) == [
        "docker", "buildx", "build", "--platform", "linux/amd64,linux/arm64", "-t", f"testimages:{MULTI}",
        "--output", f"type=oci,dest={tmp_path / 'oci' / (MULTI + '.tar')}"]
    with pytest.raises(UserError, match="needs a buildx builder"):
        platform_argv(classic, release, tmp_path)
    assert build_definition(spec)["platforms"] == ["linux/amd64", "linux/arm64"]
    argv = build_argv(BuildClient(classic, {}, "classic+buildkit"), arm, tmp_path / "Dockerfile", "base:x", "", None,
                      None, tmp_path, offline=True)
    assert argv[:6] == [*classic, "-t", f"testimages:{MULTI}-arm64", "--platform", "linux/arm64"]
    assert "OFFLINE=1" in argv and argv[-1] == str(tmp_path)
    assert "OFFLINE=1" not in build_argv(BuildClient(classic, {}, "classic+buildkit"), default, tmp_path / "D",
                                                "base:x", "", None, None, tmp_path)


def test_scratch_base_and_debootstrap_argv(tmp_path, monkeypatch):
    assert scratch_dockerfile().startswith("FROM scratch\nADD rootfs.tar /\n")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "bookworm").symlink_to("sid")
    (scripts / "sid").write_text("")
    debian = {"arch": "arm64", "mirror": "http://deb.debian.org/debian", "distro": "debian12", "rootfs": tmp_path,
              "scripts": scripts}
    assert debootstrap_argv(codename="bookworm", **debian) == [
        "debootstrap", "--arch=arm64", "--variant=minbase", "bookworm", str(tmp_path), "http://deb.debian.org/debian"]
    # a release newer than this debootstrap (Debian 12's has no noble): the script its family uses, named
    assert debootstrap_argv(codename="forky", **debian)[-1] == str(scripts / "sid")
    keyring = tmp_path / "ubuntu-archive-keyring.gpg"
    keyring.write_bytes(b"")
    monkeypatch.setattr(base, "UBUNTU_KEYRING", str(keyring))
    ubuntu = debootstrap_argv(arch="amd64", codename="noble", mirror="http://archive.ubuntu.com/ubuntu",
                              distro="ubuntu24.04", rootfs=tmp_path, scripts=scripts)
    assert ubuntu[-4:] == ["noble", str(tmp_path), "http://archive.ubuntu.com/ubuntu", str(scripts / "gutsy")]
    assert f"--keyring={keyring}" in ubuntu


def _binfmt(tmp_path: Path, handler: str | None, flags: str = "PF", state: str = "enabled",
            qemu_version: str = "10.0.2") -> Path:
    """A binfmt_misc folder whose handler names an interpreter that reports `qemu_version` (a stand-in script)."""
    root = tmp_path / "binfmt_misc"
    root.mkdir(parents=True)
    (root / "status").write_text("enabled\n")
    interpreter = tmp_path / "qemu-aarch64-handmade"
    interpreter.write_text(f"#!/bin/sh\necho 'qemu-aarch64 version {qemu_version} (handmade)'\n")
    interpreter.chmod(0o755)
    if handler:
        (root / handler).write_text(f"{state}\ninterpreter {interpreter}\nflags: {flags}\n")
    return root


@pytest.mark.host
def test_emulation_problems_say_how_to_fix(tmp_path):
    arm = "linux/arm64"
    assert emulation_problem(arm, tmp_path / "absent", host="linux/arm64") is None     # native: nothing needed
    msg = emulation_problem(arm, tmp_path / "absent", host="linux/amd64")
    assert msg is not None and "binfmt_misc is not mounted" in msg and "mount -t binfmt_misc" in msg
    assert "apt-get install qemu-user-static binfmt-support" in (
        emulation_problem(arm, _binfmt(tmp_path / "a", None), host="linux/amd64") or "")
    assert "no F (fix-binary) flag" in (emulation_problem(arm, _binfmt(tmp_path / "b", "qemu-aarch64", "P"),
                                                          host="linux/amd64") or "")
    assert "is disabled" in (emulation_problem(arm, _binfmt(tmp_path / "c", "qemu-aarch64", state="disabled"),
                                               host="linux/amd64") or "")
    assert emulation_problem(arm, _binfmt(tmp_path / "d", "qemu-aarch64"), host="linux/amd64") is None
    old = emulation_problem(arm, _binfmt(tmp_path / "e", "qemu-aarch64", qemu_version="7.2.0"), host="linux/amd64")
    assert old is not None and "is qemu 7" in old and "bookworm-backports qemu-user-static" in old



@pytest.mark.host
def test_old_qemu_found_behind_debians_binfmt_p_link(tmp_path):
    """Debian registers /usr/libexec/qemu-binfmt/aarch64-binfmt-P, a link to qemu-aarch64 that refuses to run
    outside binfmt_misc: the version is read from the link's target, so qemu 7.2 there is still refused."""
    root = tmp_path / "binfmt_misc"
    root.mkdir()
    (root / "status").write_text("enabled\n")
    qemu = tmp_path / "bin" / "qemu-aarch64"
    qemu.parent.mkdir()
    qemu.write_text('#!/bin/sh\ncase "$0" in *-binfmt-P) echo "has to be run using kernel binfmt-misc" >&2; exit 1;; '
                    'esac\necho "qemu-aarch64 version 7.2.9 (handmade)"\n')
    qemu.chmod(0o755)
    link = tmp_path / "qemu-binfmt" / "aarch64-binfmt-P"
    link.parent.mkdir()
    link.symlink_to(qemu)
    (root / "qemu-aarch64").write_text(f"enabled\ninterpreter {link}\nflags: POCF\n")
    old = emulation_problem("linux/arm64", root, host="linux/amd64")
    assert old is not None and "is qemu 7" in old

X86_CPUINFO_HANDMADE = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu sse2\n"
QEMU_MAX_CPUINFO_HANDMADE = ("processor\t: 0\nmodel name\t: ARMv8 Processor rev 0 (v8l)\nBogoMIPS\t: 100.00\n"
                             "Features\t: fp asimd sve sve2 sme\nCPU implementer\t: 0x00\nCPU part\t: 0x051\n")
ARM_CPUINFO_HANDMADE = "processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n"


def test_emulation_detection(tmp_path, monkeypatch):
    from verify import environment
    x86, arm = tmp_path / "x86", tmp_path / "arm"
    x86.write_text(X86_CPUINFO_HANDMADE)
    arm.write_text(ARM_CPUINFO_HANDMADE)
    monkeypatch.delenv("TORCHIMAGES_HOST_ARCH", raising=False)
    monkeypatch.setattr("verify.environment.platform.machine", lambda: "aarch64")
    assert environment.emulation(str(x86))["emulated"] is True                 # qemu-user passes the host's file
    assert environment.emulation(str(arm)) == {"machine": "aarch64", "emulated": False, "emulation_evidence": None}
    monkeypatch.setenv("TORCHIMAGES_HOST_ARCH", "x86_64")
    found = environment.emulation(str(arm))
    assert found["emulated"] is True and "TORCHIMAGES_HOST_ARCH" in found["emulation_evidence"]
    monkeypatch.setenv("TORCHIMAGES_HOST_ARCH", "aarch64")
    assert environment.emulation(str(arm))["emulated"] is False
    monkeypatch.setattr("verify.environment.platform.machine", lambda: "x86_64")
    monkeypatch.setenv("TORCHIMAGES_HOST_ARCH", "x86_64")
    assert environment.emulation(str(x86))["emulated"] is False
    qemu_max = tmp_path / "qemu-max"             # qemu 8+ writes an aarch64 cpuinfo of its own
    qemu_max.write_text(QEMU_MAX_CPUINFO_HANDMADE)
    monkeypatch.setattr("verify.environment.platform.machine", lambda: "aarch64")
    monkeypatch.delenv("TORCHIMAGES_HOST_ARCH")
    found = environment.emulation(str(qemu_max))
    assert found["emulated"] is True and "implementer 0x00" in found["emulation_evidence"]


@pytest.mark.parametrize(("host", "emulated"), [("X86_64", False), ("AMD64", False), (" x86_64 ", False), ("", False),
                                                ("   ", False), ("x86_64\u200b", False), ("x 86", False),
                                                ("aarch64", True), ("ARM64", True), ("s390x", True)])
def test_odd_host_arch_spellings_are_not_emulation_evidence(host, emulated, tmp_path, monkeypatch):
    """On an x86_64 machine with an x86 /proc/cpuinfo, only a real other machine name means emulation: a false
    "emulated" skips throughput judging and runs every timed-out check twice."""
    from verify import environment
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(X86_CPUINFO_HANDMADE)
    monkeypatch.setattr("verify.environment.platform.machine", lambda: "x86_64")
    monkeypatch.setenv("TORCHIMAGES_HOST_ARCH", host)
    assert environment.emulation(str(cpuinfo))["emulated"] is emulated


def test_report_environment_line_names_machine_and_emulation():
    from verify.report import environment_lines
    lines = environment_lines({"machine": "aarch64", "emulated": True, "emulation_evidence": "host architecture x86_64"})
    assert lines[-1] == ("machine aarch64   EMULATED (host architecture x86_64): throughput is reported, not judged")
    assert environment_lines({"machine": "x86_64", "emulated": False})[-1] == "machine x86_64   native"


@pytest.mark.host
def test_k8s_and_slurm_select_the_node_architecture(by_tag):
    import shlex
    import subprocess

    from scripts.fleet.cluster import k8s_manifests
    from scripts.fleet.slurm import Job, slurm_script
    from scripts.publish.bake import bake_file, target_name
    specs = by_tag
    spec = specs[MULTI]
    assert bake_file(list(specs.values()))["target"][target_name(MULTI)]["platforms"] == ["linux/amd64", "linux/arm64"]
    arm = k8s_manifests(spec, spec.image, 2, 4, platform="linux/arm64")
    job = k8s_model(json.loads(json.dumps(arm[-1])))
    assert job.spec.template.spec.node_selector == {"kubernetes.io/arch": "arm64"}
    either = k8s_model(json.loads(json.dumps(k8s_manifests(spec, spec.image, 1, 1)[-1])))
    term = either.spec.template.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    assert term.node_selector_terms[0].match_expressions[0].values == ["amd64", "arm64"]
    cpu = k8s_manifests(specs["2.13.0-cpu-debian12"], "x", 1, 1)[-1]
    assert cpu["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/arch": "amd64"}
    text = slurm_script(Job(spec, spec.image, 2, 4, platform="linux/arm64"))
    assert 'case "$(uname -m)" in aarch64) ;;' in text
    assert subprocess.run(["bash", "-n"], input=text, text=True, check=False).returncode == 0
    # the guard is the first step, on every node (srun ... bash -c '<guard>')
    step = next(line for line in text.splitlines() if line.startswith("srun ") and "uname -m" in line)
    guard = shlex.split(step)[shlex.split(step).index("-c") + 1]
    for machine, code in (("aarch64", 0), ("x86_64", 1)):
        probe = f'uname() {{ echo {machine}; }}; hostname() {{ echo n1; }}; {guard}'
        assert subprocess.run(["bash", "-c", probe], capture_output=True, check=False).returncode == code


def test_platform_and_force_are_settings_knobs():
    from scripts.settings import Settings
    s = Settings.load({"PLATFORM": "linux/arm64", "FORCE": "1"}, {}, ("PLATFORM", "FORCE"))
    assert (s.platform, s.force) == ("linux/arm64", True)
    assert Settings.load({"PLATFORM": "linux/arm64"}, {}, ()).platform is None     # only the command's knobs
    assert Settings.load({}, {"PLATFORM": "all"}, ("PLATFORM",)).platform == "all"
    with pytest.raises(UserError, match="PLATFORM='arm64' is not a platform: write linux/<arch>"):
        Settings.load({"PLATFORM": "arm64"}, {}, ("PLATFORM",))


@pytest.mark.parametrize(("written", "meant"), [("linux/arm64/v8", "linux/arm64"), ("linux/aarch64", "linux/arm64"),
                                                ("linux/x86_64", "linux/amd64"), ("linux/amd64/v1", "linux/amd64"),
                                                ("linux/arm64", "linux/arm64"), ("linux/riscv64", "linux/riscv64"),
                                                ("linux/ARM64", "linux/arm64"), ("Linux/ARM64/V8", "linux/arm64")])
def test_platform_spellings_docker_prints_mean_the_same_platform(written, meant):
    """`docker image inspect` says arm64 + variant v8: PLATFORM=linux/arm64/v8 must select the arm64 build, not
    report that no image is built for it."""
    from scripts.settings import Settings
    assert Settings.load({"PLATFORM": written}, {}, ("PLATFORM",)).platform == meant
