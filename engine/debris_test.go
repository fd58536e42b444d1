package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cubego/cubego/zarr"
)

func TestSweepDeadContextDirs(t *testing.T) {
	work := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	self := zarr.LocalOwner()
	host := self[:strings.LastIndexByte(self, '-')]
	dirs := map[string]bool{ // name -> removed
		"cubego-20260101T000000-" + host + "-" + strconv.Itoa(cmd.Process.Pid) + "-aaaa": true,
		"cubego-20260101T000000-" + self + "-bbbb":                                       false,
		"cubego-20260101T000000-otherhost-1-cccc":                                        false,
		"cubego-20260101T000000-dddd":                                                    false, // older naming: unknown owner
		"cubego-resume":                                                                  false,
	}
	for name := range dirs {
		if err := os.MkdirAll(filepath.Join(work, name, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sweepDeadContextDirs(work)
	for name, gone := range dirs {
		_, err := os.Stat(filepath.Join(work, name))
		if gone != os.IsNotExist(err) {
			t.Errorf("%s: removed %v, want %v", name, os.IsNotExist(err), gone)
		}
	}
}
