# cronscale — Kubernetes operator for scheduled tasks and commerce platforms.
# Every target brings what it needs: Node 24 (hack/node.sh), npm packages, host packages for the
# local node, and the control-plane binaries (built from Go modules, cached outside the tree).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Node 24 from the project's own cache, put first on PATH inside each recipe.
WITH_NODE = PATH="$$(hack/node.sh):$$PATH"
NPM = $(WITH_NODE) npm
NPX = $(WITH_NODE) npx

# Local cluster knobs (see hack/cluster/README.md).
export CLUSTER_NAME ?= cronscale
export KWOK_NODES ?= 0
export ADDONS ?=
# Add-ons of the throwaway cluster the integration tests start: all of them, so the platform
# tests run for real. `CRONSCALE_TEST_ADDONS= make test` runs a task-only cluster; the tests that
# need an add-on then skip and say why.
export CRONSCALE_TEST_ADDONS ?= platform

##@ General

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} \
	  /^[a-zA-Z0-9_-]+:.*?##/ { printf "  \033[36m%-22s\033[0m %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

node_modules/.stamp: package.json package-lock.json
	$(NPM) ci --no-audit --no-fund
	@touch $@

.PHONY: deps
deps: node_modules/.stamp ## Install Node 24 (if missing) and the npm packages

.PHONY: build
build: deps ## Compile TypeScript to dist/ and bundle the operator into dist/operator.js
	$(NPM) run build

.PHONY: lint
lint: deps ## Lint and check formatting (biome)
	$(NPX) biome check .

.PHONY: fmt
fmt: deps ## Format the code
	$(NPX) biome check --write .

.PHONY: typecheck
typecheck: deps ## Type-check everything, tests included
	$(NPX) tsc -p tsconfig.json --noEmit

.PHONY: generate
generate: deps ## Regenerate the CRDs, the chart's CRDs and manifests/install.yaml from src/api
	HELM="$$(hack/cluster/build.sh helm)/helm" $(WITH_NODE) node hack/gen/crds.ts

.PHONY: verify-generated
verify-generated: deps ## Fail when a generated file is stale
	HELM="$$(hack/cluster/build.sh helm)/helm" $(WITH_NODE) node hack/gen/crds.ts --check

.PHONY: helm-lint
helm-lint: ## Lint the Helm chart (strict)
	"$$(hack/cluster/build.sh helm)/helm" lint --strict charts/cronscale

.PHONY: test-unit
test-unit: deps commerce/node_modules/.stamp ## Unit tests only (no cluster; the config contract test runs commerce's parser)
	$(NPX) vitest run --project unit

##@ Testing

.PHONY: test
test: deps host-deps cluster-build lint typecheck verify-generated helm-lint test-commerce ## The whole suite: checks, unit tests, integration tests on a local cluster
	$(NPX) vitest run

commerce/node_modules/.stamp: commerce/package.json commerce/package-lock.json
	$(NPM) ci --prefix commerce --no-audit --no-fund
	@touch $@

.PHONY: test-commerce
test-commerce: commerce/node_modules/.stamp ## The commerce service: types and its tests against a real PostgreSQL (host process)
	commerce/hack/postgres-deps.sh
	commerce/hack/chromium-deps.sh
	commerce/hack/stripe-mock.sh >/dev/null
	$(NPM) --prefix commerce run typecheck
	$(NPM) --prefix commerce test

.PHONY: test-integration
test-integration: deps host-deps cluster-build ## Integration tests on a local cluster (or KUBECONFIG)
	$(NPX) vitest run --project integration

##@ Local cluster

.PHONY: host-deps
host-deps: ## Install the Debian packages the local node needs (containerd, runc, CNI plugins, iptables)
	hack/cluster/host-deps.sh

.PHONY: cluster-build
cluster-build: ## Build the control-plane binaries from Go modules (cached by version)
	hack/cluster/build.sh

.PHONY: cluster-up
cluster-up: host-deps cluster-build ## Start the local cluster (KWOK_NODES=N simulated nodes, ADDONS=...)
	hack/cluster/up.sh

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and remove everything it made
	hack/cluster/down.sh

.PHONY: cluster-status
cluster-status: ## Say what of the local cluster is running
	hack/cluster/status.sh

.PHONY: images
images: ## Build every local image (cached, content-addressed)
	@for n in pause shell bash python go bun node postgres commerce kubeprobe; do hack/images/build.sh $$n; done

.PHONY: images-smoke
images-smoke: ## Run each local image in a private containerd (needs root)
	hack/images/smoke.sh

.PHONY: image
image: ## Build the operator image with the project's docker daemon (cached by input hash); prints its ref
	hack/docker/build-operator-image.sh

.PHONY: docker-down
docker-down: ## Stop the project's docker daemon (keeps its layer cache)
	hack/docker/dockerd.sh down

##@ Run

.PHONY: run
run: deps ## Local cluster with the platform add-ons (or KUBECONFIG) + CRDs + operator + samples
	$(WITH_NODE) ADDONS='$(if $(filter file,$(origin ADDONS)),platform,$(ADDONS))' hack/run.sh
