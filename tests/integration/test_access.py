"""Access flavors for real: the built `-jupyter-ssh` image, a real HTTP client, a real browser, a real ssh client.

The engine runs with --bridge=none, so the containers share the host's network (--network host) on free ports
(JUPYTER_PORT, SSH_PORT). The browser is Debian's chromium driven by Playwright (never `playwright install`).
"""
from __future__ import annotations

import io
import json
import re
import secrets
import shutil
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from scripts.plan.spec import ImageSpec
from scripts.render import load_rendered
from tests.helpers import TEST_COMPAT, TEST_MATRIX, free_port, run_cli

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# The access entry of the test matrix (tests/data/matrix.yaml), rendered into a temporary folder under this test's
# own repository name, so that no other test's image on the shared engine is replaced.
REPOSITORY = "torchimages-test-access"
TAG = "2.13.0-cpu-debian12-jupyter-ssh"
IMAGE = f"{REPOSITORY}:{TAG}"
SCRATCH: dict[str, str] = {}   # MATRIX, COMPAT, IMAGES_DIR, BUILD_DIR, REPORTS_DIR: all under a temporary folder
LABEL = {"io.torchimages.test": "access"}
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SSH_OPTS = ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
            "-o", "ConnectTimeout=10", "-o", "LogLevel=ERROR"]
# Where Jupyter reads configuration from (jupyter --paths); a config file there, or one anywhere that sets a token or
# password, would be baked into every container. (Packages ship test configs in site-packages: those are fine.)
CONFIG_DIR = re.compile(r"(^|/)(etc/jupyter|\.jupyter|share/jupyter/runtime)/")
CONFIG_SECRET = re.compile(rb"""[._"'](token|password)["']?\s*[=:]\s*u?["'][^"']""", re.IGNORECASE)
TOKENS: list[str] = []      # every token a test container got: the layer scan looks for each


def http(url: str, token: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def wait_for_log(container, needle: str, timeout: float = 180) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        logs = container.logs().decode(errors="replace")
        if needle in logs:
            return logs
        container.reload()
        if container.status == "exited":
            pytest.fail(f"container exited before {needle!r}:\n{logs[-3000:]}")
        time.sleep(1)
    pytest.fail(f"{needle!r} not in the logs within {timeout:.0f} s:\n{container.logs().decode(errors='replace')[-3000:]}")


def start(client, command: list[str], environment: dict[str, str], **kwargs):
    container = client.containers.run(IMAGE, command, detach=True, network_mode="host", shm_size="2g",
                                      environment=environment, labels=LABEL, **kwargs)
    return container


def run_to_end(client, command: list[str], environment: dict[str, str], timeout: float = 60, **kwargs) -> tuple[int, str]:
    container = client.containers.run(IMAGE, command, detach=True, network_mode="host",
                                      environment=environment, labels=LABEL, **kwargs)
    try:
        code = container.wait(timeout=timeout)["StatusCode"]
        return code, container.logs().decode(errors="replace")
    finally:
        container.remove(force=True)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> dict[str, str]:
    """The test matrix under this test's repository name, rendered into a temporary IMAGES_DIR; every write of the
    CLI runs below (build logs, reports) goes under the same temporary folder, nothing into the checkout."""
    base = tmp_path_factory.mktemp("access")
    matrix = base / "matrix.yaml"
    matrix.write_text(re.sub(r"(?m)^repository: .*$", f"repository: {REPOSITORY}", TEST_MATRIX.read_text()))
    SCRATCH.update(MATRIX=str(matrix), COMPAT=str(TEST_COMPAT), IMAGES_DIR=str(base / "images"),
                   BUILD_DIR=str(base / "build"), REPORTS_DIR=str(base / "reports"))
    render = run_cli("render", env=SCRATCH, timeout=300)
    assert render.returncode == 0, render.stdout + render.stderr
    lock = run_cli("lock", "--image", TAG, env=SCRATCH, timeout=900)     # a fresh render has no lock yet
    assert lock.returncode == 0, lock.stdout + lock.stderr
    return SCRATCH


@pytest.fixture(scope="module")
def access_spec(docker_client, scratch) -> ImageSpec:
    spec = next(s for s in load_rendered(Path(scratch["IMAGES_DIR"])) if s.tag == TAG)
    assert spec.image == IMAGE and spec.access == ("jupyter", "ssh")
    base = run_cli("base", "--image", TAG, env=scratch, timeout=900)
    assert base.returncode == 0, base.stdout + base.stderr
    build = run_cli("build", "--image", TAG, env=scratch, timeout=1800)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    return spec


@pytest.fixture(scope="module")
def access_image(access_spec) -> str:
    return access_spec.image


@pytest.fixture(scope="module")
def ssh_key(tmp_path_factory) -> Path:
    key = tmp_path_factory.mktemp("ssh") / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "access-test", "-f", str(key)], check=True)
    return key


