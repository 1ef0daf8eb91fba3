package lfs

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"hash/crc32"
	"net/http"
	"strings"
)

// Envelope is the Kafka record value pointing at a blob (the peer's JSON).
type Envelope struct {
	Version         int               `json:"kfs_lfs"`
	Bucket          string            `json:"bucket"`
	Key             string            `json:"key"`
	Size            int64             `json:"size"`
	SHA256          string            `json:"sha256"`
	Checksum        string            `json:"checksum,omitempty"`
	ChecksumAlg     string            `json:"checksum_alg,omitempty"`
	ContentType     string            `json:"content_type,omitempty"`
	OriginalHeaders map[string]string `json:"original_headers,omitempty"`
	CreatedAt       string            `json:"created_at,omitempty"`
	ProxyID         string            `json:"proxy_id,omitempty"`
}

// checksumSpec is the client's checksum: the algorithm (sha256 when not
// named, as the peer), and the expected lower-case hex value, if given.
type checksumSpec struct {
	alg, want string
}

var checksumLen = map[string]int{"sha256": 64, "md5": 32, "crc32": 8}

func parseChecksum(alg, value string) (checksumSpec, *apiError) {
	alg = strings.ToLower(strings.TrimSpace(alg))
	value = strings.ToLower(strings.TrimSpace(value))
	if alg == "" {
		alg = "sha256"
	}
	if alg == "none" {
		if value != "" {
			return checksumSpec{}, errf(http.StatusBadRequest, "invalid_checksum", "a checksum was given with checksum algorithm none")
		}
		return checksumSpec{alg: alg}, nil
	}
	n, ok := checksumLen[alg]
	if !ok {
		return checksumSpec{}, errf(http.StatusBadRequest, "invalid_checksum", "unsupported checksum algorithm %q (sha256, md5, crc32, none)", alg)
	}
	if value != "" {
		if _, err := hex.DecodeString(value); err != nil || len(value) != n {
			return checksumSpec{}, errf(http.StatusBadRequest, "invalid_checksum", "a %s checksum is %d hex digits", alg, n)
		}
	}
	return checksumSpec{alg: alg, want: value}, nil
}

// hasher returns a hash for the algorithm, nil for none.
func (c checksumSpec) hasher() hash.Hash {
	switch c.alg {
	case "sha256":
		return sha256.New()
	case "md5":
		return md5.New()
	case "crc32":
		return crc32.NewIEEE()
	}
	return nil
}

// sums computes the SHA-256 and the client's checksum of what is written.
type sums struct {
	spec checksumSpec
	sha  hash.Hash
	ck   hash.Hash
	n    int64
}

func newSums(spec checksumSpec) *sums {
	return &sums{spec: spec, sha: sha256.New(), ck: spec.hasher()}
}

func (s *sums) Write(p []byte) (int, error) {
	s.sha.Write(p)
	if s.ck != nil {
		s.ck.Write(p)
	}
	s.n += int64(len(p))
	return len(p), nil
}

func (s *sums) sha256Hex() string { return hex.EncodeToString(s.sha.Sum(nil)) }

// checksum is the client algorithm's value ("" for none).
func (s *sums) checksum() string {
	if s.ck == nil {
		return ""
	}
	return hex.EncodeToString(s.ck.Sum(nil))
}

// mismatch reports whether the client's expected checksum differs.
func (s *sums) mismatch() bool {
	return s.spec.want != "" && s.checksum() != s.spec.want
}

func (s *sums) envelope(h *Handler, key, contentType string) Envelope {
	env := Envelope{Version: 1, Bucket: h.cfg.Bucket, Key: key, Size: s.n, SHA256: s.sha256Hex(),
		ContentType: contentType, CreatedAt: h.now().UTC().Format("2006-01-02T15:04:05Z07:00"), ProxyID: h.cfg.ProxyID}
	if s.ck != nil {
		env.Checksum, env.ChecksumAlg = s.checksum(), s.spec.alg
	}
	return env
}
