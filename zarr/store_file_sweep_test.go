package zarr

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deadPID returns the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestSweepTempRemovesOnlyDeadWritersFiles(t *testing.T) {
	dir := t.TempDir()
	st, err := newFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	host := tempOwner[:strings.LastIndexByte(tempOwner, '-')]
	chunks := filepath.Join(dir, "a", "c", "0")
	if err := os.MkdirAll(chunks, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{ // name -> removed by the sweep
		".cubego-" + host + "-" + strconv.Itoa(deadPID(t)) + "-123.tmp": true,  // a dead writer here
		".cubego-" + tempOwner + "-456.tmp":                             false, // this live process
		".cubego-otherhost-1-789.tmp":                                   false, // another host, recent
		"0":                                                             false, // a chunk
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(chunks, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := filepath.Join(chunks, ".cubego-otherhost-2-999.tmp")
	if err := os.WriteFile(old, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-2 * StaleTempAge)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	files[filepath.Base(old)] = true // any owner, older than StaleTempAge
	n, err := TempSweeper(st).SweepTemp(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("removed %d files, want 2", n)
	}
	for name, gone := range files {
		_, err := os.Stat(filepath.Join(chunks, name))
		if gone != os.IsNotExist(err) {
			t.Errorf("%s: removed %v, want %v", name, os.IsNotExist(err), gone)
		}
	}
	// A missing prefix is nothing to sweep.
	if n, err := TempSweeper(st).SweepTemp(context.Background(), "missing"); n != 0 || err != nil {
		t.Errorf("missing prefix: %d, %v", n, err)
	}
}

func TestSetNamesItsTempFileByOwner(t *testing.T) {
	if !strings.HasPrefix(fileTempPrefix+tempOwner, ".cubego-") || !OwnerGone(strings.Replace(tempOwner, strconv.Itoa(os.Getpid()), strconv.Itoa(deadPID(t)), 1)) {
		t.Fatalf("owner %q does not parse", tempOwner)
	}
	if OwnerGone(tempOwner) {
		t.Fatal("this process is reported gone")
	}
}
