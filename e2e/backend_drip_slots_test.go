package e2e

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// Requests to a store that drips their answers give their slots back
// within the promised bound: other clients are not refused (503 SlowDown)
// for as long as the store keeps dripping.
func TestBackendDripHoldsSlots(t *testing.T) {
	t.Parallel()
	p, fp := startStalling(t, "--max-requests", "2")
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "slots")
	putObj(t, c, "slots", "small", patternBytes(12, 1000))
	fp.Reset()
	fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.Drip, Delay: stallBound * 8 / 10})
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	for i := 0; i < 2; i++ {
		go func() {
			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("slots"), Key: aws.String("small")})
			if err == nil {
				_, _ = io.Copy(io.Discard, out.Body)
				out.Body.Close()
			}
		}()
	}
	time.Sleep(stallAnswerWithin + time.Second) // past the bound: both slots should be free again
	hctx, hcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer hcancel()
	start := time.Now()
	_, err := c.ListObjectsV2(hctx, &s3.ListObjectsV2Input{Bucket: aws.String("slots")})
	if err != nil {
		t.Errorf("a listing %v after two GETs on a dripping store: %v after %v", stallAnswerWithin+time.Second, err, time.Since(start))
	}
}

// Clients that give up on GETs to a dripping store free their slots at
// once.
func TestBackendDripClientGoneFreesSlots(t *testing.T) {
	t.Parallel()
	p, fp := startStalling(t, "--max-requests", "2")
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "slots")
	putObj(t, c, "slots", "small", patternBytes(12, 1000))
	fp.Reset()
	fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.Drip, Delay: stallBound * 8 / 10})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	for i := 0; i < 2; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("slots"), Key: aws.String("small")})
			if err == nil {
				_, _ = io.Copy(io.Discard, out.Body)
				out.Body.Close()
			}
		}()
	}
	time.Sleep(2 * time.Second)
	cancel()
	<-done
	<-done
	time.Sleep(200 * time.Millisecond)
	hctx, hcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer hcancel()
	start := time.Now()
	_, err := c.ListObjectsV2(hctx, &s3.ListObjectsV2Input{Bucket: aws.String("slots")})
	if err != nil || time.Since(start) > 2*time.Second {
		t.Errorf("a listing after the dripping GETs' clients left: %v after %v", err, time.Since(start))
	}
}
