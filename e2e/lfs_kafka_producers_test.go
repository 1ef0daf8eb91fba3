package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaCodecs are the record batch codecs every producer is run with.
var kafkaCodecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// TestLFSKafkaProducers: three real producers, idempotent, each with
// every codec, produce through s3seal's Kafka listener (s3seal serve --lfs
// --lfs-kafka-listen, its development Kafka behind): franz-go's kgo,
// kcat (librdkafka) and Python's confluent-kafka (librdkafka from
// Debian's python3). Each sends a blob of 1-2 MB marked LFS_BLOB with its
// SHA-256, and a plain record. Read straight from the broker, every blob
// record is an envelope whose blob /lfs/download streams back byte for
// byte, with no LFS_BLOB header left and its other headers kept; every
// plain record is as it was sent. kcat consuming through the listener
// (a consumer group over every topic: Fetch forwarded and merged; and a
// plain consumer of one topic) reads the same envelopes. The data dir
// holds no 64-byte window of any blob, and s3seal closed no client's
// connection.
func TestLFSKafkaProducers(t *testing.T) {
	t.Parallel()
	kcat := requireTool(t, "kcat")
	py := requireConfluentKafka(t)
	k := startLFSKafka(t, sealOpts{})
	dir := t.TempDir()

	type sent struct {
		topic, producer, codec string
		blob                   []byte
	}
	var all []sent
	seed := uint64(0)
	newBlob := func(producer, codec string) sent {
		seed++
		s := sent{topic: "lfs-" + producer + "-" + codec, producer: producer, codec: codec, blob: blobBytes(seed, 1<<20+int(seed)*37_000)}
		all = append(all, s)
		return s
	}

	// kgo: idempotent (its default), one batch holding the blob record
	// and the plain one.
	for _, codec := range kafkaCodecs {
		s := newBlob("kgo", codec)
		c := map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
			"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}[codec]
		cl, err := kgo.NewClient(kgo.SeedBrokers(k.listen), kgo.ProducerBatchCompression(c), kgo.ProducerBatchMaxBytes(16<<20),
			kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(s.blob)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res := cl.ProduceSync(ctx,
			&kgo.Record{Topic: s.topic, Key: []byte("blob"), Value: s.blob, Headers: []kgo.RecordHeader{
				{Key: "LFS_BLOB", Value: []byte(hex.EncodeToString(sum[:]))}, {Key: "content-type", Value: []byte("application/x-" + codec)}}},
			&kgo.Record{Topic: s.topic, Key: []byte("plain"), Value: []byte("plain record " + codec),
				Headers: []kgo.RecordHeader{{Key: "app", Value: []byte("kept")}}})
		cancel()
		cl.Close()
		if err := res.FirstErr(); err != nil {
			t.Fatalf("kgo %s: %v", codec, err)
		}
	}

	// kcat: the blob from a file with -H LFS_BLOB=<sha256>, then the
	// plain record from stdin, each with the codec and idempotence on.
	for _, codec := range kafkaCodecs {
		s := newBlob("kcat", codec)
		path := writeFile(t, dir, s.topic, s.blob)
		sum := sha256.Sum256(s.blob)
		common := []string{"-P", "-b", k.listen, "-t", s.topic, "-X", "enable.idempotence=true", "-X", "compression.codec=" + codec,
			"-X", "message.max.bytes=16777216"}
		runTool(t, nil, kcat, append(common, "-k", "blob", "-H", "LFS_BLOB="+hex.EncodeToString(sum[:]),
			"-H", "content-type=application/x-"+codec, path)...)
		plain := writeFile(t, dir, s.topic+".plain", []byte("plain record "+codec))
		runTool(t, nil, kcat, append(common, "-k", "plain", "-H", "app=kept", plain)...)
	}

	// confluent-kafka: one script, a producer per codec.
	script, err := filepath.Abs(filepath.Join("testdata", "lfs_kafka_produce.py"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{script, k.listen, "lfs-python-"}
	for _, codec := range kafkaCodecs {
		s := newBlob("python", codec)
		args = append(args, codec+"="+writeFile(t, dir, s.topic, s.blob))
	}
	if out, errOut, err := tryTool(t, cleanEnv([]string{"AWS_CA_BUNDLE"}), py, args...); err != nil {
		t.Fatalf("confluent-kafka producer: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}

	// Straight from the broker: an envelope and a plain record per topic.
	var topics []string
	byTopic := map[string]sent{}
	for _, s := range all {
		topics = append(topics, s.topic)
		byTopic[s.topic] = s
	}
	recs := k.consumeBroker(t, 2*len(all), topics...)
	envelopes := map[string]kafkaEnvelope{}
	for _, r := range recs {
		s := byTopic[r.Topic]
		switch string(r.Key) {
		case "blob":
			env := k.checkBlob(t, r, s.blob)
			if env.ContentType != "application/x-"+s.codec || env.OriginalHeaders["content-type"] != "application/x-"+s.codec {
				t.Errorf("%s: envelope content type %q, original headers %v", r.Topic, env.ContentType, env.OriginalHeaders)
			}
			if hs := headerMap(r); hs["content-type"] != "application/x-"+s.codec || len(hs) != 1 {
				t.Errorf("%s: blob record headers %v, want content-type only", r.Topic, hs)
			}
			envelopes[r.Topic] = env
		case "plain":
			if string(r.Value) != "plain record "+s.codec || fmt.Sprint(headerMap(r)) != "map[app:kept]" {
				t.Errorf("%s: plain record %q %v changed on its way", r.Topic, r.Value, headerMap(r))
			}
		default:
			t.Errorf("%s: unexpected record key %q", r.Topic, r.Key)
		}
	}
	if len(envelopes) != len(all) {
		t.Fatalf("%d envelopes for %d blobs", len(envelopes), len(all))
	}

	// Through the listener: kcat in a consumer group over every topic.
	out := runTool(t, nil, kcat, append([]string{"-b", k.listen, "-G", "lfs-e2e-readers", "-o", "beginning", "-e",
		"-X", "topic.metadata.refresh.interval.ms=1000", "-f", "%t %k %s\n"}, topics...)...)
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.SplitN(line, " ", 3); len(f) == 3 && f[1] == "blob" {
			got[f[0]] = f[2]
		}
	}
	for _, s := range all {
		var env kafkaEnvelope
		if err := json.Unmarshal([]byte(got[s.topic]), &env); err != nil || env.Key != envelopes[s.topic].Key {
			t.Errorf("%s through the listener: %q, want the envelope naming %s", s.topic, got[s.topic], envelopes[s.topic].Key)
		}
	}

	// And a plain consumer (no group) of one topic through the listener.
	out = runTool(t, nil, kcat, "-C", "-b", k.listen, "-t", "lfs-python-zstd", "-o", "beginning", "-e", "-f", "%k %s\n")
	if !strings.Contains(out, `blob {"kfs_lfs":1`) || !strings.Contains(out, envelopes["lfs-python-zstd"].Key) {
		t.Errorf("kcat -C through the listener read %q, want the envelope naming %s", out, envelopes["lfs-python-zstd"].Key)
	}
	if !strings.Contains(out, "plain plain record zstd") {
		t.Errorf("kcat -C through the listener read %q, want the plain record", out)
	}

	blobs := make([][]byte, len(all))
	for i, s := range all {
		blobs[i] = s.blob
	}
	requireNoPlaintext(t, k.p.DataDir, blobs)
	if log := k.p.Log(); strings.Contains(log, "closing the connection") {
		t.Errorf("s3seal closed a client's connection:\n%s", grepLines(log, "closing the connection"))
	}
}

// headerMap is a record's headers by key.
func headerMap(r *kgo.Record) map[string]string {
	m := map[string]string{}
	for _, h := range r.Headers {
		m[h.Key] = string(h.Value)
	}
	return m
}

// TestLFSKafkaTransaction: a transactional producer (confluent-kafka)
// through the listener commits one blob and aborts another. A
// read_committed consumer of the broker sees only the committed record,
// an envelope whose blob downloads byte for byte; the aborted one's blob
// is deleted from the store once the abort is answered.
func TestLFSKafkaTransaction(t *testing.T) {
	t.Parallel()
	py := requireConfluentKafka(t)
	k := startLFSKafka(t, sealOpts{})
	dir := t.TempDir()
	committed, aborted := blobBytes(701, 1<<20), blobBytes(702, 600_000)
	script, err := filepath.Abs(filepath.Join("testdata", "lfs_kafka_transaction.py"))
	if err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := tryTool(t, cleanEnv([]string{"AWS_CA_BUNDLE"}), py, script, k.listen, "lfs-txn",
		writeFile(t, dir, "committed", committed), writeFile(t, dir, "aborted", aborted)); err != nil {
		t.Fatalf("confluent-kafka transactions: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	// Read committed: the committed record, then nothing but the
	// transaction markers up to the end.
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.broker), kgo.ConsumeTopics("lfs-txn"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	poll := func(d time.Duration, until int) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		for ctx.Err() == nil && len(recs) < until {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { recs = append(recs, r) })
		}
	}
	poll(20*time.Second, 1)
	poll(time.Second, 2) // and no other
	if len(recs) != 1 || string(recs[0].Key) != "committed" {
		t.Fatalf("read committed: %d records %v, want the committed one", len(recs), recs)
	}
	k.checkBlob(t, recs[0], committed)
	// The aborted record is in the log (read uncommitted), its blob gone.
	var abortedEnv *kafkaEnvelope
	for _, r := range k.consumeBroker(t, 2, "lfs-txn") {
		if string(r.Key) == "aborted" {
			env := envelopeOf(t, r)
			abortedEnv = &env
		}
	}
	if abortedEnv == nil {
		t.Fatal("no aborted record in the log")
	}
	req := fmt.Sprintf(`{"bucket":%q,"key":%q,"mode":"stream"}`, abortedEnv.Bucket, abortedEnv.Key)
	if code, body := lfsPost(t, k.base+"/lfs/download", nil, strings.NewReader(req)); code != 404 {
		t.Errorf("the aborted transaction's blob: download %d %.200s, want 404", code, body)
	}
	requireNoPlaintext(t, k.p.DataDir, [][]byte{committed, aborted})
}
