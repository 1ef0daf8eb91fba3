package sealstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/s3seal/s3seal/backend"
)

// pastReserved is a listing marker after every key s3seal keeps under
// ReservedPrefix (its keys are ASCII; U+10FFFF is the largest character)
// and before every other key after them (".s3seal0" and up). It is used
// only between s3seal and the store, never given to a client.
const pastReserved = ReservedPrefix + "\U0010FFFF"

// Listings hide s3seal's own keys (under ReservedPrefix) and any common
// prefix that only they make up. A page whose backend listing ended on a
// hidden key or prefix would give the client a marker naming it, and could
// be empty but truncated; so the listing then continues, within the same
// request, from pastReserved. The hidden keys are one contiguous range, so
// that happens at most once per page.

// hiddenPrefix tells whether a common prefix p of a listing is s3seal's
// alone. One under ReservedPrefix is; one that ReservedPrefix starts with
// (".", ".s3", ... from a delimiter inside ".s3seal/") is unless a client
// key shares it; any other prefix is the client's. The one listing that
// tells: p with the rest of ReservedPrefix as delimiter rolls all of
// s3seal's keys into one common prefix, ReservedPrefix, so any other item
// in its first two is a client's key (or a prefix of client keys).
func (s *Store) hiddenPrefix(ctx context.Context, bucket, p string, versions bool) (bool, error) {
	if strings.HasPrefix(p, ReservedPrefix) {
		return true, nil
	}
	if !strings.HasPrefix(ReservedPrefix, p) {
		return false, nil
	}
	delim := ReservedPrefix[len(p):]
	var items []string
	if versions {
		out, err := s.be.ListObjectVersions(ctx, backend.ListVersionsInput{Bucket: bucket, Prefix: p, Delimiter: delim, MaxKeys: 2})
		if err != nil {
			return false, err
		}
		for _, e := range out.Entries {
			items = append(items, e.Key)
		}
		items = append(items, out.CommonPrefixes...)
	} else {
		out, err := s.be.ListObjects(ctx, backend.ListInput{Bucket: bucket, V2: true, Prefix: p, Delimiter: delim, MaxKeys: 2})
		if err != nil {
			return false, err
		}
		for _, e := range out.Entries {
			items = append(items, e.Key)
		}
		items = append(items, out.CommonPrefixes...)
	}
	for _, it := range items {
		if !strings.HasPrefix(it, ReservedPrefix) {
			return false, nil
		}
	}
	return true, nil
}

// visible is what one backend page leaves a client: its prefixes without
// the hidden ones (and without one the page already has), and whether the
// page ended on a hidden key or prefix (then last is that item).
type visible struct {
	prefixes   []string
	lastHidden bool
	last       string
}

// sieve filters one backend page's prefixes onto have and finds its last
// item: lastKey ("" for none) or the last prefix, whichever sorts after.
func (s *Store) sieve(ctx context.Context, bucket string, versions bool, have, prefixes []string, lastKey string) (visible, error) {
	v := visible{prefixes: have, last: lastKey, lastHidden: strings.HasPrefix(lastKey, ReservedPrefix)}
	for _, p := range prefixes {
		hidden, err := s.hiddenPrefix(ctx, bucket, p, versions)
		if err != nil {
			return v, err
		}
		if p > v.last {
			v.last, v.lastHidden = p, hidden
		}
		if !hidden && (len(v.prefixes) == 0 || v.prefixes[len(v.prefixes)-1] != p) {
			v.prefixes = append(v.prefixes, p)
		}
	}
	return v, nil
}

// errHiddenAgain is a store listing hidden keys after pastReserved.
func errHiddenAgain(bucket, item string) error {
	return &Error{Code: "InternalError", Message: "the store listed s3seal's own keys out of order",
		Err: fmt.Errorf("listing %s: %q listed after %q", bucket, item, pastReserved)}
}

// listVisible is one page of the backend listing without s3seal's hidden
// keys and prefixes, continued past them when the backend page ended on
// one (see above).
func (s *Store) listVisible(ctx context.Context, in backend.ListInput) (backend.ListOutput, error) {
	want := in.MaxKeys
	if want <= 0 {
		want = 1000
	}
	var page backend.ListOutput
	for round := 0; ; round++ {
		out, err := s.be.ListObjects(ctx, in)
		if err != nil {
			return page, err
		}
		lastKey := ""
		had := len(page.Entries) + len(page.CommonPrefixes)
		for _, e := range out.Entries {
			lastKey = e.Key
			if !strings.HasPrefix(e.Key, ReservedPrefix) {
				page.Entries = append(page.Entries, e)
			}
		}
		v, err := s.sieve(ctx, in.Bucket, false, page.CommonPrefixes, out.CommonPrefixes, lastKey)
		if err != nil {
			return page, err
		}
		page.CommonPrefixes = v.prefixes
		page.IsTruncated, page.NextMarker, page.NextContinuationToken = out.IsTruncated, out.NextMarker, out.NextContinuationToken
		left := want - int32(len(page.Entries)+len(page.CommonPrefixes))
		// Hidden items inside the page (a bucket document sorts before
		// most keys) leave it short: it is filled from where the store's
		// page ended, as when it ended on a hidden item.
		hiddenInside := len(page.Entries)+len(page.CommonPrefixes)-had < len(out.Entries)+len(out.CommonPrefixes)
		if !out.IsTruncated || !(v.lastHidden || hiddenInside) || left <= 0 {
			if !in.V2 && out.IsTruncated && (page.NextMarker == "" || v.lastHidden) {
				// Clients take the last key as the next marker when
				// NextMarker is absent; hidden entries would make that key
				// an earlier one. A page full of visible items ends on one.
				page.NextMarker = lastVisible(page.Entries, page.CommonPrefixes)
			}
			return page, nil
		}
		if round > 0 && v.lastHidden {
			return page, errHiddenAgain(in.Bucket, v.last)
		}
		if round > 1 {
			return page, nil // a short page, which S3 clients take
		}
		in.MaxKeys = left
		switch {
		case v.lastHidden && in.V2:
			in.ContinuationToken, in.StartAfter = "", pastReserved
		case v.lastHidden:
			in.Marker = pastReserved
		case in.V2 && out.NextContinuationToken != "":
			in.ContinuationToken, in.StartAfter = out.NextContinuationToken, ""
		case in.V2:
			in.ContinuationToken, in.StartAfter = "", v.last
		default:
			in.Marker = out.NextMarker
			if in.Marker == "" {
				in.Marker = v.last
			}
		}
	}
}

