# pvkit. `make demo` runs the main job; `make test` runs every test.
SHELL := /bin/bash
export GOTOOLCHAIN := local
# One set of build flags for every command (vet, build, test, fuzz), so that
# they share one build cache: with -trimpath and CGO_ENABLED=0 on the build
# only, a cold make test compiled every dependency twice (go vet of pvctl
# 184 s, then its build 162 s more).
export GOFLAGS := -buildvcs=false -trimpath
export CGO_ENABLED := 0

FUNCTIONS := package-context pipeline-prepend config-inject pvs-expand
BINARIES  := $(addprefix bin/,$(FUNCTIONS))
# Images are $(IMAGE_REPO)/<function>:$(VERSION) and :dev (contract.md).
VERSION    ?= $(shell cat VERSION)
COMMIT     ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
IMAGE_REPO := pvkit
BENCH_COUNT ?= 5
# make bench takes about 15 minutes (Porch's PackageVariantSet reconciler alone is 30 s a run).
# Fuzzing runs by execution count, not time: a duration -fuzztime trips Go 1.26's
# coordinator race at the deadline (golang/go#75804, fixed in Go 1.27).
FUZZ_EXECS  ?= 500000
FUZZ_SHORT  ?= 1000
# Every input surface, as package:Target (go test runs one fuzz target at a time).
FUZZ_TARGETS := pkg/validate:FuzzFilePath pkg/krm:FuzzResourceList pkg/krm:FuzzPlainStringAgreesWithKyaml pkg/krm:FuzzAliasBound pkg/krm:FuzzJSONAgreesWithKyaml pkg/kptfile:FuzzKptfile pkg/kptfile:FuzzReadinessGatesAsKpt \
  pkg/packagecontext:FuzzPackageContext pkg/pipelineprepend:FuzzPipelinePrepend \
  pkg/configinject:FuzzConfigInject pkg/pvsexpand:FuzzPVSExpand \
  orchestrator/local:FuzzRunInput orchestrator/local:FuzzSyncObject orchestrator/local/state:FuzzStateFile orchestrator/store/gitstore:FuzzMetadata \
  orchestrator/store/gitstore:FuzzRefsAndTrees pkg/provenance:FuzzRecord internal/sshsig:FuzzAllowedSigners
BENCH_TIME  ?= 3s


.PHONY: catalog-functions catalog-modules catalog-e2e
.PHONY: envtest
.PHONY: soak bench-scale
.PHONY: bench-smoke
.PHONY: test-short all build images deploy stop-porch-controllers undeploy uninstall undeploy-crds e2e-porch e2e-node e2e-porch-bench e2e-porch-release-bench function-runner release release-manifests generate check-generated test fuzz fuzz-short golden bench bench-pvctl bench-security lint demo clean

CONTROLLER_GEN_VERSION := v0.19.0
CONTROLLER_GEN := $(CURDIR)/.cache/bin/controller-gen-$(CONTROLLER_GEN_VERSION)

$(CONTROLLER_GEN):
	GOBIN=$(CURDIR)/.cache/bin go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(CURDIR)/.cache/bin/controller-gen $@

## generate: deepcopy code and CRDs (config/crd) from the API types, with controller-gen from the module proxy
## (and records a digest of their inputs and outputs in hack/generated.sum, hack/generated.sh)
generate: $(CONTROLLER_GEN)
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./pkg/api/... paths=./orchestrator/api/...
	$(CONTROLLER_GEN) crd:crdVersions=v1 paths=./orchestrator/api/v1alpha1 paths=./orchestrator/api/v1alpha2 output:crd:dir=config/crd
	$(CONTROLLER_GEN) rbac:roleName=pvkit-controller paths=./orchestrator/reconcilers/... paths=./orchestrator/manager output:rbac:dir=config/rbac
	@hack/generated.sh $(CONTROLLER_GEN_VERSION) > hack/generated.sum

all: build

## build: static Linux binaries in bin/: the functions, pvctl, and in bin/catalog pvkit's catalog
## executable (a link per behaviour) and the catalog functions the examples name; a binary is
## replaced only when Go built it different (hack/build.sh): a build with nothing to do touches nothing
build:
	@hack/build.sh

