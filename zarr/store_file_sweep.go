package zarr

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The temporary files a file store writes a value to before renaming it
// into place are named ".cubego-<host>-<pid>-<random>.tmp": their owner is
// in the name, so a later process can tell the debris of a writer that died
// (kill -9 between write and rename) from a file being written right now.

var tempOwner = func() string {
	host, _ := os.Hostname()
	host = strings.NewReplacer("/", "_", string(filepath.Separator), "_").Replace(host)
	return host + "-" + strconv.Itoa(os.Getpid())
}()

// StaleTempAge is how old a temporary file of an unknown owner (another host,
// or an older cubego) must be before a sweep removes it: no chunk write takes
// this long.
const StaleTempAge = time.Hour

// TempSweeper is implemented by stores that write through temporary files.
type TempSweeper interface {
	// SweepTemp removes, under prefix, the temporary files of writers that
	// are gone: those of a dead process on this host, and those of any
	// owner older than StaleTempAge. It never removes a live writer's file
	// on this host, and returns how many it removed.
	SweepTemp(ctx context.Context, prefix string) (int, error)
}

// ProcessAlive reports whether process pid exists on this host.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// LocalOwner is this process's owner tag, "<host>-<pid>", as temporary
// files and work directories carry it.
func LocalOwner() string { return tempOwner }

// OwnerGone reports whether owner ("<host>-<pid>", see LocalOwner) is a
// process of this host that no longer exists. Owners on other hosts are
// never reported gone: their liveness cannot be checked from here.
func OwnerGone(owner string) bool {
	i := strings.LastIndexByte(owner, '-')
	if i <= 0 {
		return false
	}
	pid, err := strconv.Atoi(owner[i+1:])
	if err != nil {
		return false
	}
	self := tempOwner[:strings.LastIndexByte(tempOwner, '-')]
	return owner[:i] == self && !ProcessAlive(pid)
}

// SweepTemp implements TempSweeper.
func (s *fileStore) SweepTemp(ctx context.Context, prefix string) (int, error) {
	root := filepath.Join(s.dir, filepath.FromSlash(prefix))
	removed := 0
	now := time.Now()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || !strings.HasPrefix(name, fileTempPrefix) || !strings.HasSuffix(name, ".tmp") {
			return nil
		}
		owner := strings.TrimSuffix(strings.TrimPrefix(name, fileTempPrefix), ".tmp")
		if i := strings.LastIndexByte(owner, '-'); i > 0 {
			owner = owner[:i] // drop CreateTemp's random part
		}
		stale := OwnerGone(owner)
		if !stale {
			if info, err := d.Info(); err == nil && now.Sub(info.ModTime()) > StaleTempAge {
				stale = true
			}
		}
		if stale && os.Remove(p) == nil {
			removed++
		}
		return nil
	})
	return removed, err
}
