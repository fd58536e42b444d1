package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"

	"github.com/cubego/cubego/zarr"
)

// FormatVersion is the version of the JSON form of array graphs.
const FormatVersion = 1

// The JSON form of an array graph: arrays and ops in an order where every
// op comes after the arrays it reads, referring to each other by index.
type graphJSON struct {
	Version int         `json:"version"`
	Arrays  []arrayJSON `json:"arrays"`
	Ops     []opJSON    `json:"ops"`
	Outputs []int       `json:"outputs"`
}

type arrayJSON struct {
	Name      string         `json:"name"`
	Shape     []int          `json:"shape"`
	DType     zarr.DataType  `json:"dtype"`
	Chunks    [][]int        `json:"chunks"`
	Spec      Spec           `json:"spec"`
	Generator *generatorJSON `json:"generator,omitempty"`
	Source    *ZarrRef       `json:"source,omitempty"`
	Target    *ZarrRef       `json:"target,omitempty"`
	Op        int            `json:"op"` // index into ops, -1 for none
}

type generatorJSON struct {
	Kind  string     `json:"kind"`
	Value scalarJSON `json:"value"`
	Start float64    `json:"start"`
	Step  float64    `json:"step"`
	Seed  uint64     `json:"seed"`
	Data  []byte     `json:"data,omitempty"`
}

type scalarJSON struct {
	Kind string       `json:"kind"`
	B    bool         `json:"b,omitempty"`
	I    int64        `json:"i,omitempty"`
	U    uint64       `json:"u,omitempty"`
	F    jsonFloat    `json:"f"`
	C    [2]jsonFloat `json:"c"`
}

type opJSON struct {
	Name       string      `json:"name"`
	Func       string      `json:"func"`
	Kind       string      `json:"kind"`
	Inputs     []inputJSON `json:"inputs"`
	Kernel     kernelJSON  `json:"kernel"`
	ExtraMem   int64       `json:"extra_mem"`
	TaskBlocks []int       `json:"task_blocks,omitempty"`
	Mirror     bool        `json:"mirror,omitempty"`
}

type inputJSON struct {
	Array int      `json:"array"`
	Dims  []DimMap `json:"dims"`
}

type kernelJSON struct {
	Core       string      `json:"core"`
	Exprs      []*exprJSON `json:"exprs"`
	Reduce     string      `json:"reduce,omitempty"`
	Axes       []int       `json:"axes,omitempty"`
	FrameNDim  int         `json:"frame_ndim,omitempty"`
	RecordIn   bool        `json:"record_in,omitempty"`
	RecordOut  bool        `json:"record_out,omitempty"`
	Correction float64     `json:"correction,omitempty"`
	Stack      int         `json:"stack,omitempty"`
	Fill       scalarJSON  `json:"fill"`
	Descending bool        `json:"descending,omitempty"`
	Transposed []bool      `json:"transposed,omitempty"`
	Indices    []int64     `json:"indices,omitempty"`
	// The "python" core's function (base64 in JSON) and its key and
	// description.
	PyFunc []byte `json:"py_func,omitempty"`
	PyKey  string `json:"py_key,omitempty"`
	PyMeta string `json:"py_meta,omitempty"`
}

type exprJSON struct {
	Op    string        `json:"op"`
	Input int           `json:"input,omitempty"`
	Value scalarJSON    `json:"value"`
	DType zarr.DataType `json:"dtype"`
	Args  []*exprJSON   `json:"args,omitempty"`
}

// jsonFloat encodes NaN and infinities as strings, as Zarr does.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case v != v:
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Infinity"`), nil
	}
	return json.Marshal(v)
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		switch s {
		case "NaN":
			*f = jsonFloat(math.NaN())
		case "Infinity":
			*f = jsonFloat(math.Inf(1))
		case "-Infinity":
			*f = jsonFloat(math.Inf(-1))
		default:
			return fmt.Errorf("plan: invalid float %q", s)
		}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jsonFloat(v)
	return nil
}

func toScalarJSON(s Scalar) scalarJSON {
	k := ""
	if s.Kind != 0 {
		k = string(rune(s.Kind))
	}
	return scalarJSON{Kind: k, B: s.B, I: s.I, U: s.U, F: jsonFloat(s.F), C: [2]jsonFloat{jsonFloat(real(s.C)), jsonFloat(imag(s.C))}}
}

func (s scalarJSON) scalar() Scalar {
	var k byte
	if s.Kind != "" {
		k = s.Kind[0]
	}
	return Scalar{Kind: k, B: s.B, I: s.I, U: s.U, F: float64(s.F), C: complex(float64(s.C[0]), float64(s.C[1]))}
}

func toExprJSON(e *Expr) *exprJSON {
	j := &exprJSON{Op: e.Op, Input: e.Input, Value: toScalarJSON(e.Value), DType: e.DType}
	for _, a := range e.Args {
		j.Args = append(j.Args, toExprJSON(a))
	}
	return j
}

