"""NCCL's INFO log (NCCL_DEBUG=INFO), as any launcher prints it: read by verify/checks/nccl/ncclog.py into the nccl facts'
`nccl_log`, with the version NCCL prints and the error a failing rank logs. An error that prose mentions (`If NCCL
says ncclSystemError, ...`, a code span in a sentence: verify/explain/said.py) is none."""
from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterator
from typing import Any

from ..checks.nccl import barefail, barrier, casualty, efa, midrun, ncclog, opname, plugreg, watchdog
from ..checks.nccl.crash import CAUGHT
from ..checks.nccl.shmperm import SHM_REFUSED
from ..checks.nccl.transport import gdr_summary
from ..shared.rdma import IB_ASYNC_ERROR, IB_COMPLETION
from ..shared.shmem import NCCL_SHM_ATTACH, NCCL_SHM_FULL
from . import cuda, customar, dupgpu, ib, mpiexit, ncclalloc, ncclretry, oneproc, proxysock, setlimit, teardown, torcharch
from .ncclwarns import closing_run, no_network_failed, own_lines
from .said import printed

_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
# a collective's timeout: torch's watchdog (from its words on), or a line saying "timed out" of NCCL or a collective
# (the whole line). Found from the words themselves: a pattern that starts with `.*` rescans each line from every
# position (minutes on a 30 MB log)
# (torch's `WorkNCCL(..., Timeout(ms)=600000)` names the collective's limit, on an async exception's line as well: no
# timeout of its own)
# torch's teardown, `Some NCCL operations have failed or timed out`, says either: the failure it names decides, no hang
_TIMEOUT_WORDS = re.compile(r"Watchdog caught collective operation timeout|Heartbeat monitor timed out|"
                            r"ProcessGroupNCCL's watchdog got stuck|(?<!failed or )[Tt]imed? ?out(?!\(ms\)=)")
_TIMEOUT_OF = re.compile(r"NCCL|collective")
# torch's ProcessGroupNCCL watchdog on its own (`[rank368]:[E808 ...] ProcessGroupNCCL.cpp:655] [Rank 368] Watchdog
# caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, ...)`): an NCCL collective's failure
# (2.3+: its heartbeat monitor, `[PG 5 Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping
# debug info`: the watchdog itself stopped; its other wording, `ProcessGroupNCCL's watchdog got stuck for 480 seconds
# without making progress in monitoring enqueued collectives`, then `Terminating the process`: a hang all the same)
# torch 2.3+'s failure line and its monitor's dump on a timeout (verify/checks/nccl/watchdog.py) are the watchdog too
_WATCHDOG = re.compile(r"Watchdog caught collective operation timeout: WorkNCCL\(|Heartbeat monitor timed out!|"
                       r"ProcessGroupNCCL's watchdog got stuck for \d+ seconds|" + watchdog.FAILURE.pattern + "|"
                       r"Received a dump signal due to a collective timeout from |"
                       # torch's abort of the communicator quoting the watchdog (issue 35, batch 206)
                       r"NCCL communicator was aborted on rank \d+\. Original reason for failure was: Watchdog caught")
# what torch raises or NCCL returns when a collective fails (a WARN line alone is no failure: the verbs message is one):
# torch's `NCCL error in: ...` and `NCCL Error 1: unhandled cuda error`, nccl-tests' `Test NCCL failure` (and `Test CUDA
# failure common.cu:389 'an illegal memory access was encountered'), ncclResult_t
# (a `NCCL error in: file:line,` whose line ends at its comma was wrapped: its reason is the next line's start, batch 271)
# torch's check of the ranks' collectives (TORCH_DISTRIBUTED_DEBUG=DETAIL: `Detected mismatch between collectives on
# ranks. Rank 1 is running collective: CollectiveFingerPrint(...)`) fails the collective before NCCL runs it
_ERROR = re.compile(r"NCCL error in: [^\n]*,[ \t]*\n[^\n]*|NCCL error(?:(?!Last error:)[^\n])*|NCCL Error \d+[^\n]*|Test (?:NCCL|CUDA) failure[^\n]*|(?:ncclSystemError|ncclInternalError|"
                    r"ncclUnhandledCudaError|ncclInvalidUsage|ncclInvalidArgument|ncclRemoteError)[^\n]*|"
                    r"Detected mismatch between collectives on ranks[^\n]*")
