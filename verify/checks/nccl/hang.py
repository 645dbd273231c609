"""Whether a failed collective's error says it hung (NCCL_TIMEOUT) or failed (NCCL_FAILED), by the words that name a
timeout and nothing else:
- torch's watchdog: `Watchdog caught collective operation timeout: WorkNCCL(..., Timeout(ms)=600000) ran for 600087
  milliseconds before timing out`, its heartbeat monitor (`Heartbeat monitor timed out!`), `watchdog got stuck`;
- a wait that ran out: `timed out after 1800s`, c10d's `TimeoutError` / `DistStoreError: Timed out after ...`, NCCL's
  and a translator's `timeout`, `timed out`, a hang said `hung`, `hangs`, `stuck`; torch's Flight Recorder's `Not all ranks joining collective`
  (flightrec.py).
Words that say "failed, or timed out" name no timeout: torch's teardown (`Some NCCL operations have failed or timed
out`), its `Exception (either an error or timeout) detected by watchdog`, a watchdog thread that ended on an exception
(`NCCL watchdog thread terminated with exception: CUDA error: ...`: the error it caught), ETIMEDOUT's errno text of a
call that returned (`Call to connect returned Connection timed out, retrying`; `ibv_modify_qp failed with 110
Connection timed out`) and `Timeout(ms)=600000` alone (the collective's limit, printed on a failure's line as well)."""
from __future__ import annotations

import re

# removed before the search: each says a failure as well as (or instead of) a timeout
_EITHER = re.compile(r"failed or timed out|(?:either )?an? error or (?:a )?timeout|watchdog thread terminated with "
                     r"exception|(?:\b110 )?Connection timed out|\bTimeout\(ms\)=\d+", re.IGNORECASE)
_HANG = re.compile(r"Watchdog caught collective operation timeout|before timing out|Heartbeat monitor timed out|"
                   r"watchdog got stuck|\btimed? ?out\b|\btimeout(?:s|error|exception)?\b|\bhung\b|\bhangs?\b|"
                   r"\bhanging\b|\bstuck\b|Not all ranks joining collective", re.IGNORECASE)


def is_timeout(error: str) -> bool:
    return bool(_HANG.search(_EITHER.sub(" ", error)))