# The controller's own binary, for its image (make images): `pvctl controller` alone.
bin/pvkit-controller: FORCE
	@mkdir -p .cache/gobuild && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w -X github.com/pvkit/pvkit.release=$(VERSION) -X github.com/pvkit/pvkit.commit=$(COMMIT)' \
	  -o .cache/gobuild/pvkit-controller ./orchestrator/cmd/pvkit-controller
	@cmp -s .cache/gobuild/pvkit-controller $@ || { cp .cache/gobuild/pvkit-controller $@.new && mv -f $@.new $@ && echo "built $@"; }

FORCE:

## images: one image per function from Dockerfile.functions (needs a Docker engine, no registry)
images: build bin/pvkit-controller
	@for fn in $(FUNCTIONS); do \
	  desc=$$(sed -n 's/^description: //p' functions/$$fn/metadata.yaml); \
	  out=$$(docker build -q -f Dockerfile.functions --build-arg FUNCTION=$$fn --build-arg VERSION=$(VERSION) \
	    --build-arg "DESCRIPTION=$$desc" -t $(IMAGE_REPO)/$$fn:$(VERSION) -t $(IMAGE_REPO)/$$fn:dev . 2>&1) || { echo "$$out"; exit 1; }; \
	  echo "built $(IMAGE_REPO)/$$fn:$(VERSION) and $(IMAGE_REPO)/$$fn:dev ($$(docker image inspect -f '{{.Size}}' $(IMAGE_REPO)/$$fn:dev) bytes)"; \
	done
	@out=$$(docker build -q -f Dockerfile.controller --build-arg VERSION=$(VERSION) \
	    -t $(IMAGE_REPO)/controller:$(VERSION) -t $(IMAGE_REPO)/controller:dev . 2>&1) || { echo "$$out"; exit 1; }; \
	  echo "built $(IMAGE_REPO)/controller:$(VERSION) and $(IMAGE_REPO)/controller:dev ($$(docker image inspect -f '{{.Size}}' $(IMAGE_REPO)/controller:dev) bytes; $$(docker save $(IMAGE_REPO)/controller:dev | gzip -c | wc -c) bytes compressed)"

## deploy: install the controller next to Porch (kubectl's current context): CRDs, RBAC, Deployment.
## IMAGE names the controller image you pushed (make images builds it; there is no public one)
deploy:
	@test -n "$(IMAGE)" || { echo "make deploy needs IMAGE=REGISTRY/pvkit/controller:TAG, the image you pushed (make images builds pvkit/controller:$(VERSION)); pvkit publishes no image"; exit 2; }
	@rm -rf .cache/deploy && mkdir -p .cache/deploy && printf 'resources:\n- ../../config/default\nimages:\n- name: pvkit/controller\n  newName: %s\n  newTag: %s\n' \
	  "$$(echo '$(IMAGE)' | sed 's/:[^:/]*$$//')" "$$(echo '$(IMAGE)' | sed -n 's/.*:\([^:/]*\)$$/\1/p')" > .cache/deploy/kustomization.yaml
	kubectl apply -k .cache/deploy

## stop-porch-controllers: stop Porch's own PackageVariant and PackageVariantSet controllers (kubectl's
## current context; DRY_RUN=1 previews), before make deploy
stop-porch-controllers: bin/pvctl
	bin/pvctl stop-porch-controllers $(if $(DRY_RUN),--dry-run)

## undeploy: remove the controller (Deployment, RBAC, namespace); the CRDs stay, and with them every
## PackageVariant and PackageVariantSet (Porch ships the same CRDs; make undeploy-crds removes them)
undeploy:
	kubectl delete -k config/manager --ignore-not-found
	kubectl delete -k config/rbac --ignore-not-found

## uninstall: the controller goes (undeploy), then pvctl release -A: every revision a variant owns is
## released (ownerless, in place) and every variant and set loses pvkit's finalizer; nothing is deleted
uninstall: undeploy bin/pvctl
	bin/pvctl release -A

## undeploy-crds: remove the CRDs too, and with them every PackageVariant and PackageVariantSet
undeploy-crds: undeploy
	kubectl delete -k config/crd --ignore-not-found

