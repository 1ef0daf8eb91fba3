//go:build ignore

// smallops is the client of `scripts/bench.sh compare`'s mixed
// small-object row: CLIENTS concurrent clients, each a loop of ITER
// rounds over keys of its own under PREFIX: PUT a SIZE-byte object, GET
// it (its bytes checked), HEAD it, LIST the client's keys (at most 5 are
// there), DELETE the key written 4 rounds before. Every client is one
// aws-sdk-go-v2 client with its defaults (SigV4, the SDK's checksums),
// path-style, with as many idle connections as clients, so that no
// front pays for connections the client closed. It prints the number of
// operations and the seconds they took; any failure exits 1. With
// -only-put each round is its PUT alone (the small-PUT row).
//
//	go run scripts/smallops.go -endpoint http://127.0.0.1:PORT -bucket B -prefix P
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func main() {
	endpoint := flag.String("endpoint", "", "the front's URL")
	bucket := flag.String("bucket", "", "bucket")
	prefix := flag.String("prefix", "mixed", "key prefix")
	clients := flag.Int("clients", 32, "concurrent clients")
	iter := flag.Int("iter", 40, "rounds per client")
	size := flag.Int("size", 4096, "object size")
	ak := flag.String("access-key", "", "access key")
	sk := flag.String("secret-key", "", "secret key")
	onlyPut := flag.Bool("only-put", false, "each round is one PUT, nothing else")
	flag.Parse()
	if *endpoint == "" || *bucket == "" {
		fmt.Fprintln(os.Stderr, "smallops: -endpoint and -bucket are needed")
		os.Exit(2)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 2**clients, 2**clients
	cl := s3.New(s3.Options{
		BaseEndpoint: endpoint, Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(*ak, *sk, ""),
		HTTPClient:  &http.Client{Transport: tr},
	})
	ctx := context.Background()
	var ops atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, *clients)
	start := time.Now()
	for c := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := client(ctx, cl, *bucket, fmt.Sprintf("%s/c%02d/", *prefix, c), *iter, *size, *onlyPut, &ops); err != nil {
				errs <- fmt.Errorf("client %d: %w", c, err)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	failed := false
	for err := range errs {
		fmt.Fprintln(os.Stderr, "smallops:", err)
		failed = true
	}
	if failed {
		os.Exit(1)
	}
	fmt.Printf("%d %.3f\n", ops.Load(), took.Seconds())
}

// client runs one client's rounds over the keys under dir.
func client(ctx context.Context, cl *s3.Client, bucket, dir string, iter, size int, onlyPut bool, ops *atomic.Int64) error {
	data := make([]byte, size)
	for i := range iter {
		key := fmt.Sprintf("%sk%04d", dir, i)
		rand.Read(data)
		if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(data)}); err != nil {
			return fmt.Errorf("PUT %s: %w", key, err)
		}
		if onlyPut {
			ops.Add(1)
			continue
		}
		out, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
		if err != nil {
			return fmt.Errorf("GET %s: %w", key, err)
		}
		got, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil || !bytes.Equal(got, data) {
			return fmt.Errorf("GET %s: %d bytes back, %v", key, len(got), err)
		}
		if _, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key}); err != nil {
			return fmt.Errorf("HEAD %s: %w", key, err)
		}
		l, err := cl.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &dir})
		if err != nil {
			return fmt.Errorf("LIST %s: %w", dir, err)
		}
		if n := len(l.Contents); n == 0 || n > 5 {
			return fmt.Errorf("LIST %s: %d keys, want 1 to 5", dir, n)
		}
		ops.Add(4)
		if i >= 4 {
			old := fmt.Sprintf("%sk%04d", dir, i-4)
			if _, err := cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: aws.String(old)}); err != nil {
				return fmt.Errorf("DELETE %s: %w", old, err)
			}
			ops.Add(1)
		}
	}
	return nil
}
