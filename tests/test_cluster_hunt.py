"""Issue 36, a fourth hunt (round 50) through the public interfaces: what rounds 48 and 49 left. Each test names the
practice it holds the cluster tooling to (Slurm's prolog semantics, NVSentinel's breaker and return-to-service
rules, NVIDIA's Xid catalog, DNS's one host however it is spelt)."""
from __future__ import annotations

import pytest

from tests.isolate_fakes import _isolate


@pytest.mark.host
@pytest.mark.parametrize("hosts", [["n1", "N1", "n2"], ["n1", "n1.", "n2", "n3"]])
def test_make_isolate_never_pairs_a_host_with_itself_however_it_is_spelt(tmp_path, hosts):
    """Class 7 (DNS names are case-insensitive, RFC 4343; the trailing dot is the root's): n1 and N1 are one host.
    The runner took them as two nodes, paired the host with itself (an all-reduce over its own links, which passes
    a NIC fault), and that pass made it the known-good reference that cleared its partners: exit 0, 'no node at
    fault'. Round 50 refused the run (one line, exit 2); since round 52 the other spelling is said in one line and
    the host judged once under its first (tests/test_cluster_hunt52.py), never paired with itself."""
    status, lines = _isolate(tmp_path, hosts, {})
    assert status == 0 and any("named again" in ln and repr(hosts[1]) in ln for ln in lines), lines
    assert not any(f"{hosts[0]}+{hosts[1]}" in ln or f"{hosts[1]}+{hosts[0]}" in ln for ln in lines), lines


