"""Validation and expansion of matrix.yaml: every kind of bad input gives one clear, located message."""
from __future__ import annotations

import pytest

from scripts.errors import MatrixError, UserError
from scripts.plan.matrix import load_matrix
from scripts.plan.spec import make_tag
from scripts.render import select
from scripts.versions import version_key
from tests.helpers import CPU_DEFAULT, MATRIX_HEAD, TEST_COMPAT, assert_clean_failure, matrix_problems, run_cli, write_matrix


@pytest.mark.unit
def test_tag_naming():
    assert make_tag("2.15.0", "13.2", "9.26.0.51", "runtime", "debian12") == "2.15.0-cuda13.2-cudnn9-runtime-debian12"
    assert make_tag("2.13.0", None, None, "cpu", "debian12") == "2.13.0-cpu-debian12"


@pytest.mark.unit
def test_select_by_tag_all_and_default(test_specs):
    specs = test_specs
    assert select(specs, "")[0].default
    assert len(select(specs, "all")) == len(specs)
    with pytest.raises(UserError, match="unknown image nope; choose IMAGE=all or one of"):
        select(specs, "nope")
    for nothing in (",", " , ,"):
        with pytest.raises(UserError, match="names no image"):
            select(specs, nothing)


@pytest.mark.unit
def test_unknown_torch_version_names_the_known_ones(tmp_path):
    msg = matrix_problems(tmp_path, '  - {torch: "2.99.0", cuda: pypi, flavor: runtime, distro: debian12}\n' + CPU_DEFAULT)
    assert "matrix.yaml:5: images[0]: unknown torch version 2.99.0; known: 2.15.0, 2.14.1" in msg


@pytest.mark.unit
def test_cuda_build_that_never_existed(tmp_path):
    msg = matrix_problems(tmp_path, '  - {torch: "2.15.0", cuda: "11.8", flavor: runtime, distro: debian12}\n' + CPU_DEFAULT)
    assert "matrix.yaml:5: images[0]: torch 2.15.0 has no CUDA 11.8 build; available: 13.2 (PyPI), cpu" in msg


@pytest.mark.unit
def test_python_the_release_cannot_give(tmp_path):
    msg = matrix_problems(tmp_path, '''\
  - {torch: "2.15.0", cuda: pypi, flavor: runtime, distro: ubuntu22.04, packages: {pyarrow: "25.0.1", numpy: "2.2.6"}}
''' + CPU_DEFAULT)
    assert "torch 2.15.0 has no wheel for Python 3.10 (ubuntu22.04's Python)" in msg
    assert "debian12 (3.11)" in msg


@pytest.mark.unit
def test_python_the_distro_cannot_give(tmp_path):
    msg = matrix_problems(tmp_path, '  - {torch: "2.14.1", cuda: pypi, flavor: runtime, distro: debian12, python: "3.12"}\n' + CPU_DEFAULT)
    assert "debian12 ships Python 3.11, not 3.12" in msg and "ubuntu24.04 (3.12)" in msg


@pytest.mark.unit
def test_package_without_a_wheel_for_the_python(tmp_path):
    msg = matrix_problems(tmp_path, '  - {torch: "2.14.1", cuda: pypi, flavor: runtime, distro: ubuntu22.04}\n' + CPU_DEFAULT)
    assert "pyarrow 26.0.1 has no wheel for Python 3.10; versions for 3.10: 25.0.1" in msg


@pytest.mark.unit
def test_devel_on_a_distro_nvidia_does_not_publish(tmp_path):
    msg = matrix_problems(tmp_path, '  - {torch: "2.15.0", cuda: pypi, flavor: devel, distro: debian12}\n' + CPU_DEFAULT)
    assert "NVIDIA publishes no devel image for CUDA 13.2 on debian12; available: nvidia/cuda:13.2.1-cudnn-devel-ubuntu24.04" in msg


@pytest.mark.unit
def test_flavor_must_match_cuda(tmp_path):
    msg = matrix_problems(tmp_path, '  - {torch: "2.15.0", cuda: pypi, flavor: cpu, distro: debian12}\n' + CPU_DEFAULT)
    assert "flavor cpu does not go with cuda 13.2" in msg


