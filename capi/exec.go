package main

// Graph execs (compiled graphs) and their runs: run, run_async, wait,
// rebind, set_push and the schedule and DOT texts.

/*
#include <stdlib.h>
#include "vkflow.h"
*/
import "C"

import (
	"context"
	"strings"
	"unsafe"

	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/timeline"
)

// cExec is a compiled graph and its graph's nodes at compile time.
type cExec struct {
	e     *graph.Exec
	nodes []graph.Node
}

//export vkflow_exec_close
func vkflow_exec_close(h C.vkflow_exec) C.int {
	e, err := lookup[*cExec](h, "exec")
	if err != nil {
		return C.VKFLOW_OK
	}
	dropHandle(h)
	return fail(e.e.Close())
}

// runOptions turns C timeline points (0: none) into run options.
func runOptions(waitTL C.vkflow_timeline, waitValue C.uint64_t, signalTL C.vkflow_timeline, signalValue C.uint64_t) ([]graph.RunOption, error) {
	var opts []graph.RunOption
	if waitTL != 0 {
		tl, err := lookup[*timeline.Timeline](waitTL, "timeline")
		if err != nil {
			return nil, err
		}
		opts = append(opts, graph.Wait(tl, uint64(waitValue)))
	}
	if signalTL != 0 {
		tl, err := lookup[*timeline.Timeline](signalTL, "timeline")
		if err != nil {
			return nil, err
		}
		opts = append(opts, graph.Signal(tl, uint64(signalValue)))
	}
	return opts, nil
}

//export vkflow_exec_run
func vkflow_exec_run(h C.vkflow_exec, waitTL C.vkflow_timeline, waitValue C.uint64_t, signalTL C.vkflow_timeline, signalValue C.uint64_t, timeout C.int64_t) C.int {
	e, err := lookup[*cExec](h, "exec")
	if err != nil {
		return fail(err)
	}
	opts, err := runOptions(waitTL, waitValue, signalTL, signalValue)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := timeoutCtx(timeout)
	defer cancel()
	return fail(e.e.Run(ctx, opts...))
}

//export vkflow_exec_run_async
func vkflow_exec_run_async(h C.vkflow_exec, waitTL C.vkflow_timeline, waitValue C.uint64_t, signalTL C.vkflow_timeline, signalValue C.uint64_t, out *C.vkflow_run) C.int {
	e, err := lookup[*cExec](h, "exec")
	if err != nil {
		return fail(err)
	}
	if out == nil {
		return invalid("vkflow_exec_run_async: out is NULL")
	}
	opts, err := runOptions(waitTL, waitValue, signalTL, signalValue)
	if err != nil {
		return fail(err)
	}
	p := e.e.RunAsync(opts...)
	if p.Done() {
		// Done at once: the submit failed (or the run was that quick).
		if err := p.Wait(context.Background()); err != nil {
			return fail(err)
		}
	}
	*out = newHandle(p)
	return C.VKFLOW_OK
}

//export vkflow_run_wait
func vkflow_run_wait(h C.vkflow_run, timeout C.int64_t) C.int {
	p, err := lookup[graph.Pending](h, "run")
	if err != nil {
		return fail(err)
	}
	ctx, cancel := timeoutCtx(timeout)
	defer cancel()
	return fail(p.Wait(ctx))
}

//export vkflow_run_done
func vkflow_run_done(h C.vkflow_run, done *C.int32_t) C.int {
	p, err := lookup[graph.Pending](h, "run")
	if err != nil {
		return fail(err)
	}
	if done == nil {
		return invalid("vkflow_run_done: done is NULL")
	}
	*done = b2c(p.Done())
	return C.VKFLOW_OK
}

//export vkflow_run_close
func vkflow_run_close(h C.vkflow_run) C.int {
	if _, err := lookup[graph.Pending](h, "run"); err == nil {
		dropHandle(h) // the run itself goes on
	}
	return C.VKFLOW_OK
}

//export vkflow_exec_rebind
func vkflow_exec_rebind(h C.vkflow_exec, old, new C.vkflow_tensor) C.int {
	e, err := lookup[*cExec](h, "exec")
	if err != nil {
		return fail(err)
	}
	a, b, err := tensorPair(old, new)
	if err != nil {
		return fail(err)
	}
	return fail(e.e.Rebind(a, b))
}

//export vkflow_exec_set_push
func vkflow_exec_set_push(h C.vkflow_exec, node C.int32_t, push unsafe.Pointer, pushBytes C.uint64_t) C.int {
	e, err := lookup[*cExec](h, "exec")
	if err != nil {
		return fail(err)
	}
	if node < 0 || int(node) >= len(e.nodes) || e.nodes[node] == (graph.Node{}) {
		return invalid("vkflow_exec_set_push: node %d is not a node of this graph (it has %d)", node, len(e.nodes))
	}
	args, err := pushArgs(push, pushBytes)
	if err != nil {
		return fail(err)
	}
	return fail(e.e.SetPush(e.nodes[node], args...))
}

// execText copies one of the Exec's texts into buf; *length receives its
// full length.
func execText(h C.vkflow_exec, text func(*graph.Exec) string, buf *C.char, n C.size_t, length *C.size_t) C.int {
	e, err := lookup[*cExec](h, "exec")
	if err != nil {
		return fail(err)
	}
	k := copyString(text(e.e), buf, n)
	if length != nil {
		*length = k
	}
	return C.VKFLOW_OK
}

//export vkflow_exec_schedule
func vkflow_exec_schedule(h C.vkflow_exec, buf *C.char, n C.size_t, length *C.size_t) C.int {
	return execText(h, (*graph.Exec).String, buf, n, length)
}

//export vkflow_exec_dot
func vkflow_exec_dot(h C.vkflow_exec, buf *C.char, n C.size_t, length *C.size_t) C.int {
	return execText(h, (*graph.Exec).DOT, buf, n, length)
}

//export vkflow_exec_warnings
func vkflow_exec_warnings(h C.vkflow_exec, buf *C.char, n C.size_t, length *C.size_t) C.int {
	return execText(h, func(e *graph.Exec) string { return strings.Join(e.Warnings(), "\n") }, buf, n, length)
}
