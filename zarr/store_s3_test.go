package zarr_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cubego/cubego/zarr"
	"github.com/cubego/cubego/zarr/storetest"
)

func TestS3Options(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		opts map[string]any
		want error
		word string
	}{
		{map[string]any{"endpoint_url": "127.0.0.1:9000"}, zarr.ErrInvalid, "endpoint_url"},
		{map[string]any{"client_kwargs": map[string]any{"endpoint_url": "ftp://x"}}, zarr.ErrInvalid, "endpoint_url"},
		{map[string]any{"client_kwargs": map[string]any{"verify": false}}, zarr.ErrInvalid, "verify"},
		{map[string]any{"requester_pays": true, "max_concurrency": 4}, zarr.ErrInvalid, "max_concurrency, requester_pays"},
		{map[string]any{"key": "k"}, zarr.ErrInvalid, "secret"},
		{map[string]any{"anon": "yes"}, zarr.ErrInvalid, "anon"},
		{map[string]any{"anon": true, "key": "k", "secret": "s"}, zarr.ErrInvalid, "anon"},
		{map[string]any{"region": 3}, zarr.ErrInvalid, "region"},
	} {
		_, err := zarr.OpenStoreWithOptions(ctx, "s3://bucket/prefix", tc.opts)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.word) {
			t.Errorf("options %v: error %v, want %v naming %q", tc.opts, err, tc.want, tc.word)
		}
	}
	for _, opts := range []map[string]any{
		nil,
		{"anon": true, "region": "eu-west-1"},
		{"endpoint_url": "http://127.0.0.1:1", "key": "k", "secret": "s", "token": "t", "use_path_style": false},
		{"client_kwargs": map[string]any{"endpoint_url": "https://example.invalid", "region_name": "x"}},
	} {
		s, err := zarr.OpenStoreWithOptions(ctx, "s3://bucket/prefix", opts)
		if err != nil {
			t.Errorf("options %v: %v", opts, err)
			continue
		}
		zarr.Close(s)
	}
	if _, err := zarr.OpenStoreWithOptions(ctx, "mem://x", map[string]any{"anon": true}); !errors.Is(err, zarr.ErrInvalid) {
		t.Errorf("mem:// with options: %v", err)
	}
}

// motoServer is moto's S3 server running on 127.0.0.1 for one test.
type motoServer struct {
	endpoint string
}

// startMoto starts moto's server mode with the python named by
// CUBEGO_MOTO_PYTHON (one with moto[server] installed) on a free port of
// 127.0.0.1, creates a bucket and stops the server when the test ends. It
// skips the test when the variable is unset.
func startMoto(t *testing.T, bucket string) motoServer {
	t.Helper()
	python := os.Getenv("CUBEGO_MOTO_PYTHON")
	if python == "" {
		t.Skip("CUBEGO_MOTO_PYTHON is not set: name a python with moto[server] installed (python -m venv /tmp/motovenv && /tmp/motovenv/bin/pip install 'moto[server]') to run the S3 tests")
	}
	// No request of the AWS SDK may leave the machine.
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(python, "-m", "moto.server", "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start moto: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get(endpoint + "/moto-api/")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("moto did not start on %s in 30 s: %v\n%s", endpoint, err, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Create the bucket with a plain S3 request (moto accepts any
	// credentials).
	req, _ := http.NewRequest(http.MethodPut, endpoint+"/"+bucket, nil)
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=x")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create bucket: %s", resp.Status)
	}
	return motoServer{endpoint: endpoint}
}

func (m motoServer) options() map[string]any {
	return map[string]any{"endpoint_url": m.endpoint, "key": "test", "secret": "test", "region": "us-east-1"}
}

// countingStore counts the reads of a store.
type countingStore struct {
	zarr.Store
	gets, ranges, suffixes atomic.Int64
}

func (c *countingStore) Get(ctx context.Context, k string) ([]byte, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, k)
}

func (c *countingStore) GetRange(ctx context.Context, k string, off, n int64) ([]byte, error) {
	c.ranges.Add(1)
	return c.Store.(zarr.RangeGetter).GetRange(ctx, k, off, n)
}

