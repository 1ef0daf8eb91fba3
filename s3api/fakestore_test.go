package s3api

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/s3seal/s3seal/sealstore"
)

// fakeStore is an ObjectStore for handler tests: it answers what the
// test sets and records what reached it, without a store, a keyring or
// a disk. A method the test did not expect panics (the embedded nil
// interface), which fails the test naming it: a handler that reaches
// the store where it should not is caught.
type fakeStore struct {
	ObjectStore

	mu       sync.Mutex
	settings map[sealstore.Setting]string // Setting's answer by kind ("" is the store's 404)
	locks    map[string]sealstore.LockState
	// versioning is BucketVersioning's answer.
	versioning string
	// settingDelay delays Setting's answers; settingReads counts them.
	settingDelay time.Duration
	settingReads int
	// puts records PutSetting calls; putErr, when set, is their answer.
	puts   []fakeSettingPut
	putErr error
}

type fakeSettingPut struct {
	k   sealstore.Setting
	ref sealstore.SettingRef
	doc string
	o   sealstore.SettingOptions
}

func newFakeStore() *fakeStore {
	return &fakeStore{settings: map[sealstore.Setting]string{}, locks: map[string]sealstore.LockState{}}
}

// fakeServer is the S3 front over f, for creds.
func fakeServer(t *testing.T, f *fakeStore, creds Credentials) string {
	t.Helper()
	srv := httptest.NewServer(New(Config{Store: f, Credentials: creds}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A bucket that exists, has no documents (decided by the credential
// lists alone) and no object records.
func (f *fakeStore) HeadBucket(context.Context, string) error { return nil }
func (f *fakeStore) BucketDocs(context.Context, string) (map[string][]byte, error) {
	return map[string][]byte{}, nil
}
func (f *fakeStore) ObjectRecord(context.Context, string, string, string) (sealstore.Record, bool, error) {
	return sealstore.Record{}, false, nil
}
func (f *fakeStore) BucketVersioning(context.Context, string) (string, error) {
	return f.versioning, nil
}

func (f *fakeStore) HasSettings() bool { return f.settings != nil }

func (f *fakeStore) Setting(_ context.Context, k sealstore.Setting, _ sealstore.SettingRef) (sealstore.SettingDoc, error) {
	time.Sleep(f.settingDelay)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settingReads++
	doc, ok := f.settings[k]
	if !ok || doc == "" {
		return sealstore.SettingDoc{}, &sealstore.StoreError{Code: absentCodes[k], StatusCode: 404}
	}
	return sealstore.SettingDoc{Body: []byte(doc)}, nil
}

func (f *fakeStore) PutSetting(_ context.Context, k sealstore.Setting, ref sealstore.SettingRef, doc []byte, o sealstore.SettingOptions) (sealstore.SettingDoc, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.puts = append(f.puts, fakeSettingPut{k: k, ref: ref, doc: string(doc), o: o})
	if f.putErr != nil {
		return sealstore.SettingDoc{}, f.putErr
	}
	return sealstore.SettingDoc{VersionID: ref.VersionID}, nil
}

func (f *fakeStore) ObjectLock(_ context.Context, bucket, key, versionID string) (sealstore.LockState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.locks[key]
	if !ok || (versionID != "" && versionID != l.VersionID) {
		return sealstore.LockState{}, &sealstore.StoreError{Code: "NotFound", StatusCode: 404}
	}
	return l, nil
}

// absentCodes are S3's codes for a setting that is not there.
var absentCodes = map[sealstore.Setting]string{
	sealstore.ObjectTagging: "NoSuchTagSet", sealstore.BucketTagging: "NoSuchTagSet",
	sealstore.ObjectRetention: "NoSuchObjectLockConfiguration", sealstore.ObjectLegalHold: "NoSuchObjectLockConfiguration",
	sealstore.BucketObjectLock: "ObjectLockConfigurationNotFoundError", sealstore.BucketCORS: "NoSuchCORSConfiguration",
	sealstore.BucketLifecycle: "NoSuchLifecycleConfiguration", sealstore.BucketWebsite: "NoSuchWebsiteConfiguration",
}

func (f *fakeStore) putCalls() []fakeSettingPut {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeSettingPut(nil), f.puts...)
}

// KMSKey: the fake has no key service, so SSE-KMS goes to the store.
func (f *fakeStore) KMSKey(string, string) (string, bool, error) { return "", false, nil }
