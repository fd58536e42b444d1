//go:build !linux

package engine

// physicalMemory returns 0 (unknown) off Linux, where no read is direct.
var physicalMemory = func() int64 { return 0 }

// dirtyFreerun returns 0 (unknown) off Linux, where no write is direct.
var dirtyFreerun = func() int64 { return 0 }
