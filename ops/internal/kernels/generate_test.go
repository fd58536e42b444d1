package kernels

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedLoopsCurrent checks that loops_gen.go is what gen_loops.go
// writes from its table.
func TestGeneratedLoopsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out := filepath.Join(t.TempDir(), "loops_gen.go")
	if msg, err := exec.Command(goBin, "run", "gen_loops.go", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("go run gen_loops.go: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("loops_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("loops_gen.go is stale: run go generate ./ops/internal/kernels/")
	}
}