# XLA's (JAX's) report of an NCCL call that failed: `NCCL operation ncclCommInitRank(...) failed: unhandled system error.
# Last NCCL warning(error) log entry (may be unrelated) 'Bootstrap : no socket interface found'.` (xla/.../gpu
# collectives), as its callers wrap it (`Failed to create NCCL communicator: INTERNAL: ncclCommInitRankConfig(...)
# failed:` on the line above): NCCL's result and its last WARN, with no `NCCL INFO` tag; forming a communicator is init
_XLA = re.compile(r"Last NCCL warning\(error\)[^\n]*")
_XLA_INIT = re.compile(r"CommInit|CommSplit|communicator|[Bb]ootstrap")
# NCCL's CUDACHECK/CUCHECK: `NCCL WARN Cuda failure 'named symbol not found'` (2.30: `Cuda failure 500 '...'`): the
# CUDA call failed and NCCL returns ncclUnhandledCudaError; a failure on its own, whatever NCCL logged after it
# (each `[\w/]+` starts only where a run of such characters does: tried from every character of a long run it made
# the search quadratic, minutes on one long line)
_CUDA_FAILURE = re.compile(r"(?:(?<![\w/])[\w/]+\.(?:cc|cu|c|cpp|h):\d+ (?:\(\w+\) )?)?NCCL WARN Cuda failure (?:\d+ )?'[^'\n]*(?:'|(?=\n)|\Z)")
# the same message where torch quotes it under `Last error:` (without NCCL's tag)
_CUDA_QUOTED = re.compile(r"Cuda failure (?:\d+ )?'[^'\n]*'")
# torch's ProcessGroupNCCL teardown (`[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. ...`):
# a collective failed, the process is taken down; read only where nothing else names the failure (it follows the
# failure's own line), and judged as a bare class of error (verify/checks/nccl/barefail.py)
_TEARDOWN = re.compile(r"Some NCCL operations have failed or timed out[^\n]*")


# NCCL's trace of a failing call, `bootstrap.cc:270 -> 2` (file:line -> ncclResult_t), printed up the stack; 2.30.7
# names the function after the line, in traces and WARNs alike (`gin_host_gdaki.cc:683 (ncclGinGdakiCreateContext) -> 2`,
# src/include/debug.h INFO_LOC, src/debug.cc)
_TRACE = re.compile(r"(?<![\w/])/*\b([\w/]+\.(?:cc|c|cpp)):\d+ (?:\(\w+\) )?-> (\d+)")     # the trace: from group 1 on
_INIT = re.compile(r"bootstrap|init\.cc|init\.cu|socket\.cc|socket\.cu")
# an IB work completion with an error status (ibv_wc_status: 12 retry exceeded, 5 flushed): the link, not the job
# (NCCL's own NET/IB, or a verbs plugin's own name for it: `NET/IBP:Got completion from peer ...`; quoted without
# the colon, `NET/IB Got completion error 12`)
_COMPLETION = re.compile(r"NET/IB\w{0,8}(?: ?: ?| )" + IB_COMPLETION + r"[^\n]*")
# a net plugin refusing a registration (aws-ofi-nccl's `Unable to register memory`, GCP TCPXO's `NET/FasTrak ...:
# INVALID_ARGUMENT: Buffer registration request ...`): NCCL cannot use the buffer over the network, whatever it logs after
_OFI_REGISTER = plugreg.WARNED
# NCCL's RoCE GID probe failing (net_ib.cc's ncclIbRoceGetVersionNum returns ncclSystemError after this WARN: the
# connection is not set up), quoted with or without NCCL's tag and prefix
_GID_PROBE = re.compile(r"(?:NCCL WARN )?NET/IB ?: ?read failed in ncclIbRoceGetVersionNum: [^\n]*")
# a WARN of NCCL's bootstrap or socket layer (`misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3`,
# `bootstrap.cc:... NCCL WARN Bootstrap : ...`), quoted with or without its host:pid:tid prefix: the group never formed
# NCCL's own socket.cc, bootstrap.cc and socket transport (transport/net_socket.cc), never a net plugin's file whose
# name ends so (Google's net_fastsocket.cc: `Cannot get incoming CPU.` beside its connection made, batch 300)
_INIT_WARN = re.compile(r"(?<![\w.-])(?:misc/|(?:transport/)?net_)?(?:socket|bootstrap)\.cc:\d+ (?:\(\w+\) )?"
                        r"NCCL WARN [^\n]*")
