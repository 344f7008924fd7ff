// Command fnrun runs a KRM function binary on a package directory the way
// `kpt fn eval --exec` does, for machines without kpt (make demo uses it):
// it reads the package into a ResourceList, pipes it through the binary,
// prints the results and writes the package back only when the function
// succeeded.
//
//	fnrun --exec bin/package-context --fn-config examples/app-prod.yaml DIR
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func main() {
	execPath := flag.String("exec", "", "the function binary to run")
	fnConfig := flag.String("fn-config", "", "a file holding the functionConfig")
	flag.Parse()
	if *execPath == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: fnrun --exec BINARY [--fn-config FILE] DIR")
		os.Exit(2)
	}
	if err := run(*execPath, *fnConfig, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "fnrun:", err)
		os.Exit(1)
	}
}

func run(binary, fnConfig, dir string) error {
	files, err := readDir(dir)
	if err != nil {
		return err
	}
	items, err := krm.FilesToItems(files)
	if err != nil {
		return err
	}
	rl := &krm.ResourceList{Items: items}
	if fnConfig != "" {
		b, err := os.ReadFile(fnConfig)
		if err != nil {
			return err
		}
		if rl.FunctionConfig, err = yaml.Parse(string(b)); err != nil {
			return fmt.Errorf("%s: %w", fnConfig, err)
		}
	}
	in, err := rl.Bytes()
	if err != nil {
		return err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binary)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	runErr := cmd.Run()
	out, parseErr := krm.ParseResourceList(stdout.Bytes())
	if parseErr == nil {
		for _, r := range out.Results {
			fmt.Println("  " + krm.Line(r))
		}
	}
	if runErr != nil {
		return fmt.Errorf("%s failed (%v); the package is unchanged\n%s", binary, runErr, stderr.String())
	}
	if parseErr != nil {
		return parseErr
	}
	written, err := krm.ItemsToFiles(out.Items, files)
	if err != nil {
		return err
	}
	return writeDir(dir, files, written)
}

func readDir(dir string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	return files, err
}

func writeDir(dir string, before, after map[string]string) error {
	for name := range before {
		if _, ok := after[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	for name, content := range after {
		if before[name] == content {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}
