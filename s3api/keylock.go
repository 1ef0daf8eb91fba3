package s3api

import "sync"

// keyLocks serializes requests on one (bucket, key) within the process:
// a retention or legal-hold change is judged on a HEAD of the version and
// then forwarded, and two such changes at once must not both be judged on
// the state before either (the first's extension would let the second's
// shortening through). Entries live while someone holds or waits for them.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	users int
}

// lock takes the lock of bucket/key and returns its release.
func (k *keyLocks) lock(bucket, key string) (unlock func()) {
	name := bucket + "\x00" + key
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyLock{}
	}
	l := k.m[name]
	if l == nil {
		l = &keyLock{}
		k.m[name] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.m, name)
		}
		k.mu.Unlock()
	}
}
