#!/usr/bin/env bash
# Prints one digest of what `make generate` reads and writes: the API types
# (every non-generated Go file under pkg/api and orchestrator/api), the RBAC
# markers of the reconcilers and the manager, the header, go.mod and
# controller-gen's version, then the generated files (the CRDs, role.yaml,
# the deepcopy files). `make generate` records it in hack/generated.sum;
# `make check-generated` runs controller-gen only when the digest differs
# from the recorded one (an input or an output changed since), so a cold
# make test does not install controller-gen to regenerate what did not change.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:?usage: hack/generated.sh CONTROLLER_GEN_VERSION}"
{
  echo "controller-gen $version"
  git ls-files -co --exclude-standard -- 'pkg/api/*.go' 'orchestrator/api/*.go' | grep -v 'zz_generated' | grep -v '_test.go$' | LC_ALL=C sort | xargs sha256sum
  grep -rh '+kubebuilder:rbac' orchestrator/reconcilers orchestrator/manager | LC_ALL=C sort | sha256sum | sed 's/-$/rbac markers/'
  sha256sum hack/boilerplate.go.txt go.mod
  echo "outputs"
  git ls-files -co --exclude-standard -- 'config/crd/config.porch.kpt.dev_*.yaml' 'config/rbac/role.yaml' '*zz_generated.deepcopy.go' | LC_ALL=C sort | xargs sha256sum
} | sha256sum | cut -d' ' -f1
