# Verified PyTorch images. `make help` lists the targets and variables; README.md explains them.
# Every target that runs Python first makes sure the project virtual environment ($(VENV)) is installed.
PYTHON ?= python3## interpreter that creates the virtual environment
VENV ?= .venv## the project virtual environment (created and filled by `make setup`)
IMAGE ?=## <tag>, <tag>,<tag> or all (default: the matrix's default image)
PLATFORM ?=## linux/amd64 or linux/arm64 (emulated on another host) for base, build, verify, k8s-verify, slurm; build: all
FORCE ?=## 1: make base bootstraps again even when present; make lock resolves again even when current
PER ?= platform## ci-matrix rows: platform (one per image and platform, with its runner) or tag (one per image)
KEEP_GOING ?=## 1: build the rest after a failure
SHM_SIZE ?= 2g## /dev/shm of the verify container and of each k8s-verify pod (emptyDir sizeLimit); slurm, isolate check it (the node's own is used)
VERIFY_TIMEOUT ?= 900## seconds before the verify container is killed
VERIFY_ARGS ?=## extra arguments for verify inside the container
CA_CERT ?=## proxy CA passed as a build secret (default: SSL_CERT_FILE, PIP_CERT, REQUESTS_CA_BUNDLE)
WHEELS ?=## local wheel folder(s) (default: the local folders in PIP_FIND_LINKS)
BASE_IMAGE ?=## build FROM this image instead of the distro base
REGISTRY ?=## registry prefix for bake, push, k8s-verify and slurm (e.g. ghcr.io/acme, 127.0.0.1:5000)
INDEX_ONLY ?=## 1: make push PUTs the tag's image index over the per-arch tags <tag>-<arch> already in REGISTRY
REGISTRY_INSECURE ?=## 1: talk plain HTTP to a REGISTRY that is not on loopback (127.0.0.1 and localhost get http already)
NODES ?= 1## nodes for k8s-verify and slurm
GPUS ?=## GPUs per node for k8s-verify, slurm and isolate (default: the image's, 0 for a CPU image, 1 for a CUDA one; 0: no GPU requested)
LOCAL_IMAGE ?=## 1: slurm, isolate, k8s-verify write the image's local name, which no registry holds (default: refused without REGISTRY)
UNPINNED ?=## 1: slurm, isolate, k8s-verify run REGISTRY's tag, which make push did not record (default: refused; make push pins the digest)
LAUNCHER ?= pyxis## make slurm: pyxis (enroot/pyxis), docker (srun docker run), oci (Slurm's native containers), none (a venv)
PREFLIGHT ?=## 1: make slurm writes a job that runs only `verify --preflight` on each node
SQSH ?=## make slurm, isolate LAUNCHER=pyxis: the nodes mount this squashfs (/shared/path/<tag>.sqsh, from make sqsh) instead of pulling
SQSH_COMP ?= zstd## make sqsh: the squashfs compression (zstd, gzip, xz, lz4, lzo)
BENCH_SIZE ?= 1g## data size of the benchmark
BENCH_AFTER ?=## bench-start: a local image of the family the node already holds; what pulling IMAGE after it moves
BENCH_RUNS ?=## bench-build: runs of `import torch` per image, the images taking turns; the median counts (default 15)
BENCH_ROUNDS ?=## bench-build: cold builds of each Dockerfile, in rotating order; the median counts (default 2)
EXTRA_BUILD_ARGS ?=## more KEY=VALUE build arguments for make build (e.g. COLD=1)
BUILD_TIMEOUT ?=## seconds before make build stops a build (default: none natively, 2700 under emulation)
BUILD_NETWORK ?=## network of make build's builds (default: host when the engine has no bridge)
RDMA_RESOURCE ?=## k8s-verify: the RDMA device plugin's resource a multi-node GPU pod requests, e.g. rdma/rdma_shared_device_a (default none)
BUILD_DIR ?= build## logs, wheels, manifests, bake file, benchmark JSON
REPORTS_DIR ?= reports## verify reports
SIGNING_KEY ?=## attest: private key that signs (default ~/.config/torchimages/signing-key.pem, from make keygen)
TRUST ?=## report, gate: public key file(s)/folder(s) whose signatures are believed (default: make keygen's .pub)
REQUIRE ?=## report, gate: what a trusted attestation must show, e.g. "verdict=pass gpu=H100 driver>=570"
KEY_DIR ?=## keygen: folder for the key pair, outside the repository (default ~/.config/torchimages)
KEY_TYPE ?=## keygen: ecdsa (P-256, default) or ed25519
HOST_DRIVER ?=## gate: this host's NVIDIA driver (default: nvidia-smi)
REPORT_TIMEOUT ?=## report, gate: seconds for all registry reads together (default 120)
MAX_AGE ?=## report, gate, fleet-report: the oldest verification believed, e.g. 7d or 12h (as REQUIRE's age<=7d)
CLOCK_SKEW ?=## report, gate, fleet-report, isolate: how far in the future a signed or recorded time may lie and be believed (default 5m; 0 to 1d)
DIR ?=## fleet-report: the folder a job wrote its verify reports into (searched recursively)
STATE_DIR ?=## fleet-report, undrain: the prolog's --state-dir; its per-node drain history is read (default: fleet-report none, undrain /var/lib/torchimages)
METRICS_DIR ?=## fleet-report: write Prometheus text-file metrics per node into this folder (default: not written)
NODE ?=## undrain: the Slurm node to revalidate and resume (run it on that node)
TEST_WORKERS ?= 2## make test: pytest-xdist workers (0: one process; tests/conftest.py puts the images and Slurm in one lane)
export IMAGE PLATFORM FORCE KEEP_GOING SHM_SIZE VERIFY_TIMEOUT VERIFY_ARGS CA_CERT WHEELS BASE_IMAGE REGISTRY NODES GPUS BUILD_DIR REPORTS_DIR
export DIR NODE STATE_DIR METRICS_DIR
export SIGNING_KEY TRUST REQUIRE KEY_DIR KEY_TYPE HOST_DRIVER REPORT_TIMEOUT MAX_AGE CLOCK_SKEW
export EXTRA_BUILD_ARGS BUILD_TIMEOUT RDMA_RESOURCE INDEX_ONLY PER BENCH_SIZE BENCH_AFTER VENV LAUNCHER PREFLIGHT LOCAL_IMAGE UNPINNED
export SQSH SQSH_COMP

