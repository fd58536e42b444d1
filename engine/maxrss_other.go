//go:build !unix

package engine

// maxRSS is unknown here: peakRSS always reads its source.
func maxRSS() int64 { return 0 }
