//go:build gcs

package zarr

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"
)

// gs:// stores (Google Cloud Storage), compiled in with the gcs build tag.
// Storage options: "token": "anon" or "anon": true for anonymous access;
// otherwise Application Default Credentials. "project" is accepted and
// ignored (buckets are global), as gcsfs users pass it. "timeout",
// "connect_timeout" and "retries" as for every object store.

func init() { storeOpeners["gs"] = openGCSStore }

func openGCSStore(ctx context.Context, rawURL, bucket, prefix string, o storageOptions, policy requestPolicy) (Store, error) {
	anon, _, err := o.boolean("anon")
	if err != nil {
		return nil, err
	}
	token, _, err := o.str("token")
	if err != nil {
		return nil, err
	}
	if _, _, err := o.str("project"); err != nil {
		return nil, err
	}
	if err := o.unknown("gs"); err != nil {
		return nil, err
	}
	var client *gcp.HTTPClient
	switch {
	case anon || token == "anon":
		client = gcp.NewAnonymousHTTPClient(gcsTransport(policy))
	case token != "" && token != "google_default":
		return nil, fmt.Errorf("%w: gs:// storage option token %q (only \"anon\" and \"google_default\")", ErrNotImplemented, token)
	default:
		creds, err := gcp.DefaultCredentials(ctx)
		if err != nil {
			return nil, fmt.Errorf("zarr: gs credentials: %w", err)
		}
		if client, err = gcp.NewHTTPClient(gcsTransport(policy), gcp.CredentialsTokenSource(creds)); err != nil {
			return nil, fmt.Errorf("zarr: gs client: %w", err)
		}
	}
	b, err := gcsblob.OpenBucket(ctx, client, bucket, nil)
	if err != nil {
		return nil, fmt.Errorf("zarr: open store %s: %w", rawURL, err)
	}
	return newBucketStore(rawURL, b, prefix, policy), nil
}

// gcsTransport is Go's default transport with the policy's connect
// timeout for dialling and the TLS handshake.
func gcsTransport(policy requestPolicy) http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: policy.connectTimeout, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = policy.connectTimeout
	return t
}