## catalog-functions: every kpt catalog function the Go module proxy serves (set-namespace and starlark at
## exact versions; apply-replacements and apply-setters as the references pvkit's own are checked against;
## hack/catalog) and pvkit's own (internal/catalog), built into bin/catalog with Porch's function runner
## config mapping their image names (make build builds only the ones the examples name): tests, kpt and
## Porch's function runner use them
catalog-functions:
	@hack/catalog/build.sh bin/catalog all

catalog-modules:
	@hack/catalog/build.sh bin/catalog all modules

## catalog-e2e: the kpt catalog's own e2e cases and examples for pvkit's catalog functions (set-labels,
## set-annotations) through kpt against bin/catalog; CATALOG is a checkout of kptdev/krm-functions-catalog
catalog-e2e: catalog-functions
	@test -n "$(CATALOG)" || { echo "make catalog-e2e needs CATALOG=/path/to/krm-functions-catalog (a checkout: tests/ and examples/)"; exit 2; }
	PVKIT_CATALOG_REPO=$(CATALOG) PVCTL_FUNCTION_CONFIG=$(CURDIR)/bin/catalog/config.yaml go test -count=1 -run 'TestCatalogCases|TestKptMainFieldCases' -v ./test/e2e

## function-runner: build Porch v1.5.3's function runner into bin/ (test/functionrunner/tools)
function-runner:
	cd test/functionrunner/tools && CGO_ENABLED=0 go build -o ../../../bin/function-runner github.com/nephio-project/porch/func/server

## test: lint, unit, golden and end-to-end tests (kpt, images, Porch's function
## runner); what cannot run here is skipped with a visible SKIP line
# The proxy's catalog modules build while lint runs (go vet's compile and
# their downloads and links overlap; docs/performance.md has the cold figures).
test:
	@$(MAKE) --no-print-directory -j2 --output-sync=target lint catalog-modules
	@$(MAKE) --no-print-directory check-generated build catalog-functions
	@echo "== make test: lint, generated files, build and catalog done ($$(date +%T))"
	@command -v kpt >/dev/null 2>&1 || echo "SKIP: kpt is not on PATH; the end-to-end tests in test/e2e are skipped"
	@if docker info >/dev/null 2>&1; then $(MAKE) --no-print-directory images; \
	  else echo "SKIP: no Docker engine (docker info failed); the image end-to-end tests are skipped"; fi
	@echo "== make test: go test ./... ($$(date +%T))"
	PVKIT_FUNCTION_BIN=$(CURDIR)/bin PVCTL_FUNCTION_CONFIG=$(CURDIR)/bin/catalog/config.yaml PVKIT_IMAGE_TESTS=$$(docker info >/dev/null 2>&1 && echo 1) go test -timeout 20m ./...
	@echo "== make test: go test ./... done ($$(date +%T))"
	@if ! command -v etcd >/dev/null 2>&1; then \
	  echo "SKIP: etcd is not installed (apt-get install etcd-server); the real-Porch end-to-end tests (make e2e-porch) are skipped"; \
	elif [ -n "$$PVKIT_E2E_PORCH_SKIP" ]; then \
	  echo "SKIP: $$PVKIT_E2E_PORCH_SKIP; make e2e-porch is skipped"; \
	elif [ -n "$$PVKIT_CI_START" ] && [ $$(( $$(date +%s) - $$PVKIT_CI_START )) -gt $(E2E_PORCH_CI_BUDGET) ]; then \
	  echo "SKIP: CI has run for more than $(E2E_PORCH_CI_BUDGET) s; make envtest, e2e-porch and e2e-node (about 12 more minutes) are skipped to stay within CI's 60 minutes"; \
	else $(MAKE) --no-print-directory envtest e2e-porch && \
	  if docker info >/dev/null 2>&1 && command -v iptables >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory e2e-node; \
	  else echo "SKIP: make e2e-node needs root, iptables and a Docker engine (for its sandbox image)"; fi; fi

## test-short: the fast tier, for the inner loop: go test -short ./... on a build (no lint, images, real
## Porch or fuzzing; the slowest tests skip, saying so)
test-short: build catalog-functions
	PVKIT_FUNCTION_BIN=$(CURDIR)/bin PVCTL_FUNCTION_CONFIG=$(CURDIR)/bin/catalog/config.yaml go test -short ./...

