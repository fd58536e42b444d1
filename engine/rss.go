package engine

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

// resetPeakRSS resets the kernel's record of this process's peak resident
// set size (Linux: writing 5 to /proc/self/clear_refs), so peakRSS measures
// from now.
func resetPeakRSS() {
	peak.Lock()
	defer peak.Unlock()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	peak.last.Store(nil)
}

// currentRSS returns this process's resident set size in bytes (0 when
// unknown).
func currentRSS() int64 { return procStatus("VmRSS:") }

// peakRSS returns this process's peak resident set size in bytes since the
// last reset (0 when unknown). It is sampled after every task, and reading
// /proc/self/status costs about 10 µs, most of a small task's engine time,
// so it is read again only when the peak may have moved: getrusage's
// ru_maxrss (under 1 µs) is the larger of the same peak, counted with the
// kernel's cheaper per-CPU sums, and a floor left from before exec. While
// the last reading is at least its ru_maxrss (the floor is below the
// peak) and ru_maxrss has not changed since, the peak has not grown beyond
// what the per-CPU sums miss (a few pages per CPU), and a reset forgets
// the reading, so the last reading is returned.
func peakRSS() int64 {
	ru := maxRSS()
	if last := peak.last.Load(); last != nil && ru > 0 && ru == last.ru && last.peak >= last.ru {
		return last.peak
	}
	peak.RLock()
	defer peak.RUnlock()
	p := procStatus("VmHWM:")
	peak.last.Store(&peakReading{ru: ru, peak: p})
	return p
}

// peak holds the last /proc reading of the peak RSS. Readers of /proc hold
// it shared and resetPeakRSS exclusively, so a reading taken before a reset
// is never stored after it.
var peak struct {
	sync.RWMutex
	last atomic.Pointer[peakReading]
}

// peakReading is a /proc reading of the peak and ru_maxrss just before it.
type peakReading struct{ ru, peak int64 }

var status struct {
	once sync.Once
	f    *os.File
	bufs sync.Pool
}

// procStatus returns the value of a "kB" field of /proc/self/status in
// bytes (0 when unknown).
func procStatus(field string) int64 {
	status.once.Do(func() {
		status.f, _ = os.Open("/proc/self/status")
		status.bufs.New = func() any { return new([4096]byte) }
	})
	if status.f == nil {
		return 0
	}
	buf := status.bufs.Get().(*[4096]byte)
	defer status.bufs.Put(buf)
	n, _ := status.f.ReadAt(buf[:], 0)
	text := buf[:n]
	i := bytes.Index(text, []byte(field))
	if i < 0 {
		return 0
	}
	rest := text[i+len(field):]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	fields := bytes.Fields(rest)
	if len(fields) == 0 {
		return 0
	}
	kb, err := strconv.ParseInt(string(fields[0]), 10, 64)
	if err != nil {
		return 0
	}
	return kb * 1024
}
