package embedded

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// An upload that ends (completed, aborted) is gone for its readers at
// once and whole: a ListParts beside its removal answers all its parts or
// NoSuchUpload, never some of them. The completion used to remove the
// upload's files in place, so a ListParts reading the directory half way
// through listed upload.json with parts missing; s3seal, completing the
// same upload on another process, took the missing parts for parts never
// uploaded and answered InvalidPart (e2e TestMultipartRacingCompletions).

// removalStore is an mpStore on a fresh directory with bucket "bkt" and an
// upload of "k" with three parts; it returns the upload id and its parts.
func removalStore(t *testing.T) (*mpStore, string, []backend.CompletedPart) {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "objects"), 0o700); err != nil {
		t.Fatal(err)
	}
	fb, err := newFixedBackend(filepath.Join(root, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fb.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	m, err := newMPStore(filepath.Join(root, "multipart"), fb)
	if err != nil {
		t.Fatal(err)
	}
	id, err := m.create("bkt", "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	var named []backend.CompletedPart
	for n := int32(1); n <= 3; n++ {
		p := fmt.Appendf(nil, "part %d", n)
		etag, err := m.uploadPart("bkt", "k", id, n, bytes.NewReader(p), int64(len(p)), "")
		if err != nil {
			t.Fatal(err)
		}
		named = append(named, backend.CompletedPart{PartNumber: n, ETag: etag})
	}
	return m, id, named
}

// listPartsAnswer is what serveListParts answers for the upload: its
// status, error code and part numbers.
func listPartsAnswer(m *mpStore, id string) string {
	rec := httptest.NewRecorder()
	if err := m.serveListParts(rec, "bkt", "k", id, url.Values{}); err != nil {
		writeMPError(rec, httptest.NewRequest(http.MethodGet, "/bkt/k", nil), err)
	}
	var doc struct {
		Code  string
		Parts []struct{ PartNumber int32 } `xml:"Part"`
	}
	xml.Unmarshal(rec.Body.Bytes(), &doc)
	var nums []int32
	for _, p := range doc.Parts {
		nums = append(nums, p.PartNumber)
	}
	return fmt.Sprintf("%d %s %v", rec.Code, doc.Code, nums)
}

// wholeOrGone is the answer of ListParts for an upload with parts 1 to 3,
// or once it ended.
func wholeOrGone(got string) bool {
	return got == "200  [1 2 3]" || got == "404 NoSuchUpload []"
}

// The removal of an ended upload's files is half done (its part files
// gone) when ListParts reads the upload.
func TestEmbeddedListPartsDuringRemoval(t *testing.T) {
	for _, end := range []string{"complete", "abort"} {
		t.Run(end, func(t *testing.T) {
			m, id, named := removalStore(t)
			var got string
			m.removeDir = func(dir string) error {
				files, _ := filepath.Glob(filepath.Join(dir, "0000?.*"))
				for _, f := range files {
					if err := os.Remove(f); err != nil {
						return err
					}
				}
				got = listPartsAnswer(m, id)
				return os.RemoveAll(dir)
			}
			var err error
			if end == "complete" {
				_, _, err = m.complete("bkt", "k", id, named, "", "", "")
			} else {
				err = m.abort("bkt", "k", id)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got == "" {
				t.Fatal("the upload's directory was not removed through removeDir")
			}
			if !wholeOrGone(got) {
				t.Errorf("ListParts while the %s removed the upload answered %q, want all three parts or NoSuchUpload", end, got)
			}
			if after := listPartsAnswer(m, id); after != "404 NoSuchUpload []" {
				t.Errorf("ListParts after the %s: %q, want NoSuchUpload", end, after)
			}
		})
	}
}

// ListParts read the upload's directory, then the upload was completed
// and removed before ListParts looked at the files it had read.
func TestEmbeddedListPartsStraddlingCompletion(t *testing.T) {
	m, id, named := removalStore(t)
	listing := true
	m.partsRead = func(string) {
		if !listing {
			return // the completion's own reading of the parts
		}
		listing = false
		if _, _, err := m.complete("bkt", "k", id, named, "", "", ""); err != nil {
			t.Errorf("complete: %v", err)
		}
	}
	if got := listPartsAnswer(m, id); !wholeOrGone(got) {
		t.Errorf("ListParts across the completion answered %q, want all three parts or NoSuchUpload", got)
	}
	if listing {
		t.Fatal("the upload was not completed during the listing")
	}
}

// A store stopped between an upload's rename and the removal of its files
// removes them at its next start; the upload stays gone.
func TestEmbeddedEndedUploadRemovedAtStart(t *testing.T) {
	m, id, _ := removalStore(t)
	m.removeDir = func(string) error { return nil } // the process dies here
	if err := m.abort("bkt", "k", id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(m.dir, id+endedSuffix)); err != nil {
		t.Fatalf("the ended upload's directory: %v", err)
	}
	if got := listPartsAnswer(m, id); got != "404 NoSuchUpload []" {
		t.Errorf("ListParts of the ended upload: %q, want NoSuchUpload", got)
	}
	if ups, err := m.uploads("bkt"); err != nil || len(ups) != 0 {
		t.Errorf("uploads of the bucket: %v %v, want none", ups, err)
	}
	if _, err := newMPStore(m.dir, m.fb); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(m.dir); len(entries) != 0 {
		t.Errorf("after a restart multipart/ holds %d entries, want none", len(entries))
	}
}
