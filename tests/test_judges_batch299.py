"""Batch 299 (training runs, translated by a helper who had not read the judges): an installed package importing a
name another installed package lacks (torch's inductor and a triton of another release: `ImportError: cannot import
name 'triton_key' from 'triton.compiler.compiler' (/usr/local/lib/python3.10/dist-packages/...)`, coreweave/ml-
containers) is the image's package set (FACTS.md: a failure whose words name a library the image's packages should
hold), never the host's; the same words from a job's own module are not this rule's."""
from __future__ import annotations

import pytest

from tests.judging import explained
from verify.checks.train.imagefault import image_fault

pytestmark = pytest.mark.unit

TRITON = ("backend='inductor' raised:\nImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' "
          "(/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py)")


@pytest.mark.parametrize("path", ["/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py",
                                  "/opt/conda/lib/python3.11/site-packages/triton/compiler/compiler.py"])
def test_installed_packages_of_releases_not_made_for_each_other_are_the_image_s(path: str) -> None:
    message = f"ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' ({path})"
    why = image_fault({"type": "torch._dynamo.exc.BackendCompilerFailed", "message": message})
    assert why is not None and "triton" in why


def test_a_job_s_own_module_is_not_the_image_s() -> None:
    message = "ImportError: cannot import name 'Net' from 'model' (/home/alice/project/model.py)"
    assert image_fault({"type": "ImportError", "message": message}) is None


def test_the_entry_s_traceback_explained_is_the_image_s() -> None:
    from tests.helpers import DATA
    raw = (DATA / "real-world" / "coreweave-ml-containers-torch-extras-rank7-inductor-backendcompilerfailed-importerror-"
           "triton-key-triton-2.3.0-pin-2.2.0-image" / "raw.txt").read_text()
    r = explained(raw, "train.log")
    assert (r.status, r.code, r.owner) == ("fail", "TRAIN_FAILED", "image"), r.summary