func (j *exprJSON) expr() (*Expr, error) {
	if j == nil {
		return nil, fmt.Errorf("a null expression")
	}
	if !j.DType.Valid() {
		return nil, fmt.Errorf("an expression of invalid data type %d", int(j.DType))
	}
	e := &Expr{Op: j.Op, Input: j.Input, Value: j.Value.scalar(), DType: j.DType}
	for _, a := range j.Args {
		arg, err := a.expr()
		if err != nil {
			return nil, err
		}
		e.Args = append(e.Args, arg)
	}
	return e, nil
}

// Marshal encodes the graph that computes outputs as versioned JSON: the
// form in which arrays travel to other processes (pickling, distributed
// workers) without being computed.
func Marshal(outputs []*Array) ([]byte, error) {
	g, err := toGraph(outputs)
	if err != nil {
		return nil, err
	}
	return json.Marshal(g)
}

func toGraph(outputs []*Array) (*graphJSON, error) {
	g := &graphJSON{Version: FormatVersion}
	index := map[*Array]int{}
	opIndex := map[*Op]int{}
	var visit func(a *Array) int
	visit = func(a *Array) int {
		if i, ok := index[a]; ok {
			return i
		}
		aj := arrayJSON{Name: a.Name, Shape: a.Shape, DType: a.DType, Chunks: a.Chunks, Spec: *a.Spec,
			Source: a.Source, Target: a.Target, Op: -1}
		if gen := a.Generator; gen != nil {
			aj.Generator = &generatorJSON{Kind: gen.Kind, Value: toScalarJSON(gen.Value), Start: gen.Start, Step: gen.Step, Seed: gen.Seed, Data: gen.Data}
		}
		if op := a.Op; op != nil {
			k, ok := opIndex[op]
			if !ok {
				oj := opJSON{Name: op.Name, Func: op.Func, Kind: op.Kind, ExtraMem: op.ExtraMem, TaskBlocks: op.TaskBlocks, Mirror: op.Mirror,
					Kernel: kernelJSON{Core: op.Kernel.Core, Reduce: op.Kernel.Reduce, Axes: op.Kernel.Axes, FrameNDim: op.Kernel.FrameNDim,
						RecordIn: op.Kernel.RecordIn, RecordOut: op.Kernel.RecordOut, Correction: op.Kernel.Correction, Stack: op.Kernel.Stack,
						Fill: toScalarJSON(op.Kernel.Fill), Descending: op.Kernel.Descending, Transposed: op.Kernel.Transposed, Indices: op.Kernel.Indices,
						PyFunc: op.Kernel.PyFunc, PyKey: op.Kernel.PyKey, PyMeta: op.Kernel.PyMeta}}
				for _, e := range op.Kernel.Exprs {
					oj.Kernel.Exprs = append(oj.Kernel.Exprs, toExprJSON(e))
				}
				for _, in := range op.Inputs {
					oj.Inputs = append(oj.Inputs, inputJSON{Array: visit(in.Array), Dims: in.Dims})
				}
				k = len(g.Ops)
				g.Ops = append(g.Ops, oj)
				opIndex[op] = k
			}
			aj.Op = k
		}
		i := len(g.Arrays)
		g.Arrays = append(g.Arrays, aj)
		index[a] = i
		return i
	}
	for _, a := range outputs {
		g.Outputs = append(g.Outputs, visit(a))
	}
	return g, nil
}

