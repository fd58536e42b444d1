package engine

import (
	"slices"
	"time"
)

// Straggler mitigation, as in Cubed: once enough of an op's tasks have
// started and enough of those have finished, a task running much longer
// than a typical finished task gets one duplicate ("backup") copy; the
// first copy to succeed wins and the other is cancelled. This is safe
// because a task writes whole chunks, and every store replaces a chunk
// atomically (the file store writes a temporary file and renames it), so
// two copies writing the same chunk leave one complete copy of the same
// bytes.
const (
	backupMinStarted   = 10  // tasks of the op that have started
	backupMinFinished  = 0.5 // fraction of the started tasks that have finished
	backupSlowFactor   = 3.0 // elapsed time over the typical finished duration
	backupPollInterval = 50 * time.Millisecond
)

// backupThreshold returns how long a task of an op may run before it gets a
// backup copy, given how many of the op's tasks have started and the
// durations of those that finished; ok is false while too few have started
// or finished to tell. The typical duration is that of the finished task
// at the median position among all started tasks.
func backupThreshold(started int, finished []time.Duration) (time.Duration, bool) {
	if started < backupMinStarted || float64(len(finished)) < backupMinFinished*float64(started) {
		return 0, false
	}
	sorted := slices.Clone(finished)
	slices.Sort(sorted)
	i := int(backupMinFinished*float64(started)+0.5) - 1
	i = min(max(i, 0), len(sorted)-1)
	return time.Duration(backupSlowFactor * float64(sorted[i])), true
}
