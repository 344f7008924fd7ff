// Package install checks the install manifests (config/default) as kubectl
// builds them: what `kubectl apply -k config/default` would apply.
package install
