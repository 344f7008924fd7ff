// Package crdtest holds the table of what pvkit's CRDs refuse and take
// (cases.yaml), for every test that applies their schemas: a real
// kube-apiserver (envtest in orchestrator/local, Porch's stack in
// test/porch) and pvctl's embedded cluster.
package crdtest

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"
)

// Case is one object and what the API server says of it.
type Case struct {
	Name string `json:"name"`
	// Refused is a part of the API server's message; empty: the object is taken.
	Refused string          `json:"refused,omitempty"`
	Object  json.RawMessage `json:"object"`
}

// Unstructured is the case's object, its numbers int64 as an API server
// decodes them.
func (c Case) Unstructured() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(c.Object); err != nil {
		return nil, fmt.Errorf("config/crd/crdtest/cases.yaml: case %q: %w", c.Name, err)
	}
	return u, nil
}

//go:embed cases.yaml
var casesYAML []byte

// Cases reads the table.
func Cases() ([]Case, error) {
	var cs []Case
	if err := sigsyaml.UnmarshalStrict(casesYAML, &cs); err != nil {
		return nil, fmt.Errorf("config/crd/crdtest/cases.yaml: %w", err)
	}
	return cs, nil
}
