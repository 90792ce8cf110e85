package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/examples/internal/scene"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/vk"
)

// traceFile is the part of a Chrome trace the checks read.
type traceFile struct {
	TraceEvents []struct {
		Name string         `json:"name"`
		Cat  string         `json:"cat"`
		Ph   string         `json:"ph"`
		Ts   float64        `json:"ts"`
		Dur  float64        `json:"dur"`
		Tid  int            `json:"tid"`
		ID   uint64         `json:"id"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
	Metadata map[string]any `json:"metadata"`
}

type span struct{ start, end float64 }

// checkTrace says what is wrong with a trace of submits batches: every
// submit has its host span and its GPU span, and each flow arrow goes
// from a GPU span to one that starts no earlier than the first ends (a
// consumer runs after its producer). nil: nothing.
func checkTrace(tr traceFile, submits int) error {
	host := map[[2]int]float64{} // the start of each vkQueueSubmit
	gpu := map[[2]int]span{}
	byTid := map[int][]span{}
	for _, e := range tr.TraceEvents {
		switch {
		case e.Ph == "X" && e.Name == "vkQueueSubmit":
			host[[2]int{int(e.Args["queue"].(float64)), int(e.Args["value"].(float64))}] = e.Ts
		case e.Ph == "X" && e.Cat == "gpu":
			k := [2]int{int(e.Args["queue"].(float64)), int(e.Args["value"].(float64))}
			gpu[k] = span{e.Ts, e.Ts + e.Dur}
			byTid[e.Tid] = append(byTid[e.Tid], gpu[k])
		}
	}
	if len(host) < submits || len(gpu) != len(host) {
		return fmt.Errorf("%d host submit spans and %d GPU spans, want %d of each at least", len(host), len(gpu), submits)
	}
	// A batch starts on the GPU after its vkQueueSubmit starts on the host,
	// within the bound of the GPU clock's offset (and a slack for the
	// timestamp's own resolution).
	bound, _ := tr.Metadata["gpuClockBoundUs"].(float64)
	for k, submitted := range host {
		g, ok := gpu[k]
		if !ok {
			return fmt.Errorf("the batch queue %d value %d has no GPU span", k[0], k[1])
		}
		if g.start < submitted-bound-50 {
			return fmt.Errorf("the batch queue %d value %d starts on the GPU at %.3f µs, before its vkQueueSubmit at %.3f µs (offset bound %.3f µs)",
				k[0], k[1], g.start, submitted, bound)
		}
	}
	// A flow's ends are in the spans of their tracks that hold their
	// timestamps.
	at := func(tid int, ts float64) (span, bool) {
		for _, s := range byTid[tid] {
			if s.start <= ts && ts <= s.end {
				return s, true
			}
		}
		return span{}, false
	}
	starts := map[uint64]span{}
	flows := 0
	for _, e := range tr.TraceEvents {
		if e.Ph == "s" {
			p, ok := at(e.Tid, e.Ts)
			if !ok {
				return fmt.Errorf("flow %d starts outside every GPU span", e.ID)
			}
			starts[e.ID] = p
		}
	}
	for _, e := range tr.TraceEvents {
		if e.Ph != "f" {
			continue
		}
		c, ok := at(e.Tid, e.Ts)
		p, ok2 := starts[e.ID]
		if !ok || !ok2 {
			return fmt.Errorf("flow %d ends outside every GPU span, or has no start", e.ID)
		}
		if c.start < p.end {
			return fmt.Errorf("flow %d: the consumer starts at %.3f µs, before its producer ends at %.3f µs", e.ID, c.start, p.end)
		}
		flows++
	}
	if flows == 0 {
		return fmt.Errorf("no flow arrows")
	}
	return nil
}

// TestTrace runs the two-queue rasterblend graph with a trace
// (vkflow.WithTrace) under validation and checks the file: it parses as
// Chrome trace-event JSON, every submit has its host and GPU spans, and
// each consumer's GPU span starts after its producer's ends. A mutation
// check: a trace with one GPU span moved before its producer's end, or one
// span missing, fails the check.
func TestTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false), vkflow.WithTrace(path))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := scene.Params{Size: 64, Tris: 16, Passes: 8}
	require.NoError(t, p.Validate())
	geo := scene.Geometry(p)
	r, err := newRenderer(m, p, geo, 2)
	require.NoError(t, err)
	const runs = 2
	for range runs {
		_, err := r.render(ctx)
		require.NoError(t, err)
	}
	n := regexp.MustCompile(`(\d+) submits`).FindStringSubmatch(r.exec.String())
	require.NotNil(t, n, r.exec.String())
	perRun, err := strconv.Atoi(n[1])
	require.NoError(t, err)
	submits := runs * perRun
	require.NoError(t, r.close())
	require.NoError(t, m.Close()) // writes the trace
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var tr traceFile
	require.NoError(t, json.Unmarshal(data, &tr))
	assert.EqualValues(t, 0, tr.Metadata["dropped"])
	t.Logf("GPU clock: %v, bound %v µs", tr.Metadata["gpuClock"], tr.Metadata["gpuClockBoundUs"])
	if info := m.Device(); info.HasExtension(vk.CalibratedTimestampsExtension) {
		assert.Equal(t, "calibrated (VK_EXT_calibrated_timestamps)", tr.Metadata["gpuClock"])
	} else {
		assert.Equal(t, "measured offset", tr.Metadata["gpuClock"])
	}
	require.NoError(t, checkTrace(tr, submits))

	// The mutations: the check must see them.
	moved := false
	for i, e := range tr.TraceEvents {
		if e.Ph == "f" && !moved {
			for j, g := range tr.TraceEvents {
				if g.Cat == "gpu" && g.Tid == e.Tid && g.Ts <= e.Ts && e.Ts <= g.Ts+g.Dur {
					tr.TraceEvents[j].Ts -= 1e6 // the consumer now starts long before
					tr.TraceEvents[i].Ts -= 1e6
					moved = true
					break
				}
			}
		}
	}
	require.True(t, moved)
	assert.Error(t, checkTrace(tr, submits), "a consumer before its producer")
	require.NoError(t, json.Unmarshal(data, &tr))
	for i, e := range tr.TraceEvents {
		if e.Cat == "gpu" {
			tr.TraceEvents = append(tr.TraceEvents[:i], tr.TraceEvents[i+1:]...)
			break
		}
	}
	assert.Error(t, checkTrace(tr, submits), "a batch without its GPU span")
	require.NoError(t, json.Unmarshal(data, &tr))
	for i, e := range tr.TraceEvents {
		if e.Cat == "gpu" || e.Ph == "s" || e.Ph == "f" {
			tr.TraceEvents[i].Ts -= 10e3 // the GPU clock's offset 10 ms off
		}
	}
	assert.Error(t, checkTrace(tr, submits), "GPU spans before their submits")
}
