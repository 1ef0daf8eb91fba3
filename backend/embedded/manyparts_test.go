package embedded

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

// BenchmarkEmbeddedUploadPart measures one part's cost to the embedded
// store after 0 and after 3,000 parts of the same upload: the two figures
// side by side say whether a part's cost grows with the parts before it
// (it used to list and stat every part file under the upload's lock, so
// 10,000 parts cost 10,000² stats: nine minutes through s3seal, 1.5
// now). A benchmark, not a timed test: these machines are too noisy to
// assert a ratio.
func BenchmarkEmbeddedUploadPart(b *testing.B) {
	for _, before := range []int{0, 3000} {
		b.Run(fmt.Sprintf("after-%d-parts", before), func(b *testing.B) {
			root := b.TempDir()
			if err := os.Mkdir(root+"/objects", 0o700); err != nil {
				b.Fatal(err)
			}
			fb, err := newFixedBackend(root + "/objects")
			if err != nil {
				b.Fatal(err)
			}
			if err := fb.CreateBucket("bkt"); err != nil {
				b.Fatal(err)
			}
			m, err := newMPStore(root+"/multipart", fb)
			if err != nil {
				b.Fatal(err)
			}
			id, err := m.create("bkt", "k", nil)
			if err != nil {
				b.Fatal(err)
			}
			put := func(n int) {
				p := fmt.Appendf(nil, "part %d", n)
				if _, err := m.uploadPart("bkt", "k", id, int32(n), bytes.NewReader(p), int64(len(p)), ""); err != nil {
					b.Fatal(err)
				}
			}
			for i := 1; i <= before; i++ {
				put(i)
			}
			b.ResetTimer()
			for i := range b.N {
				put(before + 1 + i%(10000-before)) // re-uploads once past 10,000
			}
		})
	}
}
