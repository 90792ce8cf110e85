// Command devices is a `vulkaninfo --summary` of what vkflow uses: every
// physical device with its queue families, memory, the features and limits
// vkflow reads, and whether vkflow can run on it. It then opens the default
// Manager and shows the device it chose, its logical queues, and whether
// Device tensors are zero-copy there.
//
// VKFLOW_DEVICE (an index or a name substring) changes the default choice.
package main

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "devices:", err)
		os.Exit(1)
	}
}

func run() (err error) {
	devs, err := vkflow.Devices()
	if err != nil {
		return err
	}
	fmt.Printf("%d Vulkan device(s)\n", len(devs))
	for _, d := range devs {
		fmt.Println()
		if err := describe(os.Stdout, d); err != nil {
			return err
		}
	}

	fmt.Println()
	mgr, err := vkflow.New()
	if err != nil {
		return fmt.Errorf("default Manager: %w", err)
	}
	defer func() {
		if cerr := mgr.Close(); err == nil {
			err = cerr
		}
	}()
	if err := manager(os.Stdout, mgr); err != nil {
		return err
	}

	// The same device asked for more queues than it may have: logical
	// queues share the physical ones.
	many, err := vkflow.New(vkflow.WithDevice(mgr.Device().Index), vkflow.WithQueues(2, true))
	if err != nil {
		return fmt.Errorf("manager with WithQueues(2, true): %w", err)
	}
	defer many.Close()
	queues(os.Stdout, "  with WithQueues(2, true):", many.Queues())
	return many.Close()
}

// queues prints a logical queue mapping.
func queues(w io.Writer, title string, qs []vkflow.QueueInfo) {
	fmt.Fprintln(w, title)
	for _, q := range qs {
		fmt.Fprintf(w, "    %s (physical queue %d)\n", q, q.Physical)
	}
}

// flagNames returns the names of the bits of v that names knows, joined
// with "|", and "-" when none is set.
func flagNames(v uint32, names []flagName) string {
	var out []string
	for _, n := range names {
		if v&n.bit != 0 {
			out = append(out, n.name)
			v &^= n.bit
		}
	}
	if v != 0 {
		out = append(out, fmt.Sprintf("0x%x", v))
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, "|")
}

type flagName struct {
	bit  uint32
	name string
}

var (
	queueFlags = []flagName{
		{vk.QueueCompute, "compute"},
		{vk.QueueTransfer, "transfer"},
		{vk.QueueGraphics, "graphics"},
	}
	memoryFlags = []flagName{
		{vk.MemoryDeviceLocal, "DEVICE_LOCAL"},
		{vk.MemoryHostVisible, "HOST_VISIBLE"},
		{vk.MemoryHostCoherent, "HOST_COHERENT"},
		{vk.MemoryHostCached, "HOST_CACHED"},
		{vk.MemoryLazily, "LAZILY_ALLOCATED"},
		{vk.MemoryProtected, "PROTECTED"},
	}
	heapFlags = []flagName{
		{vk.HeapDeviceLocal, "DEVICE_LOCAL"},
	}
)

