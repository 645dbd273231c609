"""`make report IMAGE=repo@sha256:... TRUST=<public keys>`: verify, then believe, what is attached to a digest.

For each artifact that refers to the digest (referrers API, else the referrers tag schema), with an overall deadline
and a size bound on every fetch, and everything fetched by digest checked against that digest:
- the artifact manifest's `subject` must be the digest asked about;
- its envelope must carry a signature of a TRUST key that verifies (securesystemslib's DSSE);
- the signed in-toto Statement's subject must name the digest, and its predicate type must be known;
- a verify report must match verify/report.schema*.json, and its status is recomputed from its checks (the
  recorded one is not believed).
The newest trusted verify attestation is the answer, whatever older ones say (an older pass never hides a newer
failure; all are listed, newest first); a replay (`verify --from-facts`, nothing probed) verifies nothing; evidence
older than MAX_AGE (`expire`) is not believed, and the reason says its age. Every other artifact gets its reason. Nothing a
registry sends reaches the terminal unescaped (control characters are shown as \\x..).
"""
from __future__ import annotations

import json
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..durations import EARLIEST_CREATED, parse_time, shown
from ..errors import UserError
from .attest import (
    PREDICATE_PROVENANCE,
    PREDICATE_SBOM,
    PREDICATE_VERIFY,
    SHORT,
)
from .referrers import attached
from .registry import Credentials, Registry, parse_ref, sha256
from .signing import DSSE_TYPE, Trusted, Untrusted, open_envelope, subject_digests

MAX_ARTIFACTS = 64          # a digest with more referrers than this: the newest are read
CLOCK_SKEW_S = 300.0        # a signed time this far in the future is still believed (clocks differ); CLOCK_SKEW=
DEFAULT_DEADLINE = 120.0    # seconds for the whole report (REPORT_TIMEOUT)
KNOWN = {PREDICATE_VERIFY: "verify", PREDICATE_SBOM: "sbom", PREDICATE_PROVENANCE: "provenance"}


def clean(value: Any, limit: int = 300) -> str:
    """A registry-supplied value made safe for a terminal: control and format characters (ESC, CR, bidi
    overrides) written as escapes, and cut at `limit` characters."""
    text = str(value)
    out = []
    for ch in text[: limit * 2]:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    joined = "".join(out)
    return joined if len(joined) <= limit else joined[: limit - 3] + "..."


def overall(statuses: list[str], interrupted: Any = None) -> str:
    """verify's rule (verify/report.py `overall`, restated: scripts never imports verify): fail if any check failed
    or the run was cut short; else warn; else pass if any passed; skip when nothing was judged."""
    found = set(statuses)
    if "fail" in found or interrupted:
        return "fail"
    return "warn" if "warn" in found else "pass" if "pass" in found else "skip"


# a report → why it is none verify writes, or None
Rule = Callable[[Any], "str | None"]


