package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cubego/cubego/plan"
	"github.com/cubego/cubego/zarr"
)

// storage opens and caches Zarr stores and arrays for one computation, and
// owns the directory of its intermediates.
type storage struct {
	mu sync.Mutex
	// offsets are, for arrays written into part of an existing array, the
	// chunk coordinates of their first block in it.
	offsets  map[*plan.Array][]int
	stores   map[string]zarr.Store
	arrays   map[*plan.Array]*zarr.Array
	interDir string // local path or URL of this computation's intermediates
	// keyed names intermediates by plan.Key in a directory that outlives
	// the process (resumable computations, and those a Runner executes);
	// used lists the ones this computation used. resume reuses what an
	// earlier computation left there: complete arrays and written chunks.
	keyed, resume bool
	used          []string
	locks         map[string]*userLock // by path in used (users.go)
	// Intermediates kept in memory while they fit memBudget (bytes).
	memBudget, memUsed int64
	memStore           zarr.Store
	inMemory           map[*plan.Array]int64
}

// memIntermediates names the store of in-memory intermediates.
const memIntermediates = "cubego-memory:"

// openStore opens a store by URL; tests replace it to inject faults.
var openStore = zarr.OpenStore

func newStorage(interDir string) *storage {
	return &storage{stores: map[string]zarr.Store{}, arrays: map[*plan.Array]*zarr.Array{},
		offsets: map[*plan.Array][]int{}, interDir: interDir,
		memStore: zarr.NewMemoryStore(), inMemory: map[*plan.Array]int64{}}
}

