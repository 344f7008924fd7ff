package fnruntime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/pvkit/pvkit/internal/catalog"
	"github.com/pvkit/pvkit/internal/fnworker"
	"github.com/pvkit/pvkit/pkg/render"
)

// pvkit's catalog functions (internal/catalog) run in a worker: this binary,
// started again to serve them one call after another (internal/fnworker),
// never in pvctl's own process, where a function could not be stopped at
// the render's deadline or on Ctrl-C (a search-replace regex ran 46 s past
// a 3 s deadline) nor kept from taking all the memory (apply-setters on a
// 205 KB package: 2.6 GB and a fatal error, the whole run lost). A call
// past the render's deadline kills its worker; a worker has DefaultMemory
// and MaxOutput, as an executable does; a worker that dies fails its call
// alone, and the next call starts another. A binary that serves them calls
// ServeCatalogIfWorker first thing in main (pvctl, pvkit-catalog, and the
// tests that render); one that does not (a library user) runs them in
// process.

// ServeCatalogIfWorker serves pvkit's catalog functions and exits when this
// process was started as their worker; otherwise it returns at once, and
// this binary's catalog functions run in workers of it.
func ServeCatalogIfWorker() {
	fnworker.ServeIfWorker(func(name string) fnworker.Func {
		if f := catalog.ByExecutable(name); f != nil {
			return f.Call
		}
		return nil
	}, MaxOutput)
}

// catalogPools are the process's pools of catalog workers, by memory
// bound, shared by every render (a run renders many drafts; tests make
// many runtimes).
var catalogPools struct {
	sync.Mutex
	byMemory map[int64]*fnworker.Pool
}

// worker is the pool that runs catalog functions, or nil: in process.
func (r *Runtime) worker() *fnworker.Pool {
	if r.InProcess || !fnworker.Serves() {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	memory := r.Memory
	if memory <= 0 {
		memory = DefaultMemory
	}
	catalogPools.Lock()
	defer catalogPools.Unlock()
	if catalogPools.byMemory == nil {
		catalogPools.byMemory = map[int64]*fnworker.Pool{}
	}
	p := catalogPools.byMemory[memory]
	if p == nil {
		p = &fnworker.Pool{Path: self, Memory: memory, MaxOutput: MaxOutput}
		catalogPools.byMemory[memory] = p
	}
	return p
}

// inWorker runs a catalog function in a worker, bounded by the render's
// deadline and the runtime's timeout.
func (r *Runtime) inWorker(ctx context.Context, p *fnworker.Pool, name string) render.Runner {
	return func(in io.Reader, out io.Writer) error {
		ctx, cancel := context.WithTimeout(ctx, r.timeout())
		defer cancel()
		b, err := io.ReadAll(io.LimitReader(in, fnworker.MaxInput+1))
		if err != nil {
			return err
		}
		res, err := p.Call(ctx, name, b)
		switch {
		case errors.Is(err, fnworker.ErrStopped):
			return &render.ExitError{Code: 1, Stderr: fmt.Sprintf("(stopped: %v)", context.Cause(ctx))}
		case err != nil:
			return &render.ExitError{Code: 1, Stderr: fmt.Sprintf("%s: %v (pvctl runs it in a process of its own, bounded to %d MiB of memory and %d MiB of output)",
				name, err, p.Memory>>20, p.MaxOutput>>20)}
		}
		if _, err := io.Copy(out, bytes.NewReader(res.Out)); err != nil {
			return err
		}
		if res.Code != 0 {
			return &render.ExitError{Code: res.Code, Stderr: res.Stderr}
		}
		return nil
	}
}
