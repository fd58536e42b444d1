package zarr_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cubego/cubego/zarr"
)

// offlineAWS keeps the AWS SDK's configuration from reading anything of
// the machine's or asking the instance metadata service.
func offlineAWS(t *testing.T) {
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
}

func openS3(t *testing.T, endpoint string, extra map[string]any) zarr.Store {
	t.Helper()
	offlineAWS(t)
	opts := map[string]any{"endpoint_url": endpoint, "anon": true, "region": "us-east-1"}
	for k, v := range extra {
		opts[k] = v
	}
	s, err := zarr.OpenStoreWithOptions(context.Background(), "s3://bucket/prefix", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zarr.Close(s) })
	return s
}

// silentServer accepts connections and never answers; it counts them.
type silentServer struct {
	l        net.Listener
	accepted atomic.Int64
	mu       sync.Mutex
	conns    []net.Conn
}

func newSilentServer(t *testing.T) *silentServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silentServer{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
	})
	return s
}

func (s *silentServer) endpoint() string { return "http://" + s.l.Addr().String() }

// TestS3StalledServerTimesOut: against a server that accepts connections
// and never answers, every request is abandoned after the timeout and
// retried "retries" times, then fails with ErrTimeout naming the key.
func TestS3StalledServerTimesOut(t *testing.T) {
	srv := newSilentServer(t)
	s := openS3(t, srv.endpoint(), map[string]any{"timeout": 0.3, "retries": 2})
	ctx := context.Background()
	ops := map[string]func() error{
		"Get":    func() error { _, err := s.Get(ctx, "a/zarr.json"); return err },
		"Set":    func() error { return s.Set(ctx, "a/zarr.json", []byte("{}")) },
		"List":   func() error { _, err := s.(zarr.Lister).List(ctx, "a/"); return err },
		"Delete": func() error { return s.Delete(ctx, "a/zarr.json") },
	}
	for name, op := range ops {
		before := srv.accepted.Load()
		start := time.Now()
		err := withDeadline(t, 10*time.Second, name, op)
		took := time.Since(start)
		if !errors.Is(err, zarr.ErrTimeout) || !strings.Contains(err.Error(), "a/") || !strings.Contains(err.Error(), "3 attempts") {
			t.Errorf("%s: error %v, want ErrTimeout naming the key after 3 attempts", name, err)
		}
		if took < 900*time.Millisecond || took > 5*time.Second {
			t.Errorf("%s took %v: want 3 attempts of 0.3 s plus backoff", name, took)
		}
		if n := srv.accepted.Load() - before; n != 3 {
			t.Errorf("%s: %d connections, want 3 (one per attempt)", name, n)
		}
	}
}

