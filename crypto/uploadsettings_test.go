package crypto

import (
	"errors"
	"maps"
	"testing"
)

func TestUploadSettingsSealOpen(t *testing.T) {
	dk, err := NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewDataKey()
	m := map[string]string{"upload-id": "abc", "checksum-algorithm": "sha256", "checksum-type": "COMPOSITE"}
	v, err := SealUploadSettings(dk, m)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := OpenUploadSettings(dk, v); err != nil || !maps.Equal(got, m) {
		t.Fatalf("open: %v, %v", got, err)
	}
	if _, err := OpenUploadSettings(other, v); !errors.Is(err, ErrAuth) {
		t.Errorf("another upload's key: %v", err)
	}
	if _, err := SealUploadSettings(dk, nil); err == nil {
		t.Error("no settings sealed")
	}
	// The label keeps user metadata and upload settings apart: one never
	// opens as the other, though both are sealed with the same key.
	um, _ := SealUserMeta(dk, m)
	if _, err := OpenUploadSettings(dk, um); !errors.Is(err, ErrAuth) {
		t.Errorf("user metadata opened as upload settings: %v", err)
	}
	if _, err := OpenUserMeta(dk, v); !errors.Is(err, ErrAuth) {
		t.Errorf("upload settings opened as user metadata: %v", err)
	}
}
