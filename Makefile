# Verified PyTorch images. `make help` lists the targets; README.md explains them.
PYTHON ?= python3
CLI := $(PYTHON) -m scripts
IMAGE ?=
export IMAGE

.DEFAULT_GOAL := help
.PHONY: help setup render check-render lint compat base build verify test test-unit bench \
        ci-matrix bake k8s-verify slurm clean lock bench-build push attest report

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  make %-13s %s\n", $$1, $$2}'
	@echo "  variables: IMAGE=<tag>|all  KEEP_GOING=1  SHM_SIZE=2g  CA_CERT=  WHEELS=  BASE_IMAGE=  VERIFY_ARGS=  REGISTRY="

setup: ## install what the host side and the tests need (pip)
	$(PYTHON) -m pip install -r requirements-dev.txt

render: ## validate matrix.yaml and write images/<tag>/ (Dockerfile + spec.json)
	$(CLI) render

check-render: ## fail when images/ differs from a fresh render
	$(CLI) render --check

lint: ## hadolint every generated Dockerfile
	$(CLI) lint

compat: ## refresh compat.yaml from PyPI metadata (network, no wheel download)
	$(CLI) compat

base: ## bootstrap the distro base images offline (debootstrap, root)
	$(CLI) base

build: render ## build IMAGE (default: the matrix's default image; IMAGE=all for every one) with BuildKit
	$(CLI) build

verify: ## run the verify suite inside IMAGE's container; reports in reports/
	$(CLI) verify

test: ## the test suite (integration tests need a Docker Engine)
	$(PYTHON) -m pytest

test-unit: ## only the tests that need no engine and no network
	$(PYTHON) -m pytest -m "not docker"

bench: ## data-path benchmark: zero-copy Arrow vs memory, compressed IPC, h5py, DataLoader (1 GiB)
	$(PYTHON) -m verify bench --size $${BENCH_SIZE:-1g} --json build/bench.json

ci-matrix: ## print the matrix as JSON for a CI strategy.matrix
	@$(CLI) ci-matrix

bake: ## write docker-bake.json (one target per image) for docker buildx bake
	$(CLI) bake

k8s-verify: ## write Kubernetes manifests verifying IMAGE on NODES x GPUS (build/k8s/)
	$(CLI) k8s-verify --nodes $${NODES:-1} --gpus $${GPUS:-1}

slurm: ## write a Slurm batch script verifying IMAGE with enroot/pyxis (build/slurm/)
	$(CLI) slurm --nodes $${NODES:-1} --gpus $${GPUS:-1}

lock: ## resolve images/<tag>/requirements.lock (uv pip compile, hashes; IMAGE= limits, FORCE=1 re-resolves)
	$(CLI) lock

bench-build: render ## cold build: this image vs a plain pip Dockerfile; build/size/import-torch ratios
	$(CLI) bench-build

push: ## push IMAGE to REGISTRY=host:port and print its digest (reports/push/pushed.json)
	$(CLI) push --registry "$(REGISTRY)"

attest: ## attach IMAGE's verify report + SBOM to its pushed digest (OCI referrers; run after make verify)
	$(CLI) attest

report: ## print the verify result attached to IMAGE=registry/repo@sha256:...
	$(CLI) report

clean: ## remove build/ and reports/
	rm -rf build reports
