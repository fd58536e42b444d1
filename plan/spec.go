package plan

import "fmt"

// Spec is the resource specification shared by the arrays of a computation:
// where intermediates live and how much memory each task may use.
type Spec struct {
	// WorkDir is a local path or URL under which intermediates are written
	// (each process uses a fresh directory below it). Empty means the
	// system temporary directory.
	WorkDir string `json:"work_dir"`
	// AllowedMem is the most memory one task may use, including ReservedMem.
	AllowedMem int64 `json:"allowed_mem"`
	// ReservedMem is memory a worker uses before it runs any task.
	ReservedMem int64 `json:"reserved_mem"`
	// ZarrCompressor is the compressor of intermediates: "" (none) or "zstd".
	ZarrCompressor string `json:"zarr_compressor"`
}

// Default allowed and reserved memory, as in Cubed's configuration.
const (
	DefaultAllowedMem  = 2_000_000_000
	DefaultReservedMem = 100_000_000
)

// DefaultSpec returns the spec used by arrays created without one.
func DefaultSpec() *Spec {
	return &Spec{AllowedMem: DefaultAllowedMem, ReservedMem: DefaultReservedMem}
}

// Validate checks that the spec's numbers are usable.
func (s *Spec) Validate() error {
	if s.AllowedMem <= 0 {
		return Errorf(ErrValue, "allowed_mem must be positive, got %d", s.AllowedMem)
	}
	if s.ReservedMem < 0 {
		return Errorf(ErrValue, "reserved_mem must not be negative, got %d", s.ReservedMem)
	}
	if s.ReservedMem >= s.AllowedMem {
		return Errorf(ErrValue, "reserved_mem (%s) must be less than allowed_mem (%s)",
			FormatBytes(s.ReservedMem), FormatBytes(s.AllowedMem))
	}
	switch s.ZarrCompressor {
	case "", "zstd":
	default:
		return Errorf(ErrValue, "zarr_compressor must be None or \"zstd\", got %q", s.ZarrCompressor)
	}
	return nil
}

// Equal reports whether two specs describe the same resources.
func (s *Spec) Equal(o *Spec) bool {
	return s == o || (s != nil && o != nil && *s == *o)
}

func (s *Spec) String() string {
	return fmt.Sprintf("Spec(work_dir=%q, allowed_mem=%d, reserved_mem=%d)", s.WorkDir, s.AllowedMem, s.ReservedMem)
}

// CommonSpec returns the spec shared by arrays, or an error when they differ.
func CommonSpec(arrays ...*Array) (*Spec, error) {
	var spec *Spec
	for _, a := range arrays {
		if spec == nil {
			spec = a.Spec
			continue
		}
		if !spec.Equal(a.Spec) {
			return nil, Errorf(ErrValue, "arrays with different specs cannot be combined or computed together: %s and %s", spec, a.Spec)
		}
	}
	if spec == nil {
		spec = DefaultSpec()
	}
	return spec, nil
}
