package sealstore

import (
	"context"
	"errors"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
)

// UploadChecksum is the checksum algorithm (lower case) and type
// (COMPOSITE or FULL_OBJECT) an upload was created with; both "" when it
// was created without one.
type UploadChecksum struct{ Algorithm, Type string }

// UploadChecksums gives the checksum algorithm and type of each upload of
// a ListUploads page, as the upload's state records them (the backend's
// upload carries none: its parts are ciphertext). Each comes from the
// cache of loaded uploads, else from a HEAD of the state object,
// ListConcurrency at a time; the loaded upload is cached, so its parts do
// not pay for it again. An upload without s3seal state (made on the
// backend directly, or whose CreateMultipartUpload has not yet written
// it) or whose state fails its check reports none; the latter is logged.
func (s *Store) UploadChecksums(ctx context.Context, bucket string, ups []backend.Upload) ([]UploadChecksum, error) {
	res := make([]UploadChecksum, len(ups))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opt.ListConcurrency)
	for i, up := range ups {
		g.Go(func() error {
			u, err := s.loadUpload(gctx, bucket, up.Key, up.UploadID)
			var se *Error
			switch {
			case err == nil:
				res[i] = UploadChecksum{u.checksumAlg, u.checksumType}
			case errors.Is(err, ErrIntegrity):
				s.log.Error("listing uploads: upload state failed its check; listed without a checksum",
					"bucket", bucket, "key", up.Key, "upload_id", up.UploadID, "err", err)
			case errors.As(err, &se) && se.Code == "NoSuchUpload":
			default:
				return err
			}
			return nil
		})
	}
	return res, g.Wait()
}

// pageUploads makes a ListMultipartUploads page what S3 answers whatever
// the backend honoured of the request (moto ignores delimiter, markers and
// max-uploads): uploads outside the prefix or not after the markers are
// dropped, keys holding the delimiter after the prefix roll up into common
// prefixes, and the page is cut at max-uploads (0: 1000) with the next
// markers of its last entry. For a backend that honoured them all, the
// page is unchanged.
func pageUploads(in backend.ListUploadsInput, out backend.ListUploadsOutput) backend.ListUploadsOutput {
	type entry struct {
		key    string
		upload *backend.Upload
	}
	var entries []entry
	seen := map[string]bool{}
	addPrefix := func(p string) {
		// A prefix at or before the key-marker was on an earlier page
		// (the marker of a page that ended on a prefix is that prefix).
		if in.KeyMarker != "" && p <= in.KeyMarker {
			return
		}
		if !seen[p] {
			seen[p] = true
			entries = append(entries, entry{key: p})
		}
	}
	for _, p := range out.CommonPrefixes {
		addPrefix(p)
	}
	// passed: past the upload-id-marker within key-marker's uploads; a
	// backend that left the marker's upload out has applied it already.
	passed := true
	for _, u := range out.Uploads {
		if in.UploadIDMarker != "" && u.Key == in.KeyMarker && u.UploadID == in.UploadIDMarker {
			passed = false
		}
	}
	for i := range out.Uploads {
		u := &out.Uploads[i]
		if !strings.HasPrefix(u.Key, in.Prefix) {
			continue
		}
		if in.KeyMarker != "" {
			if u.Key < in.KeyMarker {
				continue
			}
			if u.Key == in.KeyMarker {
				if !passed {
					passed = u.UploadID == in.UploadIDMarker
					continue
				}
				if in.UploadIDMarker == "" {
					continue
				}
			}
		}
		if in.Delimiter != "" {
			if i := strings.Index(u.Key[len(in.Prefix):], in.Delimiter); i >= 0 {
				addPrefix(u.Key[:len(in.Prefix)+i+len(in.Delimiter)])
				continue
			}
		}
		entries = append(entries, entry{key: u.Key, upload: u})
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].key < entries[j].key })
	max := int(in.MaxUploads)
	if max <= 0 {
		max = 1000
	}
	res := backend.ListUploadsOutput{IsTruncated: out.IsTruncated, NextKeyMarker: out.NextKeyMarker, NextUploadIDMarker: out.NextUploadIDMarker}
	if len(entries) > max {
		entries = entries[:max]
		last := entries[max-1]
		res.IsTruncated, res.NextKeyMarker, res.NextUploadIDMarker = true, last.key, ""
		if last.upload != nil {
			res.NextUploadIDMarker = last.upload.UploadID
		}
	}
	for _, e := range entries {
		if e.upload != nil {
			res.Uploads = append(res.Uploads, *e.upload)
		} else {
			res.CommonPrefixes = append(res.CommonPrefixes, e.key)
		}
	}
	return res
}
