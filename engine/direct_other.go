//go:build !linux

package engine

// physicalMemory returns 0 (unknown) off Linux, where no read is direct.
var physicalMemory = func() int64 { return 0 }

// dirtyLimit returns 0 (unknown) off Linux, where no write is direct.
var dirtyLimit = func() int64 { return 0 }
