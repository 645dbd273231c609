"""`--revalidate`: return a drained node to service only when torchimages drained it, its history is whole and
clean, it has not failed again within the flap window, the repair the catalog asks for is seen, and the preflight
passes now with the GPUs the node should have."""
from __future__ import annotations

from typing import Any

from . import history, kernlog, slurm
from .act import log_event, report_gpus
from .assess import assess
from .settings import REBOOT_CODES, Config, say
from .verdict import (
    EXIT_FAULT,
    EXIT_NOT_ASSESSED,
    EXIT_PASS,
    EXIT_REFUSED,
    PASS,
    Verdict,
    not_assessed,
)


def here_problem(node: str, here: frozenset[str], info: dict[str, str] | None) -> str | None:
    """Why this host is not `node` (its names: the host name, short and full, and SLURMD_NODENAME), or None: a
    revalidation judges the node it runs on, so run anywhere else it would resume one node on another's preflight."""
    if node in here or (info and info.get("NodeHostName", "").split(".")[0] in {h.split(".")[0] for h in here}):
        return None
    where = f"{node}'s host is {info.get('NodeHostName')}" if info and info.get("NodeHostName") else \
        f"Slurm does not say which host {node} is"
    return (f"this host ({', '.join(sorted(here))}) is not {node} ({where}): run it on that node "
            f"(ssh {node} make undrain NODE={node})")


def repair_problem(drain: dict[str, Any] | None, claimed: tuple[str, int] | None, clock: kernlog.Clock,
                   booted: float | None) -> str | None:
    """Why the repair NVIDIA's Xid catalog asks for (a GPU reset or a reboot) is not seen since the drain, or None.
    A reboot is seen as another boot id than the drain's, else a boot time (/proc/stat btime) after it."""
    code = (drain or {}).get("code") or (claimed[0] if claimed else None)
    if (drain or {}).get("action") not in ("reset", "reboot") and code not in REBOOT_CODES:
        return None
    then = (drain or {}).get("boot_id")
    if then and clock.boot_id:
        return None if then != clock.boot_id else (f"drained for {code}, whose repair is a GPU reset or a reboot "
                                                   f"(NVIDIA's Xid catalog); this is the same boot ({then})")
    when = (drain or {}).get("epoch") or (claimed[1] if claimed else None)
    if booted is not None and when is not None and booted > when:
        return None
    return f"drained for {code}, whose repair is a GPU reset or a reboot (NVIDIA's Xid catalog); no reboot seen since"


def gpu_problem(report: dict[str, Any] | None, expected: int | None) -> str | None:
    """Why the report does not show the GPUs the node should have (Slurm's Gres, else the drain's count), or None."""
    if not expected:
        return None
    gpu = next((c for c in (report or {}).get("checks") or [] if isinstance(c, dict) and c.get("name") == "gpu"), None)
    if gpu is None or gpu.get("status") not in ("pass", "warn"):
        return f"the gpu check {'did not run' if gpu is None else gpu.get('status')}: the node should have {expected} GPU(s)"
    seen = report_gpus(report)
    if seen is None or seen < expected:
        return f"NVML sees {seen or 0} GPU(s); the node should have {expected} (Slurm's Gres, else the drain's count)"
    return None


def _refused(cfg: Config, line: str, note: bool = True) -> tuple[int, Verdict | None, dict[str, Any] | None,
                                                                   dict[str, int]]:
    if note:
        log_event(cfg, "resume-refused", None, line)
    say(f"REFUSED {cfg.node}: {line}; not resumed")
    return EXIT_REFUSED, None, None, {}


def _proof(cfg: Config, row: slurm.NodeRow, info: dict[str, str] | None) -> str | None:
    """Why the node cannot be resumed before its preflight runs (its history, the repair), or None; sets the GPUs
    the preflight must see."""
    past = history.read(cfg.state_dir, cfg.node)
    if past.error:
        return f"{past.error}; without its history a fault that came back cannot be told apart"
    if past.garbled:
        return f"{past.garbled} of {history.path(cfg.state_dir, cfg.node)}: a garbled history is not a clean one; " \
               "look at the lines, remove them, and revalidate again"
    if flap := history.failed_again_after_resume(past.events, cfg.flap_window_s):
        log_event(cfg, "inspect", None, flap)
        return f"flagged for hardware inspection: {flap}"
    drain = history.last_drain(past.events)
    claimed = slurm.parse_reason(row.reason_text, row.name)
    if problem := repair_problem(drain, claimed, kernlog.host_clock(cfg.proc), kernlog.boot_time(cfg.proc)):
        return problem
    gres = slurm.gres_gpus((info or {}).get("Gres", ""))
    recorded = (drain or {}).get("gpus")
    cfg.expected_gpus = gres or (recorded if isinstance(recorded, int) and recorded > 0 else None) or cfg.expected_gpus
    return None


def revalidate(cfg: Config) -> tuple[int, Verdict | None, dict[str, Any] | None, dict[str, int]]:
    info, _ = slurm.node_info(cfg.node)
    if problem := here_problem(cfg.node, cfg.here, info):
        return _refused(cfg, problem, note=False)
    rows, why = slurm.rows(node=cfg.node)
    row = next((r for r in rows or [] if r.name == cfg.node), None)
    if row is None:
        say(f"cannot read {cfg.node}'s state: {why or 'sinfo does not list it'}; nothing done")
        return EXIT_NOT_ASSESSED, None, None, {}
    if not row.ours:
        whose = f"drained with another reason ({row.reason_text!r})" if row.drained else f"not drained ({row.state})"
        log_event(cfg, "resume-refused", None, f"{whose}: left alone")
        say(f"REFUSED {cfg.node} is {whose}: torchimages resumes only the nodes it drained")
        return EXIT_REFUSED, None, None, {}
    if problem := _proof(cfg, row, info):
        return _refused(cfg, problem, note=False)
    verdict, report, xids = assess(cfg)
    if verdict.kind == PASS and (problem := gpu_problem(report, cfg.expected_gpus)):
        verdict = not_assessed("GPU_COUNT_UNPROVEN", problem, "gpu")
    print(verdict.line(), flush=True)
    if verdict.kind != PASS:
        status = EXIT_FAULT if verdict.drains else EXIT_NOT_ASSESSED
        log_event(cfg, "resume-refused", verdict.code, verdict.summary)
        say(f"{cfg.node} stays drained: {verdict.code or 'no verdict'}")
        return status, verdict, report, xids
    if refused := slurm.scontrol("update", f"nodename={cfg.node}", "state=resume", dry_run=cfg.dry_run):
        log_event(cfg, "resume-refused", None, refused)
        say(refused)
        return EXIT_REFUSED, verdict, report, xids
    log_event(cfg, "resume", None, verdict.summary)
    say(f"RESUMED {cfg.node}: the preflight passes and torchimages had drained it ({row.reason_text})")
    return EXIT_PASS, verdict, report, xids
