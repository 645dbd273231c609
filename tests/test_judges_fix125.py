"""Issue 35, batch 125 (AWS EFA: fi_info, the EKS EFA device plugin, a health check's EFA loopback), the first
entries using the fabric facts' `ofi_providers`, `ofi_query` and `instance_type`. The classes fixed:
- a container given no RDMA device (`uverbs` []) on a node whose instance type has a published adapter count, the
  host's sysfs not read: the deployment's, fail FABRIC_NOT_PASSED (job), never a drain and never FABRIC_NONE (host);
- an NCCL error that names its class cut short (`NCCL error: remote process exited`), quoted in parentheses: a bare
  class of error, the job's, never a drain;
- an expected skip written without its code and owner reads as nothing to judge (FACTS_INCOMPLETE), the one code
  docs/codes.md gives it; any other skip is held as written.
Real lines are quoted with their URLs (a slug names a corpus entry)."""
from __future__ import annotations

import json

import pytest

from tests.helpers import ROOT
from tests.judging import NOTHING_TO_JUDGE, explained, fabric, replayed, verdict, wanted
from verify.checks.nccl.barefail import bare

pytestmark = pytest.mark.unit

CORPUS = ROOT / "tests" / "data" / "real-world"
P6_B200 = "p6-b200-eks-efa-device-plugin-allowlist-ends-at-p5-daemonset-desired-0-pod-without-uverbs-fi-info-61-nccl-socket-job"
HYPERPOD = ("hyperpod-eks-chart-efa-device-plugin-scheduled-on-instances-without-efa-no-valid-efa-devices-found-crashloop-"
            "not-a-node-fault")
NON_EFA = "non-efa-instance-fi-info-p-efa-61-by-design-fi-info-l-lists-efa-after-efa-ini-fix-libfabric-pr-10794"
P6_B300 = "p6-b300-gpu-cluster-healthcheck-efa-loopback-passes-kernel-names-to-fi-pingpong-d-fi-getinfo-61-false-reset-tool-bug"
T4_X2 = "t4-x2-job-sets-nccl-p2p-disable-1-p2p-level-loc-nccl-2.8.3-no-result-in-excerpt"

# https://github.com/aws-samples/aws-do-eks/pull/56 (P6_B200): the EFA device plugin never scheduled on p6-b200
P6_B200_LINES = """\
- no device plugin → /dev/infiniband/uverbs* + /dev/gdrdrv never advertised/injected into pods
- inside the container: ibv_open_device failed! errno: 2 (ENOENT) → fi_info -p efa = -61 (No data available)
- any cross-node collective (PP / EP / TP spanning nodes) then dies (NCCL error: remote process exited)
"""




# ------------------------------------------------------------- a container given none on a type that has them
def test_pods_given_no_efa_device_on_a_p6_b200_are_the_deployments_never_a_drain():
    """P6_B200: `uverbs` [] in the pods, `fi_info -p efa` -61, instance type p6-b200.48xlarge (8 EFA)."""
    assert replayed(P6_B200) == {"fabric": ("fail", "FABRIC_NOT_PASSED", "job")}
    r = fabric(uverbs=[], instance_type="p6-b200.48xlarge", ofi_providers=[], ofi_query="efa",
               libraries={"libfabric.so.1": "loaded"})
    assert verdict(r) == ("fail", "FABRIC_NOT_PASSED", "job")
    assert "p6-b200.48xlarge" in r.summary and "8 efa" in r.summary and "not read" in r.summary
    assert "vpc.amazonaws.com/efa" in (r.remedy or "")


@pytest.mark.parametrize("name", ["ml.p5.48xlarge", "p4d.24xlarge", "Standard_ND96isr_H100_v5"])
def test_any_type_whose_count_is_published_with_a_container_given_none_fails_the_job(name):
    r = fabric(uverbs=[], instance_type=name)
    assert verdict(r) == ("fail", "FABRIC_NOT_PASSED", "job")
    assert ("rdma/ib" in (r.remedy or "")) == name.startswith("Standard_ND")


