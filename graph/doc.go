// Package graph records GPU work as a graph of nodes, infers the
// dependencies between them from what each reads and writes, and compiles
// it into command buffers on one or more queues that replay at command
// buffer speed.
//
//	g, _ := graph.New(mgr)
//	g.Upload(x, xs)
//	g.Dispatch(saxpy, float32(2)) // y += 2x: reads x, writes y
//	g.Dispatch(scale)             // reads y
//	g.Download(y, ys)
//	exec, _ := g.Compile()
//	for range steps {
//		err := exec.Run(ctx)
//	}
//
// # Nodes
//
// Dispatch (its reads and writes come from the shader's reflected binding
// access: readonly, writeonly or both), Copy (regions in elements), Fill,
// Upload and Download (host slices, read or written at each run through
// staging buffers of the Exec's), and Opaque (commands the graph cannot
// see, with declared reads and writes). Node.OnQueue pins a node to a
// logical queue, Node.After adds an order the accesses do not imply,
// Node.Named names it for output and errors. A Node carries its graph's
// identity: After and Exec.SetPush refuse the zero Node and a node of
// another graph with ErrInvalid, whatever its index.
//
// # Dependencies
//
// The program order is the meaning: a graph computes what running its
// nodes one after another in recording order would. Compile derives, per
// byte range of each buffer, read-after-write, write-after-read and
// write-after-write edges: every read depends on the last overlapping
// write, every write on the last overlapping write and the reads since.
// Accesses are keyed by memory (VkBuffer and byte range), not by tensor
// handle, so a tensor and a dlpack view of its buffer conflict like one
// tensor. Accesses to disjoint ranges of one buffer (copy regions) do not depend
// on each other. Anything else runs concurrently.
//
// # Compile
//
//   - Order: a topological order that keeps recording order where it can;
//     each node's level is its longest path from a source.
//   - Queues: a node not pinned with OnQueue goes to the queue where it
//     is estimated to finish first (list scheduling over the logical
//     queues Compile may use): a queue is free when its last node ends,
//     and a predecessor on another queue adds the cost of a hand-off. Work
//     is estimated in invocations (a transfer: one per 4 bytes; every node
//     a launch cost); a node smaller than a hand-off follows its latest
//     predecessor. Under PlaceByCost, the default, the hand-offs are the
//     device's own (Costs: measured once per device and driver, and
//     cached), against the GPU time of an invocation, and logical queues
//     that share a physical queue are one queue: branches go to separate
//     physical queues only where their work exceeds the hand-off, and
//     never spread over one physical queue (lavapipe's two logical queues
//     make one command buffer). PlaceSpread (a fixed, small hand-off, each
//     logical queue its own) and PlaceOneQueue force either way; WithCosts
//     decides with given figures. So a chain stays on one queue, and
//     large transfers with no compute neighbours go to a transfer queue of
//     their own. Dispatches never go to a transfer queue.
//   - Submits: each queue's nodes are cut into command buffers. A node
//     that needs a node of another queue starts a new command buffer that
//     waits, on the GPU, for the producer's; the producer's ends with the
//     producer unless the consumer needs the next node too. Waits are reduced with vector clocks: a wait is left out
//     when an earlier wait on the queue covers it, directly or through the
//     waits of the command buffer waited for. MaxNodesPerSubmit and
//     MaxWorkPerSubmit cap a command buffer, so a long graph reaches the
//     GPU in pieces and no submit runs long enough to trip a watchdog.
//   - Barriers: inside a command buffer the nodes are ordered by level, so
//     independent nodes form groups; before each group one
//     vkCmdPipelineBarrier holds a buffer barrier for each edge into the
//     group, on the edge's byte range only, with the producer's and
//     consumer's stages and accesses. Independent nodes get no barrier
//     between them. Order between command buffers on one queue comes from
//     the queue's hazard tracking (package sequence's preludes), and
//     between queues from timeline waits, which are full memory
//     dependencies.
//   - Buffers are shared concurrently between the Manager's queue
//     families, so no queue family ownership transfers are needed.
//
// Errors at Compile: any recording error (first one), a cycle (through
// After), a node whose tensor or algorithm was closed, a dispatch binding
// one tensor to two written bindings (two writers race), a node pinned to
// a queue Compile may not use or a dispatch pinned to a transfer queue. A
// read of a tensor that no node writes before it and that Input did not
// declare is a warning (Exec.Warnings, and the Manager's logger).
//
// # Run
//
// Exec.Run and Exec.RunAsync submit every command buffer, with the waits
// the plan computed, and never re-record. Each queue has a timeline of the
// Exec's; a run's command buffers signal consecutive values. Runs follow
// each other where they conflict: Compile also infers the edges from one
// run's nodes to the next run's, and a command buffer waits for the
// previous run's command buffer on another queue that it conflicts with
// (so with a ring of K buffers one queue runs up to K passes ahead, across
// runs too). A graph with uploads or downloads has one set of staging
// buffers, so its runs do not overlap: RunAsync returns ErrPending while
// the previous run is in flight, Run waits for it. Wait and Signal order a
// run after a timeline point and signal one when it is complete, so graphs
// compose with sequences and DLPack consumers. Exec.Rebind replaces a
// tensor handle and Exec.SetPush changes a dispatch's push constants: the
// command buffers are recorded again at the next run, the schedule is
// kept. Rebind derives the edges, barriers and cross-run waits again from
// the memory each node then touches (nodes on a view of the old tensor's
// buffer keep that buffer), and refuses a new tensor over memory the graph
// already touches.
//
// Exec.String and Exec.DOT show the schedule: the placement (the
// decision, the costs it used and the estimated work per queue), submits,
// queues, waits, groups and barriers; DOT labels each node with its index,
// kind and name, and its estimated work.
//
// Ownership: the Manager owns every Exec and closes it with the sequences;
// an Exec holds a reference on every tensor and algorithm its nodes use
// until Close and the GPU's completion of its last run. A Graph holds no
// Vulkan object and no reference.
//
// Imports: vk, internal/core, internal/record, tensor, algorithm, timeline
// and sequence.
package graph
