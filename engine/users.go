package engine

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Keyed intermediates (work_dir/cubego-resume/<plan.Key>) are shared: two
// computations of the same array at once — threads of one process, or
// processes sharing a work dir — name the same directories. Writing them
// together is safe (the chunks are the same bytes, each written atomically),
// but deleting one while another computation still reads it is not. So a
// computation holds a shared flock on "<key>.lock" beside each keyed
// intermediate it uses, from first use until it is done, and deletes the
// intermediate only if it can then take the lock exclusively: the last user
// deletes. flock locks belong to open file descriptions, so this works
// between threads of one process as between processes (and on NFS, where
// Linux emulates flock with byte-range locks).
//
// Object-store intermediates are never deleted by cubego (the bucket's
// lifecycle rules remove them, as in Cubed), so they need no lock.

// userLock is a computation's shared lock on one keyed intermediate.
type userLock struct {
	path string // the lock file
	f    *os.File
}

// lockPath is the lock file of the keyed intermediate at dir, or "" when
// dir is on an object store.
func lockPath(dir string) string {
	if strings.Contains(dir, "://") && !strings.HasPrefix(dir, "file://") {
		return ""
	}
	return strings.TrimPrefix(dir, "file://") + ".lock"
}

// lockShared takes a shared lock on the lock file at path, creating it. A
// remover may have unlinked the file between our open and our lock: then
// the lock is on a dead inode and we start again on the new file.
func lockShared(path string) (*userLock, error) {
	if err := os.MkdirAll(parentDir(path), 0o755); err != nil {
		return nil, err
	}
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := flock(f, syscall.LOCK_SH); err != nil {
			f.Close()
			return nil, fmt.Errorf("engine: locking %s: %w", path, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return &userLock{path: path, f: f}, nil
		}
		f.Close()
		if err2 != nil && !errors.Is(err2, os.ErrNotExist) {
			return nil, err2
		}
	}
}

// removeIfLast deletes dir (the keyed intermediate) and the lock file when
// no other computation holds the lock, and releases the lock either way.
func (l *userLock) removeIfLast(dir string) error {
	defer l.f.Close()
	if err := flock(l.f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil // another computation uses it; the last one deletes it
		}
		return err
	}
	// Unlink the lock file last, while holding it exclusively: a computation
	// that opened it meanwhile sees a dead inode and locks the new file.
	if err := removeLocal(dir); err != nil {
		return err
	}
	return os.Remove(l.path)
}

// release lets go of the lock, leaving the intermediate; the lock file goes
// too when no one else holds it.
func (l *userLock) release() {
	defer l.f.Close()
	if flock(l.f, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		_ = os.Remove(l.path)
	}
}

// flock retries on EINTR (the Go runtime's signals interrupt blocking calls).
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func parentDir(path string) string {
	if i := strings.LastIndexByte(path, os.PathSeparator); i > 0 {
		return path[:i]
	}
	return "."
}
