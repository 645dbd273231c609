import json, time
import pytest
from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, _args, _verify_writes, install_fake
from verify.prolog import cli, history, kernlog
pytestmark = pytest.mark.unit

def rec(tmp, code="PREFLIGHT_TIMEOUT", age=60.0, boot="same", event="not-assessed", **extra):
    b = kernlog.host_clock(kernlog.PROC).boot_id if boot == "same" else boot
    e = {"boot_id": b} if b else {}
    e.update(extra)
    history.record(str(tmp / "state"), "n1", event, code, "x", now=time.time() - age, extra=e)

def raw(tmp, line):
    p = tmp / "state" / "history" 
    import glob
    f = history.path(str(tmp / "state"), "n1")
    with open(f, "a") as fh: fh.write(line + "\n")

up = kernlog.host_clock(kernlog.PROC).uptime
CASES = {
 "two same boot": lambda t: (rec(t, age=600), rec(t, age=300)),
 "two other boot": lambda t: (rec(t, age=600, boot="deadbeef"), rec(t, age=300, boot="deadbeef")),
 "no boot id, before boot": lambda t: (rec(t, age=up + 600, boot=None), rec(t, age=up + 300, boot=None)),
 "other cause between": lambda t: (rec(t, age=600), rec(t, code="PREFLIGHT_NO_REPORT", age=450), rec(t, age=300)),
 "crash between": lambda t: (rec(t, age=600), rec(t, code="PROLOG_CRASHED", age=450), rec(t, age=300)),
 "config error between": lambda t: (rec(t, age=600), rec(t, code="CONFIG_ERROR", age=450), rec(t, age=300)),
 "garbled between": lambda t: (rec(t, age=600), raw(t, "{garbage"), rec(t, age=300)),
 "foreign node between": lambda t: (rec(t, age=600), raw(t, json.dumps({"schema": 1, "event": "pass", "epoch": time.time()-400, "time": "t", "node": "n2"})), rec(t, age=300)),
 "future epochs no uptime": lambda t: (rec(t, age=-86400), rec(t, age=-86000)),
 "future epochs with uptime (clock stepped back)": lambda t: (rec(t, age=-86400, uptime=up-600, started_up=up-610), rec(t, age=-86000, uptime=up-300, started_up=up-310)),
 "uptime past now": lambda t: (rec(t, age=600, uptime=up+5000), rec(t, age=300, uptime=up+6000)),
 "budget too small between": lambda t: (rec(t, age=600), rec(t, code="BUDGET_TOO_SMALL", age=450), rec(t, age=300)),
 "breaker refused between": lambda t: (rec(t, age=600), rec(t, event="drain-refused", code="PREFLIGHT_HUNG", age=450), rec(t, age=300)),
 "hung fault then resume": lambda t: (rec(t, age=900), rec(t, event="resume", code=None, age=600), rec(t, age=300)),
 "one hang": lambda t: rec(t, age=300),
 "hangs with bool uptime": lambda t: (rec(t, age=600, uptime=True), rec(t, age=300, uptime=True)),
 "hangs with nan epoch-like started": lambda t: (rec(t, age=600, started=float("nan")), rec(t, age=300, started=1e20)),
 "hangs 6 days ago": lambda t: (rec(t, age=6*86400), rec(t, age=5*86400)),
}

@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("env", ["prolog", "step"])
def test_streak(tmp_path, monkeypatch, capsys, name, env):
    fake = install_fake(monkeypatch)
    (tmp_path / "state").mkdir(mode=0o755)
    try:
        CASES[name](tmp_path)
    except Exception as exc:
        print(f"\nPROBE {env} {name}: setup {exc!r}"); return
    _verify_writes(monkeypatch, None, rc=None)
    rc = cli.main(_args(tmp_path, "--budget", "30"), PROLOG_ENV if env == "prolog" else STEP_ENV)
    out = capsys.readouterr()
    drains = [c for c in fake.calls if c and c[0] == "update"]
    tail = [l for l in (out.out).splitlines() if l.strip()][-1:]
    print(f"\nPROBE {env} {name}: rc={rc} drained={bool(drains)} {str(tail)[:200]}")