func (s *storage) store(ctx context.Context, ref *plan.ZarrRef) (zarr.Store, error) {
	if ref.Store == memIntermediates {
		return s.memStore, nil
	}
	key := ref.Store
	if len(ref.StorageOptions) > 0 {
		b, _ := json.Marshal(ref.StorageOptions)
		key += "\x00" + string(b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stores[key]; ok {
		return st, nil
	}
	var st zarr.Store
	var err error
	if len(ref.StorageOptions) == 0 {
		st, err = openStore(ctx, ref.Store)
	} else {
		st, err = zarr.OpenStoreWithOptions(ctx, ref.Store, ref.StorageOptions)
	}
	if err != nil {
		return nil, err
	}
	s.stores[key] = st
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
	st, err := s.store(ctx, ref)
	if err != nil {
		return nil, err
	}
	z, err = zarr.OpenArray(ctx, st, ref.Path)
	if err != nil {
		return nil, err
	}
	if ref.ByInnerChunks {
		if z, err = z.ByInnerChunks(); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	s.arrays[a] = z
	s.mu.Unlock()
	return z, nil
}

// create makes the Zarr array a computed plan array is written to: its
// target, or an intermediate. An intermediate's grid has one chunk per
// block (irregular chunkings are padded to the largest block).
func (s *storage) create(ctx context.Context, a *plan.Array) (complete bool, err error) {
	ref := a.Target
	intermediate := ref == nil
	meta := storedMetadata(a, intermediate)
	if intermediate {
		if ref, err = s.intermediateRef(a); err != nil {
			return false, err
		}
		if n := plan.MulSat(plan.MulSat(plan.Prod(meta.ChunkShape), plan.Prod(a.NumBlocks())), int64(a.DType.Size())); !s.keyed && s.memBudget > 0 {
			s.mu.Lock()
			if s.memUsed+n <= s.memBudget {
				s.memUsed += n
				s.inMemory[a] = n
				ref.Store, ref.StorageOptions, ref.Compressors = memIntermediates, nil, nil
			}
			s.mu.Unlock()
		}
	}
	if err := encodingOf(ref, &meta); err != nil {
		return false, err
	}
	st, err := s.store(ctx, ref)
	if err != nil {
		return false, err
	}
	if sw, ok := st.(zarr.TempSweeper); ok {
		// Debris of writers killed mid-chunk in an earlier run (docs/distributed.md).
		if _, err := sw.SweepTemp(ctx, ref.Path); err != nil {
			return false, err
		}
	}
	if ref.Existing {
		_, err := s.openExisting(ctx, a, st, ref)
		return false, err
	}
	if !intermediate {
		if _, err := zarr.OpenGroup(ctx, st, ref.Path); err == nil {
			return false, plan.Errorf(plan.ErrValue, "a Zarr group exists at %s (path %q); write the array to a path inside it", ref.Store, ref.Path)
		}
		if _, err := zarr.OpenArray(ctx, st, ref.Path); err == nil && !ref.Overwrite {
			return false, plan.Errorf(plan.ErrValue, "a Zarr array already exists at %s (path %q); pass overwrite=True to replace it", ref.Store, ref.Path)
		}
	}
	if intermediate && s.keyed {
		if err := s.use(ref.Path); err != nil {
			return false, err
		}
	}
	if intermediate && s.resume {
		if z, ok := completeArray(ctx, st, ref.Path, meta); ok {
			z.SetMissingChunksAreErrors(true)
			s.mu.Lock()
			s.arrays[a] = z
			s.mu.Unlock()
			return true, nil
		}
	}
	z, err := zarr.CreateArray(ctx, st, ref.Path, meta)
	if err != nil {
		return false, err
	}
	// Every chunk of an intermediate is written, so a missing one was
	// deleted under us (the work dir removed mid-run): an error, never
	// the fill value (docs/reliability.md).
	z.SetWriteEmptyChunks(intermediate)
	z.SetMissingChunksAreErrors(intermediate)
	s.mu.Lock()
	s.arrays[a] = z
	s.mu.Unlock()
	return false, nil
}

func (s *storage) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stores {
		_ = zarr.Close(st)
	}
	s.stores = map[string]zarr.Store{}
}

// completeArray returns the array at path when it has the given metadata
// and every chunk (intermediates are written with empty chunks too, so a
// complete one has them all).
func completeArray(ctx context.Context, st zarr.Store, path string, want zarr.ArrayMetadata) (*zarr.Array, bool) {
	l, ok := st.(zarr.Lister)
	if !ok {
		return nil, false
	}
	z, err := zarr.OpenArray(ctx, st, path)
	if err != nil {
		return nil, false
	}
	m := z.Metadata()
	if !slices.Equal(m.Shape, want.Shape) || !slices.Equal(m.ChunkShape, want.ChunkShape) || m.DataType != want.DataType {
		return nil, false
	}
	keys, err := l.List(ctx, path+"/c")
	if err != nil {
		return nil, false
	}
	return z, int64(len(keys)) == plan.Prod(z.GridShape())
}

// resumeDir is where intermediates that resumed computations can find live.
func resumeDir(workDir string) string {
	if workDir == "" {
		workDir = os.TempDir()
	}
	return joinURL(workDir, "cubego-resume")
}

// remove deletes the intermediate holding a (local work dirs; object
// store intermediates are left to the bucket's lifecycle rules).
func (s *storage) remove(a *plan.Array) {
	s.mu.Lock()
	_, ok := s.arrays[a]
	delete(s.arrays, a)
	n, inMemory := s.inMemory[a]
	delete(s.inMemory, a)
	s.mu.Unlock()
	switch {
	case inMemory:
		ctx := context.Background()
		keys, _ := s.memStore.(zarr.Lister).List(ctx, a.Name+"/")
		for _, k := range keys {
			_ = s.memStore.Delete(ctx, k)
		}
		s.mu.Lock()
		s.memUsed -= n
		s.mu.Unlock()
	case ok:
		_ = removeLocal(joinURL(s.interDir, a.Name))
	}
}

// use records that this computation uses the keyed intermediate at path,
// holding a shared lock on it until releaseUsed (users.go), so another
// computation of the same array never deletes it under us.
func (s *storage) use(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.used, path) {
		return nil
	}
	if lp := lockPath(joinURL(s.interDir, path)); lp != "" {
		l, err := lockShared(lp)
		if err != nil {
			return err
		}
		if s.locks == nil {
			s.locks = map[string]*userLock{}
		}
		s.locks[path] = l
	}
	s.used = append(s.used, path)
	return nil
}

// releaseUsed lets go of the keyed intermediates this computation used:
// those keep reports true for stay; the others are deleted unless another
// computation still uses them (then the last one to finish deletes them).
func (s *storage) releaseUsed(keep func(path string) bool) error {
	s.mu.Lock()
	used, locks := s.used, s.locks
	s.used, s.locks = nil, nil
	s.mu.Unlock()
	var first error
	for _, p := range used {
		l := locks[p]
		var err error
		switch {
		case keep(p) && l != nil:
			l.release()
		case keep(p):
		case l != nil:
			err = l.removeIfLast(joinURL(s.interDir, p))
		default:
			err = removeLocal(joinURL(s.interDir, p))
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// openExisting opens the existing array a is written into and records
// where a's blocks go in it.
func (s *storage) openExisting(ctx context.Context, a *plan.Array, st zarr.Store, ref *plan.ZarrRef) (*zarr.Array, error) {
	z, err := zarr.OpenArray(ctx, st, ref.Path)
	if err != nil {
		return nil, err
	}
	meta := z.Metadata()
	off := make([]int, a.NDim())
	for d := range off {
		c := meta.ChunkShape[d]
		if d >= len(ref.Region) || ref.Region[d]%c != 0 || a.ChunkShape()[d] > c {
			return nil, fmt.Errorf("engine: %s does not fit the chunks %v of its target", a, meta.ChunkShape)
		}
		off[d] = ref.Region[d] / c
	}
	s.mu.Lock()
	s.arrays[a] = z
	s.offsets[a] = off
	s.mu.Unlock()
	return z, nil
}

// chunkCoords returns the coordinates of the chunk a block of a is
// written to.
func (s *storage) chunkCoords(a *plan.Array, block []int) []int {
	s.mu.Lock()
	off := s.offsets[a]
	s.mu.Unlock()
	if off == nil {
		return block
	}
	c := make([]int, len(block))
	for d, b := range block {
		c[d] = b + off[d]
	}
	return c
}

// encodingOf sets the codecs of a created array from its reference: v3
// codec chains (sharded when the reference names inner chunks), or a v2
// numcodecs compressor.
func encodingOf(ref *plan.ZarrRef, meta *zarr.ArrayMetadata) error {
	switch ref.ZarrFormat {
	case 0, 3:
		meta.ZarrFormat = 3
		chain := append([]zarr.Codec{zarr.BytesCodec()}, ref.Compressors...)
		if ref.InnerChunks != nil {
			chain = []zarr.Codec{zarr.ShardingCodec(ref.InnerChunks, chain, "end")}
		}
		meta.Codecs = chain
	case 2:
		meta.ZarrFormat = 2
		if ref.InnerChunks != nil {
			return plan.Errorf(plan.ErrValue, "Zarr format 2 has no sharding; use zarr_format=3 to write shards")
		}
		if len(ref.Compressors) > 1 {
			return plan.Errorf(plan.ErrValue, "Zarr format 2 takes one compressor, got %d", len(ref.Compressors))
		}
		if len(ref.Compressors) == 1 {
			c, err := v2Compressor(ref.Compressors[0])
			if err != nil {
				return err
			}
			meta.Compressor = &c
		}
	default:
		return plan.Errorf(plan.ErrValue, "zarr_format must be 2 or 3, got %d", ref.ZarrFormat)
	}
	return nil
}

// v2Compressor translates a v3 compressor to its numcodecs form.
func v2Compressor(c zarr.Codec) (zarr.Codec, error) {
	cfg := c.Configuration
	switch c.Name {
	case "zstd":
		return zarr.Codec{Name: "zstd", Configuration: map[string]any{"level": cfgOr(cfg, "level", 0)}}, nil
	case "gzip":
		return zarr.Codec{Name: "gzip", Configuration: map[string]any{"level": cfgOr(cfg, "level", 1)}}, nil
	case "blosc":
		shuffle := map[any]int{"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[cfgOr(cfg, "shuffle", "shuffle")]
		return zarr.Codec{Name: "blosc", Configuration: map[string]any{
			"cname": cfgOr(cfg, "cname", "lz4"), "clevel": cfgOr(cfg, "clevel", 5), "shuffle": shuffle, "blocksize": 0}}, nil
	}
	return zarr.Codec{}, plan.Errorf(plan.ErrNotImplemented, "compressor %q cannot be written to Zarr format 2", c.Name)
}

func cfgOr(cfg map[string]any, k string, def any) any {
	if v, ok := cfg[k]; ok {
		return v
	}
	return def
}

// contextDirs names this process's intermediate directories, so they can
// be removed when the process ends.
var contextDirs struct {
	sync.Mutex
	byWorkDir map[string]string
}

// contextDir returns this process's directory under a work dir (created
// lazily by the store), e.g. /tmp/cubego-20261121T195200-myhost-4242-1a2b3c4d:
// the host and process id in the name let a later process remove the
// directory of one that died without cleaning up (sweepDeadContextDirs).
func contextDir(workDir string) string {
	contextDirs.Lock()
	defer contextDirs.Unlock()
	if contextDirs.byWorkDir == nil {
		contextDirs.byWorkDir = map[string]string{}
	}
	if d, ok := contextDirs.byWorkDir[workDir]; ok {
		return d
	}
	base := workDir
	if base == "" {
		base = os.TempDir()
	}
	sweepDeadContextDirs(base)
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("cubego-%s-%s-%s", time.Now().UTC().Format("20060102T150405"), zarr.LocalOwner(), hex.EncodeToString(b[:]))
	d := joinURL(base, name)
	contextDirs.byWorkDir[workDir] = d
	return d
}

// sweepDeadContextDirs removes, in a local work dir, the intermediate
// directories of processes of this host that are gone (killed before they
// could clean up). Directories of live processes, of other hosts sharing
// the work dir, and on object stores are left alone.
func sweepDeadContextDirs(workDir string) {
	if strings.Contains(workDir, "://") && !strings.HasPrefix(workDir, "file://") {
		return
	}
	dir := strings.TrimPrefix(workDir, "file://")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, "cubego-") {
			continue
		}
		// cubego-<time>-<host>-<pid>-<random>
		rest := strings.TrimPrefix(name, "cubego-")
		i, j := strings.IndexByte(rest, '-'), strings.LastIndexByte(rest, '-')
		if i < 0 || j <= i {
			continue
		}
		if zarr.OwnerGone(rest[i+1 : j]) {
			_ = os.RemoveAll(filepath.Join(dir, name))
		}
	}
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

// intermediateRef is where the intermediate holding a lives: under the
// intermediates' directory, named by its plan.Key when the storage is keyed
// and by its name otherwise, compressed with the spec's compressor.
func (s *storage) intermediateRef(a *plan.Array) (*plan.ZarrRef, error) {
	codecs, err := plan.CompressorCodecs(a.Spec.ZarrCompressor)
	if err != nil {
		return nil, err
	}
	opts, err := a.Spec.StorageOptionsMap()
	if err != nil {
		return nil, err
	}
	ref := &plan.ZarrRef{Store: s.interDir, Path: a.Name, Compressors: codecs, StorageOptions: opts}
	if s.keyed {
		if ref.Path, err = plan.Key(a); err != nil {
			return nil, err
		}
	}
	return ref, nil
}

// storedMetadata is the shape, chunk shape and data type of the Zarr array
// holding a. An intermediate's grid has one chunk per block: irregular
// chunkings are padded to the largest block.
func storedMetadata(a *plan.Array, intermediate bool) zarr.ArrayMetadata {
	chunk := a.ChunkShape()
	for i, c := range chunk {
		chunk[i] = max(c, 1)
	}
	meta := zarr.ArrayMetadata{Shape: a.Shape, ChunkShape: chunk, DataType: a.DType}
	if intermediate && !plan.IsRegular(a.Chunks) {
		meta.Shape = make([]int, a.NDim())
		for i, c := range chunk {
			meta.Shape[i] = c * len(a.Chunks[i])
		}
	}
	return meta
}

// attach opens, without creating anything, the Zarr array that a computed
// plan array is written to, as the coordinator's create made it: its
// target, or its keyed intermediate. A Runner's workers call it. A missing
// intermediate is an error naming it, never an array of fill values.
func (s *storage) attach(ctx context.Context, a *plan.Array) error {
	ref := a.Target
	intermediate := ref == nil
	if intermediate {
		var err error
		if ref, err = s.intermediateRef(a); err != nil {
			return err
		}
	}
	st, err := s.store(ctx, ref)
	if err != nil {
		return err
	}
	if ref.Existing {
		_, err := s.openExisting(ctx, a, st, ref)
		return err
	}
	z, err := zarr.OpenArray(ctx, st, ref.Path)
	if err != nil {
		return fmt.Errorf("engine: %s is missing from %s (path %q): %w", a.Name, ref.Store, ref.Path, err)
	}
	// Every chunk of an intermediate is written, so a missing one was
	// deleted under us (the work dir removed mid-run): an error, never
	// the fill value (docs/reliability.md).
	z.SetWriteEmptyChunks(intermediate)
	z.SetMissingChunksAreErrors(intermediate)
	s.mu.Lock()
	s.arrays[a] = z
	s.mu.Unlock()
	return nil
}

// complete reports whether a's keyed intermediate is already stored whole.
func (s *storage) complete(ctx context.Context, a *plan.Array) bool {
	ref, err := s.intermediateRef(a)
	if err != nil {
		return false
	}
	st, err := s.store(ctx, ref)
	if err != nil {
		return false
	}
	if s.use(ref.Path) != nil {
		return false
	}
	_, ok := completeArray(ctx, st, ref.Path, storedMetadata(a, true))
	return ok
}
