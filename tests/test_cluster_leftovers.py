"""Issue 36, the leftovers of two hunts (rounds 48 and 49), through the public interfaces: make isolate's answer
read by the fleet report, an explicit empty metrics folder, a Slurm node name past one DNS label, REQUIRE's node=
against a short or a fully qualified name.

The practice followed: Slurm's slurm.conf (a NodeName "may also be the fully qualified domain name", so longer than
one 63-character DNS label; a Prolog= that exits non-zero drains the node), and RFC 1035/4343 for what one host name
is (one spelling up to case and the root's trailing dot; a short name is not its FQDN: n7 may be n7 of any domain)."""
from __future__ import annotations

import json

import pytest

from scripts.fleet.fleet import read_reports
from tests.isolate_fakes import NODES, _isolate
from tests.prolog_fakes import PROLOG_ENV, _args, _gpu, _report, _verify_writes, history_events, install_fake
from verify.prolog import cli, slurm


@pytest.mark.host
def test_make_isolate_s_answer_is_no_invalid_report_of_the_fleet(tmp_path):
    """`make fleet-report DIR=<isolate's reports>` listed isolate.json (make isolate's own answer) as an invalid
    verify report: a fleet that never passes on a file of ours. It is skipped as fleet.json is; a file of that name
    that is no answer of isolate's (a verify report, a forged kind) is still read and judged."""
    status, lines = _isolate(tmp_path, NODES[:3], {})
    assert status == 0 and (tmp_path / "isolate.json").is_file(), lines
    _, invalid = read_reports(tmp_path)
    assert "isolate.json" not in [name for name, _ in invalid], invalid
    forged = tmp_path / "deep" / "isolate.json"
    forged.parent.mkdir()
    forged.write_text(json.dumps({"kind": "torchimages-isolate", "checks": [], "schema_version": 2}))
    _, invalid = read_reports(tmp_path)
    assert "deep/isolate.json" in [name for name, _ in invalid], invalid


# ---- an explicit empty --metrics-dir

@pytest.mark.unit
def test_an_explicit_empty_metrics_folder_is_said_in_the_trace(tmp_path, monkeypatch, capsys):
    """`--metrics-dir ''` (a slurm.conf Prolog= line whose $METRICS expanded to nothing) wrote no metrics and said
    nothing: node_exporter showed no prolog at all, read as a quiet fleet. A setting of ours (Slurm's prolog
    semantics: said, never the node's fault): one line on stderr (and syslog under Prolog=), the gate unchanged."""
    fake = install_fake(monkeypatch)
    said: list[str] = []
    monkeypatch.setattr(cli, "_syslog", said.append)
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    status = cli.main([*_args(tmp_path), "--metrics-dir", ""], PROLOG_ENV)
    err = capsys.readouterr().err
    assert status == 0 and fake.nodes["n1"][0] == "idle"
    assert "--metrics-dir is empty: no metrics are written" in err and any("--metrics-dir is empty" in s for s in said)
    status = cli.main(_args(tmp_path), {**PROLOG_ENV, "TORCHIMAGES_METRICS_DIR": ""})    # unset, as a shell writes it
    assert status == 0 and "--metrics-dir" not in capsys.readouterr().err


# ---- a Slurm node name past one DNS label

FQDN = "gpu-node-017.rack12.hall-b.datacenter-west.research-computing.example-university.edu"    # 85 characters


@pytest.mark.unit
@pytest.mark.parametrize("name", [FQDN, "n" * 64, "n" * 200])
def test_a_node_name_past_one_dns_label_is_gated_as_any_other(tmp_path, monkeypatch, capsys, name):
    """slurm.conf's NodeName may be the fully qualified name: the prolog refused any over 63 characters, so every
    run on such a cluster was CONFIG_ERROR (exit 0, the node ungated forever). Now gated: a lost GPU drains that node
    (its own history, its own metrics file), a pass leaves it in service."""
    fake = install_fake(monkeypatch)
    fake.nodes[name] = ("idle", "none")
    env = {**PROLOG_ENV, "SLURMD_NODENAME": name}
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    status = cli.main([*_args(tmp_path), "--metrics-dir", str(tmp_path / "metrics")], env)
    err = capsys.readouterr().err
    assert status == 1 and fake.nodes[name][0] == "drained" and "CONFIG_ERROR" not in err, err
    assert slurm.parse_reason(fake.nodes[name][1], name) is not None
    assert history_events(tmp_path, name)[-1] == ("drain", "GPU_LOST")
    assert (tmp_path / "metrics" / f"torchimages_{name}.prom").is_file()