## envtest: both CRDs' schemas on a real kube-apiserver (envtest, with the etcd and kube-apiserver
## make e2e-porch uses), and pvctl's embedded cluster saying exactly what it says (config/crd/crdtest);
## pvctl run --cluster NAME=CONTEXT reading a health object from a real API server
ENVTEST_ASSETS := $(CURDIR)/.cache/porch/envtest
envtest:
	test/porch/stack.sh build
	@mkdir -p $(ENVTEST_ASSETS) && ln -sf $(CURDIR)/.cache/porch/bin/kube-apiserver $(ENVTEST_ASSETS)/kube-apiserver && \
	  ln -sf $$(command -v etcd) $(ENVTEST_ASSETS)/etcd
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) PVKIT_REQUIRE_ENVTEST=1 go test -count=1 -run 'TestSchemasOnAnAPIServer|TestEmbeddedSchemaCases' -v ./orchestrator/embedded/
	PVKIT_FUNCTION_BIN=$(CURDIR)/bin PVCTL_FUNCTION_CONFIG=$(CURDIR)/bin/catalog/config.yaml KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) PVKIT_REQUIRE_ENVTEST=1 go test -count=1 -run 'TestClusterContextOnAnAPIServer' -v ./orchestrator/cli/

## e2e-porch: a real Porch v1.5.3 on 127.0.0.1 (etcd from Debian, kube-apiserver and Porch built
## from the module proxy, cached in .cache/porch), pvkit's controller run with its ServiceAccount's
## credentials, the scenarios in test/porch; stops exactly what it started
PORCH_STACK ?= $(CURDIR)/.cache/porch/stack
# The scenarios that share the stack run this many at once (t.Parallel; the
# ones that restart the controller or Porch run first, alone). 1 on a machine
# of 2 cores: Porch and kube-apiserver take them both, and six at once ran no
# faster (477 s against about 500) and made Porch answer 503 (docs/performance.md).
E2E_PORCH_PARALLEL ?= 1
# In CI (.ci/run sets PVKIT_CI_START), make test runs envtest, e2e-porch
# and e2e-node only when the run so far took less than this: they take
# about 12 minutes, so a machine that got here later could not finish
# within CI's 60 (a cold machine gets here at about 30).
E2E_PORCH_CI_BUDGET ?= 2400
e2e-porch: build bin/pvkit-controller catalog-functions
	test/porch/stack.sh build
	@test/porch/stack.sh down $(PORCH_STACK); rm -rf $(PORCH_STACK)
	@trap 'test/porch/stack.sh down $(PORCH_STACK)' EXIT; test/porch/stack.sh up $(PORCH_STACK) && \
	  start=$$(date +%s); mkdir -p .cache; set -o pipefail; \
	  PVKIT_PORCH_DIR=$(PORCH_STACK) go test -count=1 -timeout 30m -v -parallel $(E2E_PORCH_PARALLEL) ./test/porch 2>&1 | tee .cache/e2e-porch.log; \
	  status=$$?; hack/testtimes.sh .cache/e2e-porch.log $$(( $$(date +%s) - start )); exit $$status

## e2e-node: the release manifest on two real nodes (issue 44 #1): the e2e-porch stack with an
## address pods reach, two kubelets v1.34.1 on containerd 1.6, the controller-manager, the scheduler
## and kube-proxy (test/node/node.sh, all built here, nothing pulled); TestInstallOnNodes applies
## dist's install.yaml and times Ready, failover, the PDB, an upgrade by tag and the uninstall
NODE_STACK ?= $(CURDIR)/.cache/porch/stack-node
NODE_WORK ?= $(CURDIR)/.cache/node
e2e-node: build bin/pvkit-controller
	test/porch/stack.sh build
	test/node/node.sh build
	@test/node/node.sh down $(NODE_WORK) 2>/dev/null; test/porch/stack.sh down $(NODE_STACK); rm -rf $(NODE_STACK) $(NODE_WORK)
	@trap 'test/node/node.sh down $(NODE_WORK); test/porch/stack.sh down $(NODE_STACK)' EXIT; \
	  addr=$$(test/node/node.sh address); \
	  PVKIT_STACK_NODE_ADDRESS=$$addr test/porch/stack.sh up $(NODE_STACK) && \
	  PVKIT_STACK_NODE_ADDRESS=$$addr test/node/node.sh up $(NODE_STACK) $(NODE_WORK) && \
	  set -o pipefail && PVKIT_PORCH_DIR=$(NODE_STACK) PVKIT_NODE_DIR=$(NODE_WORK) go test -count=1 -timeout 10m -v -run 'TestInstallOnNodes' ./test/porch 2>&1 | tee .cache/e2e-node.log

