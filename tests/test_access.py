"""Access flavors in the matrix (`access: [jupyter, ssh]`): schema, validation, tags, spec and rendered Dockerfile.

The launchers themselves are tested for real against the built image in tests/integration/test_access.py.
"""
from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import pytest

from scripts.errors import UserError
from scripts.plan import access
from scripts.plan.matrix import load_matrix
from scripts.plan.spec import ImageSpec, make_tag
from scripts.render import render_dockerfile
from tests.helpers import ROOT, TEST_COMPAT

pytestmark = pytest.mark.unit

HEAD = """\
repository: torchimages
defaults:
  packages: {torchdata: "0.11.0", pyarrow: "26.0.1", h5py: "3.16.0", numpy: "2.4.6", nvidia-ml-py: "13.615.71"}
images:
  - {torch: "2.13.0", cuda: cpu, flavor: cpu, distro: debian12, torchvision: false, default: true}
"""
ACCESS_TAG = "2.13.0-cpu-debian12-jupyter-ssh"   # tests/data/matrix.yaml has it
BIN = ROOT / "rootfs" / "access" / "usr" / "local" / "bin"


def matrix(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "matrix.yaml"
    path.write_text(HEAD + body)
    return path


def problems(tmp_path: Path, body: str, compat=TEST_COMPAT) -> str:
    with pytest.raises(UserError) as info:
        load_matrix(matrix(tmp_path, body), compat)
    return str(info.value)


@pytest.fixture
def by_tag(test_specs) -> dict[str, ImageSpec]:
    return {s.tag: s for s in test_specs}


def test_the_test_matrix_has_the_cpu_image_with_jupyter_and_ssh(by_tag):
    specs = by_tag
    spec = specs[ACCESS_TAG]
    assert spec.access == ("jupyter", "ssh") and not spec.default
    assert spec.access_packages == {"jupyterlab": access.PACKAGES["jupyter"]["jupyterlab"]}
    assert spec.labels["io.torchimages.access"] == "jupyter,ssh"
    assert spec.labels["io.torchimages.jupyter.port"] == "8888" and spec.labels["io.torchimages.ssh.port"] == "2222"
    assert "with JupyterLab and an SSH server" in spec.description
    plain = specs["2.13.0-cpu-debian12"]
    assert plain.access == () and plain.access_packages == {} and "io.torchimages.access" not in plain.labels


@pytest.mark.parametrize(("kinds", "suffix"), [
    ([], ""), (["jupyter"], "-jupyter"), (["ssh"], "-ssh"), (["jupyter", "ssh"], "-jupyter-ssh"),
    (["ssh", "jupyter"], "-jupyter-ssh"),
])
def test_tag_suffix_is_in_canonical_order(kinds, suffix):
    assert access.tag_suffix(kinds) == suffix
    assert make_tag("2.13.0", None, None, "cpu", "debian12", tuple(kinds)) == f"2.13.0-cpu-debian12{suffix}"
    assert make_tag("2.15.0", "13.2", "9.26.0.51", "runtime", "debian12", tuple(kinds)) == \
        f"2.15.0-cuda13.2-cudnn9-runtime-debian12{suffix}"


def test_access_on_an_entry_and_on_an_axes_group(tmp_path):
    specs = load_matrix(matrix(tmp_path, '''\
  - {torch: "2.13.0", cuda: cpu, flavor: cpu, distro: debian12, torchvision: false, access: [ssh, jupyter]}
  - axes: {torch: ["2.15.0", "2.14.1"], cuda: [pypi], flavor: [runtime], distro: [debian12]}
    access: [ssh]
'''), TEST_COMPAT)
    tags = {s.tag: s for s in specs}
    assert set(tags) == {"2.13.0-cpu-debian12", "2.13.0-cpu-debian12-jupyter-ssh",
                         "2.15.0-cuda13.2-cudnn9-runtime-debian12-ssh", "2.14.1-cuda13.0-cudnn9-runtime-debian12-ssh"}
    assert tags["2.13.0-cpu-debian12-jupyter-ssh"].access == ("jupyter", "ssh")
    assert tags["2.15.0-cuda13.2-cudnn9-runtime-debian12-ssh"].access_packages == {}   # ssh needs no pip package


def test_an_unknown_access_kind_is_refused_with_the_valid_ones(tmp_path):
    msg = problems(tmp_path, '  - {torch: "2.13.0", cuda: cpu, flavor: cpu, distro: debian12, access: [jupyter, vnc]}\n')
    assert "matrix.yaml:6: images[1].access[1]: 'vnc' is not one of jupyter, ssh" in msg


def test_a_repeated_access_kind_is_refused(tmp_path):
    msg = problems(tmp_path, '''\
  - axes: {torch: ["2.15.0"], cuda: [pypi], flavor: [runtime], distro: [debian12]}
    access: [ssh, ssh]
''')
    assert "images[1].access: ['ssh', 'ssh'] lists an item more than once; list each once" in msg


def test_access_must_be_a_list(tmp_path):
    msg = problems(tmp_path, '  - {torch: "2.13.0", cuda: cpu, flavor: cpu, distro: debian12, access: jupyter}\n')
    assert "images[1].access: 'jupyter' is not of type 'array'" in msg


def test_access_is_not_an_axis_nor_a_default(tmp_path):
    msg = problems(tmp_path, '  - axes: {torch: ["2.15.0"], cuda: [pypi], flavor: [runtime], distro: [debian12], access: [ssh]}\n')
    assert "images[1].axes: unknown key 'access'" in msg


def test_jupyterlab_without_a_wheel_for_the_images_python_is_refused(tmp_path, test_compat):
    compat = test_compat
    narrowed = dataclasses.replace(compat, packages={**compat.packages, "jupyterlab": {
        access.PACKAGES["jupyter"]["jupyterlab"]: ("3.12", "3.13")}})
    msg = problems(tmp_path, '  - {torch: "2.13.0", cuda: cpu, flavor: cpu, distro: debian12, access: [jupyter]}\n',
                   compat=narrowed)
    assert re.search(r"images\[1\]: access: jupyterlab \S+ does not support Python 3.11 \(it covers 3.12, 3.13\)", msg)
    missing = dataclasses.replace(compat, packages={k: v for k, v in compat.packages.items() if k != "jupyterlab"})
    msg = problems(tmp_path, '  - {torch: "2.13.0", cuda: cpu, flavor: cpu, distro: debian12, access: [jupyter]}\n',
                   compat=missing)
    assert "which is not in compat.yaml's packages" in msg


def test_the_same_image_with_and_without_access_are_two_images(tmp_path):
    specs = load_matrix(matrix(tmp_path, '  - {torch: "2.13.0", cuda: cpu, flavor: cpu, distro: debian12, torchvision: false, '
                                         'access: [jupyter]}\n'), TEST_COMPAT)
    assert sorted(s.tag for s in specs) == ["2.13.0-cpu-debian12", "2.13.0-cpu-debian12-jupyter"]


def test_spec_json_round_trip_keeps_access_as_a_tuple(by_tag):
    spec = by_tag[ACCESS_TAG]
    again = ImageSpec.from_dict(__import__("json").loads(spec.to_json()))
    assert again == spec and again.access == ("jupyter", "ssh")


def test_the_rendered_dockerfile_keeps_secrets_out_and_the_shell_as_default(by_tag):
    spec = by_tag[ACCESS_TAG]
    text = render_dockerfile(spec)
    # host keys from openssh-server's install are deleted in the RUN that installs it
    ssh_run = next(block for block in text.split("\nRUN ") if "install -y --no-install-recommends openssh-server" in block)
    assert "rm -rf /var/lib/apt/lists/* /etc/ssh/ssh_host_*" in ssh_run
    # jupyterlab is a locked pin like torch: installed with hashes by the builder, never by a pip line of its own
    from scripts.builder.lock import requirements
    assert "jupyterlab==4.6.6" in requirements(spec) and "jupyterlab==" not in text
    image_stage = text.split(" AS image\n")[1]
    lines = image_stage.splitlines()
    assert 'ENTRYPOINT ["/usr/local/bin/torchimages-entrypoint"]' in lines
    assert any(line.startswith("HEALTHCHECK ") and "torchimages-healthcheck" in line for line in lines)
    assert "EXPOSE 8888" in lines and "EXPOSE 2222" in lines
    assert lines.index("USER 1000:1000") > lines.index('ENTRYPOINT ["/usr/local/bin/torchimages-entrypoint"]')
    assert 'CMD ["/bin/bash"]' in lines and lines[-1] == "COPY verify /opt/verify/verify"
    assert not re.search(r"(?i)token\s*=|JUPYTER_TOKEN|ssh-keygen", text)   # nothing secret is made at build time
    plain = render_dockerfile(by_tag["2.13.0-cpu-debian12"])
    assert "ENTRYPOINT" not in plain and "HEALTHCHECK" not in plain and "openssh" not in plain


def test_the_build_context_admits_the_launchers():
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    assert "!rootfs" in ignore
    for name in ("torchimages-entrypoint", "torchimages-healthcheck", "jupyter-start", "sshd-start"):
        path = BIN / name
        assert path.is_file() and path.stat().st_mode & 0o111, name


@pytest.mark.host
@pytest.mark.parametrize("name", ["torchimages-entrypoint", "sshd-start"])
def test_the_shell_launchers_parse(name):
    proc = subprocess.run(["sh", "-n", str(BIN / name)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_sshd_start_writes_a_key_only_config():
    text = (BIN / "sshd-start").read_text()
    for line in ("PasswordAuthentication no", "KbdInteractiveAuthentication no", "PermitRootLogin no",
                 "AuthenticationMethods publickey", "UsePAM no", "PermitEmptyPasswords no", "AllowUsers $user"):
        assert f'echo "{line}"' in text, line
    assert 'ssh-keygen -A -f "$dir"' in text   # host keys into the runtime dir, at start


@pytest.mark.host
@pytest.mark.parametrize("kinds", [("jupyter",), ("ssh",)])
def test_one_access_kind_alone_renders_only_its_parts_and_lints_clean(kinds, tmp_path, by_tag):
    from scripts.lint import lint
    base = by_tag[ACCESS_TAG]
    spec = dataclasses.replace(base, access=kinds, access_packages=access.packages(kinds),
                               tag=make_tag(base.torch, None, None, base.flavor, base.distro, kinds))
    text = render_dockerfile(spec)
    assert ("openssh-server" in text) == ("ssh" in kinds) and ("sshd-start" in text) == ("ssh" in kinds)
    from scripts.builder.lock import requirements
    assert any(r.startswith("jupyterlab==") for r in requirements(spec)) == ("jupyter" in kinds)
    assert ("jupyter-start" in text) == ("jupyter" in kinds)
    assert ("EXPOSE 8888" in text) == ("jupyter" in kinds) and ("EXPOSE 2222" in text) == ("ssh" in kinds)
    assert f"ENV TORCHIMAGES_ACCESS={kinds[0]}" in text and "HEALTHCHECK" in text
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(text)
    ok, output = lint([dockerfile])
    assert ok, output