def check_verify_report(report: Any, schemas: list[dict[str, Any]], rule: Rule | None = None
                        ) -> tuple[str | None, str]:
    """(problem or None, recomputed status) of a verify report against its schemas and its own checks, and
    `rule`: the plausibility rule the prolog and the fleet report apply (scripts/fleet/plausible.report_problem,
    given by the command: the fleet floor is not this one's to import)."""
    import jsonschema
    if not isinstance(report, dict):
        return "the report is not a JSON object", "fail"
    if not schemas:
        return "no verify/report.schema*.json to check the report against", "fail"
    errors = []
    for schema in schemas:
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(report))
        if error is None:
            break
        errors.append(f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message[:160]}")
    else:
        return f"the report does not match verify's report schema ({clean(errors[0], 200)})", "fail"
    checks = [c for c in report.get("checks") or [] if isinstance(c, dict)]
    status = overall([str(c.get("status")) for c in checks], report.get("interrupted"))
    if not checks:
        return "the report has no checks", status
    if report.get("status") != status:
        return (f"the report says {clean(report.get('status'), 20)} but its checks say {status} (recomputed from "
                f"the checks)"), status
    # the one rule the prolog, the fleet report and make isolate hold a report to (scripts/fleet/plausible.py): a
    # signed report no verify writes (one GPU listed twice counted 16 for gpus>=16, a pass on a figure its own check
    # refuses) is no evidence, whoever signed it
    if rule is not None and (why := rule(report)):
        return f"the report is none verify writes: {clean(why, 200)}", status
    return None, status


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def host_facts(report: dict[str, Any], attested: dict[str, Any]) -> dict[str, Any]:
    """The host a report was made on: GPU models and count (the gpu check's devices), driver, node, torch, CUDA."""
    env = _obj(report.get("environment"))
    gpu_data: dict[str, Any] = {}
    for check in report.get("checks") or []:
        if isinstance(check, dict) and check.get("name") == "gpu" and isinstance(check.get("data"), dict):
            gpu_data = check["data"]
    devices = [d for d in gpu_data.get("devices") or [] if isinstance(d, dict)]
    names = [str(d["name"]) for d in devices if d.get("name")]
    scheduler = _obj(env.get("scheduler"))
    node = attested.get("node") or scheduler.get("node") or env.get("hostname") or "unknown"
    return {"gpus": names, "gpu_count": len(devices), "driver": env.get("driver") or gpu_data.get("driver"),
            "node": node, "torch": env.get("torch"), "cuda": env.get("cuda"), "hostname": env.get("hostname")}


@dataclass
class Attestation:
    """One signed verify attestation about the digest, with what was found wrong with it (if anything)."""

    artifact: str
    signer: Trusted
    attested: str
    report: dict[str, Any]
    status: str
    problem: str | None
    host: dict[str, Any]

    @property
    def good(self) -> bool:
        return self.problem is None and self.status in ("pass", "warn")

    @property
    def replay(self) -> bool:
        """Judged from recorded facts (`verify --from-facts`): nothing was probed on a host."""
        return bool(self.report.get("replay"))

    @property
    def signer_name(self) -> str:
        return f"{Path(self.signer.source).name} (key {self.signer.keyid[:16]})"


@dataclass
class Summary:
    reference: str
    verified: bool = False
    reason: str = ""
    found_via: str = ""
    attestations: list[Attestation] = field(default_factory=list)    # trusted verify attestations, newest first
    rejected: list[str] = field(default_factory=list)                # why each other artifact is not believed
    sbom: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = None
    unmet: list[str] = field(default_factory=list)                   # REQUIRE's unmet requirements

    @property
    def chosen(self) -> Attestation | None:
        """The newest trusted verify attestation: it decides, whatever older ones say (the newest evidence wins)."""
        return self.attestations[0] if self.attestations else None


