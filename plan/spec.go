package plan

import (
	"encoding/json"
	"fmt"

	"github.com/cubego/cubego/zarr"
)

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
	// ZarrCompressor is the compressor of intermediates (see
	// CompressorCodecs): "" (none), "zstd", "blosc" or "gzip".
	ZarrCompressor string `json:"zarr_compressor"`
	// StorageOptions configure the work dir's object store, as JSON text
	// (a string keeps Spec comparable); "" for none.
	StorageOptions string `json:"storage_options,omitempty"`
	// Implicit marks the configured default spec of an array created
	// without one (a scalar or small numpy array that xarray or a user
	// passes to asarray): it gives way to an explicit spec when combined.
	Implicit bool `json:"implicit,omitempty"`
}

// StorageOptionsMap decodes StorageOptions.
func (s *Spec) StorageOptionsMap() (map[string]any, error) {
	if s.StorageOptions == "" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s.StorageOptions), &m); err != nil {
		return nil, Errorf(ErrValue, "invalid storage_options %s: %v", s.StorageOptions, err)
	}
	return m, nil
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
	if _, err := s.StorageOptionsMap(); err != nil {
		return err
	}
	_, err := CompressorCodecs(s.ZarrCompressor)
	return err
}

// CompressorCodecs returns the codecs of a compressor named by a Spec's
// zarr_compressor: "" (none: the fastest on local disk, where chunks of
// intermediates are written once and read once), "zstd", "blosc" (lz4
// with byte shuffle) or "gzip".
func CompressorCodecs(name string) ([]zarr.Codec, error) {
	switch name {
	case "":
		return nil, nil
	case "zstd":
		return []zarr.Codec{zarr.ZstdCodec(0, false)}, nil
	case "blosc":
		return []zarr.Codec{zarr.BloscCodec("lz4", 5, "shuffle", 0, 0)}, nil
	case "gzip":
		return []zarr.Codec{zarr.GzipCodec(1)}, nil
	}
	return nil, Errorf(ErrValue, "zarr_compressor must be None, \"zstd\", \"blosc\" or \"gzip\", got %q", name)
}

// Equal reports whether two specs describe the same resources (whether
// either is implicit does not matter).
func (s *Spec) Equal(o *Spec) bool {
	if s == o {
		return true
	}
	if s == nil || o == nil {
		return false
	}
	a, b := *s, *o
	a.Implicit, b.Implicit = false, false
	return a == b
}

func (s *Spec) String() string {
	return fmt.Sprintf("Spec(work_dir=%q, allowed_mem=%d, reserved_mem=%d)", s.WorkDir, s.AllowedMem, s.ReservedMem)
}

// CommonSpec returns the spec shared by arrays, or an error when they differ.
// Implicit specs (arrays created without one) give way to an explicit one;
// two explicit specs, or two implicit ones when there is no explicit one,
// must be equal.
func CommonSpec(arrays ...*Array) (*Spec, error) {
	var spec *Spec
	for _, explicit := range []bool{true, false} {
		for _, a := range arrays {
			if a.Spec == nil || a.Spec.Implicit == explicit {
				continue
			}
			if spec == nil {
				spec = a.Spec
				continue
			}
			if !spec.Equal(a.Spec) {
				return nil, Errorf(ErrValue, "Arrays must have same spec in single computation: arrays with different specs cannot be combined or computed together: %s and %s", spec, a.Spec)
			}
		}
		if spec != nil {
			break
		}
	}
	if spec == nil {
		spec = DefaultSpec()
	}
	return spec, nil
}
