package engine

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// resetPeakRSS resets the kernel's record of this process's peak resident
// set size (Linux: writing 5 to /proc/self/clear_refs), so peakRSS measures
// from now.
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// currentRSS returns this process's resident set size in bytes (0 when
// unknown).
func currentRSS() int64 { return procStatus("VmRSS:") }

// peakRSS returns this process's peak resident set size in bytes since the
// last reset (0 when unknown).
func peakRSS() int64 { return procStatus("VmHWM:") }

func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, field) {
			fs := strings.Fields(line[len(field):])
			if len(fs) > 0 {
				kb, _ := strconv.ParseInt(fs[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
