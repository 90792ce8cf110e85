package main

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// paired is vkflow against C for one workload, round by round: in each
// round of bench/run.sh (marked "round: N" in the raw output) the median
// vkflow ns/op over the median C ns/op of that round, and the median of
// those ratios. The machine's load changes between rounds, and both sides
// of one round share it, so the paired ratio is steadier than the ratio
// of the medians over all runs.
type paired struct {
	ratios   []float64 // one per round with both sides, in round order
	med      float64
	min, max float64
}

// pairedRatio pairs the Go workload name with its C baseline by round;
// false when no round has both.
func (res *results) pairedRatio(name string) (paired, bool) {
	cname := name
	if b, ok := baselineOf[name]; ok {
		cname = b
	}
	byRound := func(ss []sample) map[int][]float64 {
		m := map[int][]float64{}
		for _, s := range ss {
			if s.round > 0 {
				m[s.round] = append(m[s.round], s.ns)
			}
		}
		return m
	}
	gr, cr := byRound(res.runs["Go"][name]), byRound(res.runs["C"][cname])
	var rounds []int
	for r := range gr {
		if _, ok := cr[r]; ok {
			rounds = append(rounds, r)
		}
	}
	if len(rounds) == 0 {
		return paired{}, false
	}
	slices.Sort(rounds)
	var p paired
	for _, r := range rounds {
		p.ratios = append(p.ratios, median(gr[r])/median(cr[r]))
	}
	p.med = median(p.ratios)
	p.min, p.max = slices.Min(p.ratios), slices.Max(p.ratios)
	return p, true
}

// renderPaired prints the paired ratio of every workload measured on both
// sides in the same rounds, in the table's row order.
func renderPaired(w io.Writer, res *results) {
	var names []string
	for _, r := range res.rows() {
		if _, ok := res.pairedRatio(r.name); ok {
			names = append(names, r.name)
		}
	}
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(w, "\nPaired by round (vkflow/C time: the median over rounds of each round's median vkflow ns/op over its C ns/op; both sides of a round share the machine's load):\n\n")
	fmt.Fprintln(w, "| workload | rounds | vkflow/C time, paired | per-round range |")
	fmt.Fprintln(w, "|---|---:|---:|---|")
	for _, name := range names {
		p, _ := res.pairedRatio(name)
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f–%.3f |\n", name, len(p.ratios), p.med, p.min, p.max)
	}
}

// renderKernelGoal prints the kernel-parity goal: the same vec4 SPIR-V,
// timed kernel only, paired by round.
func renderKernelGoal(w io.Writer, res *results) {
	prefix := fmt.Sprintf("- %s (the same SPIR-V, kernel only) vkflow/C time <= %.2f, paired by round: ", kernelName, kernelGoal)
	p, ok := res.pairedRatio(kernelName)
	if !ok || math.IsNaN(p.med) {
		fmt.Fprintf(w, "%s**NOT MEASURED** (needs bench/run.sh's round markers)\n", prefix)
		return
	}
	fmt.Fprintf(w, "%s%.3f over %d rounds (%.3f–%.3f) — **%s**\n", prefix, p.med, len(p.ratios), p.min, p.max, verdict(p.med <= kernelGoal))
}