# A variable never reaches a recipe's shell as code: it travels in the environment (exported above, read by the
# program) or is written single-quoted by $(call q,...) ('a b; c' stays one word: make ci-matrix PER='x; touch y'
# runs no touch).
q = '$(subst ','\'',$(1))'
PY := $(call q,$(VENV))/bin/python
CLI := $(PY) -m scripts
BOOTSTRAP := PYTHON=$(call q,$(PYTHON)) scripts/bootstrap.sh

.DEFAULT_GOAL := help
.PHONY: help setup engine render check-render lint static compat base build verify test test-unit test-host test-thorough bench \
        ci-matrix bake k8s-verify slurm isolate oci-bundle sqsh fleet-report undrain clean lock stage-wheels bench-build bench-start push attest report keygen gate

help: ## list the targets and the variables with their defaults
	@echo "targets:"
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  make %-13s %s\n", $$1, $$2}'
	@echo "variables (default after '='):"
	@grep -E '^[A-Z_]+ \?=' $(MAKEFILE_LIST) | sed -E 's/^([A-Z_]+) \?= ?([^#]*)## (.*)$$/\1|\2|\3/' \
	  | awk -F'|' '{printf "  %-20s %s\n", $$1 "=" $$2, $$3}'

setup: ## create the virtual environment VENV and install what the host side and the tests need (says what it installs)
	@$(BOOTSTRAP) venv $(call q,$(VENV))

engine: ## make sure a Docker Engine answers; as root on a bare Debian machine, install and start one
	@$(BOOTSTRAP) engine && echo "==> a Docker Engine answers"

render: setup ## validate matrix.yaml against compat.yaml and write images/<tag>/ (Dockerfile + spec.json)
	$(CLI) render

check-render: setup ## fail when images/ differs from a fresh render or a requirements.lock is missing or stale
	$(CLI) render --check

lint: setup ## hadolint every generated Dockerfile
	$(CLI) lint

static: setup ## ruff and mypy on scripts/, verify/ and tests/ with the project's configuration (pyproject.toml)
	$(PY) -m ruff check scripts verify tests
	$(PY) -m mypy

compat: setup ## refresh compat.yaml from PyPI metadata (network, no wheel download)
	$(CLI) compat

base: setup ## bootstrap the distro bases IMAGE needs, offline (debootstrap, root); PLATFORM=linux/arm64: emulated
	$(CLI) base

build: render engine ## build IMAGE with BuildKit (bootstraps the base first when the registry is unreachable)
	$(CLI) base --only-unreachable
	$(CLI) build

verify: setup engine ## run the verify suite inside IMAGE's container; reports in $(REPORTS_DIR)/
	$(CLI) verify

