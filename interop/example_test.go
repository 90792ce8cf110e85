package interop_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// The examples open Managers with plain vkflow.New(), as a program does;
// the tests run the same calls under validation.

// Two Managers share one tensor's memory: the producer exports it, the
// consumer imports it, the producer's GPU writes it and the consumer reads
// it, with no copy. In separate processes the handle travels with
// SendHandle and RecvHandle.
func Example() {
	producer, err := vkflow.New()
	if err != nil {
		log.Fatal(err)
	}
	defer producer.Close()
	consumer, err := vkflow.New()
	if err != nil {
		log.Fatal(err)
	}
	defer consumer.Close()
	if err := interop.Supported(producer); err != nil {
		log.Fatal(err)
	}

	x, err := tensor.New(producer, tensor.Float32, []int{4}, tensor.Exportable())
	if err != nil {
		log.Fatal(err)
	}
	h, err := interop.Export(x) // h.FD is ours...
	if err != nil {
		log.Fatal(err)
	}
	y, err := interop.Import(consumer, h, tensor.Float32, []int{4}) // ...until Import takes it
	if err != nil {
		log.Fatal(err)
	}

	seq, err := sequence.New(producer, 0)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The host waits for the producer's work before the consumer reads: a
	// host relay. (Devices that share timelines can order it on the GPU.)
	if err := seq.Fill(x, float32(2.5)).SyncLocal(x).Eval(ctx); err != nil {
		log.Fatal(err)
	}
	got, err := y.Float32s()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got)
	// Output: [2.5 2.5 2.5 2.5]
}

// SendHandle passes a handle and its fd over a Unix socket; the receiver
// owns the fd it gets and imports it. Here both ends are in one process.
func ExampleSendHandle() {
	mgr, err := vkflow.New()
	if err != nil {
		log.Fatal(err)
	}
	defer mgr.Close()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		log.Fatal(err)
	}
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "socket")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			log.Fatal(err)
		}
		return c.(*net.UnixConn)
	}
	sender, receiver := conn(fds[0]), conn(fds[1])
	defer sender.Close()
	defer receiver.Close()

	x, err := tensor.New(mgr, tensor.Int32, []int{3}, tensor.Exportable())
	if err != nil {
		log.Fatal(err)
	}
	if err := tensor.Write(x, []int32{7, 8, 9}); err != nil {
		log.Fatal(err)
	}
	h, err := interop.Export(x)
	if err != nil {
		log.Fatal(err)
	}
	err = interop.SendHandle(sender, h)
	syscall.Close(h.FD) // sent or not, the sender's copy is closed
	if err != nil {
		log.Fatal(err)
	}

	got, err := interop.RecvHandle(receiver)
	if err != nil {
		log.Fatal(err)
	}
	y, err := interop.Import(mgr, got, tensor.Int32, []int{3})
	if err != nil {
		log.Fatal(err)
	}
	v, err := y.Int32s()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v, got.Bytes, got.Dedicated)
	// Output: [7 8 9] 12 true
}