# NCCL's SHM transport failing to create its segment, quoted without NCCL's tag (an issue's one line): NCCL's own
# words, so that another program's full /dev/shm (a DataLoader's) is not read as NCCL's
_SHM_ATTACH_FAILED = re.compile(r"(?:NCCL WARN )?Error while attaching to shared memory segment [^\n]*?\(size \d+\), error: [^\n]*?\(\d+\)")
_SHM_SEGMENT = re.compile(r"Error while creating shared memory segment [^\n]*")


# NCCL's own prefix, `%s:%d:%d [%d] NCCL INFO` (host:pid:tid [cudaDev]), under whatever a launcher puts before it:
# such lines are NCCL's log even when none of them decides anything (it is said, then not judged).
_OWN = re.compile(r"(?<![\w.-])[\w.-]+:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN) ")


def detect(text: str) -> bool:
    """An NCCL log that shows something decisive (tried before a CUDA refusal, which an NCCL log may quote): a failure
    NCCL or torch reports (a `Cuda failure` WARN, `NCCL Error 1`, an ncclResult_t name) is one on its own."""
    log = _log(text)
    return bool(printed(_CUDA_FAILURE, text) or printed(_ERROR, text) or printed(_XLA, text) or customar.failed(text) or
                printed(_SHM_SEGMENT, text) or printed(_TEARDOWN, text) or
                IB_ASYNC_ERROR.search(text) or _WATCHDOG.search(text) or _OFI_REGISTER.search(text) or
                printed(_GID_PROBE, text) or ncclretry.gave_up(text) or printed(midrun.FORCED_ALGO, text) or printed(barrier.FAILED, text) or printed(casualty.STORE_LOST, text) or
                (log and (log.get("proof") or log.get("net_channels") or log.get("transports") or log.get("ofi_error")
                         or _COMPLETION.search(text) or ("NCCL" in text and _TRACE.search(text)))))


def detect_any(text: str) -> bool:
    """NCCL's lines with nothing decisive (a communicator set up, under any launcher's prefixes: Ray's stacked
    `(EngineCore_DP0 pid=..) (RayWorkerWrapper pid=.., ip=..)`): tried last, after a CUDA refusal such a log may
    quote, so it is said as NCCL's log and not judged rather than "not recognised"."""
    return len(_OWN.findall(text, 0, 1 << 20)) >= 1 or bool(_log(text))


# src/init.cc: `comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d` (2.19 on; `nranks` before,
# without nNodes): the communicator's size and how many nodes it spans (the largest communicator of the log)
_COMM = re.compile(r"\bcomm 0x[0-9a-fA-F]+ rank \d+ n[Rr]anks (\d+)(?: nNodes (\d+))?")


def _sizes(text: str) -> tuple[int | None, int | None]:
    comms = [(int(m.group(1)), int(m.group(2)) if m.group(2) else None) for m in _COMM.finditer(text)]
    if not comms:
        return None, None
    nodes = [n for _, n in comms if n is not None]
    return max(r for r, _ in comms), max(nodes) if nodes else None


