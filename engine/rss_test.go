package engine

import (
	"os"
	"testing"
)

func TestRSSReadings(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	resetPeakRSS()
	cur, peak := currentRSS(), peakRSS()
	if cur <= 0 || peak < cur/2 {
		t.Fatalf("RSS %d, peak %d", cur, peak)
	}
	// Touch 64 MB of C memory: the peak follows. The Go runtime may hand
	// heap back to the kernel meanwhile (the scavenger; more so under
	// -race), so the peak is checked against the resident size measured
	// while the 64 MB are held, not against the reading before them: a
	// stale cached reading is below it.
	a := NewAllocator()
	b := a.Allocate(64 << 20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	held := currentRSS()
	if p := peakRSS(); p < held-1<<20 || p < 64<<20 {
		t.Errorf("peak %d after touching 64 MB, resident %d (peak before %d)", p, held, peak)
	}
	a.Free(b)
	// A reset is seen at once, though the peak was read since.
	high := peakRSS()
	resetPeakRSS()
	if p := peakRSS(); p > high-32<<20 {
		t.Errorf("peak %d after freeing 64 MB and a reset, was %d", p, high)
	}
	if procStatus("NoSuchField:") != 0 {
		t.Error("an unknown field is not 0")
	}
}

func BenchmarkPeakRSS(b *testing.B) {
	for range b.N {
		peakRSS()
	}
}

// BenchmarkPeakRSSProc is the /proc read that peakRSS avoids when the peak
// has not moved.
func BenchmarkPeakRSSProc(b *testing.B) {
	for range b.N {
		procStatus("VmHWM:")
	}
}