@pytest.fixture(scope="module")
def server(docker_client, access_spec, ssh_key):
    """One container of the image with both services (`access`): JupyterLab and sshd."""
    token = secrets.token_hex(20)
    TOKENS.append(token)
    ports = {"jupyter": free_port(), "ssh": free_port()}
    container = start(docker_client, ["access"], {
        "JUPYTER_TOKEN": token, "JUPYTER_PORT": str(ports["jupyter"]), "SSH_PORT": str(ports["ssh"]),
        "SSH_PUBLIC_KEY": ssh_key.with_suffix(".pub").read_text().strip()})
    try:
        wait_for_log(container, "JupyterLab is up")
        wait_for_log(container, "Server listening on 0.0.0.0 port")
        yield {"container": container, "token": token, **ports, "url": f"http://127.0.0.1:{ports['jupyter']}",
               "spec": access_spec}
    finally:
        container.remove(force=True)


def ssh(key: Path, port: int, user: str, *command: str, extra: list[str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["ssh", *SSH_OPTS, *(extra or []), "-i", str(key), "-p", str(port), f"{user}@127.0.0.1",
                           *command], capture_output=True, text=True, timeout=120, check=False)


# ---- Jupyter ----

def test_the_api_refuses_without_the_token_and_answers_with_it(server):
    for endpoint in ("/api/status", "/api/kernels", "/api/contents"):
        assert http(server["url"] + endpoint) in (401, 403), endpoint
        assert http(server["url"] + endpoint, token="wrong-" + server["token"]) in (401, 403), endpoint
        assert http(server["url"] + endpoint, token=server["token"]) == 200, endpoint
    assert http(f"{server['url']}/api/status?token={server['token']}") == 200


def test_jupyter_runs_as_the_non_root_user_and_the_default_command_is_a_shell(server, docker_client):
    top = server["container"].top(ps_args="-eo pid,uid,args")
    rows = [p for p in top["Processes"] if "jupyter-lab" in p[-1] or "jupyter lab" in p[-1] or "sshd" in p[-1]]
    uid = top["Titles"].index("UID")
    assert len(rows) >= 2 and all(p[uid] == "1000" for p in rows), top
    config = docker_client.images.get(IMAGE).attrs["Config"]
    assert config["Cmd"] == ["/bin/bash"] and config["Entrypoint"] == ["/usr/local/bin/torchimages-entrypoint"]
    assert config["User"] == "1000:1000"
    assert {"8888/tcp", "2222/tcp"} <= set(config["ExposedPorts"])
    assert config["Healthcheck"]["Test"] == ["CMD", "/usr/local/bin/torchimages-healthcheck"]
    out = docker_client.containers.run(IMAGE, ["bash", "-c", "id -u; echo $0"], remove=True, network_mode="none")
    assert out.decode().split() == ["1000", "bash"]


def test_the_token_never_appears_in_the_logs_when_given(server):
    assert server["token"] not in server["container"].logs().decode(errors="replace")


def test_a_browser_runs_torch_and_verify_in_a_notebook(server, tmp_path):
    try:
        from playwright import sync_api as playwright
    except ImportError:
        pytest.fail("playwright is missing: pip install -r requirements-dev.txt (it drives /usr/bin/chromium)")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} missing: apt-get install chromium (.ci/run installs it)")
    shot = tmp_path / "jupyterlab-notebook.png"
    code = ["import torch", 'print("torch", torch.__version__, "sum", torch.ones(3).sum().item())',
            "!verify --checks shm"]
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(60_000)
            page.goto(f"{server['url']}/lab?token={server['token']}")
            # a new notebook from the launcher, on the image's Python kernel
            page.locator('.jp-LauncherCard[data-category="Notebook"]').first.click()
            editor = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell .cm-content").first
            editor.wait_for()
            page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(timeout=120_000)
            editor.click()
            for i, line in enumerate(code):
                page.keyboard.type(line)
                if i < len(code) - 1:
                    page.keyboard.press("Enter")
            page.keyboard.press("Shift+Enter")
            # Under load JupyterLab can drop the first run request (the cell keeps its `[ ]:` prompt and the
            # kernel stays idle): run the cell again in place until its prompt shows it was sent ([*] or [n]).
            cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first
            for _ in range(4):
                try:
                    cell.locator(".jp-InputPrompt").filter(has_text=re.compile(r"\[(\*|\d+)\]:")).wait_for(timeout=30_000)
                    break
                except playwright.TimeoutError:
                    cell.locator(".cm-content").click()
                    page.keyboard.press("Control+Enter")
            output = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output").filter(has_text="verdict:")
            try:
                output.first.wait_for(timeout=240_000)
            except playwright.TimeoutError:
                # what the notebook showed instead, and a picture of it, so that a slow or failed cell can be told apart
                page.screenshot(path=str(shot), full_page=True)
                pytest.fail(f"no `verify` verdict in the cell output within 240 s (screenshot: {shot}); the cell shows:\n"
                            f"{cell.inner_text()}")
            cell.locator(".jp-InputPrompt").filter(has_text=re.compile(r"\[\d+\]:")) \
                .wait_for(timeout=120_000)   # the cell finished, not only printed
            text = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.inner_text()
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    print(f"\nscreenshot: {shot}")
    assert shot.stat().st_size > 10_000
    assert re.search(rf"torch {re.escape(server['spec'].torch)}\S* sum 3\.0", text), text
    assert re.search(r"shm\s+PASS", text) and "verdict: PASS" in text, text


