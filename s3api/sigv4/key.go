package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"sync"
)

// defaultKeyCacheSize bounds the signing-key cache.
const defaultKeyCacheSize = 1024

type keyCacheID struct {
	accessKey, date, region, service string
}

type keyCacheEntry struct {
	secret string // to notice a rotated secret for the same access key
	key    []byte
}

// keyCache holds derived signing keys per (access key, date, region,
// service). When full, an arbitrary entry is evicted.
type keyCache struct {
	mu  sync.Mutex
	max int
	m   map[keyCacheID]keyCacheEntry
}

func newKeyCache(max int) *keyCache {
	return &keyCache{max: max, m: make(map[keyCacheID]keyCacheEntry)}
}

func (c *keyCache) get(secret string, id keyCacheID) []byte {
	if c.max <= 0 {
		return deriveKey(secret, id.date, id.region, id.service)
	}
	c.mu.Lock()
	e, ok := c.m[id]
	c.mu.Unlock()
	if ok && hmac.Equal([]byte(e.secret), []byte(secret)) {
		return e.key
	}
	k := deriveKey(secret, id.date, id.region, id.service)
	c.mu.Lock()
	if _, exists := c.m[id]; !exists && len(c.m) >= c.max {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[id] = keyCacheEntry{secret: secret, key: k}
	c.mu.Unlock()
	return k
}

func (c *keyCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// deriveKey computes the SigV4 signing key for a credential scope.
func deriveKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, "aws4_request")
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
