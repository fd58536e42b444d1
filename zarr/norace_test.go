//go:build !race

package zarr_test

const raceEnabled = false
