"""scripts/builder/layerpart.py: a cross build's install step set apart for the target's COPY (issue 34). What the
step changed goes, with its times and modes; what an earlier step installed stays where it is."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from scripts.builder import layerpart

pytestmark = pytest.mark.unit

EPOCH = 1767225600


def _tree(root: Path) -> dict[str, tuple[str, int, int]]:
    out = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
        out[str(path.relative_to(root))] = (kind, info.st_mode & 0o7777, int(info.st_mtime))
    return out


def test_a_step_s_files_move_its_folders_are_made_and_an_earlier_step_s_files_stay(tmp_path):
    opt = tmp_path / "opt"
    site = opt / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "earlier.py").write_text("x = 1\n")            # an earlier part's file
    time.sleep(0.01)
    stamp = tmp_path / "stamp"
    stamp.touch()
    time.sleep(0.01)
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("import os\n")
    (site / "torch" / "lib.so").write_bytes(b"\x7fELF" + b"\0" * 100)
    os.chmod(site / "torch" / "lib.so", 0o755)
    (site / "link").symlink_to("torch")
    for path in [site / "torch" / "__init__.py", site / "torch" / "lib.so", site / "torch", site, opt / "venv" / "lib"]:
        os.utime(path, (EPOCH, EPOCH))
    os.chmod(opt / "venv", 0o750)
    os.utime(site / "link", (EPOCH, EPOCH), follow_symlinks=False)

    out = tmp_path / "parts" / "torch"
    moved = layerpart.set_apart(layerpart.changed(opt, stamp.stat().st_mtime_ns), out, copy=False)

    assert moved == 3                                       # two files and the link; folders are made, never moved
    part = out / str(opt).lstrip("/")
    assert _tree(part) == {
        "venv": ("dir", 0o750, int((opt / "venv").stat().st_mtime)),   # unchanged folders above: as they are
        "venv/lib": ("dir", 0o755, EPOCH),
        "venv/lib/site-packages": ("dir", site.stat().st_mode & 0o7777, EPOCH),
        "venv/lib/site-packages/link": ("link", 0o777, EPOCH),
        "venv/lib/site-packages/torch": ("dir", 0o755, EPOCH),
        "venv/lib/site-packages/torch/__init__.py": ("file", 0o644, EPOCH),
        "venv/lib/site-packages/torch/lib.so": ("file", 0o755, EPOCH),
    }
    assert (part / "venv/lib/site-packages/torch/lib.so").read_bytes().startswith(b"\x7fELF")
    assert os.readlink(part / "venv/lib/site-packages/link") == "torch"
    assert int((part / "venv/lib/site-packages/torch").stat().st_mtime) == EPOCH     # filling it kept its time
    assert (site / "earlier.py").exists() and not (part / "venv/lib/site-packages/earlier.py").exists()
    assert not (site / "torch" / "lib.so").exists()         # moved, not copied


def test_copy_leaves_the_venv_in_place_for_the_later_steps(tmp_path):
    opt = tmp_path / "opt"
    stamp = tmp_path / "stamp"
    stamp.touch()
    time.sleep(0.01)
    (opt / "venv" / "bin").mkdir(parents=True)
    (opt / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (opt / "venv" / "bin" / "python").symlink_to("/usr/bin/python3.11")
    out = tmp_path / "parts" / "venv"
    assert layerpart.main(["--stamp", str(stamp), "--root", str(opt), "--out", str(out), "--copy"]) == 0
    part = out / str(opt).lstrip("/")
    assert (part / "venv" / "pyvenv.cfg").read_text() == "home = /usr/bin\n"
    assert os.readlink(part / "venv" / "bin" / "python") == "/usr/bin/python3.11"
    assert (opt / "venv" / "pyvenv.cfg").exists() and (opt / "venv" / "bin" / "python").is_symlink()


def test_an_unreadable_root_is_one_line_and_exit_1(tmp_path, capsys):
    assert layerpart.main(["--stamp", str(tmp_path / "none"), "--root", str(tmp_path), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: cannot set apart") and len(err.strip().splitlines()) == 1
