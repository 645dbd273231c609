"""The step's own temp folder on each node, and the ones SIGKILL left (the node script's lines: scripts/fleet/slurm.py).

torchrun leaves a torchelastic_* folder per launch in the temp folder and never removes it, so each step runs in a
folder of its own, `torchimages-step.XXXXXX`, removed by its EXIT trap. A step killed by SIGKILL (Slurm's KillWait
ran out, the OOM killer, CI's timeout) runs no trap: its folder stayed for good. Each step now holds an flock(2) on
the folder's `.lock` for as long as it or any child of it lives (the kernel drops it when the last one dies, SIGKILL
included, in any PID namespace: a PID check would misread a step of another container as gone), and at its start
removes the folders whose lock is free: only its own user's, never a link (nor anything through one: `rm -rf` does not
follow links below), only folders whose `.lock` is over a minute old (a step between mktemp and its lock keeps its
folder), and only this host's: the folder is named `torchimages-step.<host>.XXXXXX` (`uname -n`). A lock is the
kernel's that took it, and a TMPDIR shared by the nodes (`$HOME/tmp`) on a file system whose locks are node-local
(NFS `nolock` or `local_lock=flock`, Lustre `localflock`, BeeGFS by default) shows another node's live step's lock as
free: a step started there removed the folder of a step running here (hunt85). A folder of the old name
(`torchimages-step.XXXXXX`) tells no host: in /tmp, the node's own (never a shared file system: Slurm's
job_container/tmpfs makes it the job's), its lock was taken by this kernel, and it is removed by the same rules
(hunt89: the ones SIGKILL left before the rename stayed for good); in a TMPDIR elsewhere it is left alone. Where
flock(1) is missing the step runs as before, cleaning nothing.
"""
from __future__ import annotations

STALE_MIN = 1        # minutes a free .lock must be old before its folder counts as left behind

# what the node script runs: `scratch` names the step's folder (unset where none could be made: the step still runs)
SCRATCH_LINES = [
    # this host's name as a file name's part (a glob's or a path's character in it is none)
    "scratch_host=$(uname -n 2>/dev/null | tr -c 'A-Za-z0-9.\\n-' _); scratch_host=${scratch_host:-unnamed}",
    'if command -v flock >/dev/null 2>&1; then',
    '  for left in "${TMPDIR:-/tmp}/torchimages-step.$scratch_host".?????? '
    '"/tmp/torchimages-step.$scratch_host".?????? /tmp/torchimages-step.??????; do',
    '    [ -d "$left" ] && [ ! -L "$left" ] && [ -O "$left" ] && [ -f "$left/.lock" ] && [ ! -L "$left/.lock" ] '
    '|| continue',
    f'    [ -n "$(find "$left/.lock" -maxdepth 0 -mmin +{STALE_MIN} 2>/dev/null)" ] || continue',
    '    ( flock -n 8 && rm -rf -- "$left" ) 8<"$left/.lock" 2>/dev/null',
    '  done',
    'fi',
    'if scratch=$(mktemp -d "${TMPDIR:-/tmp}/torchimages-step.$scratch_host.XXXXXX" 2>/dev/null) || '
    'scratch=$(mktemp -d "/tmp/torchimages-step.$scratch_host.XXXXXX" 2>/dev/null); then',
    '  export TMPDIR=$scratch; trap \'rm -rf "$scratch"\' EXIT',
    # held by this shell and every child that keeps fd 8: the lock lasts as long as anything of the step runs
    '  command -v flock >/dev/null 2>&1 && exec 8>"$scratch/.lock" && flock -n 8',
    'fi',
]