# torch's and NCCL's `Last error:` line, followed by NCCL's own last WARN message on the next line (or on the same line
# where a paste joined the lines, batch 275; under any prefix;
# aws-ofi-nccl's `NET/OFI ...` whole; NCCL's spaced `Bootstrap : no socket interface found`, `NET/IB : ...`)
_LAST = re.compile(r"Last error:(?:[ \t]*\n[^\n]*?|[ \t]+(?:\d{1,5}: )?)((?:NET/OFI |NET/\w+ ?:|[A-Za-z_]\w* ?:)[^\n]+)")
# a WARN line as NCCL prints it (`graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.`)
_WARN = re.compile(r"(?:(?<![\w/])[\w/]+\.(?:cc|cu|c|cpp|h):\d+ (?:\(\w+\) )?)?NCCL WARN [^\n]*")
# NCCL's wrapper of a library call that failed (misc/ibvwrap.cc, socket.cc, cudawrap.cc): `Call to X failed`; and
# aws-ofi-nccl's own (`nccl_net_ofi_domain_get_ep:969 NCCL WARN NET/OFI Creating new endpoint for domain 0x7f9b...
# failed: Invalid argument`)
_CALL_FAILED = re.compile(r"NCCL WARN (?:NET/\w+ ?: ?)?Call to \w+ failed|NCCL WARN NET/OFI [^\n]*\bfailed: ")
# one trace line as NCCL's message (`group.cc:64 -> 3 [Async thread]`)
# (a net plugin's own trace carries its tag and a build path, `NCCL/NET (shim) /build/nccl-shim/src/x.cc:132 -> 4`)
_RETURN = re.compile(r"(?:NCCL/NET \(\w+\) |NET/\w+ ?:? ?)?[\w/.-]+\.(?:cc|cu|c|cpp|h):\d+ (?:\(\w+\) )?-> (\d+)\b")
# what NCCL prints while the process ends after a failure: no going on
_CLOSING = re.compile(r"ENV/Plugin: Closing env plugin\b")
# where a failing return is still forming the communicator: the bootstrap, init, and the topology and graph search
# NCCL before 2.9 named its sources .cu (init.cu, misc/ibvwrap.cu, transport/net_ib.cu)
_INIT_FILES = re.compile(r"bootstrap|init\.cc|init\.cu|socket\.cc|socket\.cu|graph/")


def _failed_warn(text: str) -> str | None:
    """NCCL's last WARN where all NCCL logged after it are failing returns (`graph/search.cc:733 -> 2`): the call
    failed and nothing went on (a WARN NCCL recovers from is followed by its choice of network, channels, ...)."""
    warns = list(_WARN.finditer(text))
    if not warns:
        return None
    last = warns[-1]
    after = [m for m in map(ncclog.message, text[last.end():].splitlines()) if m and not _CLOSING.match(m)]
    # where its own process printed failing returns after it and nothing else, another rank's start-up printed below
    # them is no going on (batch 134)
    line = text[text.rfind("\n", 0, last.start()) + 1:last.end()]
    own = [m for m in map(ncclog.message, own_lines(text[last.end():], line).splitlines()) if m and not _CLOSING.match(m)]
    if own and all((r := _RETURN.match(t)) and r.group(1) != "0" for t in own):
        after = own
    traces = [t for t in after if (m := _RETURN.match(t)) and m.group(1) != "0"]
    # a call NCCL made that failed (`Call to ibv_modify_qp failed with error ...`) where NCCL logged nothing after
    # it (the excerpt ends there, or the program's traceback follows): the failure, as the job met it
    # (aws-ofi-nccl giving up at its initialisation is none: NCCL goes on without the plugin)
    if not (traces or after) and _CALL_FAILED.search(last.group(0)) and not efa.OFI_INIT_GAVE_UP.search(last.group(0)):
        traces = after
    elif not traces or len(traces) != len(after):
        if not (run := closing_run(text, warns, _RETURN)):
            return None
        last, traces = run
    why = last.group(0).strip()[:200]
    phase = "init" if _INIT_FILES.search(why + " ".join(traces)) else "all_reduce"
    return f"{phase}: {why}" + (f"; {'; '.join(list(dict.fromkeys(traces))[:4])}" if traces else "")


def _timeout(text: str) -> str | None:
    for hit in _TIMEOUT_WORDS.finditer(text):
        start, end = text.rfind("\n", 0, hit.start()) + 1, text.find("\n", hit.end())
        line = text[start:end if end >= 0 else len(text)]
        timed = re.search(r"(?<!failed or )[Tt]imed? ?out(?!\(ms\)=)", line)
        if timed and _TIMEOUT_OF.search(line, timed.end()):
            return line
        if hit.group(0).startswith(("Watchdog", "Heartbeat", "ProcessGroupNCCL")):
            return text[hit.start():start + len(line)]
    return None


# one log is read by detect() and by parse(): NCCL's own lines once (seconds on a large log)
_log_of = functools.lru_cache(maxsize=2)(ncclog.parse)


def _log(text: str) -> dict[str, Any]:
    return copy.deepcopy(_log_of(text))


# where XLA's message starts (`NCCL operation ncclGroupEnd() failed: ...`), or a caller's line wrapped after `failed:`
_XLA_OPENS = re.compile(r"NCCL operation \w+\(|failed:\s*$")


