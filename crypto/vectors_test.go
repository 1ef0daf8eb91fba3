package crypto

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// The test vectors (docs/FORMAT.md, "Test vectors"). Regenerate them, only
// after a deliberate format change, with
//
//	go test ./crypto -run TestVectors -update
var update = flag.Bool("update", false, "rewrite testdata/vectors.json and testdata/vectors/*.bin")

const vectorsJSON = "testdata/vectors.json"

type vectorFile struct {
	Comment     []string       `json:"comment"`
	Plaintext   string         `json:"plaintext"`
	Streams     []streamVector `json:"streams"`
	Wraps       []wrapVector   `json:"wraps"`
	Manifests   []blobVector   `json:"manifests"`
	PartRecords []blobVector   `json:"part_records"`
	ObjectMetas []blobVector   `json:"object_metas"`
	Origins     []blobVector   `json:"origins"`
}

type streamVector struct {
	Name         string   `json:"name"`
	DEK          string   `json:"dek"`
	OID          string   `json:"oid"`
	Part         uint32   `json:"part"`
	StreamID     string   `json:"stream_id"`
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
	Version   int               `json:"version"`
	KEK       string            `json:"kek"`
	KeyID     string            `json:"kid"`
	DEK       string            `json:"dek"`
	OID       string            `json:"oid"`
	Bucket    string            `json:"bucket"`
	Key       string            `json:"key"`
	Multipart bool              `json:"multipart"`
	PlainSize int64             `json:"plain_size"`
	PlainMD5  string            `json:"plain_md5"`
	Checksums map[string]string `json:"checksums"`
	Nonce     string            `json:"nonce"`
	WrapKey   string            `json:"wrap_key"`
	WrapAAD   string            `json:"wrap_aad"`
	Payload   string            `json:"payload"`
	Wrapped   string            `json:"wrapped"`
	Metadata  map[string]string `json:"metadata"`
	// For a master key held in a KMS: the sealed intermediate key (as
	// stored, opaque), the bound encryption context and bucket-key flag.
	SealedKey  string `json:"sealed_key,omitempty"`
	KMSContext string `json:"kms_context,omitempty"`
	BucketKey  bool   `json:"bucket_key,omitempty"`
}

// blobVector is a sealed manifest or part record: the message (encoding),
// its AAD, the nonce, the sealed bytes, and the decoded values as JSON.
type blobVector struct {
	Name     string          `json:"name"`
	DEK      string          `json:"dek"`
	OID      string          `json:"oid"`
	Encoding string          `json:"encoding"`
	AAD      string          `json:"aad"`
	Nonce    string          `json:"nonce"`
	Sealed   string          `json:"sealed"`
	Values   json.RawMessage `json:"values"`
}

// Fixed inputs of the vectors.
var (
	vecDEK  = seq(0x00, KeySize)
	vecOID  = [OIDSize]byte(seq(0xa0, OIDSize))
	vecKEK  = seq(0x40, KeySize)
	vecName = Name{Bucket: "backups", Key: "scylla/sst/me-1-big-Data.db"}
)

