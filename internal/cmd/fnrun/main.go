// Command fnrun runs a KRM function on a package directory the way
// `kpt fn eval` does, for machines without kpt (make demo uses it) and to
// call Porch's function runner as Porch does: it reads the package into a
// ResourceList, runs the function, prints the results and writes the package
// back only when the function succeeded.
//
//	fnrun --exec bin/package-context --fn-config examples/app-prod.yaml DIR
//	fnrun --runner 127.0.0.1:9445 --image pvkit/package-context:dev --fn-config examples/app-prod.yaml DIR
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	pb "github.com/nephio-project/porch/func/evaluator"
	"github.com/pvkit/pvkit/pkg/krm"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func main() {
	execPath := flag.String("exec", "", "the function binary to run")
	runner := flag.String("runner", "", "the address of a Porch function runner (with --image)")
	image := flag.String("image", "", "the image name the function runner knows the function by")
	fnConfig := flag.String("fn-config", "", "a file holding the functionConfig")
	flag.Parse()
	var fn function
	switch {
	case *execPath != "" && *runner == "" && flag.NArg() == 1:
		fn = execFunction(*execPath)
	case *execPath == "" && *runner != "" && *image != "" && flag.NArg() == 1:
		fn = runnerFunction(*runner, *image)
	default:
		fmt.Fprintln(os.Stderr, "usage: fnrun (--exec BINARY | --runner ADDR --image IMAGE) [--fn-config FILE] DIR")
		os.Exit(2)
	}
	if err := run(fn, *fnConfig, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "fnrun:", err)
		os.Exit(1)
	}
}

// function runs a ResourceList through a function: output, stderr, error.
type function func(in []byte) ([]byte, string, error)

func execFunction(binary string) function {
	return func(in []byte) ([]byte, string, error) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(binary)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
		err := cmd.Run()
		return stdout.Bytes(), stderr.String(), err
	}
}

func runnerFunction(addr, image string) function {
	return func(in []byte) ([]byte, string, error) {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, "", err
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		resp, err := pb.NewFunctionEvaluatorClient(conn).EvaluateFunction(ctx, &pb.EvaluateFunctionRequest{ResourceList: in, Image: image})
		if err != nil {
			return nil, "", err
		}
		return resp.ResourceList, string(resp.Log), nil
	}
}

func run(fn function, fnConfig, dir string) error {
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
	stdout, stderr, runErr := fn(in)
	out, parseErr := krm.ParseResourceList(stdout)
	if parseErr == nil {
		for _, r := range out.Results {
			fmt.Println("  " + krm.Line(r))
		}
	}
	if runErr != nil {
		return fmt.Errorf("the function failed (%v); the package is unchanged\n%s", runErr, stderr)
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
