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

// TestHugeBuffers checks that a chunk buffer of hugeBytes or more starts on
// a 2 MiB boundary in a mapping of its own that the kernel may back with
// huge pages, holds what is written to it, and is unmapped when freed
// (past the pool), while a smaller one comes from malloc.
func TestHugeBuffers(t *testing.T) {
	if newHugeAllocator() == nil {
		t.Skip("this kernel's transparent huge pages are off")
	}
	a := NewAllocator()
	for _, size := range []int{hugeBytes, hugeBytes + 12345, 3*hugePageSize + 1} {
		b := a.Allocate(size)
		if len(b) != size || cap(b) != size {
			t.Fatalf("Allocate(%d): len %d cap %d", size, len(b), cap(b))
		}
		addr := uintptr(unsafe.Pointer(&b[0]))
		if addr%hugePageSize != 0 {
			t.Fatalf("Allocate(%d) at %#x: not on a 2 MiB boundary", size, addr)
		}
		for i := range b {
			b[i] = byte(i)
		}
		for i := range b {
			if b[i] != byte(i) {
				t.Fatalf("byte %d reads %d", i, b[i])
			}
		}
		// The kernel may merge the mapping with a neighbour of the same
		// flags, so its end is only checked to cover the buffer.
		entry := smapsEntry(t, addr)
		if e := smapsEntry(t, addr+uintptr(size)-1); e == nil || e[0] != entry[0] {
			t.Fatalf("Allocate(%d): the buffer's pages are not one mapping", size)
		}
		if !slicesContainsFlag(entry, "hg") {
			t.Fatalf("Allocate(%d): mapping not advised for huge pages: %q", size, entry)
		}
		a.Free(b)
		if e := smapsEntry(t, addr); e != nil {
			t.Fatalf("Free(%d-byte buffer): %#x still mapped: %q", size, addr, e[0])
		}
	}
	small := a.Allocate(hugeBytes - 1)
	if e := smapsEntry(t, uintptr(unsafe.Pointer(&small[0]))); slicesContainsFlag(e, "hg") {
		t.Fatalf("a buffer under %d bytes is in a huge-page mapping", hugeBytes)
	}
	a.Free(small)
}

// slicesContainsFlag reports whether an smaps entry's VmFlags has flag.
func slicesContainsFlag(entry []string, flag string) bool {
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
