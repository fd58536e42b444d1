package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// smapsEntry returns the /proc/self/smaps lines of the mapping holding
// addr, or nil when no mapping holds it.
func smapsEntry(t *testing.T, addr uintptr) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(strings.Fields(l)[0], "%x-%x", &lo, &hi); n == 2 { // a mapping's first line
			if in {
				return lines
			}
			in = lo <= addr && addr < hi
		}
		if in {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestHugeBuffers checks that the whole 2 MiB pages of a chunk buffer of
// hugeBytes or more are in a mapping the kernel may back with huge pages,
// that the buffer holds what is written to it and leaves the process when
// freed (past the pool), and that a smaller buffer is not advised.
func TestHugeBuffers(t *testing.T) {
	if !hugePagesOn() {
		t.Skip("this kernel's transparent huge pages are off")
	}
	a := NewAllocator()
	for _, size := range []int{hugeBytes, hugeBytes + 12345, 3*hugePageSize + 1, 64 << 20} {
		b := a.Allocate(size)
		if len(b) != size || cap(b) != size {
			t.Fatalf("Allocate(%d): len %d cap %d", size, len(b), cap(b))
		}
		for i := range b {
			b[i] = byte(i)
		}
		for i := range b {
			if b[i] != byte(i) {
				t.Fatalf("byte %d reads %d", i, b[i])
			}
		}
		start := uintptr(unsafe.Pointer(&b[0]))
		first := (start + hugePageSize - 1) &^ (hugePageSize - 1)
		if first+hugePageSize > start+uintptr(size) {
			t.Fatalf("Allocate(%d) at %#x: no whole 2 MiB page inside", size, start)
		}
		for p := first; p+hugePageSize <= start+uintptr(size); p += hugePageSize {
			if e := smapsEntry(t, p); !hasVmFlag(e, "hg") {
				t.Fatalf("Allocate(%d): the 2 MiB page at %#x is not advised for huge pages: %q", size, p, e)
			}
		}
		a.Free(b)
		if e := smapsEntry(t, first); e != nil {
			t.Fatalf("Free(%d-byte buffer): %#x still mapped: %q", size, first, e[0])
		}
	}
	small := a.Allocate(hugeBytes - 1)
	if e := smapsEntry(t, uintptr(unsafe.Pointer(&small[0]))); hasVmFlag(e, "hg") {
		t.Fatalf("a buffer under %d bytes is in a huge-page mapping", hugeBytes)
	}
	a.Free(small)
}

// hasVmFlag reports whether an smaps entry's VmFlags has flag.
func hasVmFlag(entry []string, flag string) bool {
	for _, l := range entry {
		if f, ok := strings.CutPrefix(l, "VmFlags:"); ok {
			for _, v := range strings.Fields(f) {
				if v == flag {
					return true
				}
			}
		}
	}
	return false
}
