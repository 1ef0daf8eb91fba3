package sealstore

import (
	"bytes"
	"sync"
	"testing"
)

// Concurrent copies to one key (multipart and single-stream sources, made
// by the store) all succeed or fail cleanly, and the key then reads as one
// of them, after the manifest cache is emptied.
func TestConcurrentStoreCopiesToOneKey(t *testing.T) {
	f := newFixture(t)
	p1, p2 := randBytes(MinPartSize+3, 141), randBytes(100<<10, 142)
	whole := append(append([]byte{}, p1...), p2...)
	f.twoParts(t, "mp", p1, p2)
	single := randBytes(200<<10, 143)
	f.put(t, "single", single)
	for round := 0; round < 5; round++ {
		var wg sync.WaitGroup
		for i := 0; i < 6; i++ {
			src := []string{"mp", "single"}[i%2]
			st, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: src, Bucket: bucket, Key: "dst"}); err != nil {
					t.Logf("copy of %s: %v", src, err)
				}
			}()
		}
		wg.Wait()
		fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
		_, rd, err := fresh.Get(f.ctx, bucket, "dst", nil)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		var b bytes.Buffer
		_, err = b.ReadFrom(rd)
		rd.Close()
		if err != nil || (!bytes.Equal(b.Bytes(), whole) && !bytes.Equal(b.Bytes(), single)) {
			t.Fatalf("round %d: dst reads %d bytes: %v", round, b.Len(), err)
		}
	}
}
