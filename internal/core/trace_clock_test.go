package core

import "testing"

// calibratedOffset puts a GPU tick on the trace's clock: a timestamp read
// together with CLOCK_MONOTONIC lands at that host time, and a later tick
// period ns per tick after it.
func TestCalibratedOffset(t *testing.T) {
	const mono0, period = uint64(1_000_000_000), 2.5 // t0 at 1 s, 2.5 ns per tick
	for _, tc := range []struct {
		gpu, host uint64
		want      float64 // µs since t0 of the tick gpu
	}{
		{gpu: 0, host: mono0, want: 0},
		{gpu: 4000, host: mono0 + 7_000, want: 7},
		{gpu: 1 << 40, host: mono0 + 123_456_000, want: 123456},
		{gpu: 10, host: mono0 - 3_000, want: -3}, // read before t0
	} {
		off := calibratedOffset(tc.gpu, tc.host, mono0, period)
		if got := float64(tc.gpu)*period/1000 + off; got < tc.want-1e-6 || got > tc.want+1e-6 {
			t.Errorf("tick %d read at %d ns: %.6f µs since t0, want %.6f", tc.gpu, tc.host, got, tc.want)
		}
		if later := float64(tc.gpu+400)*period/1000 + off; later-tc.want < 1-1e-6 || later-tc.want > 1+1e-6 {
			t.Errorf("400 ticks later is %.6f µs later, want 1", later-tc.want)
		}
	}
}
