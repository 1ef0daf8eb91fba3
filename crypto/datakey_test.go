package crypto

import (
	"errors"
	"testing"
)

// DataKeyFrom takes a 32-byte DEK only: a shorter one that AES would take
// (16, 24 bytes) or a longer one is ErrKeyring.
func TestDataKeyFromRefusesWrongSize(t *testing.T) {
	for _, n := range []int{0, 16, 24, KeySize - 1, KeySize + 1, 2 * KeySize} {
		if _, err := (Config{}).DataKeyFrom(make([]byte, n), [OIDSize]byte{}); !errors.Is(err, ErrKeyring) {
			t.Errorf("%d-byte DEK: %v, want ErrKeyring", n, err)
		}
	}
	if _, err := (Config{}).DataKeyFrom(make([]byte, KeySize), [OIDSize]byte{}); err != nil {
		t.Fatalf("32-byte DEK: %v", err)
	}
}
