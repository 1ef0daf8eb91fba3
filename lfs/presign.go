package lfs

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// PresignConfig names s3seal's own S3 API and a credential it accepts, for
// presigned download URLs.
type PresignConfig struct {
	// Endpoint is the S3 API's URL as clients reach it, e.g.
	// http://127.0.0.1:7070.
	Endpoint string
	// AccessKey and SecretKey: a credential of the S3 API with read access
	// to the LFS bucket.
	AccessKey, SecretKey string
	Region               string // default us-east-1
	// MaxExpiry caps expires_seconds. Default 15 minutes; at most 7 days.
	MaxExpiry time.Duration
}

func (p *PresignConfig) maxExpiry() time.Duration {
	switch {
	case p.MaxExpiry <= 0:
		return DefaultPresignTTL
	case p.MaxExpiry > 7*24*time.Hour:
		return 7 * 24 * time.Hour
	}
	return p.MaxExpiry
}

func (p *PresignConfig) presignGet(ctx context.Context, bucket, key string, ttl time.Duration) (string, error) {
	region := p.Region
	if region == "" {
		region = "us-east-1"
	}
	c := s3.New(s3.Options{BaseEndpoint: aws.String(p.Endpoint), Region: region, UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(p.AccessKey, p.SecretKey, "")})
	req, err := s3.NewPresignClient(c, s3.WithPresignExpires(ttl)).PresignGetObject(ctx,
		&s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return "", err
	}
	return req.URL, nil
}
