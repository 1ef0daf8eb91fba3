package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// What the Kafka listener's tests share: s3seal serve --lfs with
// --lfs-kafka-listen, its development Kafka (kfake) or given brokers,
// a consumer straight from the brokers, the streamed download of a blob
// and the check that the store holds none of a blob's plaintext.

// lfsKafka is a running s3seal with the LFS API and the Kafka listener.
type lfsKafka struct {
	p      *sealProc
	base   string // the LFS API, http://127.0.0.1:PORT
	broker string // the brokers' address (the development Kafka's by default)
	listen string // the Kafka listener, host:port
}

// startLFSKafka starts s3seal with --lfs, --lfs-kafka-listen on a free
// port and, unless o.Args names --lfs-brokers, its development Kafka on
// another; it returns once the listener accepts connections.
func startLFSKafka(t *testing.T, o sealOpts) *lfsKafka {
	t.Helper()
	k := &lfsKafka{listen: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
	for i, a := range o.Args {
		if a == "--lfs-brokers" && i+1 < len(o.Args) {
			k.broker = o.Args[i+1]
		}
	}
	if k.broker == "" {
		k.broker = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		o.Args = append(o.Args, "--lfs-dev-kafka", k.broker)
	}
	o.Args = append(o.Args, "--lfs-kafka-listen", k.listen)
	k.p, k.base = startLFS(t, o)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", k.listen, time.Second)
		if err == nil {
			c.Close()
			return k
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Kafka listener %s does not accept connections: %v\n%s", k.listen, err, k.p.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kafkaEnvelope is a record value that names a stored blob.
type kafkaEnvelope struct {
	KfsLFS          int               `json:"kfs_lfs"`
	Bucket          string            `json:"bucket"`
	Key             string            `json:"key"`
	Size            int64             `json:"size"`
	SHA256          string            `json:"sha256"`
	ContentType     string            `json:"content_type"`
	OriginalHeaders map[string]string `json:"original_headers"`
}

// consumeBroker reads n records of the topics straight from the brokers
// (never through the listener), within 30 s.
func (k *lfsKafka) consumeBroker(t *testing.T, n int, topics ...string) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.broker), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %v from the broker", len(out), n, topics)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// envelopeOf decodes a record's value as an envelope.
func envelopeOf(t *testing.T, r *kgo.Record) kafkaEnvelope {
	t.Helper()
	var env kafkaEnvelope
	if err := json.Unmarshal(r.Value, &env); err != nil || env.KfsLFS != 1 || env.Key == "" {
		t.Fatalf("%s/%d@%d: the value is no envelope (%v): %.300q", r.Topic, r.Partition, r.Offset, err, r.Value)
	}
	return env
}

// download streams a blob back through /lfs/download, its size and
// SHA-256 checked by s3seal.
func (k *lfsKafka) download(t *testing.T, env kafkaEnvelope) []byte {
	t.Helper()
	req := fmt.Sprintf(`{"bucket":%q,"key":%q,"mode":"stream","integrity":{"sha256":%q,"size":%d}}`, env.Bucket, env.Key, env.SHA256, env.Size)
	code, body := lfsPost(t, k.base+"/lfs/download", map[string]string{"Content-Type": "application/json"}, strings.NewReader(req))
	if code != 200 {
		t.Fatalf("download %s: %d %.300s", env.Key, code, body)
	}
	return body
}

// checkBlob checks that a record names blob as its envelope: size and
// SHA-256 right, no LFS_BLOB header left, and the blob downloads byte
// for byte.
func (k *lfsKafka) checkBlob(t *testing.T, r *kgo.Record, blob []byte) kafkaEnvelope {
	t.Helper()
	env := envelopeOf(t, r)
	sum := sha256.Sum256(blob)
	if env.Size != int64(len(blob)) || env.SHA256 != hex.EncodeToString(sum[:]) || env.Bucket != "lfs" {
		t.Errorf("%s key %s: envelope %+v for a blob of %d bytes", r.Topic, r.Key, env, len(blob))
	}
	for _, h := range r.Headers {
		if h.Key == "LFS_BLOB" {
			t.Errorf("%s key %s: LFS_BLOB header left on the record", r.Topic, r.Key)
		}
	}
	if got := k.download(t, env); !bytes.Equal(got, blob) {
		t.Errorf("%s key %s: the blob downloads as %d bytes that differ from the %d produced", r.Topic, r.Key, len(got), len(blob))
	}
	return env
}

// blobBytes returns n pseudo-random bytes for seed (no 64-byte window of
// one occurs in another or elsewhere by chance).
func blobBytes(seed uint64, n int) []byte { return patternBytes(seed+0x6b61, n) }

// plaintextWindow is the size of the windows looked for in the store.
const plaintextWindow = 64

// requireNoPlaintext fails the test when any file under dir holds a
// 64-byte window of any blob (plaintextIn), or when dir holds no file.
func requireNoPlaintext(t *testing.T, dir string, blobs [][]byte) {
	t.Helper()
	found, files, err := plaintextIn(dir, blobs)
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("no files under %s: where are the blobs?", dir)
	}
	for _, f := range found {
		t.Errorf("the store holds plaintext: %s", f)
	}
}

// plaintextIn names the files under dir that hold a 64-byte window of a
// blob, with where, and counts the files read. Every 64-byte-aligned
// chunk of each blob is hashed; a rolling hash runs over every file, and
// a hit is confirmed byte for byte. Any copy of at least 127 bytes of a
// blob contains an aligned chunk, so none goes unseen.
func plaintextIn(dir string, blobs [][]byte) (found []string, files int, err error) {
	type chunk struct {
		blob, off int
	}
	chunks := map[uint64]chunk{}
	for i, b := range blobs {
		for off := 0; off+plaintextWindow <= len(b); off += plaintextWindow {
			chunks[windowHash(b[off:off+plaintextWindow])] = chunk{i, off}
		}
	}
	// pow is base^(window-1), for taking the oldest byte out.
	pow := uint64(1)
	for range plaintextWindow - 1 {
		pow *= hashBase
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		if len(data) < plaintextWindow {
			return nil
		}
		h := windowHash(data[:plaintextWindow])
		for i := 0; ; i++ {
			if c, ok := chunks[h]; ok && bytes.Equal(data[i:i+plaintextWindow], blobs[c.blob][c.off:c.off+plaintextWindow]) {
				found = append(found, fmt.Sprintf("%s at offset %d: bytes %d..%d of blob %d", path, i, c.off, c.off+plaintextWindow, c.blob))
				return nil
			}
			if i+plaintextWindow >= len(data) {
				return nil
			}
			h = (h-uint64(data[i])*pow)*hashBase + uint64(data[i+plaintextWindow])
		}
	})
	return found, files, err
}

