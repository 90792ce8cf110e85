package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// The pinned pass of bench/run.sh: the same workloads with C and Go pinned
// to one core (taskset -c N, and GOMAXPROCS=1 for Go), in the same rounds
// as the unpinned ones. run.sh names them pinned_<workload> on both sides;
// they get a table of their own and are no rows of the main one.
const (
	pinnedPrefix = "pinned_"
	pinnedGoal   = 1.10 // pinned dispatch1024: vkflow ns/op <= 1.1 x C
)

func pinned(name string) bool { return strings.HasPrefix(name, pinnedPrefix) }

// pinnedRows returns the pinned workloads measured on either side, in the
// main table's order, named without the prefix.
func (res *results) pinnedRows() []row {
	var names []string
	for _, side := range []string{"C", "Go"} {
		for name := range res.runs[side] {
			if pinned(name) && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	rank := func(name string) int {
		if i := slices.Index(order, strings.TrimPrefix(name, pinnedPrefix)); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	var out []row
	for _, n := range names {
		r := row{name: strings.TrimPrefix(n, pinnedPrefix)}
		r.cName = r.name
		r.c, r.hasC = summarize(res.runs["C"][n])
		r.vf, r.hasGo = summarize(res.runs["Go"][n])
		out = append(out, r)
	}
	return out
}

// renderPinned prints the pinned table and its spread; nothing when the
// input has no pinned runs.
func renderPinned(w io.Writer, res *results) {
	rows := res.pinnedRows()
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nPinned to one core (C and vkflow under `taskset`, vkflow with GOMAXPROCS=1), in the same rounds: median ns/op, min–max over the runs.\n\n")
	fmt.Fprintln(w, "| workload (pinned) | C ns/op | vkflow ns/op | vkflow/C time | C min–max | vkflow min–max |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		ratio, cr, vr := "—", "—", "—"
		if r.hasC && r.hasGo {
			ratio = fmtNum(r.timeRatio(), 2)
		}
		if r.hasC {
			cr = fmt.Sprintf("%s–%s (%d)", group(r.c.min), group(r.c.max), r.c.n)
		}
		if r.hasGo {
			vr = fmt.Sprintf("%s–%s (%d)", group(r.vf.min), group(r.vf.max), r.vf.n)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.name,
			fmtNs(r.c.ns, r.hasC), fmtNs(r.vf.ns, r.hasGo), ratio, cr, vr)
	}
}

// renderPinnedGoal prints the goal line of the pinned dispatch1024.
func renderPinnedGoal(w io.Writer, res *results) {
	prefix := fmt.Sprintf("- pinned dispatch1024 vkflow/C time <= %.2f: ", pinnedGoal)
	for _, r := range res.pinnedRows() {
		if r.name == dispatchName && r.hasC && r.hasGo {
			fmt.Fprintf(w, "%s%.2f (%s vs %s ns/op) — **%s**\n", prefix, r.timeRatio(),
				group(r.vf.ns), group(r.c.ns), verdict(r.timeRatio() <= pinnedGoal))
			return
		}
	}
	fmt.Fprintf(w, "%s**NOT MEASURED**\n", prefix)
}