def _xla(text: str) -> str | None:
    """XLA's failed NCCL call with NCCL's last WARN as one message. Its one line wrapped by a caller (`...failed:` on
    the line above) or by a post (xpk#492: broken after `(run with ` and inside the quoted WARN, `'Error` / `while
    creating shared memory segment ...` / `left on device (28)'.`) is joined back: up from the WARN's line to the
    one that opens the message (three lines at most), down to the line that closes the WARN's quote (four at most)."""
    hit = printed(_XLA, text)
    if not hit:
        return None
    start = text.rfind("\n", 0, hit.start()) + 1
    above = text[:start].split("\n")[-4:-1]
    opens = [n for n, line in enumerate(above) if _XLA_OPENS.search(line)]
    head = [] if _XLA_OPENS.search(text[start:hit.start()]) or not opens else above[opens[-1]:]
    tail: list[str] = []
    if hit.group(0).count("'") % 2 and not hit.group(0).rstrip().endswith("'."):    # the quoted WARN goes on below
        for line in text[hit.end() + 1:].split("\n")[:4]:
            tail.append(line)
            if "'" in line:
                break
        else:
            tail = []
    message = " ".join(line.strip() for line in [*head, text[start:hit.end()], *tail])
    return f"{'init' if _XLA_INIT.search(message) else 'all_reduce'}: {message[:400]}"


def _shm_failed(text: str) -> str | None:
    """The communicator failing over /dev/shm, in NCCL's words."""
    if refused := printed(SHM_REFUSED, text):
        # /dev/shm refused NCCL's segment with EACCES (`Call to shm_open failed : Permission denied`): that errno,
        # not the bare `Error while creating shared memory segment` after it, decides whose (checks/nccl/shmperm.py)
        line = text[text.rfind("\n", 0, refused.start()) + 1:refused.end()]
        return f"init: {line.strip()[:300]}"
    if full := printed(NCCL_SHM_FULL, text):
        # NCCL could not size a shared-memory segment in /dev/shm (`Call to posix_fallocate failed: No space left on
        # device`, then `Error while creating shared memory segment ... (size 9637888)`): the communicator fails there
        line = text[text.rfind("\n", 0, full.start()) + 1:full.end()]
        return f"init: {line.strip()[:300]}"
    if attach := printed(_SHM_ATTACH_FAILED, text):
        # a rank could not attach a peer's /dev/shm segment (misc/shmutils.cc returns ncclSystemError after it): the
        # communicator fails there, whether or not torch's error is in the paste (batch 115: quoted in a bug's title)
        return f"init: {attach.group(0).strip()[:300]}"
    return None


def _warned_above(failed: re.Match[str], text: str) -> re.Match[str] | None:
    """nccl-tests' bare class (`Test NCCL failure ... 'unhandled system error ...'`) whose cause NCCL's last WARN above it
    names (`Failed to open libnvidia-ml.so.1`): the WARN is the failure's cause, as a translation quotes it (batch
    143); None where the error says more than its class."""
    if "Test NCCL failure" not in failed.group(0) or not barefail.bare(failed.group(0)):
        return None     # nccl-tests' own line: torch's error keeps what the rules read of it alone
    return next(reversed(list(_WARN.finditer(text, 0, failed.start()))), None)


def _plugin_register(text: str) -> str | None:
    """A net plugin refusing a registration (aws-ofi-nccl, TCPXO), or its own registration failing (TCPX's
    `gpu_tx_reg_mr failed -5`, in its Connect: init): plugreg.py."""
    if refused := _OFI_REGISTER.search(text):
        return f"all_reduce: {refused.group(0).strip()[:300]}"
    if failing := plugreg.warned_failure(text):
        return f"{'init' if 'operation=Connect' in text else 'all_reduce'}: {failing}"
    return None


def _forced_algo(text: str) -> str | None:
    """NCCL's enqueue refusing a collective that the algorithms the job allowed do not implement (midrun.FORCED_ALGO),
    its line whole: NCCL's own words, with or without its tag (batch 310 quotes it bare)."""
    return _line_failed(midrun.FORCED_ALGO, text)


def _line_failed(pattern: re.Pattern[str], text: str) -> str | None:
    """The whole line holding the first printed match of `pattern`, as a collective's failure, or None."""
    if not (hit := printed(pattern, text)):
        return None
    start, end = text.rfind("\n", 0, hit.start()) + 1, text.find("\n", hit.end())
    return f"all_reduce: {text[start:end if end >= 0 else len(text)].strip()[:300]}"


