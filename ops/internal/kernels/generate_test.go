package kernels

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedLoopsCurrent checks that loops_gen.go is what gen_loops.go
// writes from its table, and vector_float32_amd64.go what gen_vector.go
// writes from vector_float64_amd64.go.
func TestGeneratedLoopsCurrent(t *testing.T) {
	for gen, file := range map[string]string{"gen_loops.go": "loops_gen.go", "gen_vector.go": "vector_float32_amd64.go", "gen_compare.go": "compare_gen_amd64.go", "gen_math512.go": "vector_math512_amd64.go"} {
		checkGenerated(t, gen, file)
	}
}

func checkGenerated(t *testing.T, gen, file string) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out := filepath.Join(t.TempDir(), file)
	if msg, err := exec.Command(goBin, "run", gen, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("go run %s: %v\n%s", gen, err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate ./ops/internal/kernels/", file)
	}
}