// size formats a byte count with a binary unit.
func size(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, exp := float64(n), 0
	for v >= unit && exp < 5 {
		v /= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[exp-1])
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// describe prints one physical device.
func describe(w io.Writer, d vkflow.DeviceInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	usable := "yes"
	if !d.Usable {
		usable = "no: " + d.Reason
	}
	fmt.Fprintf(tw, "device %d\t%s\n", d.Index, d.Name)
	fmt.Fprintf(tw, "  type\t%s\n", d.Type)
	fmt.Fprintf(tw, "  API version\t%s\n", vk.VersionString(d.APIVersion))
	fmt.Fprintf(tw, "  driver\t%s (%s)\n", d.DriverName, d.DriverInfo)
	fmt.Fprintf(tw, "  vendor/device ID\t0x%04x/0x%04x\n", d.VendorID, d.DeviceID)
	fmt.Fprintf(tw, "  usable by vkflow\t%s\n", usable)
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "  queue families:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    family\tflags\tqueues\ttimestamp bits")
	for i, f := range d.QueueFamilies {
		fmt.Fprintf(tw, "    %d\t%s\t%d\t%d\n", i, flagNames(f.Flags, queueFlags), f.Count, f.TimestampValidBits)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "  memory:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    heap\tsize\tflags")
	for i, h := range d.MemoryHeaps {
		fmt.Fprintf(tw, "    %d\t%s\t%s\n", i, size(h.Size), flagNames(h.Flags, heapFlags))
	}
	fmt.Fprintln(tw, "    type\theap\tflags")
	for i, t := range d.MemoryTypes {
		fmt.Fprintf(tw, "    %d\t%d\t%s\n", i, t.Heap, flagNames(t.Flags, memoryFlags))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "  features vkflow uses:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	f := reflect.ValueOf(d.Features)
	for i := range f.NumField() {
		fmt.Fprintf(tw, "    %s\t%s\n", f.Type().Field(i).Name, yesNo(f.Field(i).Bool()))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	l := d.Limits
	fmt.Fprintln(w, "  limits:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "    maxStorageBufferRange\t%d (%s)\n", l.MaxStorageBufferRange, size(uint64(l.MaxStorageBufferRange)))
	fmt.Fprintf(tw, "    maxComputeWorkGroupCount\t%v\n", l.MaxComputeWorkGroupCount)
	fmt.Fprintf(tw, "    maxComputeWorkGroupSize\t%v\n", l.MaxComputeWorkGroupSize)
	fmt.Fprintf(tw, "    maxComputeWorkGroupInvocations\t%d\n", l.MaxComputeWorkGroupInvocations)
	fmt.Fprintf(tw, "    maxComputeSharedMemorySize\t%d\n", l.MaxComputeSharedMemorySize)
	fmt.Fprintf(tw, "    maxPushConstantsSize\t%d\n", l.MaxPushConstantsSize)
	fmt.Fprintf(tw, "    minStorageBufferOffsetAlignment\t%d\n", l.MinStorageBufferOffsetAlignment)
	fmt.Fprintf(tw, "    nonCoherentAtomSize\t%d\n", l.NonCoherentAtomSize)
	fmt.Fprintf(tw, "    maxMemoryAllocationCount\t%d\n", l.MaxMemoryAllocationCount)
	fmt.Fprintf(tw, "    timestampPeriod\t%g ns\n", l.TimestampPeriod)
	fmt.Fprintf(tw, "    timestampComputeAndGraphics\t%s\n", yesNo(l.TimestampComputeAndGraphics))
	fmt.Fprintf(tw, "    maxTimelineSemaphoreValueDifference\t%d\n", l.MaxTimelineValueDifference)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "  extensions: %d\n", len(d.Extensions))
	return nil
}

// manager prints what the default Manager opened.
func manager(w io.Writer, mgr *vkflow.Manager) error {
	fmt.Fprintf(w, "default Manager: device %s\n", mgr.Device())
	queues(w, "  logical queues:", mgr.Queues())

	var enabled []string
	f := reflect.ValueOf(mgr.Features())
	for i := range f.NumField() {
		if f.Field(i).Bool() {
			enabled = append(enabled, f.Type().Field(i).Name)
		}
	}
	fmt.Fprintf(w, "  features enabled: %s\n", strings.Join(enabled, ", "))

	t, err := tensor.New(mgr, tensor.Float32, []int{4})
	if err != nil {
		return err
	}
	defer t.Close()
	how := "no: host access goes through the staging ring"
	if t.Mapped() {
		how = "yes: host access is mapped, no staging copy"
	}
	fmt.Fprintf(w, "  %s tensors zero-copy: %s\n", t.Memory(), how)
	return nil
}