@pytest.mark.unit
def test_duplicate_tags(tmp_path):
    msg = matrix_problems(tmp_path, '''\
  - {torch: "2.15.0", cuda: pypi, flavor: runtime, distro: debian12}
  - {torch: "2.15.0", cuda: "13.2", flavor: runtime, distro: debian12}
''' + CPU_DEFAULT)
    assert "matrix.yaml:6: images[1]: duplicate tag 2.15.0-cuda13.2-cudnn9-runtime-debian12, already produced by images[0]" in msg


@pytest.mark.unit
def test_unknown_key_names_the_allowed_ones(tmp_path):
    msg = matrix_problems(tmp_path, '  - {torch: "2.15.0", cuda: pypi, flavor: runtime, distro: debian12, cudnn: "9"}\n' + CPU_DEFAULT)
    assert "matrix.yaml:5: images[0]: unknown key 'cudnn'; allowed: access, cuda, default, distro, flavor" in msg


@pytest.mark.unit
def test_wrong_type_suggests_quoting(tmp_path):
    msg = matrix_problems(tmp_path, '  - {torch: 2.15, cuda: pypi, flavor: runtime, distro: debian12}\n' + CPU_DEFAULT)
    assert "images[0].torch: 2.15 is a number; versions are strings: write it quoted" in msg


@pytest.mark.unit
def test_wrong_type_of_a_list(tmp_path):
    msg = matrix_problems(tmp_path, "  - axes: {torch: \"2.15.0\", cuda: [pypi], flavor: [runtime], distro: [debian12]}\n" + CPU_DEFAULT)
    assert "images[0].axes.torch" in msg and "is not of type 'array'" in msg


@pytest.mark.unit
def test_malformed_yaml_gives_the_line(tmp_path):
    msg = matrix_problems(tmp_path, '  - {torch: "2.15.0", cuda: pypi\n    flavor: [\n')
    assert msg.startswith("matrix.yaml:") and "malformed YAML" in msg


@pytest.mark.unit
def test_exclude_that_matches_nothing(tmp_path):
    msg = matrix_problems(tmp_path, '''\
  - axes: {torch: ["2.15.0"], cuda: [pypi], flavor: [runtime], distro: [debian12]}
    exclude: [{distro: debain12}]
''' + CPU_DEFAULT)
    assert "images[0].exclude[0]: {'distro': 'debain12'} matches no combination" in msg


@pytest.mark.unit
def test_exactly_one_default(tmp_path):
    msg = matrix_problems(tmp_path, '  - {torch: "2.15.0", cuda: pypi, flavor: runtime, distro: debian12}\n')
    assert "no image is marked `default: true`" in msg


@pytest.mark.unit
def test_every_problem_is_reported_at_once(tmp_path):
    with pytest.raises(MatrixError) as info:
        load_matrix(write_matrix(tmp_path, '''\
  - {torch: "2.99.0", cuda: pypi, flavor: runtime, distro: debian12}
  - {torch: "2.15.0", cuda: "11.8", flavor: runtime, distro: debian12}
''' + CPU_DEFAULT), TEST_COMPAT)
    assert len(info.value.problems) == 2


@pytest.mark.unit
def test_axes_expand_with_excludes(tmp_path):
    specs = load_matrix(write_matrix(tmp_path, '''\
  - axes: {torch: ["2.15.0", "2.14.1"], cuda: [pypi], flavor: [runtime, devel], distro: [debian12, ubuntu24.04]}
    exclude: [{flavor: devel, distro: debian12}, {torch: "2.14.1", distro: ubuntu24.04}]
''' + CPU_DEFAULT), TEST_COMPAT)
    assert sorted(s.tag for s in specs) == sorted([
        "2.15.0-cuda13.2-cudnn9-runtime-debian12", "2.15.0-cuda13.2-cudnn9-runtime-ubuntu24.04",
        "2.15.0-cuda13.2-cudnn9-devel-ubuntu24.04", "2.14.1-cuda13.0-cudnn9-runtime-debian12",
        "2.13.0-cpu-debian12"])


@pytest.mark.parametrize("body", [
    '  - {torch: "2.15.0", cuda: "11.8", flavor: runtime, distro: debian12}\n' + CPU_DEFAULT,
    "images: [\n",
    "  - 42\n",
])
@pytest.mark.host
def test_render_cli_fails_cleanly_and_writes_nothing(tmp_path, body, rendered, scratch_env):
    before = {p: p.read_bytes() for p in rendered.rglob("*") if p.is_file()}
    proc = run_cli("--matrix", str(write_matrix(tmp_path, body)), "--compat", str(TEST_COMPAT), "--images-dir", str(rendered),
                   "render", env=scratch_env)
    assert_clean_failure(proc, "error: matrix.yaml", code=2)
    after = {p: p.read_bytes() for p in rendered.rglob("*") if p.is_file()}
    assert before == after