def _error(text: str) -> str | None:
    """The failure a rank logged: a watchdog timeout, an IB completion error, a WARN followed only by failing
    returns, torch's `NCCL error` (with NCCL's `Last error:`), or NCCL's own trace of a failing call (init phase when
    it runs through the bootstrap)."""
    if timeout := _timeout(text):
        return f"all_reduce: {timeout.strip()[:300]}"
    if completion := _COMPLETION.search(text):
        return f"all_reduce: {completion.group(0).strip()[:300]}"
    if refused := _plugin_register(text) or _forced_algo(text):
        return refused
    if called := next((m for m in efa.OFI_FAILED_CALL.finditer(text) if efa.failed_call(m.group(0))), None):
        # a call of aws-ofi-nccl that returned an error code (its initialisation giving up is no failure: NCCL goes
        # on without the plugin)
        return f"all_reduce: {called.group(0).strip()[:300]}"
    if event := IB_ASYNC_ERROR.search(text):
        return f"all_reduce: {event.group(0).strip()[:300]}"
    if shm := _shm_failed(text):
        return shm
    if probe := printed(_GID_PROBE, text):
        return f"all_reduce: {probe.group(0).strip()[:300]}"
    if (tail := _failed_warn(text)) and not teardown.went_past(text, _TRACE):    # a CollNet setup NCCL went past
        return ncclalloc.with_cuda_cause(tail, text, _CUDA_FAILURE)
    if xla := _xla(text):
        return xla
    warned_cuda = printed(_CUDA_FAILURE, text)
    if failed := printed(_ERROR, text):
        cuda = warned_cuda or _CUDA_QUOTED.search(text)
        last = _LAST.search(text, failed.end()) or casualty.LAST.search(text, failed.end())
        # the WARN that names what failed, where torch's error does not (a peer's shared-memory segment)
        named = cuda or NCCL_SHM_ATTACH.search(text) or (None if last else _warned_above(failed, text))
        return f"all_reduce: {failed.group(0).strip().replace(chr(10), ' ')[:300]}" + (f" Last error: {last.group(1).strip()[:200]}"
                                                                 if last else "") + \
            (f" ({named.group(0).strip()[:200]})" if named and named.group(0) not in failed.group(0) else "")
    if warned_cuda:
        phase = "init" if _INIT_FILES.search(warned_cuda.group(0)) else "all_reduce"
        return f"{phase}: {warned_cuda.group(0).strip()[:300]}"
    if warned := _INIT_WARN.search(text):
        return f"init: {warned.group(0).strip()[:300]}"
    # NCCL starting no network, or giving up its connect retries: the init failed there
    if stopped := no_network_failed(text, _RETURN, _CLOSING) or (f"init: {r}" if (r := ncclretry.gave_up(text)) else None):
        return stopped
    traces = list(dict.fromkeys(text[m.start(1):m.end()] for m in _TRACE.finditer(text)))
    # a trace elsewhere need not end the job: only a failed bootstrap is read, and not one closing at an abort
    if not any(_INIT.search(t) for t in traces) or teardown.at_teardown(text, _TRACE) or teardown.went_past(text, _TRACE):
        # torch's monitored barrier naming ranks that never arrived (a timeout) or a peer it lost, where nothing above names a cause
        return _torn_down(text) or _watchdog_failed(text) or barrier.missed_line(text)
    return f"init: {'; '.join(traces[:4])}"


def _watchdog_failed(text: str) -> str | None:
    """torch's watchdog failure line (`failure detected by watchdog at work sequence id: 716 PG status: ...`) where
    nothing else names the failure: the line whole, judged by verify/checks/nccl/watchdog.py."""
    return _line_failed(watchdog.FAILURE, text)


def _torn_down(text: str) -> str | None:
    """torch's teardown as the failure, where nothing else names one; a running program's CUDA error the text prints
    (the watchdog's `terminated with exception: CUDA error: ...`) is kept beside it, as the cause it names."""
    if not (torn := printed(_TEARDOWN, text)):
        return None
    cause = next(iter(cuda.runtime_errors(text)), None)
    return f"all_reduce: {torn.group(0).strip()[:300]}" + (f" ({cause['text'][:200]})" if cause else "")