func (c *countingStore) GetSuffix(ctx context.Context, k string, n int64) ([]byte, error) {
	c.suffixes.Add(1)
	return c.Store.(zarr.SuffixGetter).GetSuffix(ctx, k, n)
}

func TestS3Store(t *testing.T) {
	moto := startMoto(t, "cubego-test")
	ctx := context.Background()
	n := 0
	storetest.Run(t, func(t *testing.T) zarr.Store {
		n++
		s, err := zarr.OpenStoreWithOptions(ctx, fmt.Sprintf("s3://cubego-test/store%d", n), moto.options())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})

	t.Run("Arrays", func(t *testing.T) {
		s, err := zarr.OpenStoreWithOptions(ctx, "s3://cubego-test/arrays.zarr", map[string]any{
			"client_kwargs": map[string]any{"endpoint_url": moto.endpoint, "region_name": "us-east-1"},
			"key":           "test", "secret": "test",
		})
		if err != nil {
			t.Fatal(err)
		}
		defer zarr.Close(s)
		full := smallValues(newRng(), zarr.Float64, 8*40*30)
		for name, chain := range map[string][]zarr.Codec{
			"plain":       nil,
			"blosc":       {zarr.BytesCodec(), zarr.BloscCodec("lz4", 5, "shuffle", 0, 0)},
			"shard_end":   {zarr.ShardingCodec([]int{5, 5}, []zarr.Codec{zarr.BytesCodec(), zarr.ZstdCodec(0, false)}, "end")},
			"shard_start": {zarr.ShardingCodec([]int{5, 5}, nil, "start")},
		} {
			meta := zarr.ArrayMetadata{Shape: []int{40, 30}, ChunkShape: []int{20, 15}, DataType: zarr.Float64, Codecs: chain}
			a, err := zarr.CreateArray(ctx, s, name, meta)
			if err != nil {
				t.Fatal(err)
			}
			writeAllChunks(t, a, full)
			b, err := zarr.OpenArray(ctx, s, name)
			if err != nil {
				t.Fatal(err)
			}
			if got := readAllChunks(t, b); !bytes.Equal(got, full) {
				t.Errorf("%s: array read back differs", name)
			}
			// Inner chunks with ranged reads: the index and the chunk.
			cs := &countingStore{Store: s}
			c, err := zarr.OpenArray(ctx, cs, name)
			if err != nil {
				t.Fatal(err)
			}
			grid := c.InnerGridShape()
			inner := c.InnerChunkShape()
			buf := make([]byte, c.InnerChunkBytes())
			want := make([]byte, len(buf))
			forEachChunk(grid, func(coords []int) {
				if err := c.ReadInnerChunk(ctx, coords, buf); err != nil {
					t.Fatalf("%s: ReadInnerChunk(%v): %v", name, coords, err)
				}
				copyChunk(full, []int{40, 30}, want, inner, coords, 8, true)
				if !bytes.Equal(buf, want) {
					t.Fatalf("%s: inner chunk %v differs", name, coords)
				}
			})
			if strings.HasPrefix(name, "shard") {
				reads := grid[0] * grid[1]
				if cs.gets.Load() != 1 || cs.ranges.Load() != int64(reads*2)-cs.suffixes.Load() || cs.ranges.Load()+cs.suffixes.Load() != int64(2*reads) {
					t.Errorf("%s: %d inner chunks read with %d gets (1 for metadata), %d ranged and %d suffix reads",
						name, reads, cs.gets.Load(), cs.ranges.Load(), cs.suffixes.Load())
				}
			}
		}
		// The arrays are where zarr-python would look for them.
		keys, err := s.(zarr.Lister).List(ctx, "shard_end/")
		if err != nil || len(keys) != 5 || keys[len(keys)-1] != "shard_end/zarr.json" {
			t.Errorf("List(shard_end/) = %v, %v", keys, err)
		}
	})
}

func newRng() *rand.Rand { return rand.New(rand.NewPCG(11, 12)) }

func (c *countingStore) List(ctx context.Context, prefix string) ([]string, error) {
	return c.Store.(zarr.Lister).List(ctx, prefix)
}

func (c *countingStore) ListDir(ctx context.Context, prefix string) ([]string, []string, error) {
	return c.Store.(zarr.DirLister).ListDir(ctx, prefix)
}
