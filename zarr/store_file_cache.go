package zarr

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// maxOpenFiles bounds the files one WithOpenFiles context keeps open. A
// task that reads bands of many chunks in turn, as W4's swap-axes sum
// does (a band of each of 129 chunks per step, and the same chunks again
// at the next step), must keep all of them: a cache smaller than the
// cycle it goes round evicts each file just before it is read again, and
// every read and prefetch then opens its file (at 128 files for W4's 129
// chunks, 10% of the task's CPU time went to opens and closes). The
// process-wide bound is keptFilesBudget.
const maxOpenFiles = 1024

// WithOpenFiles returns a context under which local file stores keep the
// files they open for reading byte ranges and for prefetching open, up to
// maxOpenFiles (the least recently used is closed beyond that), so that
// reading a chunk in several parts, and prefetching those parts first,
// opens its file once: opening a file costs some 10 µs (a path walk, two
// stats), as much as reading 100 kB from the page cache, and a task
// that folds bands of 128 chunks (W4's swap-axes sum) read and
// prefetched each of its 512 bands with two opens. Should the process
// run out of file descriptors, the kept files are closed and the open
// tried again.
//
// A kept file is the one its path named when it was opened: a store
// writing or deleting the key under the same context forgets it (a later
// read opens the new file), but a file replaced by another process or
// under another context is read as it was. So the scope is one operation
// of the engine (all its tasks in the process), whose inputs no task
// writes while it runs; the returned close, called once nothing reads
// under the context any more, closes the files (a file still being read
// is closed by its last reader). Under a context that has such a cache
// already, WithOpenFiles returns ctx itself and a close that does
// nothing: the outer scope keeps the files.
func WithOpenFiles(ctx context.Context) (context.Context, func()) {
	if c, _ := ctx.Value(openFilesKey{}).(*openFiles); c != nil {
		return ctx, func() {}
	}
	c := &openFiles{files: map[string]*sharedFile{}}
	return context.WithValue(ctx, openFilesKey{}, c), c.close
}

type openFilesKey struct{}

// openFiles is the cache of WithOpenFiles: open files by path, with their
// users, in a list from the most to the least recently used (a hit moves
// its file to the front, an eviction takes the back: both O(1), as an
// operation's tasks may go round thousands of files).
type openFiles struct {
	mu     sync.Mutex
	files  map[string]*sharedFile
	recent sharedFile // the list's sentinel: recent.next is the most recently used
	closed bool
}

type sharedFile struct {
	f          *os.File
	path       string
	size       int64
	users      int
	prev, next *sharedFile // neighbours in openFiles.recent while kept
	gone       bool        // out of the cache: closed when its last user is done
}

// unlink takes e out of the recency list.
func (e *sharedFile) unlink() {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

// toFront puts e (not in the list) at the front of c's recency list.
func (c *openFiles) toFront(e *sharedFile) {
	if c.recent.next == nil { // the empty list: the sentinel links to itself
		c.recent.next, c.recent.prev = &c.recent, &c.recent
	}
	e.prev, e.next = &c.recent, c.recent.next
	e.next.prev = e
	c.recent.next = e
}

// keptFiles counts the files all WithOpenFiles caches of the process keep
// open; a cache over keptFilesBudget closes its least recently used file
// before it keeps another, so that many tasks at once leave half the
// process's file descriptors to everything else.
var keptFiles atomic.Int64

// keptFilesBudget is half the process's limit of open files (its soft
// RLIMIT_NOFILE, which the Go runtime raises to the hard limit), at least
// 64, read once.
var keptFilesBudget = sync.OnceValue(func() int64 { return max(64, openFilesLimit()/2) })

func (c *openFiles) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for p := range c.files {
		c.dropLocked(p)
	}
}

// dropLocked takes path p out of the cache, closing its file unless it
// is in use (its last user then closes it). c.mu is held.
func (c *openFiles) dropLocked(p string) {
	e := c.files[p]
	if e == nil {
		return
	}
	delete(c.files, p)
	e.unlink()
	keptFiles.Add(-1)
	e.gone = true
	if e.users == 0 {
		e.f.Close()
	}
}

func (c *openFiles) release(e *sharedFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.users--
	if e.gone && e.users == 0 {
		e.f.Close()
	}
}

// forget drops path p from the cache of ctx, if any (the key is being
// written or deleted).
func forgetOpenFile(ctx context.Context, p string) {
	if c, _ := ctx.Value(openFilesKey{}).(*openFiles); c != nil {
		c.mu.Lock()
		c.dropLocked(p)
		c.mu.Unlock()
	}
}

// openShared is open for reads that may share the file: under a
// WithOpenFiles context, the file kept open there (opened and kept on
// first use). done must be called when the read is over.
func (s *fileStore) openShared(ctx context.Context, op, key string) (f *os.File, size int64, done func(), err error) {
	c, _ := ctx.Value(openFilesKey{}).(*openFiles)
	if c == nil {
		if f, size, err = s.open(ctx, op, key); err != nil {
			return nil, 0, nil, err
		}
		return f, size, func() { f.Close() }, nil
	}
	p, err := s.path(ctx, key)
	if err != nil {
		return nil, 0, nil, err
	}
	c.mu.Lock()
	if e := c.files[p]; e != nil {
		e.users++
		if c.recent.next != e {
			e.unlink()
			c.toFront(e)
		}
		c.mu.Unlock()
		return e.f, e.size, func() { c.release(e) }, nil
	}
	c.mu.Unlock()
	f, size, err = s.open(ctx, op, key)
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		// Out of file descriptors: give back the kept ones and try again.
		c.mu.Lock()
		for p := range c.files {
			c.dropLocked(p)
		}
		c.mu.Unlock()
		f, size, err = s.open(ctx, op, key)
	}
	if err != nil {
		return nil, 0, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.files[p] != nil {
		// Closed meanwhile, or opened by another reader: this one alone.
		return f, size, func() { f.Close() }, nil
	}
	for len(c.files) > 0 && (len(c.files) >= maxOpenFiles || keptFiles.Load() >= keptFilesBudget()) {
		c.dropLocked(c.recent.prev.path)
	}
	e := &sharedFile{f: f, path: p, size: size, users: 1}
	c.files[p] = e
	c.toFront(e)
	keptFiles.Add(1)
	return f, size, func() { c.release(e) }, nil
}
