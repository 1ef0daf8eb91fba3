package backend

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// DefaultRegion is the signing region used when S3Config.Region is empty,
// and the region GetBucketLocation's empty answer stands for.
const DefaultRegion = "us-east-1"

// S3Config says how to reach an S3-compatible backend. The zero value is not
// usable: Endpoint, AccessKey and SecretKey are required.
type S3Config struct {
	// Endpoint is the base URL of the S3 API, e.g. "https://s3.example.com"
	// or "http://127.0.0.1:9000". Required; it must be an absolute http or
	// https URL. It is used as is: the AWS endpoint rules are not applied.
	Endpoint string
	// Region is the SigV4 signing region. Default "us-east-1".
	Region string
	// AccessKey and SecretKey are static credentials. Both required. They
	// never appear in errors or logs.
	AccessKey, SecretKey string
	// PathStyle addresses buckets as Endpoint/bucket/key instead of
	// bucket.host/key. Default false (virtual-hosted style, as AWS and
	// Hetzner want); Ceph RGW and the embedded store need true.
	PathStyle bool
	// HTTPClient sends the requests. Default: the SDK's buildable client
	// (its own transport), with Timeouts.Connect on its dialer. Its TLS settings are used
	// as given: AWS_CA_BUNDLE and other AWS_* variables are not read.
	HTTPClient *http.Client
	// Timeouts bound each request's wait on a store that stopped moving
	// (connect, response headers, a body idle). The zero value is no
	// bound; Connect applies only to the default HTTP client.
	Timeouts Timeouts
	// MaxAttempts bounds the SDK's standard retryer (attempts, not retries).
	// Default 0 means the SDK default (3). 1 disables retries.
	MaxAttempts int
}

// S3 is a Store over any S3 API, built on aws-sdk-go-v2. It is safe for
// concurrent use.
type S3 struct {
	api   *s3.Client
	raw   rawTarget   // for Forward
	noCRC atomic.Bool // the store refused or ignored x-amz-checksum-crc32c (integrity.go)
	crcOK atomic.Bool // the store confirmed x-amz-checksum-crc32c
}

var _ Store = (*S3)(nil)

// NewS3 builds an S3 Store from cfg. It does not contact the backend. The
// aws.Config is assembled by hand rather than by config.LoadDefaultConfig,
// so no shared config files or AWS_* environment variables (notably
// AWS_CA_BUNDLE, which LoadDefaultConfig cannot combine with a custom
// HTTP client) change its behaviour. Checksums are computed and validated
// only when an operation requires them, which keeps plain-HTTP backends and
// S3-compatible stores without flexible-checksum support working; PutObject
// integrity is covered by Content-MD5 instead. It fails when Endpoint is not
// an http(s) URL or credentials are missing.
func NewS3(cfg S3Config) (*S3, error) { return newS3(cfg) }

// newS3 is NewS3 with extra client options (tests use them to alter the
// middleware stack).
func newS3(cfg S3Config, extra ...func(*s3.Options)) (*S3, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return nil, errors.New("backend: endpoint is not a valid URL") // may hold secrets: not quoted
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("backend: endpoint %q is not an http(s) URL", u.Redacted())
	}
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, errors.New("backend: access key and secret key are required")
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.MaxAttempts < 0 {
		return nil, fmt.Errorf("backend: MaxAttempts %d is negative", cfg.MaxAttempts)
	}
	awsCfg := aws.Config{
		Region:                     cfg.Region,
		Credentials:                credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, ""),
		BaseEndpoint:               aws.String(cfg.Endpoint),
		RetryMaxAttempts:           cfg.MaxAttempts,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if cfg.HTTPClient != nil {
		awsCfg.HTTPClient = guard(cfg.HTTPClient, cfg.Timeouts)
	} else {
		awsCfg.HTTPClient = newHTTPClient(cfg.Timeouts)
	}
	if !cfg.PathStyle {
		awsCfg.HTTPClient = virtualHostHint{next: awsCfg.HTTPClient, host: u.Hostname()}
	}
	optFns := append([]func(*s3.Options){func(o *s3.Options) {
		o.UsePathStyle = cfg.PathStyle
		o.APIOptions = append(o.APIOptions, addError200)
	}}, extra...)
	api := s3.NewFromConfig(awsCfg, optFns...)
	return &S3{api: api, raw: rawTarget{cfg: cfg, http: awsCfg.HTTPClient, creds: awsCfg.Credentials}}, nil
}

// ListBuckets lists the buckets the credentials own.
func (c *S3) ListBuckets(ctx context.Context) ([]Bucket, error) {
	var out []Bucket
	p := s3.NewListBucketsPaginator(c.api, &s3.ListBucketsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, wrapErr("ListBuckets", err)
		}
		for _, b := range page.Buckets {
			out = append(out, Bucket{Name: aws.ToString(b.Name), Created: aws.ToTime(b.CreationDate)})
		}
	}
	return out, nil
}

// CreateBucket creates bucket in the client's region. An existing bucket
// yields the backend's code (BucketAlreadyOwnedByYou or BucketAlreadyExists).
func (c *S3) CreateBucket(ctx context.Context, bucket string) error {
	_, err := c.api.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket})
	return wrapErr("CreateBucket", err)
}

// HeadBucket checks that bucket exists and is reachable. A missing bucket
// (a bodiless 404) is reported with Code "NoSuchBucket".
func (c *S3) HeadBucket(ctx context.Context, bucket string) error {
	_, err := c.api.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket})
	if err = wrapErr("HeadBucket", err); err != nil {
		var e *Error
		if errors.As(err, &e) && e.StatusCode == http.StatusNotFound {
			e.Code = "NoSuchBucket"
		}
	}
	return err
}

// DeleteBucket deletes an empty bucket; a non-empty one fails with
// BucketNotEmpty.
func (c *S3) DeleteBucket(ctx context.Context, bucket string) error {
	_, err := c.api.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket})
	return wrapErr("DeleteBucket", err)
}

// BucketRegion asks GetBucketLocation. The empty constraint stands for
// "us-east-1" and the legacy "EU" for "eu-west-1".
func (c *S3) BucketRegion(ctx context.Context, bucket string) (string, error) {
	out, err := c.api.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: &bucket})
	if err != nil {
		return "", wrapErr("GetBucketLocation", err)
	}
	switch loc := string(out.LocationConstraint); loc {
	case "":
		return DefaultRegion, nil
	case "EU":
		return "eu-west-1", nil
	default:
		return loc, nil
	}
}

func timeOrZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