## e2e-porch-bench: one set fanned out to N=20 and N=50 repositories on the real stack, converged by
## pvkit and by Porch's own controllers, and Porch's floor (the same clones and writes issued directly):
## seconds, API requests per variant, ratio to the floor (docs/performance.md). PORCH_BENCH=200 for N=200
PORCH_BENCH ?= 20,50
e2e-porch-bench: build bin/pvkit-controller catalog-functions
	test/porch/stack.sh build
	@test/porch/stack.sh down $(PORCH_STACK); rm -rf $(PORCH_STACK)
	@trap 'test/porch/stack.sh down $(PORCH_STACK)' EXIT; test/porch/stack.sh up $(PORCH_STACK) && \
	  PVKIT_PORCH_DIR=$(PORCH_STACK) PVKIT_PORCH_BENCH=$(PORCH_BENCH) go test -count=1 -timeout 60m -v -run TestFanOutBench ./test/porch

## e2e-porch-release-bench: a set over N repositories moved from v1 to v2 on the real stack, by in-place
## draft upgrades and by a staged rollout with approval by policy: seconds, requests per variant, revisions
## created, ownerless or duplicate drafts (docs/performance.md). PORCH_RELEASE_BENCH=200 for N=200
PORCH_RELEASE_BENCH ?= 20,50
e2e-porch-release-bench: build bin/pvkit-controller catalog-functions
	test/porch/stack.sh build
	@test/porch/stack.sh down $(PORCH_STACK); rm -rf $(PORCH_STACK)
	@trap 'test/porch/stack.sh down $(PORCH_STACK)' EXIT; test/porch/stack.sh up $(PORCH_STACK) && \
	  PVKIT_PORCH_DIR=$(PORCH_STACK) PVKIT_PORCH_RELEASE_BENCH=$(PORCH_RELEASE_BENCH) go test -count=1 -timeout 60m -v -run TestFleetReleaseBench ./test/porch

## check-generated: the checked-in CRDs and deepcopy code are what `make generate` writes
# controller-gen runs only when what it reads or writes changed since make
# generate recorded hack/generated.sum (a cold make test saves installing it).
check-generated:
	@if [ "$$(hack/generated.sh $(CONTROLLER_GEN_VERSION))" = "$$(cat hack/generated.sum 2>/dev/null)" ]; then \
	  echo "generated files: the API types, RBAC markers and generated files are those make generate recorded (hack/generated.sum); controller-gen not run"; \
	else $(MAKE) --no-print-directory generate && { git diff --exit-code --stat -- config/crd config/rbac hack/generated.sum ':(glob)**/zz_generated.deepcopy.go' || \
	  { echo "generated files are stale: run make generate and commit the result (hack/generated.sum with them)"; exit 1; }; }; fi

## fuzz: every input surface, FUZZ_EXECS executions each (default 500000). make test runs every fuzz
## target's seed corpus as plain tests; CI adds a short instrumented pass (FUZZ_SHORT, 1000 each)
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; echo "fuzz $$name ($$pkg), $(FUZZ_EXECS) executions"; \
	  go test -list "^$$name\$$" ./$$pkg/ | grep -qx "$$name" || { echo "no fuzz target $$name in ./$$pkg"; exit 1; }; \
	  go test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZ_EXECS)x -fuzzminimizetime 3s ./$$pkg/; \
	done

## fuzz-short: the short instrumented pass CI runs after make test (FUZZ_SHORT executions of each target)
fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZ_EXECS=$(FUZZ_SHORT)

