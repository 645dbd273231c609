# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's seventy-second to seventy-fourth corpus batches, fixed by class:
- torch's DataLoader bus error as a post prints it, reflowed at word boundaries (`... killed by signal: Bus` /
  `error. It is possible ...`), or cut by a terminal so that the blank between `Bus` and `error` is lost: `verify
  explain` reads it (train, SHM_TOO_SMALL, job) as it reads the line whole;
- the kernel's side of a verbs registration failing (a trace of `ib_uverbs_reg_mr` -> `ib_umem_get` ->
  `pin_user_pages_fast ret=-12 (ENOMEM)`): the pinning ran out, judged as NCCL's `ibv_reg_mr` ENOMEM is
  (FABRIC_MEMLOCK_LOW); a `pin_user_pages` failure without the verbs path (another driver's) is not read;
- an RDMA library refusing the memlock limit at start-up (Intel MPI's `DAPL startup: RLIMIT_MEMLOCK too small`): the
  limit is too low for RDMA by the library's own test, the same fault as a low limit read (FABRIC_MEMLOCK_LOW);
- a shell transcript's `ulimit -l` (a prompt, the figure under it): what a launcher's step prints (`srun ... bash -c
  'ulimit -l'`, or a script the transcript shows to be `ulimit -l`) is the job's limit, over the login shell's."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks.fabric.check import judge as judge_fabric
from verify.explain import loaderbus, shellimit, ulimit
from verify.options import Options
from verify.shared.rdma import pinning_failed

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ torch's DataLoader bus error, wrapped
_REFLOWED = ("Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
             "RuntimeError: DataLoader worker (pid 1234) is killed by signal:\nBus error. It is possible that "
             "dataloader's workers are out of\nshared memory. Please try to raise your shared memory limit.\n")
# a terminal's cut joined back where the blank fell at the row's end (wrap.py cannot tell it from a cut word)
_JOINED = "RuntimeError: DataLoader worker (pid 88) is killed by signal: Buserror. It is possible that dataloader's\n"


@pytest.mark.parametrize("text", [_REFLOWED, _JOINED], ids=["reflowed", "joined"])
def test_a_dataloader_bus_error_wrapped_by_a_post_or_a_terminal_is_read(text):
    assert loaderbus.detect(text)
    r = explained(text)
    assert (r.name, *verdict(r)) == ("train", "fail", "SHM_TOO_SMALL", "job"), r.details


def test_torch_s_words_quoted_in_prose_and_wrapped_are_still_prose():
    text = "If you see `DataLoader worker (pid 1) is killed by signal:\nBus error`, raise --shm-size.\n"
    assert explained(text).code != "SHM_TOO_SMALL"


# ------------------------------------------------------------ the kernel's verbs registration out of pinning
_FTRACE = ("ib_uverbs_reg_mr -> mlx5_ib_reg_user_mr -> ib_umem_get -> pin_user_pages_fast\n"
           "  -> __gup_longterm_locked -> migrate_longterm_unpinnable_folios\n"
           "  -> pin_user_pages_fast ret=-12 (ENOMEM)\n")


def test_a_kernel_trace_of_a_verbs_registration_out_of_pinned_memory_is_memlock_low():
    assert ulimit.parse(_FTRACE)["memlock_error"].endswith("pin_user_pages_fast ret=-12 (ENOMEM)")
    r = explained(_FTRACE, "trace.txt")
    assert (r.name, *verdict(r)) == ("fabric", "fail", "FABRIC_MEMLOCK_LOW", "host"), r.details


def test_another_driver_s_pinning_failure_is_not_rdma_s():
    text = "vfio_pin_pages_remote -> pin_user_pages_remote\n  -> pin_user_pages_remote ret=-12 (ENOMEM)\n"
    assert not ulimit.detect(text)
    assert explained(text, "trace.txt").code != "FABRIC_MEMLOCK_LOW"


# ------------------------------------------------------------------- DAPL refusing the limit at start-up
_DAPL = "[0] DAPL startup: RLIMIT_MEMLOCK too small\n[1] DAPL startup: RLIMIT_MEMLOCK too small\n"


def test_an_rdma_library_refusing_the_memlock_limit_at_start_up_is_memlock_low():
    assert pinning_failed(_DAPL) == "[0] DAPL startup: RLIMIT_MEMLOCK too small"
    r = explained(_DAPL)
    assert (r.name, *verdict(r)) == ("fabric", "fail", "FABRIC_MEMLOCK_LOW", "host"), r.details


def test_the_dapl_refusal_recorded_in_the_facts_fails_whoever_reads_them():
    facts = {"adapters": None, "uverbs": None, "verbs_devices": None, "memlock": None,
             "memlock_error": "[0] DAPL startup: RLIMIT_MEMLOCK too small"}
    assert verdict(judge_fabric(facts, Options())) == ("fail", "FABRIC_MEMLOCK_LOW", "host")


def test_an_unlimited_limit_beside_the_refusal_is_not_called_low():
    facts = {"adapters": None, "uverbs": None, "verbs_devices": None, "memlock": "unlimited",
             "memlock_error": "[0] DAPL startup: RLIMIT_MEMLOCK too small"}
    assert judge_fabric(facts, Options()).code != "FABRIC_MEMLOCK_LOW"


# ------------------------------------------------------------------------ a transcript's `ulimit -l`
_LOGIN = "[me@login ~]$ ulimit -l\nunlimited\n"


def test_a_job_step_s_limit_is_read_over_the_login_shell_s():
    text = _LOGIN + "[me@login ~]$ srun -N2 -l bash -c 'ulimit -l'\n0: 64\n1: 64\n"
    assert shellimit.memlock(text) == 65536
    r = explained(text, "session.txt")
    assert (r.name, *verdict(r)) == ("fabric", "fail", "FABRIC_MEMLOCK_LOW", "host"), r.details


def test_a_script_shown_to_print_the_limit_counts_as_the_command():
    text = ("$ mpirun -np 2 ./limits.sh\n8192\n8192\n\n$ cat limits.sh\n#!/bin/sh\nulimit -l\n" + _LOGIN)
    assert shellimit.memlock(text) == 8192 * 1024


def test_the_login_shell_s_unlimited_alone_is_no_fault_and_a_setting_prints_nothing():
    assert shellimit.memlock(_LOGIN) == "unlimited"
    assert explained(_LOGIN, "session.txt").status != "fail"
    assert shellimit.memlock("$ ulimit -l unlimited\n$ srun hostname\n12\n") is None


def test_a_script_that_does_more_than_print_the_limit_is_not_read():
    text = "$ srun ./job.sh\n42\n$ cat job.sh\nulimit -l\n./train\n"
    assert shellimit.memlock(text) is None
