package plan

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNormalizeChunks(t *testing.T) {
	cases := []struct {
		spec  string
		shape []int
		want  [][]int
	}{
		{`2`, []int{5, 4}, [][]int{{2, 2, 1}, {2, 2}}},
		{`-1`, []int{5, 4}, [][]int{{5}, {4}}},
		{`null`, []int{5}, [][]int{{5}}},
		{`[2, -1]`, []int{5, 4}, [][]int{{2, 2, 1}, {4}}},
		{`[[1, 4], null]`, []int{5, 4}, [][]int{{1, 4}, {4}}},
		{`10`, []int{3}, [][]int{{3}}},
		{`3`, []int{0, 2}, [][]int{{0}, {2}}},
		{`[0, 2]`, []int{0, 2}, [][]int{{0}, {2}}},
		{`0`, []int{0}, [][]int{{0}}},
		{`[]`, []int{}, [][]int{}},
		{`"auto"`, []int{100}, [][]int{{100}}},
		{`"80B"`, []int{100}, [][]int{{10, 10, 10, 10, 10, 10, 10, 10, 10, 10}}},
	}
	for _, c := range cases {
		got, err := NormalizeChunks(decode(t, c.spec), c.shape, 8, 0)
		if err != nil {
			t.Errorf("%s %v: %v", c.spec, c.shape, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %v: got %v, want %v", c.spec, c.shape, got, c.want)
		}
	}
}

func TestNormalizeChunksInvalid(t *testing.T) {
	cases := []struct {
		spec  string
		shape []int
	}{
		{`0`, []int{5}},
		{`-2`, []int{5}},
		{`[2]`, []int{5, 4}},
		{`[[2, 2]]`, []int{5}},
		{`[[3, 0, 2]]`, []int{5}},
		{`1.5`, []int{5}},
		{`"lots"`, []int{5}},
		{`true`, []int{5}},
		{`1`, []int{0, 1 << 31}},            // 2**31 blocks: refused, not allocated
		{`[1, 1]`, []int{1, MaxBlocks + 1}}, // one block too many
		{`"auto"`, []int{1 << 62}},          // auto chunks of an absurd axis
	}
	for _, c := range cases {
		_, err := NormalizeChunks(decode(t, c.spec), c.shape, 8, 0)
		if !errors.Is(err, ErrValue) {
			t.Errorf("%s %v: got %v, want a value error", c.spec, c.shape, err)
		}
	}
}

func TestParseBytes(t *testing.T) {
	cases := map[string]int64{"100": 100, "2GB": 2_000_000_000, "1.5 GB": 1_500_000_000, "1GiB": 1 << 30, "500kB": 500_000, "3MiB": 3 << 20}
	for s, want := range cases {
		got, err := ParseBytes(s)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "GB", "2XB", "-1MB", "abc"} {
		if _, err := ParseBytes(s); err == nil {
			t.Errorf("ParseBytes(%q) succeeded", s)
		}
	}
}

func TestIsRegular(t *testing.T) {
	if !IsRegular([][]int{{2, 2, 1}, {3}}) || IsRegular([][]int{{1, 2}}) || IsRegular([][]int{{2, 1, 2}}) {
		t.Error("IsRegular gave a wrong answer")
	}
}
