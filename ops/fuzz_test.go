package ops_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/cubego/cubego/ops"
	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// metadataSeeds are valid (and a few hostile but valid) Zarr array
// documents: zarr.json (v3) and .zarray (v2).
var metadataSeeds = []struct {
	doc string
	v2  bool
}{
	{`{"zarr_format": 3, "node_type": "array", "shape": [100, 80], "data_type": "float64",
	  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 20]}},
	  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
	  "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
	  {"name": "gzip", "configuration": {"level": 1}}], "attributes": {}}`, false},
	{`{"zarr_format": 3, "node_type": "array", "shape": [34359738368], "data_type": "uint8",
	  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
	  "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
	  "codecs": [{"name": "bytes"}]}`, false},
	{`{"zarr_format": 3, "node_type": "array", "shape": [4611686018427387904, 100], "data_type": "int32",
	  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1048576, 100]}},
	  "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}}, "fill_value": 7,
	  "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}`, false},
	{`{"zarr_format": 3, "node_type": "array", "shape": [64, 64], "data_type": "int16",
	  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [32, 32]}},
	  "chunk_key_encoding": {"name": "default"}, "fill_value": -1,
	  "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 8],
	    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
	    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
	    "index_location": "end"}}]}`, false},
	{`{"zarr_format": 3, "node_type": "array", "shape": [], "data_type": "bool",
	  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": []}},
	  "chunk_key_encoding": {"name": "default"}, "fill_value": true, "codecs": [{"name": "bytes"}]}`, false},
	{`{"zarr_format": 2, "shape": [1000, 3], "chunks": [100, 3], "dtype": "<f4", "compressor": null,
	  "fill_value": "NaN", "order": "C", "filters": null}`, true},
	{`{"zarr_format": 2, "shape": [34359738368], "chunks": [1], "dtype": "|u1",
	  "compressor": {"id": "zlib", "level": 1}, "fill_value": 0, "order": "F", "filters": null,
	  "dimension_separator": "/"}`, true},
	{`{"zarr_format": 2, "shape": [0, 5], "chunks": [4, 5], "dtype": ">i8", "compressor": null,
	  "fill_value": null, "order": "C", "filters": null}`, true},
}

// FuzzMetadataToPlan feeds arbitrary array metadata to the from_zarr path:
// the document is stored in an in-memory store, opened as a plan node, and
// when that works a few operations are planned over it and their memory
// projected. No input may panic, allocate in proportion to a number of
// chunks it declares (2**35 chunks from a few bytes once ran the process
// out of memory: issue #17), or fail with an error the C ABI cannot map to
// a Python exception type.
func FuzzMetadataToPlan(f *testing.F) {
	for _, s := range metadataSeeds {
		f.Add([]byte(s.doc), s.v2)
	}
	ctx := context.Background()
	const url = "mem://fuzz-metadata-to-plan"
	store, err := zarr.OpenStore(ctx, url)
	if err != nil {
		f.Fatal(err)
	}
	spec := &plan.Spec{AllowedMem: 64 << 20, ReservedMem: 1 << 20}
	f.Fuzz(func(t *testing.T, doc []byte, v2 bool) {
		key, other := "zarr.json", ".zarray"
		if v2 {
			key, other = other, key
		}
		if err := store.Delete(ctx, other); err != nil {
			t.Fatal(err)
		}
		if err := store.Set(ctx, key, doc); err != nil {
			t.Fatal(err)
		}
		a, err := ops.FromZarr(ctx, url, "", nil, spec, nil)
		if err != nil {
			requireTyped(t, "from_zarr", err)
			return
		}
		if err := plan.CheckGrid(a.Shape, a.Chunks, a.DType.Size()); err != nil {
			t.Fatalf("from_zarr made an array with an invalid grid: %v", err)
		}
		planOver(t, a)
	})
}

// planOver plans a slice, a rechunk, an elementwise op and a reduction of
// a, and projects their memory.
func planOver(t *testing.T, a *plan.Array) {
	var outs []*plan.Array
	add := func(what string, x *plan.Array, err error) {
		if err != nil {
			requireTyped(t, what, err)
			return
		}
		if err := plan.CheckGrid(x.Shape, x.Chunks, x.DType.Size()); err != nil {
			t.Fatalf("%s made an array with an invalid grid: %v", what, err)
		}
		outs = append(outs, x)
	}
	key := make([]ops.Index, a.NDim())
	for d := range key {
		stop := min(a.Shape[d], 2)
		key[d] = ops.Index{Kind: ops.IndexSlice, Stop: &stop}
	}
	x, err := ops.GetItem(a, key)
	add("getitem", x, err)
	x, err = ops.Rechunk(a, "auto")
	add("rechunk", x, err)
	x, err = ops.Elemwise("negative", ops.Operand{Array: a})
	add("negative", x, err)
	if a.NDim() > 0 {
		x, err = ops.Reduce("sum", a, []int{0}, false, nil, 0)
		add("sum", x, err)
	}
	if len(outs) == 0 {
		return
	}
	p, err := plan.Build(outs)
	if err != nil {
		requireTyped(t, "plan.Build", err)
		return
	}
	for _, o := range p.Ops {
		if o.ProjectedMem < 0 || o.NumTasks < 0 {
			t.Fatalf("op %s: projected memory %d, %d tasks", o.Op, o.ProjectedMem, o.NumTasks)
		}
	}
	_ = p.Validate()
	_ = p.Stats()
}

