package backend

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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

// DefaultRetention is a bucket's default retention, from its Object Lock
// configuration: Mode "" for none.
type DefaultRetention struct {
	Mode        string
	Days, Years int
}

// Until is the retain-until date the default gives an object written at t.
func (d DefaultRetention) Until(t time.Time) time.Time {
	return t.AddDate(d.Years, 0, d.Days)
}

// BucketDefaultRetention reads the bucket's default retention (GET
// ?object-lock). A bucket without an Object Lock configuration, or a store
// without Object Lock (NotImplemented), has none.
func (c *S3) BucketDefaultRetention(ctx context.Context, bucket string) (DefaultRetention, error) {
	out, err := c.Forward(ctx, RawRequest{Method: http.MethodGet, Bucket: bucket,
		Query: url.Values{"object-lock": {""}}, Header: http.Header{}})
	switch ErrorCode(err) {
	case "ObjectLockConfigurationNotFoundError", "NoSuchObjectLockConfiguration", "NotImplemented":
		return DefaultRetention{}, nil
	}
	if err != nil {
		return DefaultRetention{}, err
	}
	var doc struct {
		Enabled string `xml:"ObjectLockEnabled"`
		Mode    string `xml:"Rule>DefaultRetention>Mode"`
		Days    string `xml:"Rule>DefaultRetention>Days"`
		Years   string `xml:"Rule>DefaultRetention>Years"`
	}
	if err := xml.Unmarshal(out.Body, &doc); err != nil {
		return DefaultRetention{}, fmt.Errorf("the store's Object Lock configuration of %s cannot be read: %w", bucket, err)
	}
	d := DefaultRetention{Mode: doc.Mode}
	d.Days, _ = strconv.Atoi(strings.TrimSpace(doc.Days))
	d.Years, _ = strconv.Atoi(strings.TrimSpace(doc.Years))
	if doc.Enabled != "Enabled" || (d.Mode != "GOVERNANCE" && d.Mode != "COMPLIANCE") || d.Days < 0 || d.Years < 0 || d.Days+d.Years == 0 {
		return DefaultRetention{}, nil
	}
	return d, nil
}
