//go:build !unix

package zarr

// openFilesLimit returns the number of open files the process may hold:
// without a limit to read, the C runtime's usual 8192.
func openFilesLimit() int64 { return 8192 }