// Unmarshal decodes a graph written by Marshal and returns its output
// arrays: new nodes with new IDs that keep their names and compute the same
// values.
func Unmarshal(b []byte) ([]*Array, error) {
	var g graphJSON
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, Errorf(ErrValue, "invalid array graph: %v", err)
	}
	if g.Version != FormatVersion {
		return nil, Errorf(ErrValue, "array graph version %d is not supported (this library reads version %d)", g.Version, FormatVersion)
	}
	arrays := make([]*Array, len(g.Arrays))
	specs := map[Spec]*Spec{}
	ops := make([]*Op, len(g.Ops))
	for i, aj := range g.Arrays {
		spec, ok := specs[aj.Spec]
		if !ok {
			s := aj.Spec
			spec = &s
			specs[aj.Spec] = spec
		}
		if err := checkArrayJSON(&aj); err != nil {
			return nil, Errorf(ErrValue, "invalid array graph: array %d (%s): %v", i, aj.Name, err)
		}
		a := NewArray(aj.Shape, aj.DType, aj.Chunks, spec)
		a.Name, a.Source, a.Target = aj.Name, aj.Source, aj.Target
		if gj := aj.Generator; gj != nil {
			a.Generator = &Generator{Kind: gj.Kind, Value: gj.Value.scalar(), Start: gj.Start, Step: gj.Step, Seed: gj.Seed, Data: gj.Data}
		}
		if aj.Op >= 0 {
			if aj.Op >= len(g.Ops) {
				return nil, Errorf(ErrValue, "invalid array graph: op %d of %d", aj.Op, len(g.Ops))
			}
			op := ops[aj.Op]
			if op == nil {
				oj := g.Ops[aj.Op]
				k := Kernel{Core: oj.Kernel.Core, Reduce: oj.Kernel.Reduce, Axes: oj.Kernel.Axes, FrameNDim: oj.Kernel.FrameNDim,
					RecordIn: oj.Kernel.RecordIn, RecordOut: oj.Kernel.RecordOut, Correction: oj.Kernel.Correction, Stack: oj.Kernel.Stack,
					Fill: oj.Kernel.Fill.scalar(), Descending: oj.Kernel.Descending, Transposed: oj.Kernel.Transposed, Indices: oj.Kernel.Indices,
					PyFunc: oj.Kernel.PyFunc, PyKey: oj.Kernel.PyKey, PyMeta: oj.Kernel.PyMeta}
				if k.PyKey != "" && k.PyKey != PyKeyOf(k.PyFunc) {
					return nil, Errorf(ErrValue, "invalid array graph: the Python function of op %s does not match its key", oj.Name)
				}
				for _, e := range oj.Kernel.Exprs {
					x, err := e.expr()
					if err != nil {
						return nil, Errorf(ErrValue, "invalid array graph: op %s: %v", oj.Name, err)
					}
					k.Exprs = append(k.Exprs, x)
				}
				var inputs []Input
				for _, in := range oj.Inputs {
					if in.Array < 0 || in.Array >= i {
						return nil, Errorf(ErrValue, "invalid array graph: op %s reads array %d before it is defined", oj.Name, in.Array)
					}
					inputs = append(inputs, Input{Array: arrays[in.Array], Dims: in.Dims})
				}
				op = NewOp(oj.Func, oj.Kind, inputs, a, k)
				op.Name, op.ExtraMem, op.TaskBlocks, op.Mirror = oj.Name, oj.ExtraMem, oj.TaskBlocks, oj.Mirror
				ops[aj.Op] = op
			}
			a.Op = op
		}
		arrays[i] = a
	}
	outs := make([]*Array, len(g.Outputs))
	for i, k := range g.Outputs {
		if k < 0 || k >= len(arrays) {
			return nil, Errorf(ErrValue, "invalid array graph: output %d of %d arrays", k, len(arrays))
		}
		outs[i] = arrays[k]
	}
	// Check the decoded ops as Build would, so bad input fails here.
	for _, op := range ops {
		if op != nil {
			if err := op.check(); err != nil {
				return nil, Errorf(ErrValue, "invalid array graph: %v", err)
			}
		}
	}
	return outs, nil
}

// checkArrayJSON checks what Unmarshal cannot leave to Build: a data type,
// a chunking that covers the shape (plan.CheckGrid), and a generator the
// array can be generated from.
func checkArrayJSON(aj *arrayJSON) error {
	if !aj.DType.Valid() {
		return fmt.Errorf("invalid data type %d", int(aj.DType))
	}
	if aj.Shape == nil {
		aj.Shape = []int{}
	}
	if aj.Chunks == nil {
		aj.Chunks = [][]int{}
	}
	if err := CheckGrid(aj.Shape, aj.Chunks, aj.DType.Size()); err != nil {
		return err
	}
	g := aj.Generator
	if g == nil {
		return nil
	}
	switch g.Kind {
	case "full":
		switch g.Value.Kind {
		case "", "b", "i", "u", "f", "c":
		default:
			return fmt.Errorf("invalid fill value kind %q", g.Value.Kind)
		}
	case "arange":
		if len(aj.Shape) != 1 {
			return fmt.Errorf("an arange generator for a %d-dimensional array", len(aj.Shape))
		}
	case "random":
		if aj.DType != zarr.Float32 && aj.DType != zarr.Float64 {
			return fmt.Errorf("a random generator of %s (want float32 or float64)", aj.DType)
		}
	case "literal":
		if want := Prod(aj.Shape) * int64(aj.DType.Size()); int64(len(g.Data)) != want {
			return fmt.Errorf("a literal of %d bytes for %d", len(g.Data), want)
		}
	default:
		return fmt.Errorf("unknown generator %q", g.Kind)
	}
	return nil
}

// PyKeyOf returns the key of a serialised Python function: its hex SHA-256.
func PyKeyOf(payload []byte) string {
	h := sha256.Sum256(payload)
	return hex.EncodeToString(h[:])
}

// Key returns a stable identifier of what an array computes: a hash of its
// definition and, recursively, of its inputs'. Equal definitions in
// different processes have equal keys, so a resumed computation finds the
// intermediates an earlier one wrote.
func Key(a *Array) (string, error) {
	g, err := toGraph([]*Array{a})
	if err != nil {
		return "", err
	}
	// Names are process-local counters: leave them out of the hash.
	for i := range g.Arrays {
		g.Arrays[i].Name = ""
	}
	for i := range g.Ops {
		g.Ops[i].Name = ""
	}
	b, err := json.Marshal(g)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:12]), nil
}
