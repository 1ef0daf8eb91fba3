package crypto

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// The test vectors (docs/FORMAT.md, "Test vectors"). Regenerate them, only
// after a deliberate format change, with
//
//	go test ./crypto -run TestVectors -update
var update = flag.Bool("update", false, "rewrite testdata/vectors.json and testdata/vectors/*.bin")

const vectorsJSON = "testdata/vectors.json"

type vectorFile struct {
	Comment   []string       `json:"comment"`
	Plaintext string         `json:"plaintext"`
	Streams   []streamVector `json:"streams"`
	Wraps     []wrapVector   `json:"wraps"`
}

type streamVector struct {
	Name         string   `json:"name"`
	DEK          string   `json:"dek"`
	OID          string   `json:"oid"`
	Part         uint32   `json:"part"`
	PlainSize    int64    `json:"plain_size"`
	Nonces       []string `json:"nonces"`
	AADs         []string `json:"aads"`
	CipherSize   int64    `json:"cipher_size"`
	CipherSHA256 string   `json:"ciphertext_sha256"`
	CipherFile   string   `json:"ciphertext_file"`
	Ciphertext   string   `json:"ciphertext,omitempty"` // hex, for small streams
}

type wrapVector struct {
	Name      string            `json:"name"`
	KEK       string            `json:"kek"`
	KeyID     string            `json:"kid"`
	DEK       string            `json:"dek"`
	OID       string            `json:"oid"`
	Multipart bool              `json:"multipart"`
	PlainSize int64             `json:"plain_size"`
	PlainMD5  string            `json:"plain_md5"`
	Nonce     string            `json:"nonce"`
	WrapKey   string            `json:"wrap_key"`
	WrapAAD   string            `json:"wrap_aad"`
	Wrapped   string            `json:"wrapped"`
	Metadata  map[string]string `json:"metadata"`
}

// Fixed inputs of the vectors.
var (
	vecDEK = seq(0x00, KeySize)
	vecOID = [OIDSize]byte(seq(0xa0, OIDSize))
	vecKEK = seq(0x40, KeySize)
)

