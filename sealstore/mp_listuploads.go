package sealstore

import (
	"context"
	"errors"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
)

// ListUploads lists the uploads in progress, as the backend has them, less
// anything under ReservedPrefix.
func (s *Store) ListUploads(ctx context.Context, in backend.ListUploadsInput) (backend.ListUploadsOutput, error) {
	out, err := s.be.ListMultipartUploads(ctx, in)
	if err != nil {
		return out, err
	}
	ups := out.Uploads[:0]
	for _, u := range out.Uploads {
		if !strings.HasPrefix(u.Key, ReservedPrefix) {
			ups = append(ups, u)
		}
	}
	out.Uploads = ups
	cps := out.CommonPrefixes[:0]
	for _, p := range out.CommonPrefixes {
		if !strings.HasPrefix(p, ReservedPrefix) {
			cps = append(cps, p)
		}
	}
	out.CommonPrefixes = cps
	return pageUploads(in, out), nil
}

// UploadChecksum is the checksum algorithm (lower case) and type
// (COMPOSITE or FULL_OBJECT) an upload was created with; both "" when it
// was created without one.
type UploadChecksum struct{ Algorithm, Type string }

// listedUploadEntries bounds the cache of upload checksums that listings
// read themselves: an entry is an upload key (bucket, key, upload id) and
// two short strings, about 200 bytes for usual names and at most about
// 1.5 KiB with a 1024-byte key, so at most about 48 MiB, usually ~6 MiB.
const listedUploadEntries = 32768

// UploadChecksums gives the checksum algorithm and type of each upload of
// a ListUploads page, as the upload's state records them (the backend's
// upload carries none: its parts are ciphertext). A listing only peeks at
// the cache of loaded uploads (it neither promotes an entry nor adds one,
// so listing many uploads does not evict the states of uploads whose parts
// are being sent); what it reads itself, with a HEAD of the state object,
// ListConcurrency at a time, goes to a cache of its own (algorithm and type
// by upload, listedUploadEntries of them). The checksum is informational:
// an upload without s3seal state (made on the backend directly, or whose
// CreateMultipartUpload has not yet written it), whose state fails its
// check or cannot be read (a throttled or refused HEAD) is listed without
// one, the latter two logged. Only ctx being done fails the listing.
func (s *Store) UploadChecksums(ctx context.Context, bucket string, ups []backend.Upload) ([]UploadChecksum, error) {
	res := make([]UploadChecksum, len(ups))
	var g errgroup.Group
	g.SetLimit(s.opt.ListConcurrency)
	for i, up := range ups {
		k := uploadKey{bucket, up.Key, up.UploadID}
		if u, ok := s.uploads.Peek(k); ok {
			res[i] = UploadChecksum{u.checksumAlg, u.checksumType}
			continue
		}
		if c, ok := s.listedUploads.Get(k); ok {
			res[i] = c
			continue
		}
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			// Read and checked as a part upload's (readUpload), not
			// cached with them.
			u, err := s.readUpload(ctx, bucket, up.Key, up.UploadID)
			var se *Error
			switch {
			case err == nil:
				res[i] = UploadChecksum{u.checksumAlg, u.checksumType}
				s.listedUploads.Add(k, res[i])
			case ctx.Err() != nil:
				return ctx.Err()
			case errors.Is(err, ErrIntegrity):
				s.log.Error("listing uploads: upload state failed its check; listed without a checksum",
					"bucket", bucket, "key", up.Key, "upload_id", up.UploadID, "err", err)
			case errors.As(err, &se) && se.Code == "NoSuchUpload":
			default:
				s.log.Warn("listing uploads: upload state could not be read; listed without a checksum",
					"bucket", bucket, "key", up.Key, "upload_id", up.UploadID, "err", err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return res, nil
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