def test_the_image_healthcheck_sees_both_services(server):
    code, out = server["container"].exec_run(["/usr/local/bin/torchimages-healthcheck"])
    assert code == 0, out
    assert f"jupyter http://127.0.0.1:{server['jupyter']}" in out.decode() and f"sshd :{server['ssh']}" in out.decode()
    # and the engine's own health status, once its first probe has run (interval 30 s)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        server["container"].reload()
        health = server["container"].attrs["State"].get("Health", {})
        if health.get("Status") == "healthy":
            break
        time.sleep(2)
    assert health.get("Status") == "healthy", health


# ---- refusals and token sources ----

def test_an_empty_token_or_auth_options_are_refused_without_the_unsafe_switch(access_image, docker_client):
    port = str(free_port())
    code, out = run_to_end(docker_client, ["jupyter"], {"JUPYTER_TOKEN": "", "JUPYTER_PORT": port})
    assert code == 2 and "an empty token switches authentication off" in out and "--unsafe-no-token" in out
    code, out = run_to_end(docker_client, ["jupyter", "--ServerApp.token="], {"JUPYTER_PORT": port})
    assert code == 2 and "refusing --ServerApp.token" in out
    code, out = run_to_end(docker_client, ["jupyter", "--IdentityProvider.token=abc"], {"JUPYTER_PORT": port})
    assert code == 2 and "refusing --IdentityProvider.token" in out and "abc" not in out   # the value is never echoed
    code, out = run_to_end(docker_client, ["jupyter"], {"JUPYTER_PORT": port}, user="0")
    assert code == 2 and "refusing to run JupyterLab as root" in out
    assert "Traceback" not in out


def test_the_unsafe_switch_is_explicit_and_loud(access_image, docker_client):
    port = free_port()
    container = start(docker_client, ["jupyter", "--unsafe-no-token"], {"JUPYTER_PORT": str(port)})
    try:
        logs = wait_for_log(container, "JupyterLab is up")
        assert "WARNING: --unsafe-no-token: JupyterLab runs WITHOUT authentication" in logs
        assert http(f"http://127.0.0.1:{port}/api/status") == 200
    finally:
        container.remove(force=True)


def test_a_generated_token_is_printed_once_and_works(access_image, docker_client):
    port = free_port()
    container = start(docker_client, ["jupyter"], {"JUPYTER_PORT": str(port)})
    try:
        logs = wait_for_log(container, "JupyterLab is up")
        token = re.search(r"shown once and stored nowhere: http://127\.0\.0\.1:\d+/lab\?token=([0-9a-f]+)", logs).group(1)  # type: ignore[union-attr]
        TOKENS.append(token)
        assert len(token) >= 40 and logs.count(token) == 1, logs
        assert http(f"http://127.0.0.1:{port}/api/status") == 403
        assert http(f"http://127.0.0.1:{port}/api/status", token=token) == 200
    finally:
        container.remove(force=True)


