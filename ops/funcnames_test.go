package ops

import (
	"errors"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

var update = flag.Bool("update", false, "rewrite the function names in doc.go from the tables")

// funcNameLists are the items of doc.go's "Function names" section: the
// functions that take an fn string and, from the tables they check fn
// against, the names they accept.
func funcNameLists() [][2]string {
	elem := func(nin int) []string {
		var names []string
		for name, f := range elemFuncs {
			if f.nin == nin {
				names = append(names, name)
			}
		}
		return names
	}
	records := func(arg bool) []string {
		var names []string
		for name, rk := range recordKinds {
			if rk.arg == arg && !rk.complex {
				names = append(names, name)
			}
		}
		return names
	}
	lists := []struct {
		funcs string
		names []string
	}{
		{"[Elemwise], one operand", elem(1)},
		{"[Elemwise], two operands", elem(2)},
		{"[Reduce] and [ReduceSplit]", reductions},
		{"[ArgReduce] and [ArgReduceSplit]", records(true)},
		{"[Var] and [Moments]", records(false)},
		{"[Cumulative]", cumulatives},
		{"[Linalg]", kernels.LinalgFuncs},
	}
	out := make([][2]string, len(lists))
	for i, l := range lists {
		names := slices.Sorted(slices.Values(l.names))
		out[i] = [2]string{l.funcs, strings.Join(names, ", ")}
	}
	return out
}

// funcNamesSection renders the lists as doc comment lines, list items
// wrapped as gofmt keeps them.
func funcNamesSection() []string {
	lines := []string{
		"// # Function names",
		"//",
		"// The functions that take a function name fn accept these names, generated",
		"// from the tables they check fn against (go test ./ops -run FunctionNames",
		"// -update):",
		"//",
	}
	for _, item := range funcNameLists() {
		line := "//   - " + item[0] + ":"
		for _, word := range strings.Fields(item[1]) {
			if len(line)+1+len(word) > 78 {
				lines = append(lines, line)
				line = "//    "
			}
			line += " " + word
		}
		lines = append(lines, line)
	}
	return lines
}

// TestFunctionNamesDocumented checks that the package documentation lists
// exactly the function names the tables hold, so the list cannot drift.
func TestFunctionNamesDocumented(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	start := slices.Index(lines, "// # Function names")
	if start < 0 {
		t.Fatal(`doc.go has no "# Function names" section`)
	}
	end := start + 1
	for end < len(lines) && strings.HasPrefix(lines[end], "//") && !strings.HasPrefix(lines[end], "// # ") {
		end++
	}
	// The section ends before the blank comment line that precedes the next
	// heading, if any.
	if end < len(lines) && strings.HasPrefix(lines[end], "// # ") && lines[end-1] == "//" {
		end--
	}
	want := funcNamesSection()
	if slices.Equal(lines[start:end], want) {
		return
	}
	if *update {
		lines = slices.Replace(lines, start, end, want...)
		if err := os.WriteFile("doc.go", []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("doc.go's function names differ from the tables; run go test ./ops -run FunctionNames -update, or write:\n%s",
		strings.Join(want, "\n"))
}

// TestFunctionNamesAccepted checks the tables against the functions: each
// listed name is known to its functions (it may still refuse a dtype) and
// an unknown name is refused as not implemented.
func TestFunctionNamesAccepted(t *testing.T) {
	x, err := Full([]int{4, 4}, Float64, plan.Scalar{Kind: 'f', F: 2}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := Operand{Array: x}
	axis := 0
	calls := map[string]func(fn string) error{
		"[Elemwise], one operand":  func(fn string) error { _, err := Elemwise(fn, a); return err },
		"[Elemwise], two operands": func(fn string) error { _, err := Elemwise(fn, a, a); return err },
		"[Reduce] and [ReduceSplit]": func(fn string) error {
			_, err := Reduce(fn, x, nil, false, nil, 0)
			return err
		},
		"[ArgReduce] and [ArgReduceSplit]": func(fn string) error {
			_, err := ArgReduce(fn, x, &axis, false)
			return err
		},
		"[Var] and [Moments]": func(fn string) error { _, err := Var(fn, x, nil, false, 0, nil); return err },
		"[Cumulative]":        func(fn string) error { _, err := Cumulative(fn, x, 0, nil, false); return err },
		"[Linalg]": func(fn string) error {
			var b *plan.Array
			if fn == "solve" {
				b = x
			}
			_, err := Linalg(fn, x, b)
			return err
		},
	}
	for _, item := range funcNameLists() {
		call, ok := calls[item[0]]
		if !ok {
			t.Errorf("no call for the functions %s", item[0])
			continue
		}
		for _, fn := range strings.Split(item[1], ", ") {
			if err := call(fn); errors.Is(err, plan.ErrNotImplemented) {
				t.Errorf("%s: %q is listed but refused: %v", item[0], fn, err)
			}
		}
		for _, fn := range []string{"no_such_function", "cvar", "const"} {
			if err := call(fn); !errors.Is(err, plan.ErrNotImplemented) {
				t.Errorf("%s: unknown %q gave %v, want ErrNotImplemented", item[0], fn, err)
			}
		}
	}
}