func seq(start byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

var streamInputs = []struct {
	name   string
	stream Stream
	size   int64
}{
	{"empty", Stream{}, 0},
	{"one-byte", Stream{}, 1},
	{"one-full-segment", Stream{}, S},
	{"one-segment-and-one-byte", Stream{}, S + 1},
	{"part3-three-segments", Stream{Part: 3, ID: [8]byte(seq(0xc0, 8))}, 2*S + 1000},
}

// wrapInputs are the wrap vectors: format 1 (as objects written before
// format 2 hold them) and format 2, whose metadata carries the sealed
// object metadata vecObjectMeta.
var wrapInputs = []struct {
	name, kid string
	binding   func() Binding
}{
	{"single", "k1", func() Binding { return Binding{Version: FormatV1, PlainSize: S + 1, PlainMD5: md5.Sum(pattern(S + 1))} }},
	{"single-empty", "k1", func() Binding { return Binding{Version: FormatV1, PlainSize: 0, PlainMD5: md5.Sum(nil)} }},
	{"single-one-checksum", "k1", func() Binding {
		return Binding{Version: FormatV1, PlainSize: 1, PlainMD5: md5.Sum(pattern(1)), Checksums: map[string]string{"crc64nvme": "4n0Fu+Bw1KY="}}
	}},
	{"single-three-checksums", "k1", func() Binding {
		return Binding{Version: FormatV1, PlainSize: 1, PlainMD5: md5.Sum(pattern(1)), Checksums: map[string]string{
			"crc32": "0jdRaw==", "crc32c": "UnQ8pQ==", "sha256": "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0="}}
	}},
	{"multipart", "rotated.key_2-2025", func() Binding { return Binding{Version: FormatV1, Multipart: true} }},
	{"v2-single-one-checksum", "k1", func() Binding {
		return Binding{Version: FormatV2, PlainSize: S + 1, PlainMD5: md5.Sum(pattern(S + 1)), Checksums: map[string]string{"crc64nvme": "4n0Fu+Bw1KY="}}
	}},
	{"v2-multipart", "rotated.key_2-2025", func() Binding { return Binding{Version: FormatV2, Multipart: true} }},
	// A master key held in a KMS: "kek" is then the intermediate key the
	// KMS made (and opens from sealed_key); the KMS's own sealing is its
	// business, the vector's sealed_key is opaque bytes.
	{"v2-kms-single-context", vecKMSKeyID, func() Binding {
		return Binding{Version: FormatV2, PlainSize: 1, PlainMD5: md5.Sum(pattern(1)), KMSContext: `{"department":"r&d","tenant":"a"}`}
	}},
	{"v2-kms-multipart-bucket-key", vecKMSKeyID, func() Binding { return Binding{Version: FormatV2, Multipart: true, BucketKey: true} }},
}

// vecKMSKeyID names the KMS master key of the external-key vectors.
const vecKMSKeyID = "aws-kms:arn:aws:kms:eu-west-1:111122223333:key/0d9a5e1c-vector"

// vecService is a KeyService that makes the vector KEK with a fixed
// sealed form: the wrap under an external key is the wrap under the
// intermediate key it opens to.
type vecService struct{}

func (vecService) Handles(id string) bool { return id == vecKMSKeyID }
func (vecService) NewKey(context.Context, KeyRequest) ([]byte, []byte, string, error) {
	return slices.Clone(vecKEK), slices.Clone(vecSealedKey), vecKMSKeyID, nil
}
func (vecService) Forget(KeyRequest, []byte) {}

func (vecService) OpenKey(_ context.Context, _ KeyRequest, sealed []byte) ([]byte, error) {
	if !bytes.Equal(sealed, vecSealedKey) {
		return nil, errors.New("not the vector's sealed key")
	}
	return slices.Clone(vecKEK), nil
}

var vecSealedKey = seq(0xc0, 48)

// objectMetaInputs are the sealed object metadata vectors: none at all,
// and every kind of entry (headers left out are not sent).
var objectMetaInputs = []struct {
	name string
	meta ObjectMeta
}{
	{"object-meta-empty", ObjectMeta{}},
	{"object-meta", ObjectMeta{
		User:        map[string]string{"diagnosis": "flu", "mtime": "1700000000.123456789", "md5chksum": "1B2M2Y8AsgTpgAmY7PhCfg==", "empty": ""},
		ContentType: "text/plain; charset=utf-8", ContentDisposition: `attachment; filename="r\u00e9sum\u00e9.txt"`,
		CacheControl: "no-cache", Expires: "Thu, 01 Dec 2094 16:00:00 GMT", WebsiteRedirect: "/elsewhere.html",
	}},
}

// vecManifest is the manifest vector: three parts (the last one short and
// misaligned), with per-part and composite object checksums.
func vecManifest() Manifest {
	return Manifest{
		Parts: []ManifestPart{
			{Stream: Stream{Part: 1, ID: [8]byte(seq(0x10, 8))}, PlainSize: 5 << 20, PlainMD5: md5.Sum([]byte("part 1")), Checksums: map[string]string{"crc32": "AAAAAQ=="}},
			{Stream: Stream{Part: 2, ID: [8]byte(seq(0x20, 8))}, PlainSize: 5<<20 + 3, PlainMD5: md5.Sum([]byte("part 2")), Checksums: map[string]string{"crc32": "AAAAAg=="}},
			{Stream: Stream{Part: 7, ID: [8]byte(seq(0x30, 8))}, PlainSize: 1, PlainMD5: md5.Sum([]byte("part 7")), Checksums: map[string]string{"crc32": "AAAAAw=="}},
		},
		Checksums: map[string]string{"crc32": "qUNFUw==-3"},
	}
}

func vecPartRecord() PartRecord {
	return PartRecord{Stream: Stream{Part: 2, ID: [8]byte(seq(0x20, 8))}, PlainSize: 5<<20 + 3,
		PlainMD5: md5.Sum([]byte("part 2")), BackendETag: "0123456789abcdef0123456789abcdef",
		Checksums: map[string]string{"crc32": "AAAAAg=="}}
}

// Copies the store made: the copy's own key (vecCopyDEK, vecCopyOID)
// seals its origin, the stream "part3-three-segments" under the vector
// key, as the value of s3seal-src of a single-stream copy, as part 2 of a
// manifest and in the record of a part copied into an upload.
var (
	vecCopyDEK = seq(0x60, KeySize)
	vecCopyOID = [OIDSize]byte(seq(0xb0, OIDSize))
	vecOrigin  = Origin{DEK: [KeySize]byte(vecDEK), OID: vecOID, Stream: Stream{Part: 3, ID: [8]byte(seq(0xc0, 8))}}
)

func vecCopiedManifest() Manifest {
	o := vecOrigin
	return Manifest{
		Parts: []ManifestPart{
			{Stream: Stream{Part: 1, ID: [8]byte(seq(0x10, 8))}, PlainSize: 5 << 20, PlainMD5: md5.Sum([]byte("part 1"))},
			{Stream: Stream{Part: 2, ID: [8]byte(seq(0x40, 8))}, PlainSize: 2*SegmentSize + 1000, PlainMD5: md5.Sum(pattern(2*SegmentSize + 1000)), Origin: &o},
		},
	}
}

func vecCopiedPartRecord() PartRecord {
	o := vecOrigin
	return PartRecord{Stream: Stream{Part: 2, ID: [8]byte(seq(0x40, 8))}, PlainSize: 2*SegmentSize + 1000,
		PlainMD5: md5.Sum(pattern(2*SegmentSize + 1000)), BackendETag: "fedcba9876543210fedcba9876543210", Origin: &o}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// sealVector seals pattern(size) with the given key, oid, stream and nonces.
func sealVector(t *testing.T, dek []byte, oid [OIDSize]byte, s Stream, size int64, nonces []byte) []byte {
	dk, err := Config{Rand: bytes.NewReader(nonces)}.DataKeyFrom(dek, oid)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, dk, s)
	for p := pattern(int(size)); len(p) > 0; p = p[min(1000, len(p)):] {
		if _, err := w.Write(p[:min(1000, len(p))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
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
		ct := sealVector(t, vecDEK, vecOID, in.stream, in.size, nonces)
		sum := sha256.Sum256(ct)
		v := streamVector{
			Name: in.name, DEK: hex.EncodeToString(vecDEK), OID: hex.EncodeToString(vecOID[:]),
			Part: in.stream.Part, StreamID: hex.EncodeToString(in.stream.ID[:]), PlainSize: in.size, CipherSize: int64(len(ct)),
			CipherSHA256: hex.EncodeToString(sum[:]),
			CipherFile:   "vectors/" + in.name + ".bin",
		}
		var aad segAAD
		aad.init(vecOID, in.stream)
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
	for _, in := range objectMetaInputs {
		vf.ObjectMetas = append(vf.ObjectMetas, blobVectorOf(t, in.name, in.meta))
	}
	for _, in := range wrapInputs {
		b := in.binding()
		nonce := make([]byte, nonceSize)
		newDetRand("s3seal v1 test wrap " + in.name).Read(nonce)
		env := wrapVectorEnvelope(t, vecKEK, in.kid, vecDEK, vecOID, b, nonce)
		if b.Version == FormatV2 {
			env.SealedMeta = b64url.EncodeToString(unhex(t, vf.ObjectMetas[1].Sealed))
		}
		wk, err := wrapKey(vecKEK, vecOID)
		if err != nil {
			t.Fatal(err)
		}
		vf.Wraps = append(vf.Wraps, wrapVector{
			Name: in.name, Version: b.Version, KEK: hex.EncodeToString(vecKEK), KeyID: in.kid,
			DEK: hex.EncodeToString(vecDEK), OID: hex.EncodeToString(vecOID[:]),
			Bucket: vecName.Bucket, Key: vecName.Key,
			Multipart: b.Multipart, PlainSize: b.PlainSize, PlainMD5: hex.EncodeToString(b.PlainMD5[:]),
			Checksums: b.Checksums,
			Nonce:     hex.EncodeToString(nonce),
			WrapKey:   hex.EncodeToString(wk),
			WrapAAD:   hex.EncodeToString(wrapAAD(env, vecName)),
			Payload:   hex.EncodeToString(wrapPayload(vecDEK, b)),
			Wrapped:   hex.EncodeToString(env.Wrapped), Metadata: env.Metadata(),
			SealedKey: hex.EncodeToString(env.SealedKey), KMSContext: env.KMSContext, BucketKey: env.BucketKey,
		})
	}
	vf.Manifests = append(vf.Manifests, blobVectorOf(t, "manifest-three-parts", vecManifest()),
		blobVectorWith(t, "manifest-copied-part", vecCopyDEK, vecCopyOID, vecCopiedManifest()))
	vf.PartRecords = append(vf.PartRecords, blobVectorOf(t, "part-record", vecPartRecord()),
		blobVectorWith(t, "part-record-copied", vecCopyDEK, vecCopyOID, vecCopiedPartRecord()))
	vf.Origins = append(vf.Origins, blobVectorWith(t, "origin", vecCopyDEK, vecCopyOID, vecOrigin))
	return vf, files
}

// blobVectorOf seals a Manifest, a PartRecord, an ObjectMeta or an Origin
// with the vector DEK and a deterministic nonce.
func blobVectorOf(t *testing.T, name string, v any) blobVector {
	return blobVectorWith(t, name, vecDEK, vecOID, v)
}

// blobVectorWith is blobVectorOf with the data key dek and oid.
func blobVectorWith(t *testing.T, name string, dek []byte, oid [OIDSize]byte, v any) blobVector {
	nonce := make([]byte, nonceSize)
	newDetRand("s3seal v1 test blob " + name).Read(nonce)
	dk, err := Config{Rand: bytes.NewReader(nonce)}.DataKeyFrom(dek, oid)
	if err != nil {
		t.Fatal(err)
	}
	var sealed []byte
	var values any
	switch v := v.(type) {
	case Manifest:
		sealed, err = SealManifest(dk, v)
		values = manifestJSON(v)
	case PartRecord:
		sealed, err = SealPartRecord(dk, v)
		values = partJSON(v.Stream, v.PlainSize, v.PlainMD5, v.Checksums, v.BackendETag, v.Origin)
	case Origin:
		var s string
		if s, err = SealOrigin(dk, v); err == nil {
			sealed, err = b64url.DecodeString(s)
		}
		values = originJSON(v)
	case ObjectMeta:
		var s string
		if s, err = SealObjectMeta(dk, v); err == nil {
			sealed, err = b64url.DecodeString(s)
		}
		values = objectMetaJSON(v)
	}
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	label, extra := manifestLabel, []byte(nil)
	switch v := v.(type) {
	case PartRecord:
		label, extra = partLabel, binary.BigEndian.AppendUint32(nil, v.Stream.Part)
	case ObjectMeta:
		label = objectMetaLabel
	case Origin:
		label = originLabel
	}
	msg, err := dk.openBlob(sealed, dk.blobAAD(label, extra), name)
	if err != nil {
		t.Fatal(err)
	}
	return blobVector{Name: name, DEK: hex.EncodeToString(dek), OID: hex.EncodeToString(oid[:]),
		Encoding: hex.EncodeToString(msg), AAD: hex.EncodeToString(dk.blobAAD(label, extra)),
		Nonce: hex.EncodeToString(nonce), Sealed: hex.EncodeToString(sealed), Values: js}
}

func partJSON(s Stream, size int64, sum [16]byte, cs map[string]string, etag string, o *Origin) map[string]any {
	m := map[string]any{"part": s.Part, "stream_id": hex.EncodeToString(s.ID[:]), "plain_size": size,
		"plain_md5": hex.EncodeToString(sum[:]), "checksums": cs}
	if etag != "" {
		m["backend_etag"] = etag
	}
	if o != nil {
		m["origin"] = originJSON(*o)
	}
	return m
}

func originJSON(o Origin) map[string]any {
	return map[string]any{"dek": hex.EncodeToString(o.DEK[:]), "oid": hex.EncodeToString(o.OID[:]),
		"part": o.Stream.Part, "stream_id": hex.EncodeToString(o.Stream.ID[:])}
}

// objectMetaJSON names the headers as HTTP does, with their ids.
func objectMetaJSON(m ObjectMeta) map[string]any {
	headers := map[string]any{}
	names := [...]string{"Content-Type", "Content-Encoding", "Content-Disposition", "Content-Language", "Cache-Control", "Expires", "x-amz-website-redirect-location"}
	for i, f := range m.fields() {
		if *f != "" {
			headers[names[i]] = map[string]any{"id": i + 1, "value": *f}
		}
	}
	user := m.User
	if user == nil {
		user = map[string]string{}
	}
	return map[string]any{"headers": headers, "user": user}
}

func manifestJSON(m Manifest) map[string]any {
	parts := []any{}
	for _, p := range m.Parts {
		parts = append(parts, partJSON(p.Stream, p.PlainSize, p.PlainMD5, p.Checksums, "", p.Origin))
	}
	return map[string]any{"parts": parts, "checksums": m.Checksums, "size": m.Size(),
		"cipher_size": m.CipherSize(), "etag": m.ETag()}
}

func wrapVectorEnvelope(t *testing.T, kek []byte, kid string, dek []byte, oid [OIDSize]byte, b Binding, nonce []byte) Envelope {
	kr, err := NewKeyring("local", map[string][]byte{"local": kek})
	if err == nil && IsExternalKeyID(kid) {
		kr, err = kr.WithService(vecService{}, kid, nil)
	} else if err == nil {
		kr, err = NewKeyring(kid, map[string][]byte{kid: kek})
	}
	if err != nil {
		t.Fatal(err)
	}
	dk, err := Config{Rand: bytes.NewReader(nonce)}.DataKeyFrom(dek, oid)
	if err != nil {
		t.Fatal(err)
	}
	env, err := kr.Wrap(context.Background(), dk, kid, vecName, b)
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
	if len(vf.Streams) != len(streamInputs) || len(vf.Wraps) != len(wrapInputs) || len(vf.Manifests) != 2 || len(vf.PartRecords) != 2 ||
		len(vf.ObjectMetas) != len(objectMetaInputs) || len(vf.Origins) != 1 {
		t.Fatalf("%s: %d streams, %d wraps, %d manifests, %d part records", vectorsJSON, len(vf.Streams), len(vf.Wraps), len(vf.Manifests), len(vf.PartRecords))
	}

	for _, v := range vf.Streams {
		t.Run("stream/"+v.Name, func(t *testing.T) { checkStreamVector(t, v) })
	}
	for _, v := range vf.Wraps {
		t.Run("wrap/"+v.Name, func(t *testing.T) { checkWrapVector(t, v) })
	}
	t.Run("manifest", func(t *testing.T) { checkManifestVector(t, vf.Manifests[0], vecManifest()) })
	t.Run("manifest-copied-part", func(t *testing.T) { checkManifestVector(t, vf.Manifests[1], vecCopiedManifest()) })
	t.Run("part-record", func(t *testing.T) { checkPartRecordVector(t, vf.PartRecords[0], vecPartRecord()) })
	t.Run("part-record-copied", func(t *testing.T) { checkPartRecordVector(t, vf.PartRecords[1], vecCopiedPartRecord()) })
	t.Run("origin", func(t *testing.T) { checkOriginVector(t, vf.Origins[0]) })
	for i, v := range vf.ObjectMetas {
		t.Run("object-meta/"+v.Name, func(t *testing.T) { checkObjectMetaVector(t, v, objectMetaInputs[i].meta) })
	}

	// The stored vectors are exactly what the generator makes now.
	want, files := generateVectors(t)
	if wantJS, _ := json.MarshalIndent(want, "", "  "); !bytes.Equal(append(wantJS, '\n'), js) {
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
	stream := Stream{Part: v.Part, ID: [StreamIDSize]byte(unhex(t, v.StreamID))}
	plain := pattern(int(v.PlainSize))
	r, err := NewReader(bytes.NewReader(ct), dk, stream, v.PlainSize, 0, v.PlainSize)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("decrypt: %v", err)
	}
	if int64(len(v.Nonces)) != Segments(v.PlainSize) || len(v.AADs) != len(v.Nonces) {
		t.Fatalf("%d nonces, %d aads", len(v.Nonces), len(v.AADs))
	}
	var nonces []byte
	var aad segAAD
	aad.init(oid, stream)
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
	if again := sealVector(t, dek, oid, stream, v.PlainSize, nonces); !bytes.Equal(again, ct) {
		t.Fatal("sealing with the listed nonces gives other bytes")
	}
}

func checkWrapVector(t *testing.T, v wrapVector) {
	kek, dek, oid := unhex(t, v.KEK), unhex(t, v.DEK), [OIDSize]byte(unhex(t, v.OID))
	name := Name{Bucket: v.Bucket, Key: v.Key}
	b := Binding{Version: v.Version, Multipart: v.Multipart, PlainSize: v.PlainSize, PlainMD5: [16]byte(unhex(t, v.PlainMD5)), Checksums: v.Checksums,
		KMSContext: v.KMSContext, BucketKey: v.BucketKey}
	if wk, _ := wrapKey(kek, oid); hex.EncodeToString(wk) != v.WrapKey {
		t.Error("wrap key differs")
	}
	env := wrapVectorEnvelope(t, kek, v.KeyID, dek, oid, b, unhex(t, v.Nonce))
	env.SealedMeta = v.Metadata[MetaObject]
	if hex.EncodeToString(wrapAAD(env, name)) != v.WrapAAD || hex.EncodeToString(wrapPayload(dek, b)) != v.Payload {
		t.Error("wrap AAD or payload differs")
	}
	if hex.EncodeToString(env.Wrapped) != v.Wrapped || !reflect.DeepEqual(env.Metadata(), v.Metadata) {
		t.Fatal("wrapping again gives other bytes")
	}
	// Unwrap from the stored metadata.
	got, enc, err := ParseMetadata(v.Metadata)
	if err != nil || !enc {
		t.Fatal(err)
	}
	kr, _ := NewKeyring(v.KeyID, map[string][]byte{v.KeyID: kek})
	if IsExternalKeyID(v.KeyID) {
		if hex.EncodeToString(got.SealedKey) != v.SealedKey {
			t.Fatal("sealed key differs")
		}
		kr, _ = NewKeyring("local", map[string][]byte{"local": kek})
		kr, _ = kr.WithService(vecService{}, v.KeyID, nil)
	}
	dk, gotB, err := kr.Unwrap(context.Background(), got, name)
	if err != nil || !bytes.Equal(dk.dek[:], dek) || dk.OID() != oid || !reflect.DeepEqual(gotB, b) {
		t.Fatalf("unwrap: %v", err)
	}
	if v.Version == FormatV2 {
		if m, err := OpenObjectMeta(dk, got.SealedMeta); err != nil || !reflect.DeepEqual(m, objectMetaInputs[1].meta) {
			t.Fatalf("object meta: %+v, %v", m, err)
		}
	}
}

func checkObjectMetaVector(t *testing.T, v blobVector, want ObjectMeta) {
	dk, sealed := openBlobVector(t, v)
	m, err := OpenObjectMeta(dk, b64url.EncodeToString(sealed))
	if err != nil || !reflect.DeepEqual(m, want) {
		t.Fatalf("open: %+v, %v", m, err)
	}
	if len(unhex(t, v.Encoding)) != want.EncodedSize() {
		t.Errorf("encoding is %d bytes, EncodedSize %d", len(unhex(t, v.Encoding)), want.EncodedSize())
	}
	// Another object's key does not open it.
	other, _ := Config{}.DataKeyFrom(unhex(t, v.DEK), [OIDSize]byte{1})
	if _, err := OpenObjectMeta(other, b64url.EncodeToString(sealed)); !errors.Is(err, ErrAuth) {
		t.Errorf("other oid: %v", err)
	}
}

// openBlobVector checks a sealed blob's stored nonce and opens it with the
// stored DEK and oid.
func openBlobVector(t *testing.T, v blobVector) (*DataKey, []byte) {
	dk, err := Config{}.DataKeyFrom(unhex(t, v.DEK), [OIDSize]byte(unhex(t, v.OID)))
	if err != nil {
		t.Fatal(err)
	}
	sealed := unhex(t, v.Sealed)
	if !bytes.HasPrefix(sealed, unhex(t, v.Nonce)) {
		t.Fatal("sealed blob does not start with its nonce")
	}
	return dk, sealed
}

func checkManifestVector(t *testing.T, v blobVector, want Manifest) {
	dk, sealed := openBlobVector(t, v)
	m, err := OpenManifest(dk, sealed)
	if err != nil || !reflect.DeepEqual(m, want) {
		t.Fatalf("open: %+v, %v", m, err)
	}
	var values struct {
		Size       int64  `json:"size"`
		CipherSize int64  `json:"cipher_size"`
		ETag       string `json:"etag"`
	}
	if err := json.Unmarshal(v.Values, &values); err != nil || values.Size != m.Size() || values.CipherSize != m.CipherSize() || values.ETag != m.ETag() {
		t.Fatalf("values %+v, %v", values, err)
	}
	// Another oid, a flipped byte, or a part record's seal does not open.
	other, _ := Config{}.DataKeyFrom(unhex(t, v.DEK), [OIDSize]byte{1})
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)/2] ^= 1
	for name, c := range map[string]struct {
		dk *DataKey
		b  []byte
	}{"other oid": {other, sealed}, "flipped": {dk, flipped}} {
		if _, err := OpenManifest(c.dk, c.b); !errors.Is(err, ErrAuth) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := OpenPartRecord(dk, 1, sealed); !errors.Is(err, ErrAuth) {
		t.Errorf("manifest opened as a part record: %v", err)
	}
}

func checkPartRecordVector(t *testing.T, v blobVector, want PartRecord) {
	dk, sealed := openBlobVector(t, v)
	r, err := OpenPartRecord(dk, want.Stream.Part, sealed)
	if err != nil || !reflect.DeepEqual(r, want) {
		t.Fatalf("open: %+v, %v", r, err)
	}
	if _, err := OpenPartRecord(dk, want.Stream.Part+1, sealed); !errors.Is(err, ErrAuth) {
		t.Errorf("record of part %d opened as part %d: %v", want.Stream.Part, want.Stream.Part+1, err)
	}
}

// checkOriginVector opens the origin and, with its key, the stream it
// names, which must read back as that stream's plaintext.
func checkOriginVector(t *testing.T, v blobVector) {
	dk, sealed := openBlobVector(t, v)
	o, err := OpenOrigin(dk, b64url.EncodeToString(sealed))
	if err != nil || o != vecOrigin {
		t.Fatalf("open: %+v, %v", o, err)
	}
	ct, err := os.ReadFile(filepath.Join("testdata", "vectors", "part3-three-segments.bin"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := o.DataKey()
	if err != nil {
		t.Fatal(err)
	}
	size := int64(2*SegmentSize + 1000)
	r, err := NewReader(bytes.NewReader(ct), key, o.Stream, size, 0, size)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, pattern(int(size))) {
		t.Fatalf("the origin's stream read back %d bytes, %v", len(got), err)
	}
	if _, err := OpenOrigin(&DataKey{oid: vecOID, aead: dk.aead}, b64url.EncodeToString(sealed)); !errors.Is(err, ErrAuth) {
		t.Errorf("origin opened for another oid: %v", err)
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
