"""The release stage's commands: bake, ci-matrix, push, keygen, attest, report and gate."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .common import (
    OCI_INDEX_TYPE,
    creds,
    digest_ref,
    one_platform,
    out,
    selected,
    shown,
)

if TYPE_CHECKING:
    pass

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..settings import Settings


def cmd_ci_matrix(settings: Settings, args: argparse.Namespace) -> int:
    from ..publish.ci_matrix import ci_matrix_json
    from ..render import load_rendered
    out(ci_matrix_json(load_rendered(settings.images), args.per))
    return 0


def cmd_bake(settings: Settings, args: argparse.Namespace) -> int:
    from ..fsutil import atomic_write
    from ..publish.bake import bake_json
    from ..render import load_rendered
    specs = load_rendered(settings.images)
    path = Path(args.output).absolute() if args.output else settings.bake_file
    atomic_write(path, bake_json(specs, settings.registry))
    shown = os.path.relpath(path, settings.root) if path.is_relative_to(settings.root) else str(path)
    out(f"wrote {shown}: {len(specs)} targets; build them all with `mkdir -p build/wheels && docker buildx bake "
        f"-f {shown}` (a group: `docker buildx bake -f {shown} runtime`)")
    return 0


def cmd_push(settings: Settings, args: argparse.Namespace) -> int:
    from ..builder.engine import connect
    from ..publish.push import push_images
    if not settings.registry:
        raise UserError("no registry given: make push REGISTRY=host:port (e.g. REGISTRY=127.0.0.1:5000)")
    specs = selected(settings)
    platform = one_platform(settings, "push")
    client = None if settings.index_only else connect(settings.child_env)
    rows = push_images(client, specs, settings.registry, settings.push_dir, creds(settings), platform=platform,
                       index_only=settings.index_only, echo=out, sqsh_dir=settings.sqsh_dir)
    for row in rows:
        if row.media_type == OCI_INDEX_TYPE:
            out(f"{row.tag:<48} -> {row.reference} (image index)")
            for plat, rec in row.platforms.items():
                out(f"  {plat:<46} -> {rec['reference']}")
        else:
            tags = [f" ({plat}, tag {rec['tag']}; the index: make push INDEX_ONLY=1)" for plat, rec in row.platforms.items()]
            out(f"{row.source:<48} -> {row.reference}" + "".join(tags))
    costs = {name: layers for row in rows for name, layers in row.layers.items()}
    if costs:
        from ..publish.layercost import cost_table
        out("\nwhat each pushed image costs a node (compressed: the registry's blobs; unpacked: the engine):")
        out(cost_table(costs))
    out(f"digests recorded in {shown(settings, settings.push_dir / 'pushed.json')}; after `make verify`: make attest")
    return 0


def cmd_keygen(settings: Settings, args: argparse.Namespace) -> int:
    from ..publish.signing import keygen
    assert settings.key_dir is not None
    private, public, keyid = keygen(settings.key_dir, settings.key_type, force=settings.force)
    out(f"wrote {private} (private, mode 0600: never copy it into the repository or an image) and {public} "
        f"(public; give it to readers as TRUST=)\nkey id {keyid}\nnext: make attest signs with it (SIGNING_KEY= "
        f"picks another); make report IMAGE=...@sha256:... TRUST={public}")
    return 0


def _signer(settings: Settings) -> object:
    from ..publish.signing import load_signer
    if settings.signing_key is None:
        raise UserError("no signing key: make keygen, or SIGNING_KEY=<private key file>")
    if not settings.signing_key.exists() and settings.signing_key.name == "signing-key.pem":
        raise UserError(f"no signing key at {settings.signing_key}: run `make keygen` once, or give "
                        f"SIGNING_KEY=<private key file> (ECDSA P-256 or Ed25519, PEM)")
    return load_signer(settings.signing_key)


def cmd_attest(settings: Settings, args: argparse.Namespace) -> int:
    from ..builder.engine import connect
    from ..publish.attest import attest_from_reports
    specs = selected(settings)
    signer = _signer(settings)          # before anything is pushed: a missing or bad key attaches nothing
    for line in attest_from_reports(connect(settings.child_env), specs, settings.push_dir, settings.reports, signer,
                                    creds(settings), platform=one_platform(settings, "attest"),
                                    images_dir=settings.images, env=settings.child_env):
        out(line)
    return 0


def _trust(settings: Settings) -> list[object]:
    from ..publish.signing import load_trust
    if not settings.trust:
        raise UserError("no TRUST keys: give TRUST=<public key file(s) or folder> (make keygen writes "
                        "~/.config/torchimages/signing-key.pub); nothing unsigned is believed")
    return list(load_trust(settings.trust))


def cmd_report(settings: Settings, args: argparse.Namespace) -> int:
    from ..fleet.gate import parse_require
    from ..fleet.plausible import report_problem
    from ..publish.report import expire, fetch_report, format_report
    ref = digest_ref(settings, args.ref or settings.image, "report")
    requirements, max_age = _split_age(settings, parse_require(settings.require))
    summary = fetch_report(ref, _trust(settings), creds(settings), deadline_s=settings.report_timeout,  # type: ignore[arg-type]
                           skew_s=settings.clock_skew, rule=report_problem)
    expire(summary, max_age, skew_s=settings.clock_skew)
    if requirements:
        summary.unmet = _unmet(summary, requirements)
    out(format_report(summary))
    if summary.verified and not summary.unmet and (requirements or max_age is not None):
        from ..durations import shown
        # say that REQUIRE and MAX_AGE were judged, not only when they fail
        met = [str(r) for r in requirements] + ([f"age<={shown(max_age)}"] if max_age is not None else [])
        out(f"require:  met {' '.join(met)}")
    return 0 if summary.verified and not summary.unmet else 1


def _split_age(settings: Settings, requirements: list[Any]) -> tuple[list[Any], float | None]:
    """REQUIRE without its age terms, and the strictest maximum age of MAX_AGE and REQUIRE's age<= (None: any)."""
    from ..durations import parse_duration
    ages = [parse_duration(r.value, f"REQUIRE {r}") for r in requirements if r.key == "age"]
    if settings.max_age is not None:
        ages.append(settings.max_age)
    return [r for r in requirements if r.key != "age"], (min(ages) if ages else None)