// lastVisible is the last of a page's keys and prefixes.
func lastVisible(entries []backend.ListEntry, prefixes []string) string {
	last := ""
	if n := len(entries); n > 0 {
		last = entries[n-1].Key
	}
	if n := len(prefixes); n > 0 && prefixes[n-1] > last {
		last = prefixes[n-1]
	}
	return last
}

// maxHiddenSteps bounds the pages of hidden versions a ListObjectVersions
// request steps through with the store's own markers before it jumps.
const maxHiddenSteps = 10

// listVisibleVersions is listVisible for ListObjectVersions, which steps
// through hidden versions with the store's own markers (up to 1000 per
// request, the page cut to what was asked) rather than jump at once: moto
// drops the first version after a KeyMarker given without VersionIdMarker.
// Past maxHiddenSteps pages of them it jumps to pastReserved (exact on S3).
func (s *Store) listVisibleVersions(ctx context.Context, in backend.ListVersionsInput) (backend.ListVersionsOutput, error) {
	want := int(in.MaxKeys)
	if want <= 0 {
		want = 1000
	}
	var page backend.ListVersionsOutput
	for round := 0; ; round++ {
		out, err := s.be.ListObjectVersions(ctx, in)
		if err != nil {
			return page, err
		}
		lastKey, lastVID := "", ""
		for _, e := range out.Entries {
			lastKey, lastVID = e.Key, e.VersionID
			if !strings.HasPrefix(e.Key, ReservedPrefix) {
				page.Entries = append(page.Entries, e)
			}
		}
		v, err := s.sieve(ctx, in.Bucket, true, page.CommonPrefixes, out.CommonPrefixes, lastKey)
		if err != nil {
			return page, err
		}
		page.CommonPrefixes = v.prefixes
		page.IsTruncated, page.NextKeyMarker, page.NextVersionIDMarker = out.IsTruncated, out.NextKeyMarker, out.NextVersionIDMarker
		if len(page.Entries)+len(page.CommonPrefixes) > want {
			cutVersions(&page, want)
			return page, nil
		}
		if !out.IsTruncated || !v.lastHidden {
			return page, nil
		}
		switch {
		case len(page.Entries)+len(page.CommonPrefixes) == want:
			// Full: the next page starts after its last visible item.
			page.NextKeyMarker, page.NextVersionIDMarker = lastVisibleVersion(page)
			return page, nil
		case round < maxHiddenSteps:
			in.KeyMarker, in.VersionIDMarker = out.NextKeyMarker, out.NextVersionIDMarker
			if in.KeyMarker == "" {
				in.KeyMarker, in.VersionIDMarker = lastKey, lastVID
				if v.last != lastKey {
					in.KeyMarker, in.VersionIDMarker = v.last, ""
				}
			}
		case round == maxHiddenSteps:
			in.KeyMarker, in.VersionIDMarker = pastReserved, ""
		default:
			return page, errHiddenAgain(in.Bucket, v.last)
		}
		in.MaxKeys = 1000
	}
}

// cutVersions keeps the first n items (versions and prefixes, in order)
// of a page and makes it truncated after the last of them.
func cutVersions(page *backend.ListVersionsOutput, n int) {
	i, j := 0, 0
	for i+j < n {
		if j == len(page.CommonPrefixes) || (i < len(page.Entries) && page.Entries[i].Key < page.CommonPrefixes[j]) {
			i++
		} else {
			j++
		}
	}
	page.Entries, page.CommonPrefixes = page.Entries[:i], page.CommonPrefixes[:j]
	page.IsTruncated = true
	page.NextKeyMarker, page.NextVersionIDMarker = lastVisibleVersion(*page)
}

// lastVisibleVersion is the key and version markers after the last of a
// page's versions and prefixes.
func lastVisibleVersion(page backend.ListVersionsOutput) (string, string) {
	key, vid := "", ""
	if n := len(page.Entries); n > 0 {
		key, vid = page.Entries[n-1].Key, page.Entries[n-1].VersionID
	}
	if n := len(page.CommonPrefixes); n > 0 && page.CommonPrefixes[n-1] > key {
		return page.CommonPrefixes[n-1], ""
	}
	return key, vid
}
