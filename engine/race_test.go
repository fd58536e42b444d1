//go:build race

package engine

// raceEnabled: the race detector's shadow memory makes RSS measurements
// meaningless.
const raceEnabled = true