// TestS3CancelStopsAStalledRequest: cancelling the context ends a request
// the server never answers at once, with context.Canceled, long before the
// (default, 60 s) timeout.
func TestS3CancelStopsAStalledRequest(t *testing.T) {
	srv := newSilentServer(t)
	s := openS3(t, srv.endpoint(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	err := withDeadline(t, 5*time.Second, "Get", func() error { _, err := s.Get(ctx, "k"); return err })
	if !errors.Is(err, context.Canceled) || errors.Is(err, zarr.ErrTimeout) {
		t.Errorf("cancelled Get: %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("cancelled Get returned after %v", took)
	}
}

// flakyS3 is an S3 server in memory (GET, HEAD, PUT, DELETE of objects)
// that answers the first failures requests of each object with status.
type flakyS3 struct {
	mu       sync.Mutex
	objects  map[string][]byte
	requests map[string]int // by method and path
	failures int
	status   int
	code     string
}

func (f *flakyS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.Method + " " + r.URL.Path
	f.requests[id]++
	if f.requests[id] <= f.failures {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(f.status)
		fmt.Fprintf(w, "<Error><Code>%s</Code><Message>injected</Message></Error>", f.code)
		return
	}
	switch r.Method {
	case http.MethodPut:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.objects[r.URL.Path] = body
		w.Header().Set("ETag", `"etag"`)
	case http.MethodGet, http.MethodHead:
		v, ok := f.objects[r.URL.Path]
		if !ok {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<Error><Code>NoSuchKey</Code><Message>missing</Message></Error>")
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(v)))
		w.Header().Set("Last-Modified", time.Unix(0, 0).UTC().Format(http.TimeFormat))
		w.Header().Set("ETag", `"etag"`)
		if r.Method == http.MethodGet {
			w.Write(v)
		}
	case http.MethodDelete:
		delete(f.objects, r.URL.Path)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (f *flakyS3) count(method, path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[method+" "+path]
}

func newFlakyS3(t *testing.T, failures, status int, code string) (*flakyS3, string) {
	f := &flakyS3{objects: map[string][]byte{}, requests: map[string]int{}, failures: failures, status: status, code: code}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// TestS3RetriesTransientErrors: a server that answers 503 SlowDown twice
// per request before it succeeds is retried; writes and reads both
// succeed with three requests each. With fewer retries than failures, the
// error is ErrUnavailable naming the key and the attempts.
func TestS3RetriesTransientErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
	}{{503, "SlowDown"}, {500, "InternalError"}, {429, "TooManyRequests"}} {
		f, endpoint := newFlakyS3(t, 2, tc.status, tc.code)
		s := openS3(t, endpoint, map[string]any{"retries": 2})
		ctx := context.Background()
		if err := s.Set(ctx, "a/c/0", []byte("chunk")); err != nil {
			t.Fatalf("%d: Set through two failures: %v", tc.status, err)
		}
		v, err := s.Get(ctx, "a/c/0")
		if err != nil || string(v) != "chunk" {
			t.Fatalf("%d: Get through two failures: %q, %v", tc.status, v, err)
		}
		if p, g := f.count("PUT", "/bucket/prefix/a/c/0"), f.count("GET", "/bucket/prefix/a/c/0"); p != 3 || g != 3 {
			t.Errorf("%d: %d PUTs and %d GETs, want 3 and 3", tc.status, p, g)
		}

		s1 := openS3(t, endpoint, map[string]any{"retries": 1})
		_, err = s1.Get(ctx, "a/c/1")
		if !errors.Is(err, zarr.ErrUnavailable) || !strings.Contains(err.Error(), `"a/c/1"`) || !strings.Contains(err.Error(), "2 attempts") {
			t.Errorf("%d: Get with 1 retry through 2 failures: %v, want ErrUnavailable naming the key after 2 attempts", tc.status, err)
		}
	}
}

// TestS3PermanentErrorsAreNotRetried: access denied and a missing key are
// answered once.
func TestS3PermanentErrorsAreNotRetried(t *testing.T) {
	f, endpoint := newFlakyS3(t, 1000, http.StatusForbidden, "AccessDenied")
	s := openS3(t, endpoint, map[string]any{"retries": 3})
	_, err := s.Get(context.Background(), "k")
	if !errors.Is(err, zarr.ErrPermission) || !strings.Contains(err.Error(), `"k"`) {
		t.Errorf("403: %v, want ErrPermission naming the key", err)
	}
	if n := f.count("GET", "/bucket/prefix/k"); n != 1 {
		t.Errorf("403 was requested %d times, want 1", n)
	}
	g, endpoint := newFlakyS3(t, 0, 0, "")
	s = openS3(t, endpoint, map[string]any{"retries": 3})
	if _, err := s.Get(context.Background(), "missing"); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("missing key: %v, want ErrNotFound", err)
	}
	if n := g.count("GET", "/bucket/prefix/missing"); n != 1 {
		t.Errorf("a missing key was requested %d times, want 1", n)
	}
}

// TestS3ConnectionRefused: nothing listens at the endpoint: ErrUnavailable
// after the retries, quickly.
func TestS3ConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := openS3(t, "http://"+addr, map[string]any{"retries": 1})
	start := time.Now()
	_, err = s.Get(context.Background(), "k")
	if !errors.Is(err, zarr.ErrUnavailable) || !strings.Contains(err.Error(), "2 attempts") {
		t.Errorf("connection refused: %v, want ErrUnavailable after 2 attempts", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("connection refused took %v", took)
	}
}

// TestRequestPolicyOptions: "timeout", "connect_timeout" and "retries"
// are checked for every object store and refused by local ones.
func TestRequestPolicyOptions(t *testing.T) {
	offlineAWS(t)
	ctx := context.Background()
	for _, tc := range []struct {
		opts map[string]any
		word string
	}{
		{map[string]any{"timeout": -1}, "timeout"},
		{map[string]any{"timeout": 0}, "timeout"},
		{map[string]any{"timeout": "5"}, "timeout"},
		{map[string]any{"timeout": true}, "timeout"},
		{map[string]any{"timeout": 1e9}, "timeout"},
		{map[string]any{"connect_timeout": json.Number("-2")}, "connect_timeout"},
		{map[string]any{"retries": 1.5}, "retries"},
		{map[string]any{"retries": -1}, "retries"},
		{map[string]any{"retries": 101}, "retries"},
	} {
		_, err := zarr.OpenStoreWithOptions(ctx, "s3://bucket", tc.opts)
		if !errors.Is(err, zarr.ErrInvalid) || !strings.Contains(err.Error(), tc.word) {
			t.Errorf("options %v: error %v, want ErrInvalid naming %q", tc.opts, err, tc.word)
		}
	}
	for _, opts := range []map[string]any{
		{"timeout": 0.5, "connect_timeout": 2, "retries": 0},
		{"timeout": json.Number("30"), "retries": json.Number("10")},
		{"timeout": nil, "retries": nil},
	} {
		s, err := zarr.OpenStoreWithOptions(ctx, "s3://bucket", opts)
		if err != nil {
			t.Errorf("options %v: %v", opts, err)
			continue
		}
		zarr.Close(s)
	}
	if _, err := zarr.OpenStoreWithOptions(ctx, t.TempDir(), map[string]any{"timeout": 1}); !errors.Is(err, zarr.ErrInvalid) {
		t.Errorf("a local store with a timeout: %v, want ErrInvalid", err)
	}
}
