// Package docs checks that each function's documentation agrees with itself
// and with the build: metadata.yaml names the function's image as the Makefile
// builds it, the README has the four sections and mentions the image and the
// binary, the Makefile builds the function, and the function runner config
// maps the function's image names to its binary.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func root(*testing.T) string { return fntest.RepoRoot() }

func TestFunctionDocs(t *testing.T) {
	r := root(t)
	mains, _ := filepath.Glob(filepath.Join(r, "functions", "*", "main.go"))
	if len(mains) == 0 {
		t.Fatal("no functions found")
	}
	makefile, err := os.ReadFile(filepath.Join(r, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	functions := regexp.MustCompile(`(?m)^FUNCTIONS\s*:=\s*(.*)$`).FindSubmatch(makefile)
	if functions == nil {
		t.Fatal("Makefile has no FUNCTIONS := line")
	}
	built := strings.Fields(string(functions[1]))
	repo := regexp.MustCompile(`(?m)^IMAGE_REPO\s*:=\s*(\S+)$`).FindSubmatch(makefile)
	if repo == nil || !regexp.MustCompile(`(?m)^VERSION\s*\?=\s*\$\(shell cat VERSION\)$`).Match(makefile) {
		t.Fatal("Makefile has no IMAGE_REPO := line, or its VERSION is not the file VERSION's")
	}
	versionFile, err := os.ReadFile(filepath.Join(r, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(versionFile))
	runner, err := os.ReadFile(filepath.Join(r, "deploy", "function-runner", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != len(mains) {
		t.Errorf("Makefile FUNCTIONS = %v, but functions/ has %d functions", built, len(mains))
	}
	for _, m := range mains {
		dir := filepath.Dir(m)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			checkFunction(t, dir, name, built, string(repo[1]))
			for _, img := range []string{string(repo[1]) + "/" + name + ":" + version, string(repo[1]) + "/" + name + ":dev"} {
				if !strings.Contains(string(runner), "function: "+name+"\n") || !strings.Contains(string(runner), "- "+img+"\n") {
					t.Errorf("deploy/function-runner/config.yaml does not map %s to %s", img, name)
				}
			}
		})
	}
}

func checkFunction(t *testing.T, dir, name string, built []string, imageRepo string) {
	meta, err := yaml.ReadFile(filepath.Join(dir, "metadata.yaml"))
	if err != nil {
		t.Fatalf("metadata.yaml: %v", err)
	}
	image, _ := meta.GetString("image")
	if want := imageRepo + "/" + name; image != want {
		t.Errorf("metadata.yaml image = %q, want %q (the Makefile's IMAGE_REPO and the function name)", image, want)
	}
	if d, _ := meta.GetString("description"); d == "" {
		t.Errorf("metadata.yaml has no description")
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	for _, section := range []string{"## Overview", "## Usage", "## FunctionConfig", "## Examples"} {
		if !strings.Contains(text, "\n"+section+"\n") {
			t.Errorf("README.md lacks the section %q", section)
		}
	}
	for _, want := range []string{image, "kpt fn eval --exec bin/" + name, "kpt fn render", "# " + name} {
		if !strings.Contains(text, want) {
			t.Errorf("README.md does not mention %q", want)
		}
	}
	found := false
	for _, b := range built {
		found = found || b == name
	}
	if !found {
		t.Errorf("the Makefile does not build %s", name)
	}
}
