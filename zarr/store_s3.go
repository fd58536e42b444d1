package zarr

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob/s3blob"
)

func init() { storeOpeners["s3"] = openS3Store }

// s3Config is what OpenStoreWithOptions reads from the storage options of
// an s3:// store.
type s3Config struct {
	endpoint, region   string
	key, secret, token string
	anon               bool
	pathStyle          bool
}

func parseS3Options(o storageOptions) (s3Config, error) {
	var c s3Config
	if ck, ok := o["client_kwargs"]; ok && ck != nil {
		m, isMap := ck.(map[string]any)
		if !isMap {
			return c, fmt.Errorf("%w: storage option \"client_kwargs\" must be a mapping, not %T", ErrInvalid, ck)
		}
		inner := storageOptions{}
		for k, v := range m {
			inner[k] = v
		}
		var err error
		if c.endpoint, _, err = inner.str("endpoint_url"); err != nil {
			return c, err
		}
		if c.region, _, err = inner.str("region_name"); err != nil {
			return c, err
		}
		if err := inner.unknown("s3 (client_kwargs)"); err != nil {
			return c, err
		}
	}
	delete(o, "client_kwargs")
	for _, k := range []struct {
		key string
		dst *string
	}{{"endpoint_url", &c.endpoint}, {"region", &c.region}, {"region_name", &c.region},
		{"key", &c.key}, {"secret", &c.secret}, {"token", &c.token}} {
		v, ok, err := o.str(k.key)
		if err != nil {
			return c, err
		}
		if ok {
			*k.dst = v
		}
	}
	var err error
	if c.anon, _, err = o.boolean("anon"); err != nil {
		return c, err
	}
	pathStyle, ok, err := o.boolean("use_path_style")
	if err != nil {
		return c, err
	}
	c.pathStyle = c.endpoint != ""
	if ok {
		c.pathStyle = pathStyle
	}
	if err := o.unknown("s3"); err != nil {
		return c, err
	}
	if c.endpoint != "" {
		u, err := url.Parse(c.endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("%w: endpoint_url %q must be an http:// or https:// URL", ErrInvalid, c.endpoint)
		}
	}
	if (c.key == "") != (c.secret == "") {
		return c, fmt.Errorf("%w: storage options \"key\" and \"secret\" go together", ErrInvalid)
	}
	if c.anon && c.key != "" {
		return c, fmt.Errorf("%w: storage options \"anon\" and \"key\" exclude each other", ErrInvalid)
	}
	return c, nil
}

// newS3Client builds an S3 client from the options alone where they say
// enough; the AWS SDK's default configuration fills in the rest. The
// SDK's own retries are off: the store retries each request under its
// policy (so "retries" counts every attempt), and connections are set up
// within the policy's connect timeout.
func newS3Client(ctx context.Context, c s3Config, policy requestPolicy) (*s3.Client, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if c.region != "" {
		opts = append(opts, config.WithRegion(c.region))
	}
	switch {
	case c.anon:
		opts = append(opts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	case c.key != "":
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(c.key, c.secret, c.token)))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("zarr: s3 configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	httpClient := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = policy.connectTimeout }).
		WithTransportOptions(func(t *http.Transport) { t.TLSHandshakeTimeout = policy.connectTimeout })
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.HTTPClient = httpClient
		o.Retryer = aws.NopRetryer{}
		if c.endpoint != "" {
			o.BaseEndpoint = aws.String(c.endpoint)
		}
		o.UsePathStyle = c.pathStyle
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	}), nil
}

func openS3Store(ctx context.Context, rawURL, bucket, prefix string, o storageOptions, policy requestPolicy) (Store, error) {
	c, err := parseS3Options(o)
	if err != nil {
		return nil, err
	}
	client, err := newS3Client(ctx, c, policy)
	if err != nil {
		return nil, err
	}
	b, err := s3blob.OpenBucket(ctx, client, bucket, &s3blob.Options{
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
	})
	if err != nil {
		return nil, fmt.Errorf("zarr: open store %s: %w", rawURL, err)
	}
	return newBucketStore(rawURL, b, prefix, policy), nil
}