def _fleet_report(host: str, **metrics: object) -> dict:
    """verify's hand-made report (tests/verify_handmade.py) as a live node's of now, its gpu check's metrics set."""
    import time

    from tests.verify_handmade import make_report
    doc = make_report()
    doc.update(replay=None, created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    doc["environment"]["hostname"] = host
    gpu = next(c for c in doc["checks"] if c["name"] == "gpu")
    gpu["metrics"].update({k: {"value": v, "unit": "count"} for k, v in metrics.items()})
    return doc


@pytest.mark.unit
@pytest.mark.parametrize(("metric", "value"), [("nvml_devices", 8.5), ("nvml_devices", 1e9), ("torch_devices", 4097)])
def test_the_fleet_refuses_a_gpu_count_no_node_gave(tmp_path, metric, value):
    """Class 6 (facts that cannot be true are refused): a gpu pass on 8.5 or a billion NVML devices was a passing
    node of the fleet, while the prolog refuses the same report (REPORT_INVALID: verify/prolog/verdict.py). Now the
    fleet lists it as invalid, and does not pass."""
    import json

    from scripts.fleet.fleet import fleet
    for i in range(3):
        (tmp_path / f"n{i}.json").write_text(json.dumps(_fleet_report(f"n{i}")))
    (tmp_path / "bad.json").write_text(json.dumps(_fleet_report("bad", **{metric: value})))
    report = fleet(tmp_path)
    assert not report.ok and [n for n, _ in report.invalid] == ["bad.json"], report.invalid
    assert "no count of devices" in report.invalid[0][1] and "bad" not in [n.node for n in report.nodes]


@pytest.mark.unit
@pytest.mark.parametrize("garbled", ["1795974075", "yesterday", "", "2026-13-45T99:00:00Z"])
def test_an_attestation_whose_signed_time_is_garbled_neither_passes_nor_hides_a_newer_failure(garbled):
    """Class 9 (the newest evidence wins; evidence without a time is no evidence of when): a failing attestation
    signed with a time no clock writes (an epoch number, a word) sorted as the oldest of all, so an older pass
    decided `verified: yes`. Now it is placed by its report's `created` and, having no signed time, not believed:
    the newest, it decides NO; alone, a pass with such a time is no pass either."""
    from datetime import datetime, timezone

    from scripts.publish.report import Attestation, Summary, _decide, order, refuse_future
    from scripts.publish.signing import Trusted

    class Key:
        keyid = "ab" * 32
    now = datetime(2026, 11, 25, 12, tzinfo=timezone.utc)

    def att(status: str, signed: str, created: str) -> Attestation:
        return Attestation("sha256:" + "1" * 64, Trusted(Key(), "/keys/release.pub"), signed,
                           {"checks": [], "created": created}, status, None, {"node": "n1"})

    def judged(*atts: Attestation) -> Summary:
        s = Summary("r@sha256:" + "2" * 64, attestations=list(atts))
        order(s)
        refuse_future(s, 300.0, now)
        _decide(s, True)
        return s
    older_pass = att("pass", "2026-11-25T09:00:00Z", "2026-11-25T08:59:00Z")
    newer_fail = att("fail", garbled, "2026-11-25T11:00:00Z")
    s = judged(older_pass, newer_fail)
    assert not s.verified and s.chosen is newer_fail, s.reason
    assert not judged(att("pass", garbled, "2026-11-25T11:00:00Z")).verified
    assert judged(older_pass, att("fail", garbled, "2026-11-24T11:00:00Z")).verified     # older by its report


@pytest.mark.host
def test_make_isolate_never_clears_a_pair_whose_step_failed_beside_a_passing_report(tmp_path, monkeypatch):
    """Class 7 (a node is cleared only by evidence): verify exits 0 on a pass or a warning on every node, so a pair's
    step that exited 1 failed on one of its nodes (n3's ranks crashing after the all-reduce), yet its passing report
    alone cleared the pair: 'no node at fault', exit 0. Now that pair failed, and n3 is named (or the answer is
    undetermined), never clean."""
    import tests.isolate_fakes as runner
    monkeypatch.setattr(runner, "SRUN", runner.SRUN.replace(
        "sys.exit(1 if fail else 0)", "sys.exit(1 if fail or any(n in scen.get('exitbad', []) for n in nodes) else 0)"))
    status, lines = _isolate(tmp_path, ["n1", "n2", "n3", "n4"], {"exitbad": ["n3"]})
    assert status != 0 and "no node at fault" not in lines[-1], lines
    assert "the step exited 1 though its report passes" in (tmp_path / "isolate.json").read_text()


@pytest.mark.unit
def test_the_fleet_s_drain_history_folder_is_read_bounded_and_an_unlistable_one_is_said(tmp_path, monkeypatch):
    """Class 8 (files the tooling reads are hostile: bounded, and every unreadable input listed): STATE_DIR/history
    was globbed whole (a folder of millions of names read each file), and a folder it could not list was an empty
    history (Path.glob swallows the error: a node with only a history vanished). Both are one line now (exit 2)."""
    import errno
    import os

    from scripts.errors import UserError
    from scripts.fleet import history
    folder = tmp_path / "history"
    folder.mkdir()
    for i in range(5):
        (folder / f"n{i}.jsonl").write_text("")
    assert sorted(history.read_state(tmp_path, [])) == [f"n{i}" for i in range(5)]
    monkeypatch.setattr(history, "MAX_NAMES", 3)
    with pytest.raises(UserError, match="more than 3 names"):
        history.read_state(tmp_path, [])
    monkeypatch.undo()

    def refused(path):
        raise PermissionError(errno.EACCES, "Permission denied")
    monkeypatch.setattr(os, "scandir", refused)        # root reads any folder: the refusal stood in for
    with pytest.raises(UserError, match=r"cannot be listed \(Permission denied"):
        history.read_state(tmp_path, ["n1"])


@pytest.mark.unit
def test_the_trace_of_a_bad_setting_is_the_node_s_slurmd_runs_it_on(tmp_path, monkeypatch):
    """Class 1 (Slurm's prolog semantics: slurmd names the node, SLURMD_NODENAME): `--node n2` copied into
    slurm.conf's Prolog= line is CONFIG_ERROR on n1, exit 0; its trace (the history's not-assessed line, the metrics
    file) went to n2's, so n2 showed NOT ASSESSED from every other node and n1 showed nothing. Now n1's."""
    from tests.prolog_fakes import PROLOG_ENV, _args, history_events, install_fake
    from verify.prolog import cli
    install_fake(monkeypatch)
    status = cli.main([*_args(tmp_path), "--node", "n2", "--metrics-dir", str(tmp_path / "metrics")], PROLOG_ENV)
    assert status == 0
    assert history_events(tmp_path, "n1") == [("not-assessed", "CONFIG_ERROR")] and history_events(tmp_path, "n2") == []
    assert [p.name for p in (tmp_path / "metrics").iterdir()] == ["torchimages_n1.prom"]


@pytest.mark.unit
@pytest.mark.parametrize("state", ["DRAINED", "IDLE+DRAIN", "Draining"])
def test_the_breaker_counts_our_drain_however_slurm_cases_its_state(tmp_path, monkeypatch, state):
    """Class 2 (NVSentinel's breaker: never past the share): a node drained by us that sinfo showed as DRAINED (as
    scontrol writes states, IDLE+DRAIN) was not counted, and with a breaker of 25 % a second node of four drained."""
    import json

    from tests.prolog_fakes import PROLOG_ENV, _args, _gpu, _report, _verify_writes, install_fake
    from verify.prolog import cli, slurm
    fake = install_fake(monkeypatch)
    fake.nodes["n2"] = (state, slurm.reason("n2", "GPU_LOST", "gpu 3 lost", 1795635600))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    assert cli.main([*_args(tmp_path), "--breaker", "0.25"], PROLOG_ENV) == 0
    assert fake.nodes["n1"][0] == "idle"


@pytest.mark.unit
def test_under_prolog_a_drain_scontrol_refused_is_not_a_drain_slurm_does_unbreakered(tmp_path, monkeypatch, capsys):
    """Class 2 (Slurm's prolog semantics; NVSentinel's breaker): a drain scontrol refused (a slurmctld too busy to
    answer every prolog of a bad roll-out) exited 1 under Prolog=, and Slurm drained the node itself ("Prolog
    error"): a drain no breaker counts and make undrain cannot return. Now not drained (exit 0), said with Slurm's
    answer, `drain-refused` in the history; a first step still fails its job (exit 1)."""
    import json

    from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, _args, _gpu, _report, _verify_writes, history_events, install_fake
    from verify.prolog import cli, slurm
    fake = install_fake(monkeypatch)

    def busy(argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
        if argv[1:2] == ["update"] and "state=drain" in argv:
            return 1, "slurm_update error: Socket timed out on send/recv operation"
        return fake.run(argv, dry_run, quiet)
    monkeypatch.setattr(slurm, "run", busy)
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 0
    assert "the drain failed" in capsys.readouterr().err and fake.nodes["n1"][0] == "idle"
    assert history_events(tmp_path)[-1] == ("drain-refused", "GPU_LOST")
    assert cli.main(_args(tmp_path), STEP_ENV) == 1                       # a first step: the job fails