def _newest_first(descriptors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def created(d: dict[str, Any]) -> str:
        notes = d.get("annotations")
        return str((notes if isinstance(notes, dict) else {}).get("org.opencontainers.image.created", ""))
    return sorted(descriptors, key=created, reverse=True)[:MAX_ARTIFACTS]


def _content(reg: Registry, repo: str, digest: str, art: str) -> tuple[bytes, str]:
    """(layer bytes, layer media type) of the artifact `art`, which must name `digest` as its subject."""
    if not isinstance(art, str) or not art.startswith("sha256:") or len(art) != 71:
        raise Untrusted(f"a descriptor with no valid digest ({clean(art, 80)})")
    raw, _, _ = reg.get_manifest(repo, art)             # checked against `art` by the registry client
    try:
        manifest = json.loads(raw)
    except ValueError:
        raise Untrusted("the artifact manifest is not JSON") from None
    subject = manifest.get("subject") if isinstance(manifest, dict) else None
    if not isinstance(subject, dict) or subject.get("digest") != digest:
        other = subject.get("digest") if isinstance(subject, dict) else None
        raise Untrusted(f"it refers to another image ({clean(other, 80) if other else 'no subject'})")
    layers = manifest.get("layers") or []
    if not isinstance(layers, list) or not layers or not isinstance(layers[0], dict):
        raise Untrusted("an artifact without content")
    layer = layers[0]
    blob = layer.get("digest")
    size = layer.get("size")
    if not isinstance(blob, str) or not blob.startswith("sha256:") or len(blob) != 71:
        raise Untrusted("its content has no valid digest")
    if not isinstance(size, int) or isinstance(size, bool) or not 0 < size <= 32 << 20:
        raise Untrusted(f"its content size {clean(size, 20)} is out of bounds")
    data = reg.get_blob(repo, blob, limit=size)           # the blob client checks sha256(data) == blob
    if len(data) != size or sha256(data) != blob:
        raise Untrusted("its content does not match its descriptor")
    return data, str(layer.get("mediaType") or "")


def fetch_report(text: str, trust: list[Trusted], creds: Credentials | None = None,
                 schemas: list[dict[str, Any]] | None = None, deadline_s: float = DEFAULT_DEADLINE,
                 skew_s: float = CLOCK_SKEW_S, rule: Rule | None = None) -> Summary:
    """Every artifact attached to a digest, each verified before it is believed (see the module's docstring);
    a verify report also by `rule` (check_verify_report)."""
    from ..run_verify import report_schemas
    ref = parse_ref(text)
    if not ref.digest:
        raise UserError(f"{text}: make report needs a digest reference (repo@sha256:...)")
    if not trust:
        raise UserError("no TRUST keys: make report IMAGE=... TRUST=<public key file(s)> (make keygen writes "
                        "~/.config/torchimages/signing-key.pub); an unsigned or unchecked report is never believed")
    schemas = report_schemas() if schemas is None else schemas
    digest = ref.digest
    reg = Registry(ref.registry, creds, timeout=min(60.0, deadline_s), deadline=time.monotonic() + deadline_s)
    reg.get_manifest(ref.repository, digest)           # the image itself must exist (and hash to its digest)
    descriptors, via = attached(reg, ref.repository, digest, tuple(KNOWN.values()))
    summary = Summary(str(ref), found_via=via)
    newest: dict[str, tuple[str, dict[str, Any]]] = {}
    for desc in _newest_first(descriptors):
        art = desc.get("digest")
        short = clean(art, 80)[:19] + "..."
        try:
            _read_artifact(reg, ref.repository, digest, desc, trust, schemas, summary, newest, rule)
        except Untrusted as exc:
            summary.rejected.append(f"{short}: {exc}")
        except UserError as exc:        # this artifact's fetch failed (bad content, a 500, the deadline)
            summary.rejected.append(f"{short}: not read ({exc.shown()})")
    order(summary)
    refuse_future(summary, skew_s)
    if "sbom" in newest:
        summary.sbom = _sbom_facts(*newest["sbom"])
    if "provenance" in newest:
        summary.provenance = _provenance_facts(*newest["provenance"])
    _decide(summary, bool(descriptors))
    return summary


def _read_artifact(reg: Registry, repo: str, digest: str, desc: dict[str, Any], trust: list[Trusted],
                   schemas: list[dict[str, Any]], summary: Summary,
                   newest: dict[str, tuple[str, dict[str, Any]]], rule: Rule | None = None) -> None:
    """One artifact: an unsigned one is rejected; a signed verify report is added to the attestations, the first
    (newest) signed SBOM and provenance are kept in `newest`. Untrusted or UserError when it cannot be believed."""
    art = desc.get("digest")
    short = clean(art, 80)[:19] + "..."
    data, layer_type = _content(reg, repo, digest, str(art))
    if layer_type != DSSE_TYPE:
        kind = SHORT.get(layer_type) or SHORT.get(str(desc.get("artifactType"))) or "artifact"
        summary.rejected.append(f"{short}: an unsigned {kind} ({clean(layer_type, 60) or 'no media type'}): "
                                f"not believed")
        return
    opened = open_envelope(data, trust)
    doc = opened.statement
    if digest not in subject_digests(doc):
        named = ", ".join(subject_digests(doc))[:100] or "none"
        raise Untrusted(f"signed, but its statement is about another image ({clean(named, 100)})")
    predicate_type = doc.get("predicateType")
    if predicate_type not in KNOWN:
        raise Untrusted(f"signed, but of an unknown predicate type {clean(predicate_type, 80)}")
    predicate = _obj(doc.get("predicate"))
    if predicate_type == PREDICATE_VERIFY:
        report = predicate.get("report")
        attested = _obj(predicate.get("attested"))
        problem, status = check_verify_report(report, schemas, rule)
        report_dict = report if isinstance(report, dict) else {}
        if problem is None and report_dict.get("replay"):
            problem = "a replay of recorded facts (verify --from-facts): nothing was probed, so it verifies nothing"
        summary.attestations.append(Attestation(str(art), opened.signer, str(attested.get("time") or ""),
                                                report_dict, status, problem, host_facts(report_dict, attested)))
    else:
        newest.setdefault(KNOWN[predicate_type], (str(art), predicate))


def _sbom_facts(art: str, doc: dict[str, Any]) -> dict[str, Any]:
    comps = [c for c in doc.get("components") or [] if isinstance(c, dict)]
    return {"digest": art, "spec": f"CycloneDX {clean(doc.get('specVersion'), 10)}",
            "components": len(comps),
            "pypi": sum(1 for c in comps if str(c.get("purl", "")).startswith("pkg:pypi/")),
            "deb": sum(1 for c in comps if str(c.get("purl", "")).startswith("pkg:deb/"))}


def _provenance_facts(art: str, doc: dict[str, Any]) -> dict[str, Any]:
    build = _obj(doc.get("buildDefinition"))
    deps = [d for d in build.get("resolvedDependencies") or [] if isinstance(d, dict)]
    commit = next((d["digest"].get("gitCommit") for d in deps if isinstance(d.get("digest"), dict)
                   and d["digest"].get("gitCommit")), None)
    builder = _obj(_obj(doc.get("runDetails")).get("builder"))
    return {"digest": art, "commit": commit, "builder": builder.get("id"), "inputs": len(deps)}


def order(summary: Summary) -> None:
    """Newest first, by the signed time, else by its report's `created` (a time the signer garbled is no reason to
    rank it oldest: a failing attestation newer than a pass would be outranked by it); neither readable: oldest.
    Of attestations of one moment (the same signed time: times are written to the second, and two nodes verify at
    once), the one that is no pass comes first: one moment's evidence, the graver stands (the registry's listing
    order decided, and a pass hid a failure signed in the same second)."""
    def when(a: Attestation) -> tuple[float, bool]:
        found = parse_time(a.attested) or parse_time(a.report.get("created"))
        return (found.timestamp() if found else float("-inf")), not a.good
    summary.attestations.sort(key=when, reverse=True)


def _decide(summary: Summary, any_descriptors: bool) -> None:
    """The verdict: the newest trusted attestation's, else why there is none."""
    chosen = summary.chosen
    if chosen is None:
        summary.reason = ("no signed verify attestation of a TRUST key is attached to this digest"
                          + ("" if summary.rejected or any_descriptors else "; run make verify and make attest"))
    elif not chosen.good:
        older = sum(1 for a in summary.attestations[1:] if a.good)
        summary.reason = ("the newest trusted attestation: " + (chosen.problem or f"its verdict is "
                                                                 f"{chosen.status.upper()}")
                          + (f" (an older one that passed does not outweigh it: {older})" if older else ""))
    else:
        summary.verified = True


def future_problem(attestation: Attestation, skew_s: float, now: datetime | None = None) -> str | None:
    """Why an attestation is no evidence for its time: signed, or its report created, more than `skew_s` seconds
    in the future (evidence from the future is not evidence: a wrong clock, or a date set to outlive MAX_AGE)."""
    now = now or datetime.now(timezone.utc)
    for what, text in (("signed", attestation.attested), ("its report created", attestation.report.get("created"))):
        when = parse_time(text)
        if when is not None and (when - now).total_seconds() > skew_s:
            return (f"{what} {shown((when - now).total_seconds())} in the future ({clean(text, 40)}), beyond the "
                    f"clock tolerance CLOCK_SKEW={shown(skew_s)}: not believed (check the signer's clock)")
    signed, created = parse_time(attestation.attested), parse_time(attestation.report.get("created"))
    if signed is not None and created is not None and (created - signed).total_seconds() > skew_s:
        # make attest signs a report that exists: one created after its signature is no report the signer saw
        return (f"its report created {clean(attestation.report.get('created'), 40)}, "
                f"{shown((created - signed).total_seconds())} after it was signed ({clean(attestation.attested, 40)}), "
                f"beyond CLOCK_SKEW={shown(skew_s)}: not believed (check the signer's clock)")
    return None


def never_set(attestation: Attestation) -> str | None:
    """Why an attestation's time is none (signed, or its report created, before any verify attestation could be:
    EARLIEST_CREATED), or None. A lone pass signed in 1970 was `verified: yes` without MAX_AGE."""
    earliest = parse_time(EARLIEST_CREATED)
    for what, text in (("signed", attestation.attested), ("its report created", attestation.report.get("created"))):
        when = parse_time(text)
        if when is not None and earliest is not None and when < earliest:
            return (f"{what} {clean(text, 40)}, before any verify attestation: the signer's clock was never set; "
                    "not believed (set its clock, verify and attest again)")
    return None


def refuse_future(summary: Summary, skew_s: float = CLOCK_SKEW_S, now: datetime | None = None) -> None:
    """Every attestation dated beyond the clock tolerance is not believed; being the newest, it decides: NO."""
    for a in summary.attestations:
        if a.problem is None:
            a.problem = future_problem(a, skew_s, now)
        if a.problem is None and (unset := never_set(a)):
            # a clock never set (an RTC without NTP): no time of the evidence, as the fleet report holds a report's
            a.problem = unset
        created = a.report.get("created")
        if a.problem is None and created is not None and parse_time(created) is None:
            # verify writes its report's `created` from the clock: a date no calendar has (2026-02-30, hour 24, the
            # schema's pattern holds it) is no time of the measurement, and MAX_AGE judged the signature's alone, so a
            # months-old report signed today passed as fresh (the fleet report refuses the same report: hunt99)
            a.problem = (f"its report's created time {clean(created, 40)} is no time a clock writes (no such date or "
                         "hour): not believed (verify and attest again)")
        if a.problem is None and parse_time(a.attested) is None:
            # make attest signs an RFC 3339 time: without one the evidence has no time to be judged by (MAX_AGE,
            # the newest-wins rule), so it is not believed, and being the newest by its report it decides NO
            a.problem = (f"its signed time {clean(a.attested, 40) or '(none)'} is no RFC 3339 time: not believed "
                         "(attest again)")


def age_s(attestation: Attestation, now: datetime | None = None) -> float | None:
    """Seconds since the evidence was made: its verify run (the report's `created`) where that is older than its
    signature, for a month-old report signed today is a month-old measurement (SLSA/in-toto: freshness is the
    evidence's, not the envelope's); None when the signed time is missing or unreadable."""
    when = parse_time(attestation.attested)
    if when is None:
        return None
    created = parse_time(attestation.report.get("created"))
    when = min(when, created) if created is not None else when
    return ((now or datetime.now(timezone.utc)) - when).total_seconds()


def expire(summary: Summary, max_age: float | None, now: datetime | None = None,
           skew_s: float = CLOCK_SKEW_S) -> None:
    """Evidence older than `max_age` seconds (MAX_AGE, or REQUIRE's age<=) is not believed: the summary is no
    longer verified, and the reason says the newest attestation's age. A time in the future (beyond `skew_s` of
    clock skew, CLOCK_SKEW) or none at all is not believed either."""
    chosen = summary.chosen
    if max_age is None or chosen is None or not summary.verified:
        return
    age = age_s(chosen, now)
    if age is None:
        problem = f"the newest trusted attestation has no readable time ({clean(chosen.attested, 40) or 'none'})"
    elif age < -skew_s:
        problem = f"the newest trusted attestation is dated {shown(-age)} in the future ({clean(chosen.attested, 40)})"
    elif age > max_age:
        made = chosen.report.get("created") if parse_time(chosen.report.get("created")) else None
        problem = (f"the newest trusted attestation is {shown(age)} old ({clean(chosen.attested, 40)}"
                   + (f", its report created {clean(made, 40)}" if made else "") + "), older than the "
                   f"maximum age {shown(max_age)}: not believed; verify and attest again")
    else:
        return
    summary.verified, summary.reason = False, problem


def format_report(s: Summary) -> str:
    lines = [f"image:    {s.reference}"]
    chosen = s.chosen
    if s.verified and chosen is not None:
        lines.append(f"verified: yes (verdict {chosen.status.upper()}, recomputed from the checks; found via "
                     f"{s.found_via})")
    else:
        lines.append(f"verified: NO ({clean(s.reason, 400)})")
    if chosen is not None:
        host = chosen.host
        gpus = ", ".join(sorted(set(host["gpus"]))) or "none reported"
        lines += [f"signer:   {clean(chosen.signer_name, 200)}",
                  f"when:     attested {clean(chosen.attested, 40) or '?'}, report "
                  f"{clean(chosen.report.get('created'), 40)}",
                  f"host:     node {clean(host['node'], 80)}, GPU {clean(gpus, 120)} (x{host['gpu_count']}), "
                  f"driver {clean(host['driver'] or 'none', 40)}, torch {clean(host['torch'], 40)}, "
                  f"CUDA {clean(host['cuda'] or 'none', 20)}",
                  "checks:"]
        for check in chosen.report.get("checks") or []:
            if isinstance(check, dict):
                lines.append(f"  {clean(str(check.get('status', '?')).upper(), 5):<5} {clean(check.get('name', '?'), 22):<22} "
                             f"{clean(check.get('summary', ''), 200)}")
    if len(s.attestations) > 1:
        lines.append(f"history:  {len(s.attestations)} trusted verify attestations, newest first (the newest decides):")
        for a in s.attestations:
            state = (a.problem and "NOT BELIEVED") or a.status.upper()
            lines.append(f"  {clean(a.attested, 40) or '?':<20} {state:<12} node {clean(a.host['node'], 60)}, "
                         f"{clean(a.signer_name, 80)}" + (" (replay)" if a.replay else ""))
    for unmet in s.unmet:
        lines.append(f"require:  NOT MET {clean(unmet, 300)}")
    if s.sbom:
        lines.append(f"sbom:     {s.sbom['spec']}, {s.sbom['components']} components ({s.sbom['pypi']} Python, "
                     f"{s.sbom['deb']} distro), signed, artifact {s.sbom['digest'][:19]}...")
    else:
        lines.append("sbom:     none signed by a TRUST key attached")
    if s.provenance:
        lines.append(f"build:    SLSA v1 provenance, commit {clean(s.provenance['commit'] or '?', 40)}, builder "
                     f"{clean(s.provenance['builder'], 120)}, {s.provenance['inputs']} inputs")
    for reason in s.rejected[:10]:
        lines.append(f"ignored:  {clean(reason, 300)}")
    if len(s.rejected) > 10:
        lines.append(f"ignored:  ... and {len(s.rejected) - 10} more")
    return "\n".join(lines)
