package audit

import (
	"path/filepath"
	"testing"
)

// BenchmarkAccessLine is the cost of one access line: encoded, numbered,
// MAC'd and buffered (flushed to a file every second), from parallel
// callers as requests make them.
func BenchmarkAccessLine(b *testing.B) {
	w, err := Open(filepath.Join(b.TempDir(), "audit.log"), testKey, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	a := Access{RequestID: "0123456789ABCDEF", AccessKey: "AKIAEXAMPLE", Account: "111111111111", Op: "s3:PutObject",
		Bucket: "bucket", Key: "some/object/key-0001", Allow: true, Rule: "owner", Reason: "the bucket's owner"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := w.Access(a); err != nil {
				b.Fatal(err)
			}
		}
	})
}