# nccl-tests' device lines, src/util.cu (2.13+): `#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s`;
# before Group was added (2.0-2.10): `#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s`; srun/mpirun may put a prefix
# before the `#`. A page's Markdown eats the `#` of a line pasted outside a code block (a heading): the line then starts
# with `Rank`. Read by nccltests.py for its table and here for an NCCL log printed below them.
DEVICE_LINE = re.compile(r"(?:#[^\S\n]+|^[^\S\n]*)Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]"
                         r"\s+(.*\S)\s*$", re.MULTILINE)


def ranks(text: str) -> tuple[int | None, int | None, str | None]:
    """(world size, nodes, GPU name) from the device lines; a rank printed twice (mpirun's output per process) is one.
    The lines give the world size only where they run 0..N-1: a `Rank 7` alone is the tail of a listing the excerpt
    cut (at least eight ranks), never a group of one (batch 110)."""
    seen: dict[int, tuple[str, str]] = {}
    for m in DEVICE_LINE.finditer(text):
        seen.setdefault(int(m.group(1)), (m.group(3), m.group(5)))
    if not seen:
        return None, None, None
    names = {name for _, name in seen.values()}
    whole = set(seen) == set(range(len(seen)))
    return len(seen) if whole else None, len({host for host, _ in seen.values()}), names.pop() if len(names) == 1 else None


def _listed(text: str) -> dict[str, Any]:
    """The adapters of an `ibstat`/`ibstatus`/`ibv_devinfo` listing pasted with the log (an issue's host listing above
    the job's NCCL lines): the nccl facts' `adapters`, as a translation of the same file records them, so that the
    log's fall-back is judged against the adapters the file shows. No listing, or one that lists none: not recorded."""
    adapters = ib.parse(text)["adapters"] if ib.detect(text) else []
    return {"adapters": adapters, "infiniband": True} if adapters else {}


# NCCL's socket connect failing (src/misc/socket.cc: `socketPollConnect: Connect to %s returned ...`, `connect returned
# %s, retrying`), quoted with or without NCCL's tag: kept as proof, for the address it dialled (verify/checks/nccl/connect.py)
_CONNECT_FAILED = re.compile(r"\bsocket\w*Connect: [^\n]*?returned [^\n]*|"
                             # NCCL_COMM_ID's subnet search (src/misc/socket.cc): the job's address in play (bindaddr.py)
                             r"No interface found in the same subnet as remote address [^\n]*")


def _with_connects(log: dict[str, Any], text: str) -> dict[str, Any]:
    """NCCL's log with its socket connects that failed among the proof (the first two), where the log has lines."""
    # the log's first and last MB: its start-up and its failure, whatever lies between (a long run's lines)
    windows = ((0, 1 << 20), (max(1 << 20, len(text) - (1 << 20)), len(text)))
    connects = list(dict.fromkeys(m.group(0).strip()[:200] for start, end in windows
                                  for m in _CONNECT_FAILED.finditer(text, start, end)))[:2]
    proof = [p for p in log.get("proof") or [] if p not in connects]
    if log and connects:
        log["proof"] = proof[:ncclog.MAX_PROOF - len(connects)] + connects
    return log


# the job's NCCL_COMM_ID as its launch printed it (`export NCCL_COMM_ID=10.0.0.5:29500`, an `env` dump, `-x` / `-e`):
# NCCL logs its own `NCCL_COMM_ID set by environment` only under NCCL_DEBUG_SUBSYS=ENV, and a bind refused on that
# address is the job's, never the host's (verify/checks/nccl/bindaddr.py)
_COMM_ID_SET = re.compile(r"(?<![\w-])NCCL_COMM_ID=['\"]?([^\s'\"]+)")


def _with_comm_id(log: dict[str, Any], text: str) -> dict[str, Any]:
    """NCCL's log with the job's NCCL_COMM_ID among its env where the launch printed it and NCCL did not."""
    if log and "NCCL_COMM_ID" not in (log.get("env") or {}) and (m := _COMM_ID_SET.search(text, 0, 1 << 20)):
        log["env"] = {**(log.get("env") or {}), "NCCL_COMM_ID": m.group(1)[:100]}
    return log


# NCCL's prefix naming the host a line is from (`host:pid:tid [dev] NCCL INFO`; a hand-trimmed `host:pid [dev]`):
# ncclog's, its host a name (a letter in it), never a number that lost its host
_HOST = re.compile(ncclog.PREFIX)
_NAMED = re.compile(r"[A-Za-z_]")