def _unmet(summary: object, requirements: Sequence[Any]) -> list[str]:
    """What REQUIRE misses in the newest trusted attestation among those REQUIRE's node= and signer= select (the
    newest evidence wins: an older attestation that would meet it does not)."""
    from ..fleet.gate import SELECTORS, node_spelling, unmet
    from ..publish.report import Summary
    assert isinstance(summary, Summary)

    def facts(att: Any) -> dict[str, Any]:
        return {**att.host, "verdict": att.status, "signer": att.signer.source, "keyid": att.signer.keyid}
    selectors = [r for r in requirements if r.key in SELECTORS]
    candidates = [a for a in summary.attestations if not unmet(selectors, facts(a))]
    scope = f" of {' '.join(map(str, selectors))}" if selectors else ""
    if not candidates:
        hints = [h for r in selectors if r.key == "node" and (h := node_spelling(
            r.value, (str(a.host.get("node")) for a in summary.attestations)))]
        why = "; ".join([summary.reason or "none matches", *hints])
        return [f"{requirements[0]} (no trusted attestation{scope}: {why})"]
    newest = candidates[0]
    if newest.problem:
        return [f"{requirements[0]} (the newest trusted attestation{scope} is not believed: {newest.problem})"]
    if not summary.verified and summary.chosen is newest:
        return [f"{requirements[0]} ({summary.reason})"]
    return unmet(requirements, facts(newest))


def cmd_gate(settings: Settings, args: argparse.Namespace) -> int:
    from ..fleet.gate import floor_problem, gate_line, host_driver, image_labels, parse_require
    from ..fleet.plausible import report_problem
    from ..publish.registry import Registry, parse_ref
    from ..publish.report import clean, expire, fetch_report
    from ..render import readable_specs
    reference = digest_ref(settings, args.ref or settings.image, "gate")
    requirements, max_age = _split_age(settings, parse_require(settings.require))
    if not any(r.key == "verdict" for r in requirements):
        requirements = [*parse_require("verdict=pass,warn"), *requirements]
    ref = parse_ref(reference)
    assert ref.digest is not None
    problems: list[str] = []
    # the driver floor first: it needs no trust, and it is what a node can fix by itself
    import time
    reg = Registry(ref.registry, creds(settings), timeout=min(60.0, settings.report_timeout),
                   deadline=time.monotonic() + settings.report_timeout)
    labels = image_labels(reg, ref.repository, ref.digest)
    driver = settings.host_driver or host_driver()
    floor = floor_problem(labels, driver, readable_specs(settings.images))   # the matrix's tags, if any, for the hint
    if floor:
        problems.append(floor)
    summary = fetch_report(reference, _trust(settings), creds(settings), deadline_s=settings.report_timeout,  # type: ignore[arg-type]
                           skew_s=settings.clock_skew, rule=report_problem)
    expire(summary, max_age, skew_s=settings.clock_skew)
    if not summary.attestations:
        problems.append(f"no trusted attestation: {summary.reason}")
    else:
        problems += [f"the newest trusted attestation does not meet {m}" for m in _unmet(summary, requirements)]
    chosen = summary.chosen
    passed = (f"{' '.join(map(str, requirements))}, signed by {chosen.signer_name}, node {chosen.host['node']}"
              if chosen else "")
    floor_ok = f"; driver {driver} meets the floor {labels.get('io.torchimages.cuda.driver-min')}" \
        if labels.get("io.torchimages.cuda.driver-min") and driver else ""
    out(clean(gate_line(reference, problems, passed + floor_ok), 2000))
    return 1 if problems else 0
