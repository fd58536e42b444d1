package engine

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cubego/cubego/plan"
)

func TestFillMeterTripsWhenTheCacheFillsAtUnderHalfTheDirectRate(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		name     string
		buffered []time.Duration // per 100 MB read through the cache
		trips    bool
	}{
		{"as fast as direct", []time.Duration{100, 100, 100, 100, 100, 100}, false},
		{"a little slower", []time.Duration{150, 190, 180, 160, 199}, false},
		{"one slow step", []time.Duration{100, 100, 400, 100}, false},
		{"under half", []time.Duration{100, 100, 230, 240, 250, 260}, true},
		{"too few steps", []time.Duration{900, 900, 900}, false},
	} {
		var m fillMeter
		m.record(200*mb, 200*time.Millisecond, true) // direct: 100 MB per 100 ms
		m.record(100*mb, 100*time.Millisecond, true)
		for _, d := range c.buffered {
			m.record(100*mb, d*time.Millisecond, false)
		}
		if m.tripped() != c.trips {
			t.Errorf("%s: tripped %v, want %v", c.name, m.tripped(), c.trips)
		}
	}
	var none fillMeter // no direct steps yet: nothing to compare with
	for range 8 {
		none.record(mb, time.Second, false)
	}
	if none.tripped() {
		t.Error("tripped without a direct step")
	}
	var nilMeter *fillMeter
	nilMeter.record(mb, time.Second, false)
	if nilMeter.tripped() {
		t.Error("a nil meter tripped")
	}
}

func TestTrippedFirstPassReadsTheRestDirectly(t *testing.T) {
	// As TestFirstPassReadsEarlyChunksDirectly (room in the cache for 3 of
	// x's 8 chunks), with filling the cache found too slow from the start:
	// the first pass reads all 8 chunks directly and caches none, so the
	// last pass reads all 8 directly too.
	dir, x, anom := twoPassAnomaly(t)
	want := computeFusedValues(t, []*plan.Array{anom})
	withMemory(t, x.NBytes()/2)
	defer func(f func(int64) int64) { cacheBytes = f }(cacheBytes)
	cacheBytes = func(int64) int64 { return 3 << 20 }
	defer func(f func(map[*plan.Op]map[int]span) map[*plan.Array]*fillMeter) { newFillMeters = f }(newFillMeters)
	newFillMeters = func(first map[*plan.Op]map[int]span) map[*plan.Array]*fillMeter {
		out := map[*plan.Array]*fillMeter{}
		for op, ins := range first {
			for i := range ins {
				out[op.Inputs[i].Array] = &fillMeter{}
				out[op.Inputs[i].Array].slow.Store(true)
			}
		}
		return out
	}
	p, err := plan.Build([]*plan.Array{anom})
	if err != nil {
		t.Fatal(err)
	}
	p.Fuse()
	counts, inFirst, onEvent := passDirectCounts(t, x)
	dropOrSkip(t, filepath.Join(dir, "x"), x)
	if got := executeValues(t, p, onEvent, anom); got[0] != want[0][0] {
		t.Fatalf("read directly: %v, through the cache: %v", got[0], want[0][0])
	}
	if total := counts.Load(); *inFirst != 8 || total != 16 {
		t.Fatalf("chunks of x read directly: %d by the first pass, %d in all; want 8 and 16", *inFirst, total)
	}
}
