package zarr

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// storeOpener opens a store for a URL scheme: bucket is the URL's host,
// prefix its cleaned path ("" or a key prefix without slashes at the
// ends); its requests follow policy (whose connect timeout the opener
// gives its HTTP client).
type storeOpener func(ctx context.Context, rawURL, bucket, prefix string, opts storageOptions, policy requestPolicy) (Store, error)

// storeOpeners holds the object-store schemes compiled in: "s3" always,
// "gs" and "azblob" with the gcs and azure build tags.
var storeOpeners = map[string]storeOpener{}

// buildTags names the build tag that compiles in a scheme.
var buildTags = map[string]string{"gs": "gcs", "azblob": "azure"}

// storageOptions are fsspec-style storage_options, as Cubed and xarray
// pass them.
type storageOptions map[string]any

// take removes key and returns its value as a string; ok is false when it
// is absent or null.
func (o storageOptions) str(key string) (string, bool, error) {
	v, ok := o[key]
	delete(o, key)
	if !ok || v == nil {
		return "", false, nil
	}
	s, isString := v.(string)
	if !isString {
		return "", true, fmt.Errorf("%w: storage option %q must be a string, not %T", ErrInvalid, key, v)
	}
	return s, true, nil
}

func (o storageOptions) boolean(key string) (v, ok bool, err error) {
	raw, ok := o[key]
	delete(o, key)
	if !ok || raw == nil {
		return false, false, nil
	}
	b, isBool := raw.(bool)
	if !isBool {
		return false, true, fmt.Errorf("%w: storage option %q must be true or false, not %v", ErrInvalid, key, raw)
	}
	return b, true, nil
}

// unknown returns an error naming every option left.
func (o storageOptions) unknown(scheme string) error {
	if len(o) == 0 {
		return nil
	}
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Errorf("%w: storage options %s are not supported for %s:// stores", ErrInvalid, strings.Join(keys, ", "), scheme)
}

// OpenStoreWithOptions opens the store named by rawURL, as OpenStore
// does, with fsspec-style storage options (Cubed's and xarray's
// storage_options). Object stores:
//
//   - "s3://bucket/prefix": Amazon S3 or an S3-compatible server. Options:
//     "endpoint_url" (also "client_kwargs": {"endpoint_url": ...}), the
//     server's URL with its scheme, such as "http://127.0.0.1:9000";
//     "region" or "region_name" (also in "client_kwargs"; default: the
//     AWS configuration's, else "us-east-1"); "key", "secret" and "token":
//     static credentials (without them, the AWS SDK's default chain:
//     environment, shared configuration, instance roles); "anon": true for
//     unsigned requests; "use_path_style": path-style addressing, true by
//     default when an endpoint is given. Checksums are computed only when
//     the operation requires them, so S3-compatible servers work.
//   - "gs://bucket/prefix" (built with the gcs tag) and
//     "azblob://container/prefix" (built with the azure tag): see their
//     files for options; credentials come from the environment.
//
// Every object store also takes "timeout" (seconds a request may go
// without progress before it is abandoned; default DefaultTimeout),
// "connect_timeout" (seconds to set up a connection; default
// DefaultConnectTimeout) and "retries" (how many times a request that
// failed with a transient error, such as a timeout, a refused or reset
// connection, HTTP 429 or 5xx, is tried again, after an exponential
// backoff with jitter; default DefaultRetries). Failures wrap ErrTimeout,
// ErrUnavailable, ErrPermission or ErrIO; cancelling ctx stops a request
// at once.
//
// Local ("file://", plain paths) and "mem://" stores take no options.
// Unknown options are an error wrapping ErrInvalid that names them.
func OpenStoreWithOptions(ctx context.Context, rawURL string, opts map[string]any) (Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if rawURL == "" {
		return nil, fmt.Errorf("%w: empty store URL", ErrInvalid)
	}
	o := storageOptions{}
	for k, v := range opts {
		o[k] = v
	}
	if !strings.Contains(rawURL, "://") {
		if err := o.unknown("file"); err != nil {
			return nil, err
		}
		return openFileStore(rawURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: store URL %q: %v", ErrInvalid, rawURL, err)
	}
	if len(u.Query()) > 0 || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("%w: store URL %q: query, fragment and user info are not supported (pass options as storage options)", ErrInvalid, rawURL)
	}
	switch u.Scheme {
	case "file":
		if err := o.unknown("file"); err != nil {
			return nil, err
		}
		switch u.Host {
		case "", "localhost":
			return openFileStore(u.Path)
		case ".":
			return openFileStore(strings.TrimPrefix(u.Path, "/"))
		default:
			return nil, fmt.Errorf("%w: store URL %q: file URLs name a local path (file:///abs/dir)", ErrInvalid, rawURL)
		}
	case "mem":
		if err := o.unknown("mem"); err != nil {
			return nil, err
		}
		return openMemBlobStore(u.Host, strings.Trim(u.Path, "/"))
	}
	open, ok := storeOpeners[u.Scheme]
	if !ok {
		if tag, known := buildTags[u.Scheme]; known {
			return nil, fmt.Errorf("%w: store URL scheme %q (build with -tags %s)", ErrNotImplemented, u.Scheme, tag)
		}
		return nil, fmt.Errorf("%w: store URL scheme %q", ErrNotImplemented, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%w: store URL %q names no bucket", ErrInvalid, rawURL)
	}
	prefix, err := cleanNodePath(u.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: store URL %q: bad prefix", ErrInvalid, rawURL)
	}
	policy, err := parseRequestPolicy(o)
	if err != nil {
		return nil, err
	}
	return open(ctx, rawURL, u.Host, prefix, o, policy)
}

// KnownSchemes returns the URL schemes OpenStore accepts in this build.
func KnownSchemes() []string {
	out := []string{"file", "mem"}
	for k := range storeOpeners {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