def test_the_token_from_a_mounted_secret_file(access_image, docker_client, tmp_path):
    token = secrets.token_hex(20)
    TOKENS.append(token)
    secret = tmp_path / "jupyter_token"
    secret.write_text(token + "\n")
    secret.chmod(0o644)
    port = free_port()
    container = start(docker_client, ["jupyter"], {"JUPYTER_PORT": str(port)},
                      volumes={str(secret): {"bind": "/run/secrets/jupyter_token", "mode": "ro"}})
    try:
        logs = wait_for_log(container, "JupyterLab is up")
        assert "token from /run/secrets/jupyter_token" in logs and token not in logs
        assert http(f"http://127.0.0.1:{port}/api/kernels") == 403
        assert http(f"http://127.0.0.1:{port}/api/kernels", token=token) == 200
    finally:
        container.remove(force=True)


# ---- SSH ----

def test_ssh_with_the_key_logs_in_and_runs_verify(server, ssh_key):
    proc = ssh(ssh_key, server["ssh"], "torch", "id -un; verify --list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split()
    assert lines[0] == "torch"
    for check in ("gpu", "nccl", "shm", "hdf5", "arrow", "vision", "dataloader"):
        assert check in proc.stdout, proc.stdout
    login = ssh(ssh_key, server["ssh"], "torch", "bash -lc 'command -v python3; python3 -c \"import torch, verify\"'")
    assert login.returncode == 0 and login.stdout.strip() == "/opt/venv/bin/python3", login.stdout + login.stderr


def test_ssh_offers_publickey_only_and_refuses_a_password_login(server, ssh_key, tmp_path):
    proc = subprocess.run(["ssh", *SSH_OPTS, "-v", "-o", "PreferredAuthentications=password,keyboard-interactive",
                           "-o", "PubkeyAuthentication=no", "-p", str(server["ssh"]), "torch@127.0.0.1", "true"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 255
    offered = re.findall(r"Authentications that can continue: (\S+)", proc.stderr)
    assert offered and set(offered) == {"publickey"}, proc.stderr[-2000:]
    assert "Permission denied (publickey)" in proc.stderr
    if shutil.which("sshpass"):
        proc = subprocess.run(["sshpass", "-p", "torch", "ssh", *SSH_OPTS[:-4], "-o", "BatchMode=no",
                               "-o", "PubkeyAuthentication=no", "-p", str(server["ssh"]), "torch@127.0.0.1", "true"],
                              capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode != 0 and "Permission denied" in proc.stderr


def test_ssh_refuses_root_even_with_an_authorized_key(server, ssh_key):
    proc = ssh(ssh_key, server["ssh"], "root", "true")
    assert proc.returncode == 255 and "Permission denied" in proc.stderr, proc.stderr


def test_every_container_gets_its_own_host_keys(server, docker_client, ssh_key):
    port = free_port()
    other = start(docker_client, ["sshd"], {"SSH_PORT": str(port), "SSH_PUBLIC_KEY": ssh_key.with_suffix(".pub").read_text()})
    try:
        wait_for_log(other, "Server listening on 0.0.0.0 port")

        def host_key(p: int) -> str:
            out = subprocess.run(["ssh-keyscan", "-t", "ed25519", "-p", str(p), "127.0.0.1"], capture_output=True,
                                 text=True, timeout=30, check=True).stdout
            return out.split()[-1]
        assert host_key(port) != host_key(server["ssh"])
    finally:
        other.remove(force=True)


def test_the_healthcheck_notices_a_dead_sshd(server):
    code, out = server["container"].exec_run(["sh", "-c", "kill $(cat /run/torchimages/sshd/sshd.pid)"])
    assert code == 0, out
    time.sleep(1)
    code, out = server["container"].exec_run(["/usr/local/bin/torchimages-healthcheck"])
    assert code == 1 and "unhealthy: sshd" in out.decode() and "is not running" in out.decode(), out


def test_sshd_without_a_key_refuses_to_start(access_image, docker_client):
    code, out = run_to_end(docker_client, ["sshd"], {"SSH_PORT": str(free_port())})
    assert code == 2 and "no public key to let anyone in (password login is off)" in out
    code, out = run_to_end(docker_client, ["sshd"], {"SSH_PORT": str(free_port()), "SSH_PUBLIC_KEY": "not a key"})
    assert code == 2 and "hold no valid public key" in out
    code, out = run_to_end(docker_client, ["access"], {"SSH_PORT": str(free_port()), "JUPYTER_PORT": str(free_port())})
    assert code == 2 and "no public key" in out and "for JupyterLab alone run the command `jupyter`" in out
    assert "Traceback" not in out


# ---- the image itself ----

def test_make_verify_of_the_access_image_has_no_failure(access_spec, scratch):
    proc = run_cli("verify", "--image", TAG, env=scratch, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    report = json.loads((Path(scratch["REPORTS_DIR"]) / f"{TAG}.json").read_text())
    status = {c["name"]: c["status"] for c in report["checks"]}
    # arrow's throughput ratio can WARN on a loaded shared machine; what access must not break is anything failing
    assert "fail" not in status.values() and status["shm"] == "pass" and status["hdf5"] == "pass", status
    assert status["arrow"] in ("pass", "warn"), status
    assert f"{TAG}: torch, Python, CUDA, cuDNN and NCCL inside the image match its spec" in proc.stdout


def scan_saved_image(saved: io.BytesIO, needles: list[bytes]) -> tuple[int, int, list[str]]:
    """Walk every layer of a `docker save` archive: (layers, files scanned, findings)."""
    scanned, layers, found = 0, 0, []
    with tarfile.open(fileobj=saved) as outer:
        manifest = json.loads(outer.extractfile("manifest.json").read())  # type: ignore[union-attr]
        for layer_name in manifest[0]["Layers"]:
            layers += 1
            with tarfile.open(fileobj=outer.extractfile(layer_name)) as layer:
                for entry in layer.getmembers():
                    base = entry.name.rsplit("/", 1)[-1]
                    if re.fullmatch(r"ssh_host_\w+_key(\.pub)?", base):
                        found.append(f"host key {entry.name} in {layer_name}")
                    config = re.fullmatch(r"jupyter_(server|notebook|lab)_config\.(py|json)", base)
                    if re.fullmatch(r"jpserver-\d+\.json|jupyter_token|jupyter_cookie_secret|notebook_secret", base) \
                            or (config and CONFIG_DIR.search(entry.name)):
                        found.append(f"jupyter runtime file or config {entry.name} in {layer_name}")
                    if entry.name.startswith(("run/secrets/", "home/torch/.jupyter", "home/torch/.local/share/jupyter/runtime")):
                        found.append(f"{entry.name} in {layer_name}")
                    if entry.isfile() and entry.size < 64 << 20:
                        data = layer.extractfile(entry).read()  # type: ignore[union-attr]
                        if any(n in data for n in needles):
                            found.append(f"a test token in {entry.name} ({layer_name})")
                        if (config or CONFIG_DIR.search(entry.name)) and CONFIG_SECRET.search(data):
                            found.append(f"a token or password set in {entry.name} ({layer_name})")
                        scanned += 1
    return layers, scanned, found


def test_the_layer_scan_finds_what_it_looks_for():
    """The scanner itself, on a two-layer archive with a host key, a token and a token-setting config planted."""
    def tar_of(files: dict[str, bytes]) -> bytes:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        return buffer.getvalue()
    layers = {"a/layer.tar": tar_of({"etc/ssh/ssh_host_ed25519_key": b"KEY", "etc/hostname": b"x"}),
              "b/layer.tar": tar_of({"opt/app/notes.txt": b"token-canary-123",
                                     "opt/venv/etc/jupyter/jupyter_server_config.d/x.json": b'{"token": "abc"}',
                                     "opt/venv/lib/site-packages/pkg/tests/jupyter_server_config.py": b"c.X.port = 1"})}
    manifest = json.dumps([{"Layers": list(layers)}]).encode()
    archive = io.BytesIO(tar_of({"manifest.json": manifest, **layers}))
    count, scanned, found = scan_saved_image(archive, [b"token-canary-123"])
    assert (count, scanned) == (2, 5)
    assert found == ["host key etc/ssh/ssh_host_ed25519_key in a/layer.tar", "a test token in opt/app/notes.txt (b/layer.tar)",
                     "a token or password set in opt/venv/etc/jupyter/jupyter_server_config.d/x.json (b/layer.tar)"]


def test_no_host_key_token_or_jupyter_secret_in_any_layer(access_image, docker_client):
    """Runs last in this module: every token the containers above used must be absent from every layer."""
    assert TOKENS, "the container tests above did not run"
    saved = io.BytesIO(b"".join(docker_client.images.get(IMAGE).save(named=True)))
    layers, scanned, found = scan_saved_image(saved, [t.encode() for t in TOKENS])
    assert layers >= 10 and scanned > 1000 and not found, found