// TestPlaintextInFindsCopies: the check the Kafka listener's tests make
// of the store finds 127 bytes of a blob copied at any offset into a
// file, and nothing in files of other bytes.
func TestPlaintextInFindsCopies(t *testing.T) {
	t.Parallel()
	blobs := [][]byte{blobBytes(901, 5000), blobBytes(902, 70000)}
	for _, off := range []int{0, 1, 63, 64, 4000, 69000} {
		for _, at := range []int{0, 7, 1000} {
			b := blobs[1]
			if off < len(blobs[0])-127 && at == 7 {
				b = blobs[0]
			}
			if off+127 > len(b) {
				continue
			}
			dir := t.TempDir()
			data := append(append(blobBytes(903, at), b[off:off+127]...), blobBytes(904, 300)...)
			writeFile(t, dir, "sub/file", data)
			writeFile(t, dir, "other", blobBytes(905, 10000))
			found, files, err := plaintextIn(dir, blobs)
			if err != nil || files != 2 || len(found) != 1 || !strings.Contains(found[0], filepath.Join(dir, "sub", "file")) {
				t.Errorf("127 bytes from offset %d copied at %d: found %q in %d files (%v)", off, at, found, files, err)
			}
		}
	}
	dir := t.TempDir()
	writeFile(t, dir, "other", blobBytes(906, 100000))
	if found, _, err := plaintextIn(dir, blobs); err != nil || len(found) != 0 {
		t.Errorf("found %q (%v) in a file of other bytes", found, err)
	}
}

const hashBase = 1099511628211

func windowHash(b []byte) uint64 {
	var h uint64
	for _, c := range b {
		h = h*hashBase + uint64(c)
	}
	return h
}

// debianPython is Debian's python3, which python3-confluent-kafka is for
// (a python3 earlier on PATH, pyenv's, may lack it).
var debianPython = "/usr/bin/python3"

// requireConfluentKafka returns Debian's python3 once it imports
// confluent_kafka (librdkafka's Python client); without it the test fails
// under CI and is skipped elsewhere, naming the Debian package, as
// requireTool does.
func requireConfluentKafka(t testing.TB) string {
	t.Helper()
	out, err := exec.Command(debianPython, "-c", "import confluent_kafka").CombinedOutput()
	if err == nil {
		return debianPython
	}
	missing := fmt.Sprintf("%s cannot import confluent_kafka: %v: %s", debianPython, err, bytes.TrimSpace(out))
	if inCI() {
		t.Fatalf("%s (required under CI=true; scripts/test.sh installs Debian's python3-confluent-kafka)", missing)
	} else {
		t.Skipf("%s; install Debian's python3-confluent-kafka (see scripts/test.sh) to run this test", missing)
	}
	return ""
}
