package s3api

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
)

// slowVersionDelete holds the delete of one version of key until
// release is closed (a store slow to answer it).
type slowVersionDelete struct {
	backend.Store
	mu      sync.Mutex
	key     string
	version string
	entered chan struct{}
	release chan struct{}
}

func (s *slowVersionDelete) hold(key, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key, s.version = key, version
	s.entered, s.release = make(chan struct{}), make(chan struct{})
}

func (s *slowVersionDelete) DeleteObjectVersion(ctx context.Context, in backend.DeleteInput) (backend.DeleteOutput, error) {
	s.mu.Lock()
	held := s.key != "" && in.Key == s.key && in.VersionID == s.version
	entered, release := s.entered, s.release
	if held {
		s.key = ""
	}
	s.mu.Unlock()
	if held {
		close(entered)
		<-release
	}
	return s.Store.DeleteObjectVersion(ctx, in)
}

// TestDeleteByIdOfAVersionMadeCurrentMeanwhile: a delete by id of a
// version that was not current when the delete began, but became current
// (with its writer's ACL record) before the store deleted it, drops the
// current object's record: the bucket owner's older version that becomes
// current is not readable by that writer.
func TestDeleteByIdOfAVersionMadeCurrentMeanwhile(t *testing.T) {
	for _, tc := range []string{"null version written meanwhile", "version made current again"} {
		t.Run(tc, func(t *testing.T) {
			var slow *slowVersionDelete
			srv := newTestServerOver(t, Config{Credentials: aclCredsAliceAdmin()}, func(s backend.Store) backend.Store {
				slow = &slowVersionDelete{Store: s}
				return slow
			})
			ctx := context.Background()
			alice, bob := sdkClient(srv.URL, "alice", "as"), sdkClient(srv.URL, "bob", "bs")
			b, k := aws.String("bkt"), aws.String("k")
			createBucketBobWrites(t, alice, *b)
			allowBobVersionDeletes(t, alice, *b) // no ACL grant deletes by id
			setVersioning := func(s types.BucketVersioningStatus) {
				if _, err := alice.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
					VersioningConfiguration: &types.VersioningConfiguration{Status: s}}); err != nil {
					t.Fatal(err)
				}
			}
			setVersioning(types.BucketVersioningStatusEnabled)
			if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("alice's secret")}); err != nil {
				t.Fatal(err)
			}
			put := func(body string) string {
				out, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader(body)})
				if err != nil {
					t.Fatal(err)
				}
				return aws.ToString(out.VersionId)
			}
			deleted := make(chan error, 1)
			startDelete := func(vid string) {
				slow.hold("k", vid)
				go func() {
					_, err := bob.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: aws.String(vid)})
					deleted <- err
				}()
				select {
				case <-slow.entered:
				case err := <-deleted:
					t.Fatalf("delete of %s ended before the store was asked: %v", vid, err)
				case <-time.After(10 * time.Second):
					t.Fatal("delete never reached the store")
				}
			}
			switch tc {
			case "null version written meanwhile":
				setVersioning(types.BucketVersioningStatusSuspended)
				startDelete("null") // the owner's version is current
				put("bob's")        // the null version, current, bob's
			case "version made current again":
				vB := put("bob's")
				if _, err := bob.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k, ACL: types.ObjectCannedACLPrivate}); err != nil {
					t.Fatal(err)
				}
				vC := put("bob's again")
				startDelete(vB) // vC is current
				if _, err := bob.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: aws.String(vC)}); err != nil {
					t.Fatal(err)
				}
				// vB is current again: the ACL bob puts on it is the
				// current object's.
				if _, err := bob.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k, VersionId: aws.String(vB), ACL: types.ObjectCannedACLPublicRead}); err != nil {
					t.Fatal(err)
				}
			}
			close(slow.release)
			if err := <-deleted; err != nil {
				t.Fatal(err)
			}
			if out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); err == nil {
				body, _ := io.ReadAll(out.Body)
				t.Errorf("bob read the bucket owner's version made current by his delete: %q", body)
			}
		})
	}
}
