package embedded

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
)

// The embedded store refuses an object beside keys under its name, the
// later PUT being refused. An overwrite of an existing object "k" races a
// PUT of "k/x": the overwrite unlinks the old "k" first (putObject's
// DeleteObject), then writes the new file; a PUT of "k/x" that ran its
// conflict check and wrote in between could make "k" a directory, the
// overwrite then failed (pathClash) and the old "k" was gone although its
// writer got an error. This checks that "k" keeps its old or new body
// (and "k/x" is refused, k having existed first).
func TestEmbeddedOverwriteRaceKeepsObject(t *testing.T) {
	b, err := newFixedBackend(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	body := []byte("old body")
	lost := 0
	for i := 0; i < 200 && lost == 0; i++ {
		k := fmt.Sprintf("k%d", i)
		if _, err := b.PutObject("bkt", k, map[string]string{}, bytes.NewReader(body), int64(len(body)), nil); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var errOver, errSub error
		big := bytes.Repeat([]byte("b"), 4<<20)
		wg.Add(3 + 8)
		go func() { // holds s3afero's lock a while: waiters switch it to FIFO hand-off
			defer wg.Done()
			_, _ = b.PutObject("bkt", "big", map[string]string{}, bytes.NewReader(big), int64(len(big)), nil)
		}()
		for j := 0; j < 8; j++ {
			go func() {
				defer wg.Done()
				_, _ = b.PutObject("bkt", fmt.Sprintf("%s/y%d", k, j), map[string]string{}, bytes.NewReader([]byte("y")), 1, nil)
			}()
		}
		go func() {
			defer wg.Done()
			nb := []byte("new body")
			_, errOver = b.PutObject("bkt", k, map[string]string{}, bytes.NewReader(nb), int64(len(nb)), nil)
		}()
		go func() {
			defer wg.Done()
			_, errSub = b.PutObject("bkt", k+"/x", map[string]string{}, bytes.NewReader([]byte("x")), 1, nil)
		}()
		wg.Wait()
		obj, gerr := b.GetObject("bkt", k, nil)
		if gerr == nil {
			data, _ := io.ReadAll(obj.Contents)
			obj.Contents.Close()
			_ = data
			continue
		}
		if gofakes3.HasErrorCode(gerr, gofakes3.ErrNoSuchKey) {
			lost++
			l, _ := b.ListBucket("bkt", &gofakes3.Prefix{HasPrefix: true, Prefix: k}, gofakes3.ListBucketPage{MaxKeys: 100})
			var keys []string
			for _, c := range l.Contents {
				keys = append(keys, c.Key)
			}
			t.Errorf("iteration %d: %q existed; its overwrite answered %v (PUT %q: %v); now GET %q: %v; keys under it: %q",
				i, k, errOver, k+"/x", errSub, k, gerr, keys)
		}
	}
}