@pytest.mark.unit
def test_an_axes_group_is_judged_as_an_axes_group(tmp_path):
    msg = matrix_problems(tmp_path, '''\
  - axes: {torch: ["2.15.0"], cuda: [pypi], flavor: [runtime], distro: [debian12]}
    default: true
''')
    assert "images[0]: unknown key 'default'; allowed: access, axes, exclude, net_plugin, packages, platforms, torchvision" in msg


@pytest.mark.unit
def test_a_non_string_where_an_object_belongs_is_not_told_to_quote(tmp_path):
    msg = matrix_problems(tmp_path, CPU_DEFAULT, head="repository: x\ndefaults: 5\nimages:\n")
    assert "defaults: 5 is not of type 'object'" in msg and "quoted" not in msg


@pytest.mark.unit
def test_a_typo_in_an_axes_value_is_an_unknown_distro_with_the_choices(tmp_path):
    msg = matrix_problems(tmp_path, '''\
  - axes: {torch: ["2.15.0"], cuda: [pypi], flavor: [runtime, devel], distro: [debain12]}
    exclude: [{flavor: devel, distro: debian12}]
''' + CPU_DEFAULT)
    assert "matrix.yaml:5: images[0].axes.distro[0]: unknown distro debain12; known: debian12" in msg
    assert "matches no combination" not in msg


@pytest.mark.unit
def test_an_unquoted_version_is_told_to_quote_what_was_written(tmp_path):
    msg = matrix_problems(tmp_path, '  - {torch: 2.10, cuda: pypi, flavor: runtime, distro: debian12}\n' + CPU_DEFAULT)
    assert 'write it quoted, "2.10"' in msg


@pytest.mark.unit
def test_an_unknown_top_level_key_is_reported_at_its_line(tmp_path):
    msg = matrix_problems(tmp_path, CPU_DEFAULT + "colour: blue\n")
    assert "matrix.yaml:6: (top level): unknown key 'colour'" in msg


@pytest.mark.unit
def test_unknown_keys_of_mixed_types_are_all_named(tmp_path):
    msg = matrix_problems(tmp_path, '  - {torch: "2.15.0", cuda: pypi, flavor: runtime, distro: debian12, 5: x, true: y, z: 1}\n'
                   + CPU_DEFAULT)
    assert "unknown key" in msg and "'z'" in msg and "5" in msg


@pytest.mark.unit
def test_duplicate_keys_are_refused_with_both_lines(tmp_path):
    msg = matrix_problems(tmp_path, CPU_DEFAULT, head=MATRIX_HEAD.replace("repository: torchimages", "repository: a\nrepository: b"))
    assert "matrix.yaml:2: malformed YAML: duplicate key 'repository' (first at line 1)" in msg


@pytest.mark.unit
@pytest.mark.parametrize(("content", "needle"), [
    ("repository: x\nimages: []\n".encode("utf-16"), "UTF-16"),
    (b"repository: x\nimages:\n  - \xff\n", "matrix.yaml:3: byte 0xff is not UTF-8"),
    (b"a: &a [*a]\n", "recursive alias"),
    (b"a: " + b"[" * 2000 + b"]" * 2000 + b"\n", "nested more than"),
    (b"a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
     b"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
     "more than"),
])
def test_files_the_loader_refuses(tmp_path, content, needle):
    path = tmp_path / "matrix.yaml"
    path.write_bytes(content)
    with pytest.raises(UserError) as info:
        load_matrix(path, TEST_COMPAT)
    assert needle in str(info.value)


@pytest.mark.unit
def test_a_directory_is_not_a_matrix(tmp_path):
    with pytest.raises(UserError, match="is a directory"):
        load_matrix(tmp_path, TEST_COMPAT)


@pytest.mark.unit
def test_the_one_version_key_orders_dotted_versions_by_their_numbers():
    assert sorted(["13.10", "13.2", "12.6", "cpu"], key=version_key) == ["cpu", "12.6", "13.2", "13.10"]
    assert version_key("580.65.06") == (580, 65, 6) and version_key("2.13.0+cpu") == (2, 13, 0)
    assert version_key("570.86.10 beta") == (570, 86, 10) and version_key("cpu") == ()