@pytest.mark.parametrize("facts", [
    {"uverbs": [], "instance_type": "g4dn.8xlarge"},                       # a type whose count is not known
    {"uverbs": [], "instance_type": None},                                 # no type: nothing says the node has any
    {"uverbs": [], "adapters": [], "instance_type": "p5.48xlarge"},         # sysfs read and empty: the host's side
])
def test_without_a_known_type_or_with_the_hosts_side_read_it_is_not_the_deployments(facts):
    assert verdict(fabric(**facts))[1] != "FABRIC_NOT_PASSED"


def test_the_type_alone_with_the_containers_devices_not_read_judges_nothing():
    assert verdict(fabric(instance_type="p6-b200.48xlarge")) == NOTHING_TO_JUDGE


# ------------------------------------------------------------------- an NCCL error class cut short
def test_remote_process_exited_cut_short_in_parentheses_is_a_bare_class_of_error():
    assert bare("all_reduce: NCCL error: remote process exited)")
    assert bare("NCCL error: remote process exited or there was a network error")
    assert not bare("NCCL error: remote process exited: connect to 10.0.0.2<43210> failed: Connection refused")


def test_the_p6_b200_prose_explained_is_the_jobs_never_a_drain():
    """Explained, its one NCCL line is the failure: no cause shown, the job's (its fabric facts are the prose's)."""
    r = explained(P6_B200_LINES)
    assert verdict(r) == ("fail", "NCCL_FAILED", "job")


# -------------------------------------------------------------- a skip translated without its code
def test_a_code_less_skip_is_read_as_nothing_to_judge_and_no_other_skip_is():
    assert wanted({"fabric": {"status": "skip", "code": None, "owner": None}}) == {"fabric": NOTHING_TO_JUDGE}
    assert wanted({"fabric": {"status": "skip", "code": "FABRIC_NONE", "owner": "host"}}) == {
        "fabric": ("skip", "FABRIC_NONE", "host")}
    assert wanted({"nccl": {"status": "pass", "code": None, "owner": None}}) == {"nccl": ("pass", None, None)}


@pytest.mark.parametrize("slug", [HYPERPOD, NON_EFA, P6_B300])
def test_nodes_without_efa_and_a_checkers_own_bug_have_nothing_to_judge(slug):
    """HYPERPOD (`No valid EFA devices found` from a plugin scheduled where no EFA is), NON_EFA (`fi_info -p efa will
    return -61` on an instance without EFA), P6_B300 (`fi_getinfo: ret=-61` for a domain named by its kernel name):
    none of them shows a fault of the node; skip, no owner, never a drain."""
    expected = json.loads((CORPUS / slug / "expected.json").read_text())["verdicts"]
    assert expected == {"fabric": {"status": "skip", "code": None, "owner": None}}
    assert replayed(slug) == {"fabric": NOTHING_TO_JUDGE}
    r = explained((CORPUS / slug / "raw.txt").read_text())
    assert r.status == "skip" and r.owner is None


def test_a_code_less_skip_still_meets_no_pass():
    """T4_X2 (nccl skip, code null) passes on NCCL's log alone: still a strict expected failure."""
    assert wanted(json.loads((CORPUS / T4_X2 / "expected.json").read_text())["verdicts"]) == {"nccl": NOTHING_TO_JUDGE}
    assert replayed(T4_X2)["nccl"][0] == "pass"


def test_fi_info_p_efa_answering_61_with_nothing_else_read_is_nothing_to_judge():
    """NON_EFA's class as fi_info prints it (libfabric util/info.c's answer when no provider matched): on an instance
    or in a container without EFA devices the -61 is by design (ofiwg/libfabric#10794): never the image's, never a
    drain, never a pass."""
    r = explained("$ fi_info -p efa\nfi_getinfo: -61 (No data available)\n")
    assert r.name == "fabric" and verdict(r) == NOTHING_TO_JUDGE


def test_fi_getinfo_61_for_a_domain_named_by_its_kernel_name_is_no_provider_listing():
    """P6_B300: `fi_pingpong -d rdmap86s0` asked for a domain no provider offers (EFA's is rdmap86s0-rdm); its
    `fi_getinfo: ret=-61` says nothing of the node's providers."""
    r = explained("fi_pingpong -d rdmap86s0\nfi_getinfo: ret=-61 (No data available)\n")
    assert r.status == "skip" and r.owner is None