test: setup ## ruff, mypy and the test suite (starts an engine as root; without one the integration tests skip)
	@$(BOOTSTRAP) engine soft
	@$(BOOTSTRAP) actionlint $(call q,$(VENV))
	@$(BOOTSTRAP) test-tools
	$(MAKE) --no-print-directory static
	$(PY) -m pytest -n $(call q,$(TEST_WORKERS)) --dist loadscope

test-unit: setup ## the unit tier: pure logic, no program started (judges, rules, rendering; docs/testing.md)
	$(PY) -m pytest -m unit

test-host: setup ## the unit and host tiers without the slow tests: the CLI and verify run here, no engine
	$(PY) -m pytest -m "(unit or host) and not slow"

test-thorough: setup ## the property tests with 30x their examples (CI runs them bounded)
	HYPOTHESIS_PROFILE=thorough $(PY) -m pytest tests/test_properties.py tests/test_bad_inputs_properties.py \
	  tests/test_figures_properties.py tests/test_verify_properties.py

bench: setup ## data-path benchmark: zero-copy Arrow vs memory, compressed IPC, h5py, DataLoader
	@mkdir -p -- "$$BUILD_DIR"
	$(PY) -m verify bench --size "$$BENCH_SIZE" --json "$$BUILD_DIR/bench.json"

ci-matrix: setup ## print the rendered images as JSON for a CI strategy.matrix
	@$(CLI) ci-matrix --per "$$PER"

bake: setup ## write $(BUILD_DIR)/docker-bake.json (one target per image) for docker buildx bake
	$(CLI) bake

k8s-verify: setup ## write Kubernetes manifests verifying IMAGE on NODES x GPUS ($(BUILD_DIR)/k8s/)
	$(CLI) k8s-verify

slurm: setup ## write a Slurm batch script verifying IMAGE on NODES x GPUS through LAUNCHER ($(BUILD_DIR)/slurm/)
	$(CLI) slurm

isolate: setup ## write a Slurm job finding which of NODES nodes makes the all-reduce fail or slow ($(BUILD_DIR)/slurm/isolate-*)
	$(CLI) isolate

oci-bundle: setup engine ## the runc bundle of IMAGE for make slurm LAUNCHER=oci ($(BUILD_DIR)/slurm/<tag>.bundle)
	$(CLI) oci-bundle

sqsh: setup engine ## IMAGE's root filesystem as one reproducible squashfs for enroot/pyxis ($(BUILD_DIR)/sqsh/<tag>.sqsh + .json: sha256)
	$(CLI) sqsh

fleet-report: setup ## one table and DIR/fleet.json over every node's verify report in DIR=<job output> (+ STATE_DIR history, METRICS_DIR .prom)
	$(CLI) fleet-report

undrain: setup ## on NODE, drained by torchimages: rerun the preflight, resume it only on a pass (exit 0; else 1, 3 or 5)
	$(PY) -m verify.prolog --revalidate --node "$$NODE" $${STATE_DIR:+--state-dir "$$STATE_DIR"}

lock: setup ## resolve images/<tag>/requirements.lock (uv pip compile, hashes; IMAGE= limits, FORCE=1 re-resolves)
	$(CLI) lock

stage-wheels: setup ## fill build/wheels for IMAGE (locked local wheels + uv's wheel) before `docker buildx bake`
	$(CLI) stage-wheels

bench-build: render engine ## cold build: IMAGE vs plain one-stage pip and uv Dockerfiles; build/size/import-torch ratios
	$(CLI) base --only-unreachable
	$(CLI) bench-build

bench-start: setup engine ## cold start: IMAGE vs the plain pip image via a loopback registry, Docker (gzip), containerd (zstd; Debian 13's too) and the squashfs
	@$(BOOTSTRAP) bench-tools
	-@$(BOOTSTRAP) modern-containerd
	$(CLI) bench-start

push: setup engine ## push IMAGE to REGISTRY=host:port, print its digests; several platforms: one tag, an OCI image index
	$(CLI) push

keygen: setup ## write a signing key pair (KEY_TYPE=ecdsa|ed25519) to ~/.config/torchimages (0600), never the repository
	$(CLI) keygen

attest: setup ## sign IMAGE's verify report, SBOM and provenance (SIGNING_KEY) and attach them to its pushed digest
	$(CLI) attest

report: setup ## verify (TRUST=keys), then print, the newest attestation of IMAGE (a digest or a pushed tag); REQUIRE=, MAX_AGE= gate
	$(CLI) report

gate: setup ## one line; exit 0 only if IMAGE has a TRUST-signed attestation meeting REQUIRE and fits this driver
	$(CLI) gate

clean: ## remove BUILD_DIR and REPORTS_DIR, only when each is a folder the project writes (the virtual environment stays)
	@scripts/clean.sh
