package s3api

import (
	"net/url"
	"testing"
)

// TestCopySourceVersionIDOfB2: a copy source naming a version by the id
// its store gave it is taken, whatever store that is. Backblaze B2's S3
// API names versions by their file id (82 characters with "_" between its
// fields), which a copy (and a GET ?versionId) must be able to name.
func TestCopySourceVersionIDOfB2(t *testing.T) {
	const b2 = "4_z27c88f1d182b150646ff0b16_f100920ddab886245_d20150809_m232316_c100_v0009990_t0003"
	_, key, vid, err := parseCopySource("bkt/k?versionId=" + url.QueryEscape(b2))
	if err != nil || key != "k" || vid != b2 {
		t.Errorf("copy source of a B2 version: key %q, version %q, %v", key, vid, err)
	}
	if _, err := checkVersionID(b2); err != nil {
		t.Errorf("GET ?versionId= of a B2 version: %v", err)
	}
}
