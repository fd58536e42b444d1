//go:build race

package zarr_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation tests do not apply.
const raceEnabled = true
