package sealstore

import (
	"slices"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// clientKeys sort around s3seal's own keys (".s3seal/uploads/...",
// ".s3seal/manifests/...") and share some of the prefixes a delimiter
// inside ".s3seal/" makes.
var clientKeys = []string{"-", ".a", ".s3sea", ".s3seal.", ".s3seal0", ".s3x", "a", "z"}

// expectedListing is what S3 lists of keys under prefix with delimiter:
// keys and common prefixes in order.
func expectedListing(keys []string, prefix, delim string) []string {
	var out []string
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		item := k
		if i := strings.Index(k[len(prefix):], delim); delim != "" && i >= 0 {
			item = k[:len(prefix)+i+len(delim)]
		}
		if len(out) == 0 || out[len(out)-1] != item {
			out = append(out, item)
		}
	}
	return out
}

// Paging through every listing (V1, V2, versions) in pages of 1 to 3, with
// delimiters that cut ".s3seal/" anywhere: each visible key or prefix
// once, in order, no page empty but truncated, no marker naming a hidden
// key, and a prefix shown when (and only when) a client key makes it.
func TestListingHidesReservedRange(t *testing.T) {
	for _, name := range []string{"embedded", "moto"} {
		t.Run(name, func(t *testing.T) {
			var f *fixture
			if name == "moto" {
				f = motoFixture(t)
				f.enableVersioning(t)
			} else {
				f = newFixture(t)
			}
			f.completeSmall(t, "mp", randBytes(100, 1)) // a manifest
			up := f.create(t, "inprogress")             // upload state
			f.part(t, f.st, "inprogress", up, 1, randBytes(10, 2))
			keys := append([]string{"mp"}, clientKeys...)
			for _, k := range keys[1:] {
				f.put(t, k, []byte(k))
			}
			slices.Sort(keys)
			for _, delim := range []string{"", "3", "e", ".", "/", "l"} {
				for _, prefix := range []string{"", ".", ".s3"} {
					want := expectedListing(keys, prefix, delim)
					for max := int32(1); max <= 3; max++ {
						checkPages(t, f, backend.ListInput{Bucket: bucket, Prefix: prefix, Delimiter: delim, MaxKeys: max}, want)
						checkPages(t, f, backend.ListInput{Bucket: bucket, V2: true, Prefix: prefix, Delimiter: delim, MaxKeys: max}, want)
						checkVersionPages(t, f, backend.ListVersionsInput{Bucket: bucket, Prefix: prefix, Delimiter: delim, MaxKeys: max}, want)
					}
				}
			}
		})
	}
}

func checkPages(t *testing.T, f *fixture, in backend.ListInput, want []string) {
	t.Helper()
	var got []string
	for i := 0; i < 20; i++ {
		page, err := f.st.List(f.ctx, in)
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		n := len(got)
		for _, e := range page.Entries {
			got = append(got, e.Key)
		}
		got = append(got, page.CommonPrefixes...)
		slices.Sort(got[n:])
		if !page.IsTruncated {
			break
		}
		if len(got) == n {
			t.Errorf("%+v: an empty page, truncated", in)
		}
		if strings.HasPrefix(page.NextMarker, ReservedPrefix) {
			t.Errorf("%+v: NextMarker %q", in, page.NextMarker)
		}
		if in.V2 {
			in.ContinuationToken = page.NextContinuationToken
		} else {
			in.Marker = page.NextMarker
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("%+v listed %q, want %q", in, got, want)
	}
}

func checkVersionPages(t *testing.T, f *fixture, in backend.ListVersionsInput, want []string) {
	t.Helper()
	var got []string
	for i := 0; i < 20; i++ {
		page, err := f.st.ListVersions(f.ctx, in)
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		n := len(got)
		for _, e := range page.Entries {
			got = append(got, e.Key)
		}
		got = append(got, page.CommonPrefixes...)
		slices.Sort(got[n:])
		if !page.IsTruncated {
			break
		}
		if len(got) == n {
			t.Errorf("%+v: an empty page, truncated", in)
		}
		if strings.HasPrefix(page.NextKeyMarker, ReservedPrefix) {
			t.Errorf("%+v: NextKeyMarker %q", in, page.NextKeyMarker)
		}
		in.KeyMarker, in.VersionIDMarker = page.NextKeyMarker, page.NextVersionIDMarker
	}
	if !slices.Equal(got, want) {
		t.Errorf("versions %+v listed %q, want %q", in, got, want)
	}
}
