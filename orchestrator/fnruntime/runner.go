package fnruntime

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	pb "github.com/nephio-project/porch/func/evaluator"
	"github.com/pvkit/pvkit/pkg/render"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	sigsyaml "sigs.k8s.io/yaml"
)

// runner evaluates an image on Porch's function runner, as Porch does.
func (r *Runtime) runner(ctx context.Context, image string) render.Runner {
	return func(in io.Reader, out io.Writer) error {
		b, err := io.ReadAll(in)
		if err != nil {
			return err
		}
		conn, err := grpc.NewClient(r.FunctionRunner, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return fmt.Errorf("function runner %s: %w", r.FunctionRunner, err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(ctx, r.timeout())
		defer cancel()
		resp, err := pb.NewFunctionEvaluatorClient(conn).EvaluateFunction(ctx, &pb.EvaluateFunctionRequest{ResourceList: b, Image: image})
		if err != nil {
			return &render.ExitError{Code: 1, Stderr: fmt.Sprintf("function runner %s: %s", r.FunctionRunner, status.Convert(err).Message())}
		}
		_, err = out.Write(resp.ResourceList)
		return err
	}
}

// runnerConfig is Porch's function runner config: each function's
// executable (a file of the functions directory) and the images it serves.
type runnerConfig struct {
	Functions []struct {
		Function string   `json:"function"`
		Images   []string `json:"images"`
	} `json:"functions"`
}

// LoadExecutables reads a Porch function runner config and returns each
// image's executable in dir (default: the config's directory). An
// executable that is not there yet is mapped all the same: running it says
// so (Runtime.Runner).
func LoadExecutables(config, dir string) (map[string]string, error) {
	b, err := os.ReadFile(config)
	if err != nil {
		return nil, err
	}
	var c runnerConfig
	if err := sigsyaml.UnmarshalStrict(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", config, err)
	}
	if dir == "" {
		dir = filepath.Dir(config)
	}
	out := map[string]string{}
	for i, f := range c.Functions {
		if f.Function == "" || filepath.Base(f.Function) != f.Function {
			return nil, fmt.Errorf("%s: `functions[%d].function` must be the name of an executable of %s, found %q", config, i, dir, f.Function)
		}
		path := filepath.Join(dir, f.Function)
		for _, image := range f.Images {
			if prev, dup := out[image]; dup && prev != path {
				return nil, fmt.Errorf("%s: image %q is mapped twice (%s and %s)", config, image, prev, path)
			}
			out[image] = path
		}
	}
	return out, nil
}

// Images lists the images of a map of executables, sorted.
func Images(executables map[string]string) []string {
	out := make([]string, 0, len(executables))
	for i := range executables {
		out = append(out, i)
	}
	sort.Strings(out)
	return out
}