func seq(start byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

var streamInputs = []struct {
	name string
	part uint32
	size int64
}{
	{"empty", 0, 0},
	{"one-byte", 0, 1},
	{"one-full-segment", 0, S},
	{"one-segment-and-one-byte", 0, S + 1},
	{"part3-three-segments", 3, 2*S + 1000},
}

var wrapInputs = []struct {
	name, kid string
	binding   func() Binding
}{
	{"single", "k1", func() Binding { return Binding{PlainSize: S + 1, PlainMD5: md5.Sum(pattern(S + 1))} }},
	{"single-empty", "k1", func() Binding { return Binding{PlainSize: 0, PlainMD5: md5.Sum(nil)} }},
	{"multipart", "rotated.key_2-2025", func() Binding { return Binding{Multipart: true} }},
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// sealVector seals pattern(size) with the given key, oid, part and nonces.
func sealVector(t *testing.T, dek []byte, oid [OIDSize]byte, part uint32, size int64, nonces []byte) []byte {
	dk, err := Config{Rand: bytes.NewReader(nonces)}.DataKeyFrom(dek, oid)
	if err != nil {
		t.Fatal(err)
	}
	return seal(t, dk, part, pattern(int(size)), 1000)
}

// generateVectors computes the vectors from the fixed inputs, drawing
// nonces from a deterministic source.
func generateVectors(t *testing.T) (vectorFile, map[string][]byte) {
	vf := vectorFile{
		Comment: []string{
			"s3seal format v1 test vectors; see docs/FORMAT.md, section Test vectors.",
			"All binary values are hex. Regenerate with: go test ./crypto -run TestVectors -update",
		},
		Plaintext: "byte i of each stream's plaintext is i mod 251",
	}
	files := map[string][]byte{}
	for _, in := range streamInputs {
		n := Segments(in.size)
		nonces := make([]byte, n*nonceSize)
		newDetRand("s3seal v1 test vector " + in.name).Read(nonces)
		ct := sealVector(t, vecDEK, vecOID, in.part, in.size, nonces)
		sum := sha256.Sum256(ct)
		v := streamVector{
			Name: in.name, DEK: hex.EncodeToString(vecDEK), OID: hex.EncodeToString(vecOID[:]),
			Part: in.part, PlainSize: in.size, CipherSize: int64(len(ct)),
			CipherSHA256: hex.EncodeToString(sum[:]),
			CipherFile:   "vectors/" + in.name + ".bin",
		}
		var aad segAAD
		aad.init(vecOID, in.part)
		for i := range n {
			v.Nonces = append(v.Nonces, hex.EncodeToString(nonces[i*nonceSize:(i+1)*nonceSize]))
			v.AADs = append(v.AADs, hex.EncodeToString(aad.set(uint64(i), i == n-1)))
		}
		if len(ct) <= 1024 {
			v.Ciphertext = hex.EncodeToString(ct)
		}
		vf.Streams = append(vf.Streams, v)
		files[v.CipherFile] = ct
	}
	for _, in := range wrapInputs {
		b := in.binding()
		nonce := make([]byte, nonceSize)
		newDetRand("s3seal v1 test wrap " + in.name).Read(nonce)
		env := wrapVectorEnvelope(t, vecKEK, in.kid, vecDEK, vecOID, b, nonce)
		wk, err := wrapKey(vecKEK, vecOID)
		if err != nil {
			t.Fatal(err)
		}
		vf.Wraps = append(vf.Wraps, wrapVector{
			Name: in.name, KEK: hex.EncodeToString(vecKEK), KeyID: in.kid,
			DEK: hex.EncodeToString(vecDEK), OID: hex.EncodeToString(vecOID[:]),
			Multipart: b.Multipart, PlainSize: b.PlainSize, PlainMD5: hex.EncodeToString(b.PlainMD5[:]),
			Nonce:   hex.EncodeToString(nonce),
			WrapKey: hex.EncodeToString(wk),
			WrapAAD: hex.EncodeToString(wrapAAD(in.kid, vecOID, b)),
			Wrapped: hex.EncodeToString(env.Wrapped), Metadata: env.Metadata(),
		})
	}
	return vf, files
}

func wrapVectorEnvelope(t *testing.T, kek []byte, kid string, dek []byte, oid [OIDSize]byte, b Binding, nonce []byte) Envelope {
	kr, err := NewKeyring(kid, map[string][]byte{kid: kek})
	if err != nil {
		t.Fatal(err)
	}
	dk, err := Config{Rand: bytes.NewReader(nonce)}.DataKeyFrom(dek, oid)
	if err != nil {
		t.Fatal(err)
	}
	env, err := kr.Wrap(dk, kid, b)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestVectors(t *testing.T) {
	if *update {
		vf, files := generateVectors(t)
		js, err := json.MarshalIndent(vf, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll("testdata/vectors", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(vectorsJSON, append(js, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join("testdata", name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("rewrote %s and %d ciphertext files", vectorsJSON, len(files))
	}

	js, err := os.ReadFile(vectorsJSON)
	if err != nil {
		t.Fatal(err)
	}
	var vf vectorFile
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&vf); err != nil {
		t.Fatal(err)
	}
	if len(vf.Streams) != len(streamInputs) || len(vf.Wraps) != len(wrapInputs) {
		t.Fatalf("%d streams and %d wraps in %s, want %d and %d", len(vf.Streams), len(vf.Wraps), vectorsJSON, len(streamInputs), len(wrapInputs))
	}

	for _, v := range vf.Streams {
		t.Run("stream/"+v.Name, func(t *testing.T) { checkStreamVector(t, v) })
	}
	for _, v := range vf.Wraps {
		t.Run("wrap/"+v.Name, func(t *testing.T) { checkWrapVector(t, v) })
	}

	// The stored vectors are exactly what the generator makes now.
	want, files := generateVectors(t)
	if !reflect.DeepEqual(vf, want) {
		t.Errorf("%s differs from the generated vectors: the format changed (regenerate with -update only if that is intended)", vectorsJSON)
	}
	for name, b := range files {
		got, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("testdata/%s differs from the generated ciphertext (%v)", name, err)
		}
	}
}

// checkStreamVector checks one stored stream using only the values in the
// file: its ciphertext decrypts to the pattern, carries the listed nonces,
// and sealing again with those nonces gives the same bytes.
func checkStreamVector(t *testing.T, v streamVector) {
	ct, err := os.ReadFile(filepath.Join("testdata", v.CipherFile))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(ct)
	if hex.EncodeToString(sum[:]) != v.CipherSHA256 || int64(len(ct)) != v.CipherSize || v.CipherSize != CiphertextSize(v.PlainSize) {
		t.Fatalf("ciphertext file: size %d, sha256 %x", len(ct), sum)
	}
	if v.Ciphertext != "" && !bytes.Equal(unhex(t, v.Ciphertext), ct) {
		t.Fatal("inline ciphertext differs from the file")
	}
	dek, oid := unhex(t, v.DEK), [OIDSize]byte(unhex(t, v.OID))
	dk, err := Config{}.DataKeyFrom(dek, oid)
	if err != nil {
		t.Fatal(err)
	}
	plain := pattern(int(v.PlainSize))
	if got, err := openAll(dk, v.Part, ct, v.PlainSize); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("decrypt: %v", err)
	}
	if int64(len(v.Nonces)) != Segments(v.PlainSize) || len(v.AADs) != len(v.Nonces) {
		t.Fatalf("%d nonces, %d aads", len(v.Nonces), len(v.AADs))
	}
	var nonces []byte
	var aad segAAD
	aad.init(oid, v.Part)
	for i, n := range v.Nonces {
		nb := unhex(t, n)
		if !bytes.Equal(ct[i*sealedSegSize:i*sealedSegSize+nonceSize], nb) {
			t.Fatalf("segment %d does not start with its nonce", i)
		}
		if hex.EncodeToString(aad.set(uint64(i), i == len(v.Nonces)-1)) != v.AADs[i] {
			t.Fatalf("aad %d differs", i)
		}
		nonces = append(nonces, nb...)
	}
	if again := sealVector(t, dek, oid, v.Part, v.PlainSize, nonces); !bytes.Equal(again, ct) {
		t.Fatal("sealing with the listed nonces gives other bytes")
	}
}

func checkWrapVector(t *testing.T, v wrapVector) {
	kek, dek, oid := unhex(t, v.KEK), unhex(t, v.DEK), [OIDSize]byte(unhex(t, v.OID))
	b := Binding{Multipart: v.Multipart, PlainSize: v.PlainSize, PlainMD5: [16]byte(unhex(t, v.PlainMD5))}
	if wk, _ := wrapKey(kek, oid); hex.EncodeToString(wk) != v.WrapKey {
		t.Error("wrap key differs")
	}
	if hex.EncodeToString(wrapAAD(v.KeyID, oid, b)) != v.WrapAAD {
		t.Error("wrap AAD differs")
	}
	env := wrapVectorEnvelope(t, kek, v.KeyID, dek, oid, b, unhex(t, v.Nonce))
	if hex.EncodeToString(env.Wrapped) != v.Wrapped || !reflect.DeepEqual(env.Metadata(), v.Metadata) {
		t.Fatal("wrapping again gives other bytes")
	}
	// Unwrap from the stored metadata.
	got, enc, err := ParseMetadata(v.Metadata)
	if err != nil || !enc {
		t.Fatal(err)
	}
	kr, _ := NewKeyring(v.KeyID, map[string][]byte{v.KeyID: kek})
	dk, err := kr.Unwrap(got)
	if err != nil || !bytes.Equal(dk.dek[:], dek) || dk.OID() != oid || !reflect.DeepEqual(got.Binding, b) {
		t.Fatalf("unwrap: %v", err)
	}
}

// TestVectorsPython runs testdata/check_vectors.py, an independent
// implementation of the format in Python, when python3 with pyca/cryptography
// is installed.
func TestVectorsPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	if err := exec.Command(py, "-c", "import cryptography").Run(); err != nil {
		t.Skip("python3 has no cryptography module")
	}
	out, err := exec.Command(py, "testdata/check_vectors.py", "testdata").CombinedOutput()
	if err != nil {
		t.Fatalf("check_vectors.py: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
