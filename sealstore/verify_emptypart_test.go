package sealstore

import "testing"

// A deep verify authenticates every part of a multipart object, the empty
// last one too: its sealed empty segment altered at the store is damage,
// though no plaintext byte comes from it.
func TestVerifyDeepFindsDamagedEmptyLastPart(t *testing.T) {
	f := newFixture(t)
	id := f.create(t, "v/mp-empty-last")
	p1 := randBytes(5*mib, 41)
	e1 := f.part(t, f.st, "v/mp-empty-last", id, 1, p1)
	e2 := f.part(t, f.st, "v/mp-empty-last", id, 2, nil)
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "v/mp-empty-last", UploadID: id,
		Parts: completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})}); err != nil {
		t.Fatal(err)
	}
	if got := runVerify(t, f, true)["v/mp-empty-last"]; got.Status != VerifyOK {
		t.Fatalf("intact: %s %v", got.Status, got.Err)
	}
	f.rewrite(t, "v/mp-empty-last", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, nil)
	if got := runVerify(t, f, true)["v/mp-empty-last"]; got.Status != VerifyCorrupt {
		t.Fatalf("empty last part's tag flipped: verify says %s (%v), want %s", got.Status, got.Err, VerifyCorrupt)
	}
}
