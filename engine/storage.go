package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// storage opens and caches Zarr stores and arrays for one computation, and
// owns the directory of its intermediates.
type storage struct {
	mu       sync.Mutex
	stores   map[string]zarr.Store
	arrays   map[*plan.Array]*zarr.Array
	interDir string // local path or URL of this computation's intermediates
}

// openStore opens a store by URL; tests replace it to inject faults.
var openStore = zarr.OpenStore

func newStorage(interDir string) *storage {
	return &storage{stores: map[string]zarr.Store{}, arrays: map[*plan.Array]*zarr.Array{}, interDir: interDir}
}

func (s *storage) store(ctx context.Context, url string) (zarr.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stores[url]; ok {
		return st, nil
	}
	st, err := openStore(ctx, url)
	if err != nil {
		return nil, err
	}
	s.stores[url] = st
	return st, nil
}

// array returns the Zarr array holding a stored or computed plan array.
func (s *storage) array(ctx context.Context, a *plan.Array) (*zarr.Array, error) {
	s.mu.Lock()
	z, ok := s.arrays[a]
	s.mu.Unlock()
	if ok {
		return z, nil
	}
	ref := a.Source
	if ref == nil {
		return nil, fmt.Errorf("engine: %s has not been computed", a.Name)
	}
	st, err := s.store(ctx, ref.Store)
	if err != nil {
		return nil, err
	}
	z, err = zarr.OpenArray(ctx, st, ref.Path)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.arrays[a] = z
	s.mu.Unlock()
	return z, nil
}

// create makes the Zarr array a computed plan array is written to: its
// target, or an intermediate. An intermediate's grid has one chunk per
// block (irregular chunkings are padded to the largest block).
func (s *storage) create(ctx context.Context, a *plan.Array) (*zarr.Array, error) {
	chunk := a.ChunkShape()
	for i, c := range chunk {
		chunk[i] = max(c, 1)
	}
	meta := zarr.ArrayMetadata{Shape: a.Shape, ChunkShape: chunk, DataType: a.DType}
	ref := a.Target
	intermediate := ref == nil
	if intermediate {
		ref = &plan.ZarrRef{Store: s.interDir, Path: a.Name, Compressor: a.Spec.ZarrCompressor}
		if !plan.IsRegular(a.Chunks) {
			meta.Shape = make([]int, a.NDim())
			for i, c := range chunk {
				meta.Shape[i] = c * len(a.Chunks[i])
			}
		}
	}
	meta.Codecs = []zarr.Codec{zarr.BytesCodec()}
	if ref.Compressor == "zstd" {
		meta.Codecs = append(meta.Codecs, zarr.ZstdCodec(0, false))
	}
	st, err := s.store(ctx, ref.Store)
	if err != nil {
		return nil, err
	}
	if !intermediate && !ref.Overwrite {
		if _, err := zarr.OpenArray(ctx, st, ref.Path); err == nil {
			return nil, plan.Errorf(plan.ErrValue, "a Zarr array already exists at %s (path %q); pass overwrite=True to replace it", ref.Store, ref.Path)
		}
	}
	z, err := zarr.CreateArray(ctx, st, ref.Path, meta)
	if err != nil {
		return nil, err
	}
	z.SetWriteEmptyChunks(intermediate)
	s.mu.Lock()
	s.arrays[a] = z
	s.mu.Unlock()
	return z, nil
}

func (s *storage) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stores {
		_ = zarr.Close(st)
	}
	s.stores = map[string]zarr.Store{}
}

// contextDirs names this process's intermediate directories, so they can
// be removed when the process ends.
var contextDirs struct {
	sync.Mutex
	byWorkDir map[string]string
}

// contextDir returns this process's directory under a work dir (created
// lazily by the store), e.g. /tmp/cubego-20261121T195200-1a2b3c4d.
func contextDir(workDir string) string {
	contextDirs.Lock()
	defer contextDirs.Unlock()
	if contextDirs.byWorkDir == nil {
		contextDirs.byWorkDir = map[string]string{}
	}
	if d, ok := contextDirs.byWorkDir[workDir]; ok {
		return d
	}
	if workDir == "" {
		workDir = os.TempDir()
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("cubego-%s-%s", time.Now().UTC().Format("20060102T150405"), hex.EncodeToString(b[:]))
	d := joinURL(workDir, name)
	contextDirs.byWorkDir[workDir] = d
	return d
}

func joinURL(base, name string) string {
	if strings.Contains(base, "://") {
		return strings.TrimRight(base, "/") + "/" + name
	}
	return filepath.Join(base, name)
}

// removeLocal deletes a local intermediate directory (object-store
// intermediates are left to the bucket's lifecycle rules, as in Cubed).
func removeLocal(dir string) error {
	if strings.Contains(dir, "://") && !strings.HasPrefix(dir, "file://") {
		return nil
	}
	return os.RemoveAll(strings.TrimPrefix(dir, "file://"))
}

// Cleanup removes every intermediate directory this process created. Call
// it when the process is about to exit (the Python package does, at exit).
func Cleanup() error {
	contextDirs.Lock()
	defer contextDirs.Unlock()
	var first error
	for _, d := range contextDirs.byWorkDir {
		if err := removeLocal(d); err != nil && first == nil {
			first = err
		}
	}
	contextDirs.byWorkDir = nil
	return first
}