// requireTyped fails unless err wraps a sentinel the C ABI maps to a
// Python exception type (docs/capi.md): never an untyped error that would
// surface as a RuntimeError.
func requireTyped(t *testing.T, what string, err error) {
	t.Helper()
	var mem *plan.MemoryExceededError
	for _, s := range []error{plan.ErrValue, plan.ErrType, plan.ErrIndex, plan.ErrNotImplemented,
		zarr.ErrInvalid, zarr.ErrNotImplemented, zarr.ErrNotFound, zarr.ErrCorrupt} {
		if errors.Is(err, s) {
			return
		}
	}
	if errors.As(err, &mem) {
		return
	}
	t.Fatalf("%s: an untyped error: %v", what, err)
}

// FuzzGridToPlan is FuzzMetadataToPlan over valid documents only: a shape
// and chunk shape of up to three axes (any sizes, 0 through 2**63-1), a
// data type and the Zarr format, so the fuzzer explores the grids
// themselves (the documents of finding 1 of issue #17 are among its
// seeds) rather than JSON syntax.
func FuzzGridToPlan(f *testing.F) {
	f.Add(uint64(100), uint64(80), uint64(0), uint64(10), uint64(20), uint64(0), uint8(2), uint8(9), false)
	f.Add(uint64(1<<35), uint64(0), uint64(0), uint64(1), uint64(0), uint64(0), uint8(1), uint8(0), false)
	f.Add(uint64(1<<35), uint64(0), uint64(0), uint64(1), uint64(0), uint64(0), uint8(1), uint8(0), true)
	f.Add(uint64(1<<62), uint64(100), uint64(0), uint64(1<<20), uint64(100), uint64(0), uint8(2), uint8(5), false)
	f.Add(uint64(1<<30), uint64(0), uint64(0), uint64(1<<10), uint64(0), uint64(0), uint8(1), uint8(3), true)
	f.Add(uint64(0), uint64(1<<40), uint64(7), uint64(3), uint64(1), uint64(7), uint8(3), uint8(1), false)
	ctx := context.Background()
	const url = "mem://fuzz-grid-to-plan"
	store, err := zarr.OpenStore(ctx, url)
	if err != nil {
		f.Fatal(err)
	}
	spec := &plan.Spec{AllowedMem: 64 << 20, ReservedMem: 1 << 20}
	v3Types := []string{"bool", "uint8", "int32", "float64", "complex128", "int16", "uint64", "float32", "int8", "int64"}
	v2Types := []string{"|b1", "|u1", "<i4", "<f8", "<c16", "<i2", "<u8", "<f4", "|i1", ">i8"}
	f.Fuzz(func(t *testing.T, s0, s1, s2, c0, c1, c2 uint64, ndim, dtype uint8, v2 bool) {
		n := int(ndim % 4)
		shape := []uint64{s0, s1, s2}[:n]
		chunks := []uint64{c0, c1, c2}[:n]
		for i := range shape {
			shape[i] &= 1<<63 - 1
			chunks[i] &= 1<<63 - 1
		}
		list := func(xs []uint64) string {
			b, _ := json.Marshal(xs)
			return string(b)
		}
		k := int(dtype) % len(v3Types)
		var doc, key, other string
		if v2 {
			key, other = ".zarray", "zarr.json"
			doc = fmt.Sprintf(`{"zarr_format": 2, "shape": %s, "chunks": %s, "dtype": %q, "compressor": null,
				"fill_value": 0, "order": "C", "filters": null}`, list(shape), list(chunks), v2Types[k])
		} else {
			key, other = "zarr.json", ".zarray"
			fill := "0"
			if v3Types[k] == "bool" {
				fill = "false"
			} else if v3Types[k] == "complex128" {
				fill = "[0, 0]"
			}
			doc = fmt.Sprintf(`{"zarr_format": 3, "node_type": "array", "shape": %s, "data_type": %q,
				"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": %s}},
				"chunk_key_encoding": {"name": "default"}, "fill_value": %s, "codecs": [{"name": "bytes"}]}`,
				list(shape), v3Types[k], list(chunks), fill)
		}
		if err := store.Delete(ctx, other); err != nil {
			t.Fatal(err)
		}
		if err := store.Set(ctx, key, []byte(doc)); err != nil {
			t.Fatal(err)
		}
		a, err := ops.FromZarr(ctx, url, "", nil, spec, nil)
		if err != nil {
			requireTyped(t, "from_zarr", err)
			return
		}
		if err := plan.CheckGrid(a.Shape, a.Chunks, a.DType.Size()); err != nil {
			t.Fatalf("from_zarr made an array with an invalid grid: %v", err)
		}
		planOver(t, a)
	})
}