@pytest.mark.unit
@pytest.mark.parametrize("name", ["n" * 201, "n1\n", "n[1-2]"])
def test_a_node_name_no_file_can_carry_or_many_nodes_is_never_a_drain(tmp_path, monkeypatch, capsys, name):
    """Slurm's prolog semantics: a name the prolog cannot act on (past NODE_MAX, a newline `$` let through, a
    hostlist) is CONFIG_ERROR, exit 0, nothing drained, and the line says which (its length, when that is why)."""
    fake = install_fake(monkeypatch)
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    status = cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURMD_NODENAME": name})
    err = capsys.readouterr().err
    assert status == 0 and "CONFIG_ERROR" in err and not any("drain" in " ".join(c) for c in fake.calls), err
    assert ("201 characters" in err) == (len(name) == 201)
    assert cli.main(["--revalidate", "--node", name, *_args(tmp_path)], {}) == 2      # make undrain: one line
    assert "Traceback" not in capsys.readouterr().err


# ---- REQUIRE's node= against a short or a fully qualified name

def _summary(*nodes: str):
    from types import SimpleNamespace

    from scripts.publish.report import Attestation, Summary
    signer = SimpleNamespace(source="/keys/release.pub", keyid="abcdef0123")
    atts = [Attestation("sha256:" + "1" * 64, signer, "2026", {}, "pass", None,  # type: ignore[arg-type]
                        {"node": n, "gpus": [], "gpu_count": 0}) for n in nodes]
    return Summary("r@sha256:" + "ab" * 32, True, attestations=atts)


@pytest.mark.unit
@pytest.mark.parametrize(("wanted", "attested"), [("n7", "n7.cluster.example"), ("n7.cluster.example", "n7"),
                                                  ("N7", "n7.Cluster.Example.")])
def test_require_node_never_takes_a_short_name_for_its_fqdn_and_says_how_it_is_spelt(wanted, attested):
    """The documented rule (docs/cluster-safety.md, 'One host, however it is spelt'): node= is one host name up to
    case and the root's trailing dot (RFC 4343), never a short name for a fully qualified one (RFC 1035: n7 may be
    n7 of any domain, and another cluster's pass would decide). The gate's refusal said only 'none matches'; it now
    names how the attestations spell the host, so the operator can write it so."""
    from scripts.commands.publish import _unmet
    from scripts.fleet.gate import parse_require
    missing = _unmet(_summary(attested), parse_require(f"verdict=pass node={wanted}"))
    assert len(missing) == 1 and "no trusted attestation" in missing[0], missing
    assert f"the attestations name {attested}" in missing[0] and "short name is not" in missing[0], missing
    assert _unmet(_summary(attested), parse_require(f"verdict=pass node={attested.upper()}")) == []
    assert "the attestations name" not in _unmet(_summary("n8.cluster.example"), parse_require("node=n7"))[0]


@pytest.mark.unit
def test_an_explicit_empty_metrics_folder_is_no_metrics_in_the_trace_of_a_bad_setting_either(tmp_path, monkeypatch):
    """The trace of a bad setting (CONFIG_ERROR under Prolog=) read `--metrics-dir ''` as unset and wrote the metrics
    into TORCHIMAGES_METRICS_DIR: the run's own reading is 'no metrics', and the trace keeps it."""
    install_fake(monkeypatch)
    env = {**PROLOG_ENV, "TORCHIMAGES_METRICS_DIR": str(tmp_path / "metrics")}
    assert cli.main([*_args(tmp_path), "--metrics-dir", "", "--budget", "never"], env) == 0
    assert not (tmp_path / "metrics").exists() and history_events(tmp_path) == [("not-assessed", "CONFIG_ERROR")]


@pytest.mark.host
def test_an_earlier_fleet_report_of_a_job_folder_is_no_invalid_report_of_its_parent(tmp_path):
    """`make fleet-report DIR=jobs/1234` wrote jobs/1234/fleet.json; `make fleet-report DIR=jobs` then listed it as
    an invalid verify report (only DIR/fleet.json was known as ours): a fleet that never passed on a file of ours.
    Skipped at any depth, by its shape as before."""
    from scripts.fleet.fleet import fleet, write_fleet
    job = tmp_path / "jobs" / "1234"
    job.mkdir(parents=True)
    _isolate(job, NODES[:2], {})                # some files to report on (the pairs' reports, invalid: made up)
    write_fleet(fleet(job))
    assert (job / "fleet.json").is_file()
    _, invalid = read_reports(tmp_path / "jobs")
    assert "1234/fleet.json" not in [name for name, _ in invalid], invalid