def _faulty(rows: dict[str, Any]) -> bool:
    """Connections that show a fault of their own: over sockets, or over IB/RoCE with none on GPUDirect RDMA."""
    connections, gdr = gdr_summary({"net_channels": rows})
    return "Socket" in rows or bool(connections and not gdr)


def _lines_with(text: str, word: str) -> Iterator[str]:
    """The text's lines that hold the word, found by a scan for it (a long log's other lines are never split)."""
    at = text.find(word)
    while at >= 0:
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        yield text[text.rfind("\n", 0, at) + 1:end]
        at = text.find(word, end)


def _one_host(log: dict[str, Any], text: str) -> dict[str, Any]:
    """NCCL's log with the connections of the one host the paste is judged as (FACTS.md: read host by host, the
    first host whose connections show a fault, else the first host): two nodes' `Channel ... via NET` lines counted
    as one node's would report connections no node made. Unchanged where one host (or none) is named, or where a
    connection's line names no host (whose it is is not shown)."""
    if not log.get("net_channels"):
        return log
    per_host: dict[str, list[str]] = {}
    for line in _lines_with(text, "via NET/"):
        host, said = _HOST.search(line), ncclog.message(line)
        if said is None:
            continue
        if host is None or not _NAMED.search(host.group(1)):
            return log
        per_host.setdefault(host.group(1), []).append(said)
    if len(per_host) < 2:
        return log
    rows = {host: ncclog.channels(said) for host, said in per_host.items()}
    order = sorted(rows, key=lambda host: text.find(f"{host}:"))
    judged = next((host for host in order if _faulty(rows[host])), order[0])
    return {**log, "net_channels": rows[judged]}


def parse(text: str) -> dict[str, Any]:
    version = _VERSION.search(text)
    # no failure logged: two ranks of one communicator placed on one GPU is NCCL's refusal at init (dupgpu.py)
    # an engine's own custom all-reduce refused peer access: the failure, whatever NCCL logged beside it (customar.py)
    error = customar.failed(text) or opname.named(_error(text) or dupgpu.duplicate(text) or _caught(text)
                                                  or _store_lost(text) or mpiexit.exited(text), text)
    error = proxysock.with_socket_cause(error, text)     # the proxy's casualty beside the socket's errno
    world, nodes = _sizes(text)
    # nccl-tests' `#  Rank N ... on <host> device D [bus] <GPU>` lines above the log: its ranks, nodes and GPU
    listed, on, gpu = ranks(text)
    gpu = gpu or torcharch.gpu_named(text)     # torch's warning above the log names the GPU where nccl-tests does not
    nodes = nodes if world else on
    if nodes is None and (oneproc.one_node(text) or (world or listed) == 1):
        nodes = 1                       # one process, several GPUs, or a communicator of one rank: one node
    return {"backend": "nccl", "nccl_version": version.group(1) if version else None, "sizes": None, "error": error,
            "world_size": world or listed, "nodes": nodes, "nccl_log": _with_comm_id(_with_connects(_one_host(_log(text), text), text), text),
            **({"device_name": gpu} if gpu else {}), **_listed(text), **_limit(text)}


def _caught(text: str) -> str | None:
    """Open MPI's handler catching a signal in a rank (`[host:pid] *** Process received signal ***`) where nothing
    else names the failure: the crash, judged by verify/checks/nccl/crash.py."""
    caught = printed(CAUGHT, text)
    if not caught:
        return None
    start = text.rfind("\n", 0, caught.start()) + 1
    return f"all_reduce: {text[start:caught.end()].strip()[:300]}"


def _store_lost(text: str) -> str | None:
    """torch's c10d store client losing its server (`... Did the remote server shutdown or crash?`) where nothing else
    names the failure: the line whole, judged by verify/checks/nccl/casualty.py."""
    lost = printed(casualty.STORE_LOST, text)
    if not lost:
        return None
    start = text.rfind("\n", 0, lost.start()) + 1
    return f"all_reduce: {text[start:lost.end()].strip()[:600]}"


def _limit(text: str) -> dict[str, Any]:
    """The memlock limit the log's command line set for the program (`ulimit -l unlimited && ...`)."""
    chained = setlimit.memlock(text)
    return {"memlock_bytes": chained} if chained is not None else {}
