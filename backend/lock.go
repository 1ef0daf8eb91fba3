package backend

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// ObjectLockInput changes the retention and/or the legal hold of one
// object version (PutObjectRetention, PutObjectLegalHold).
type ObjectLockInput struct {
	Bucket, Key string
	VersionID   string // "" the current version
	// Retention sets Lock.LockMode and Lock.RetainUntil (both empty
	// removes the retention, which a GOVERNANCE one allows only with the
	// bypass, never sent here). LegalHold sets Lock.LegalHold ("ON" or
	// "OFF").
	Retention, LegalHold bool
	Lock                 Protection
}

// PutObjectLock sets what in asks for on the version: the retention
// first, then the legal hold. It goes as the sub-resource requests
// clients send (Forward), with Content-MD5 of the body as stores with
// Object Lock demand.
func (c *S3) PutObjectLock(ctx context.Context, in ObjectLockInput) error {
	q := func(sub string) url.Values {
		v := url.Values{sub: {""}}
		if in.VersionID != "" {
			v.Set("versionId", in.VersionID)
		}
		return v
	}
	if in.Retention {
		body := `<Retention xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>`
		if in.Lock.LockMode != "" {
			body = `<Retention xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Mode>` + in.Lock.LockMode +
				`</Mode><RetainUntilDate>` + in.Lock.RetainUntil.UTC().Format(time.RFC3339) + `</RetainUntilDate></Retention>`
		}
		if _, err := c.Forward(ctx, RawRequest{Method: http.MethodPut, Bucket: in.Bucket, Key: in.Key,
			Query: q("retention"), Header: http.Header{}, Body: []byte(body)}); err != nil {
			return err
		}
	}
	if in.LegalHold {
		status := "OFF"
		if in.Lock.LegalHold == "ON" {
			status = "ON"
		}
		body := `<LegalHold xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>` + status + `</Status></LegalHold>`
		if _, err := c.Forward(ctx, RawRequest{Method: http.MethodPut, Bucket: in.Bucket, Key: in.Key,
			Query: q("legal-hold"), Header: http.Header{}, Body: []byte(body)}); err != nil {
			return err
		}
	}
	return nil
}
