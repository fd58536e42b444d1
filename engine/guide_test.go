package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGoGuideSnippets checks that every Go code block of docs/go.md is an
// excerpt of the runnable example named under it ("*From `ExampleX` in
// package p.*"): each non-blank line of the block, trimmed, appears in
// that example's source, in the same order. The examples themselves are
// compiled and their output checked by go test, so the guide shows only
// code that builds and does what it says.
func TestGoGuideSnippets(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "docs", "go.md"))
	if err != nil {
		t.Fatal(err)
	}
	source := regexp.MustCompile("^\\*From `(Example\\w*)` in package (\\w+)\\.\\*$")
	lines := strings.Split(string(guide), "\n")
	blocks := 0
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		start := i + 1
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		i = end
		blocks++
		next := ""
		if end+1 < len(lines) {
			next = strings.TrimSpace(lines[end+1])
		}
		m := source.FindStringSubmatch(next)
		if m == nil {
			t.Errorf("docs/go.md:%d: a Go block not followed by \"*From `ExampleX` in package p.*\"", start)
			continue
		}
		body, err := exampleSource(filepath.Join("..", m[2], "example_test.go"), m[1])
		if err != nil {
			t.Errorf("docs/go.md:%d: %v", start, err)
			continue
		}
		k := 0
		for j, line := range lines[start:end] {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			for k < len(body) && body[k] != line {
				k++
			}
			if k == len(body) {
				t.Errorf("docs/go.md:%d: %q is not in %s of package %s (after the lines before it)", start+j+1, line, m[1], m[2])
				break
			}
			k++
		}
	}
	if blocks == 0 {
		t.Error("docs/go.md has no Go blocks")
	}
}

// exampleSource returns the trimmed lines of function name in file.
func exampleSource(file, name string) ([]string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name && fn.Recv == nil {
			text := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
			var out []string
			for _, l := range strings.Split(text, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					out = append(out, l)
				}
			}
			return out, nil
		}
	}
	return nil, &os.PathError{Op: "find " + name, Path: file, Err: os.ErrNotExist}
}