## release: VERSION=vX.Y.Z [IMAGE_REPO=ghcr.io/you] [SIGNING_KEY=~/.ssh/key]: dist/ with install.yaml (CRDs, RBAC, Deployment at IMAGE_REPO/controller:VERSION@sha256:...), install-without-crds.yaml, install-namespaced.yaml, install-sharded.yaml, function-runner-config.yaml, pvctl for linux and darwin (amd64, arm64), images/*.oci.tar (the controller and the functions, built without Docker, by digest), a CycloneDX SBOM per binary and image, provenance.intoto.json (SLSA v1), checksums.txt and, with SIGNING_KEY, checksums.txt.sig (ssh-keygen -Y sign). VERSION must be the file VERSION's and have a CHANGELOG.md section. Verify: pvctl verify-release dist --allowed-signers FILE
RELEASE_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
RELEASE_LDFLAGS = -s -w -X github.com/pvkit/pvkit.release=$(VERSION) -X github.com/pvkit/pvkit.commit=$(COMMIT)
release:
	@go run ./internal/cmd/release --check --version '$(VERSION)' --image-repo '$(IMAGE_REPO)'
	@rm -rf dist.tmp .cache/release-bin && mkdir -p dist.tmp .cache/release-bin
	@set -e; for p in $(RELEASE_PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; echo "pvctl $(VERSION) $$os/$$arch"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -buildvcs=false -ldflags '$(RELEASE_LDFLAGS)' \
	    -o dist.tmp/pvctl-$(VERSION)-$$os-$$arch ./orchestrator/cmd/pvctl; \
	done
	@set -e; CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -buildvcs=false -ldflags '$(RELEASE_LDFLAGS)' -o .cache/release-bin/pvkit-controller ./orchestrator/cmd/pvkit-controller; \
	  for fn in $(FUNCTIONS); do CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -buildvcs=false -ldflags '$(RELEASE_LDFLAGS)' -o .cache/release-bin/$$fn ./functions/$$fn; done
	go run ./internal/cmd/release --version '$(VERSION)' --image-repo '$(IMAGE_REPO)' --out dist.tmp --images-from .cache/release-bin \
	  --commit "$$(git rev-parse HEAD 2>/dev/null || echo unknown)" --epoch "$$(git log -1 --format=%ct 2>/dev/null || echo 0)" --signing-key '$(SIGNING_KEY)'
	@rm -rf dist && mv dist.tmp dist && echo "dist/: $$(cd dist && find . -type f | sort | tr '\n' ' ')"

## release-manifests: make release without pvctl's four cross-compiles: the manifests (their images by digest), the images,
## their SBOMs, the provenance and the checksums in dist/, for an operator who installs from source (issue 62 #8)
release-manifests:
	@$(MAKE) --no-print-directory release RELEASE_PLATFORMS=

## golden: regenerate every golden file (function cases and e2e expectations)
golden:
	PVKIT_UPDATE_GOLDEN=1 WRITE_GOLDEN_OUTPUT=1 go test ./functions/... ./test/e2e/...

## bench: run the benchmarks and print a table with the ratio to the floor
bench:
	go test -run '^$$' -bench . -benchmem -benchtime $(BENCH_TIME) -count $(BENCH_COUNT) ./test/bench/ | tee /dev/stderr | go run ./internal/cmd/benchtable

## bench-smoke: every benchmark of the module once (-benchtime 1x), as CI runs them: a benchmark that fails
## fails the run (the figures are make bench's; this only proves each still runs what its name says)
bench-smoke: build catalog-functions
	PVKIT_FUNCTION_BIN=$(CURDIR)/bin PVCTL_FUNCTION_CONFIG=$(CURDIR)/bin/catalog/config.yaml go test -run '^$$' -bench . -benchtime 1x -timeout 30m ./...

## bench-security: the worst cases under the bounds of docs/security.md (CEL, fan-out, YAML aliases, hostile repositories, functions, pipelines, unknown fields, records), one run each
bench-security:
	go test -run '^$$' -bench 'Compile|Validate|Evaluat|Hostile|FanOut|Regex' -benchmem -benchtime 1x ./pkg/pvsexpand/
	go test -run '^$$' -bench 'Alias|Expansion' -benchmem ./pkg/krm/
	go test -run '^$$' -bench 'Hostile' -benchmem -benchtime 1x ./orchestrator/store/gitstore/ ./orchestrator/fnruntime/ ./pkg/render/ ./pkg/health/
	go test -run '^$$' -bench 'RolloutStatusAtTheBound' -benchmem -benchtime 1x ./pkg/rollout/
	go test -run '^$$' -bench 'JSON' -benchmem ./pkg/krm/
	go test -run '^$$' -bench 'RefuseUnknownFields' -benchmem -benchtime 3x ./orchestrator/local/
	go test -run '^$$' -bench 'HugeRecord' -benchmem -benchtime 2x ./pkg/provenance/

## soak: the two reconcilers for SOAK_DURATION (30m) over SOAK_VARIANTS (1,000) variants under churn and
## injected faults, the invariants checked every round, memory sampled (test/soak; a minute of it, over 200
## variants, runs in make test); a failing seed replays with SOAK_SEED
SOAK_DURATION ?= 30m
SOAK_VARIANTS ?= 1000
SOAK_SEED ?= 1
soak:
	PVKIT_SOAK_DURATION=$(SOAK_DURATION) PVKIT_SOAK_VARIANTS=$(SOAK_VARIANTS) PVKIT_SOAK_SEED=$(SOAK_SEED) go test -count=1 -timeout 0 -run '^TestSoak$$' -v ./test/soak/

## bench-scale: the controller at SCALE_SIZES variants, in sets of up to 5,000 children (large) and in sets of 25 (small),
## against a Porch stand-in answering with the real stack's measured latency (test/scale): memory, cold start, steady resync
## and a three-wave staged rollout, one process per size and shape; prints docs/scale.md's tables (.cache/scale/tables.md).
## About 80 minutes (SCALE_SHAPES=large: 40).
SCALE_SIZES ?= 1000 5000 10000
SCALE_SHAPES ?= large small
SCALE_WORKERS ?= 32
bench-scale:
	@mkdir -p .cache/scale && rm -f .cache/scale/*.json
	@for shape in $(SCALE_SHAPES); do for n in $(SCALE_SIZES); do \
	  echo "== bench-scale: $$n variants, $$shape sets ($$(date +%T))"; \
	  PVKIT_SCALE=$$n PVKIT_SCALE_SHAPE=$$shape PVKIT_SCALE_WORKERS=$(SCALE_WORKERS) PVKIT_SCALE_COMMIT=$$(git rev-parse --short HEAD 2>/dev/null) \
	    PVKIT_SCALE_OUT=$(CURDIR)/.cache/scale/$$shape-$$n.json \
	    go test -count=1 -timeout 0 -run '^TestScale$$' ./test/scale/ >.cache/scale/$$shape-$$n.log 2>&1 || { tail -20 .cache/scale/$$shape-$$n.log; exit 1; }; \
	done; done
	@go run ./internal/cmd/scaletable .cache/scale/*.json | tee .cache/scale/tables.md

## bench-pvctl: pvctl run, first and no-op, on a set fanned out to 1,000 repositories; a release with a realistic
## blueprint (Nephio's pipeline, an injection point, approval by policy, a staged rollout) at 500 and 1,000:
## first, no-op, plan, the whole release; approving 448 drafts one by one and as one wave (about 30 minutes)
bench-pvctl:
	PVKIT_BENCH_PVCTL=1 go test -run '^$$' -bench 'BenchmarkPvctlRun|BenchmarkPvctlRelease|BenchmarkPvctlApprove' -benchtime 1x -timeout 90m ./test/bench/

## lint: gofmt check, go vet, go.mod tidy
lint:
	@echo "== make lint ($$(date +%T))"
	@go mod tidy -diff >/dev/null 2>&1 || { echo "go.mod is not tidy (go mod tidy):"; go mod tidy -diff; exit 1; }
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	go vet ./...

## demo: run the functions on examples/ (through kpt when installed), then pvctl run on local git repositories
demo:
	@hack/demo.sh

clean:
	rm -rf bin dist dist.tmp
