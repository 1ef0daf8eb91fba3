package e2e

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The refusals a producer sees from the Kafka listener, a test for each
// row of docs/LFS.md's table ("What a producer sees when s3seal refuses
// a record"), each with kcat (librdkafka's words) and kgo (the Kafka error).

// refusalSetup is one s3seal for the refusals: real brokers (kfake) that
// do not create topics, with topics "events" and "secret"; SASL
// (SCRAM-SHA-256, PLAIN) with the credential "app", whose kafka_topics
// grant the topics named events*, not "secret"; blobs of at most 1 MB; requests of at most 2 MiB.
type refusalSetup struct {
	*lfsKafka
	kcat string
}

const (
	refusalUser   = "app"
	refusalSecret = "app-secret-key"
	refusalBlob   = 1000000 // --lfs-max-blob-size
	refusalMaxReq = 2 << 20 // --lfs-kafka-max-request
)

func startRefusalSetup(t *testing.T) *refusalSetup {
	t.Helper()
	kcat := requireTool(t, "kcat")
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events", "secret"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	creds := writeJSON(t, t.TempDir(), "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": refusalUser, "secret_key": refusalSecret, "read": []string{"*", "lfs"}, "write": []string{"*"}, "kafka_topics": []string{"events*"}}}})
	k := startLFSKafka(t, sealOpts{CredentialsFile: creds, AccessKey: refusalUser, SecretKey: refusalSecret, Args: []string{
		"--lfs-brokers", kc.ListenAddrs()[0], "--lfs-kafka-listen-sasl", "SCRAM-SHA-256,PLAIN",
		"--lfs-max-blob-size", "1000000", "--lfs-kafka-max-request", "2097152"}})
	return &refusalSetup{lfsKafka: k, kcat: kcat}
}

// kcatProduce produces blob from a file with kcat as user (SCRAM-SHA-256)
// to topic, with LFS_BLOB set to sum, idempotence on and message.max.bytes
// raised; it returns kcat's stderr and whether it failed.
func (s *refusalSetup) kcatProduce(t *testing.T, user, pass, topic, sum string, blob []byte, extra ...string) (string, bool) {
	t.Helper()
	path := writeFile(t, t.TempDir(), "blob", blob)
	args := append([]string{"-P", "-b", s.listen, "-t", topic, "-H", "LFS_BLOB=" + sum,
		"-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=SCRAM-SHA-256",
		"-X", "sasl.username=" + user, "-X", "sasl.password=" + pass,
		"-X", "enable.idempotence=true", "-X", "message.max.bytes=16777216", "-X", "message.timeout.ms=5000"}, extra...)
	_, errOut, err := tryTool(t, nil, s.kcat, append(args, path)...)
	return errOut, err != nil
}

// kgoProduce produces blob with kgo as app (SCRAM-SHA-256) to topic,
// LFS_BLOB set to sum, and returns the record's error.
func (s *refusalSetup) kgoProduce(t *testing.T, topic, sum string, blob []byte, opts ...kgo.Opt) error {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(s.listen), kgo.ProducerBatchMaxBytes(16 << 20),
		kgo.SASL(scram.Auth{User: refusalUser, Pass: refusalSecret}.AsSha256Mechanism()),
		kgo.RecordDeliveryTimeout(5 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: blob, Headers: []kgo.RecordHeader{{Key: "LFS_BLOB", Value: []byte(sum)}}}).FirstErr()
}

// TestLFSKafkaRefusals: each refusal of docs/LFS.md's table that one s3seal
// can show (all but the store down, below), as kcat and kgo see it:
// a topic the brokers do not have and do not create, a blob over
// --lfs-max-blob-size, a request over --lfs-kafka-max-request, a topic the
// credential's kafka_topics do not grant, a wrong SASL password, a
// checksum that does not match and an empty blob. None of the refused
// blobs is left in the store.
func TestLFSKafkaRefusals(t *testing.T) {
	t.Parallel()
	s := startRefusalSetup(t)
	small := blobBytes(501, 300_000)

	// Baseline: app produces to events through SASL, with kcat and kgo.
	if errOut, failed := s.kcatProduce(t, refusalUser, refusalSecret, "events", sha256Hex(small), small); failed {
		t.Fatalf("kcat produce to events: %s", errOut)
	}
	if err := s.kgoProduce(t, "events", sha256Hex(small), small); err != nil {
		t.Fatalf("kgo produce to events: %v", err)
	}
	// kcatSays runs kcat and checks that it failed saying want.
	kcatSays := func(t *testing.T, want string, user, pass, topic, sum string, blob []byte, extra ...string) {
		t.Helper()
		errOut, failed := s.kcatProduce(t, user, pass, topic, sum, blob, extra...)
		if !failed || !strings.Contains(errOut, want) {
			t.Errorf("kcat: failed %v, said\n%s\nwant %q", failed, errOut, want)
		}
	}
	kgoGets := func(t *testing.T, want error, err error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("kgo: %v, want %v", err, want)
		}
	}

	t.Run("unknown topic", func(t *testing.T) {
		// librdkafka waits topic.metadata.propagation.max.ms (30 s) for a
		// topic to appear before it fails the record.
		kcatSays(t, "Delivery failed for message: Broker: Unknown topic or partition", refusalUser, refusalSecret, "events-nosuch",
			sha256Hex(small), small, "-X", "topic.metadata.propagation.max.ms=1000")
		kgoGets(t, kerr.UnknownTopicOrPartition, s.kgoProduce(t, "events-nosuch", sha256Hex(small), small, kgo.RecordDeliveryTimeout(2*time.Second)))
	})
	t.Run("blob over --lfs-max-blob-size", func(t *testing.T) {
		big := blobBytes(502, refusalBlob+1)
		kcatSays(t, "Delivery failed for message: Broker: Message size too large", refusalUser, refusalSecret, "events", sha256Hex(big), big)
		kgoGets(t, kerr.MessageTooLarge, s.kgoProduce(t, "events", sha256Hex(big), big))
	})
	t.Run("request over --lfs-kafka-max-request", func(t *testing.T) {
		// s3seal closes the connection, as a broker past
		// socket.request.max.bytes does: kcat gives up, taking it for a
		// broker gone; kgo retries, and fails the record once it may.
		big := blobBytes(503, refusalMaxReq+1)
		kcatSays(t, "Local: Broker transport failure", refusalUser, refusalSecret, "events", sha256Hex(big), big)
		if err := s.kgoProduce(t, "events", sha256Hex(big), big, kgo.DisableIdempotentWrite(), kgo.RecordRetries(2)); err == nil {
			t.Error("kgo: a request over --lfs-kafka-max-request was taken")
		}
		// A producer whose own bound is --lfs-kafka-max-request refuses
		// the record itself (an idempotent one would retry it forever).
		kgoGets(t, kerr.MessageTooLarge, s.kgoProduce(t, "events", sha256Hex(big), big, kgo.ProducerBatchMaxBytes(refusalMaxReq)))
		if !strings.Contains(s.p.Log(), "request size out of bounds; closing the connection") {
			t.Error("s3seal's log does not say why it closed the connection")
		}
	})
	t.Run("topic not granted", func(t *testing.T) {
		kcatSays(t, "Delivery failed for message: Broker: Topic authorization failed", refusalUser, refusalSecret, "secret", sha256Hex(small), small)
		kgoGets(t, kerr.TopicAuthorizationFailed, s.kgoProduce(t, "secret", sha256Hex(small), small))
	})
	t.Run("wrong password", func(t *testing.T) {
		kcatSays(t, "Local: Authentication failure", refusalUser, "wrong", "events", sha256Hex(small), small)
		kcatSays(t, "Authentication failed: invalid credentials", "nobody", refusalSecret, "events", sha256Hex(small), small)
	})
	t.Run("checksum mismatch", func(t *testing.T) {
		kcatSays(t, "Delivery failed for message: Broker: Broker failed to validate record", refusalUser, refusalSecret, "events",
			strings.Repeat("0", 64), small)
		kgoGets(t, kerr.InvalidRecord, s.kgoProduce(t, "events", strings.Repeat("0", 64), small))
		if !strings.Contains(s.p.Log(), "the LFS blob does not match its sha256 checksum") {
			t.Error("s3seal's log does not name the mismatch")
		}
	})
	t.Run("empty blob", func(t *testing.T) {
		kgoGets(t, kerr.InvalidRecord, s.kgoProduce(t, "events", "", nil))
	})

	// Only the two baseline blobs are in the store.
	out, err := sdkFor(t, s.p).ListObjectsV2(ctxT(t), &s3.ListObjectsV2Input{Bucket: aws.String("lfs")})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		if !strings.HasPrefix(aws.ToString(o.Key), ".s3seal/") {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	if len(keys) != 2 {
		t.Errorf("the store holds %d blobs, want the 2 produced: %v", len(keys), keys)
	}
}

// TestLFSKafkaStoreDown: with the object store down (moto_server killed),
// a produce of a marked record is answered KAFKA_STORAGE_ERROR, which
// producers retry until their delivery timeout: kcat without retries
// says "Disk error", an idempotent kcat retries (s3seal logs each try)
// then times out, kgo times the record out, or (not idempotent, no
// retries) returns KAFKA_STORAGE_ERROR.
func TestLFSKafkaStoreDown(t *testing.T) {
	t.Parallel()
	kcat := requireTool(t, "kcat")
	m := startMoto(t)
	k := startLFSKafka(t, sealOpts{Backend: m, Args: []string{"--part-retry-attempts", "1"}})
	blob := blobBytes(601, 300_000)
	path := writeFile(t, t.TempDir(), "blob", blob)
	args := []string{"-P", "-b", k.listen, "-t", "events", "-H", "LFS_BLOB=" + sha256Hex(blob), "-X", "message.max.bytes=16777216"}
	runTool(t, nil, kcat, append(args, path)...) // the store up: stored

	p, err := os.FindProcess(m.PID)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(m.Endpoint, "http://"), time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("moto_server still answers after SIGKILL")
		}
	}

	_, errOut, err := tryTool(t, nil, kcat, append(args, "-X", "retries=0", path)...)
	if want := "Delivery failed for message: Broker: Disk error when trying to access log file on disk"; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("kcat, retries=0: %v\n%s\nwant %q", err, errOut, want)
	}
	before := strings.Count(k.p.Log(), "error=\"KAFKA_STORAGE_ERROR")
	_, errOut, err = tryTool(t, nil, kcat, append(args, "-X", "enable.idempotence=true", "-X", "message.timeout.ms=4000", path)...)
	if err == nil || !strings.Contains(errOut, "Local: Timed out") && !strings.Contains(errOut, "Local: Message timed out") {
		t.Errorf("kcat, idempotent: %v\n%s\nwant a time-out", err, errOut)
	}
	if tries := strings.Count(k.p.Log(), "error=\"KAFKA_STORAGE_ERROR") - before; tries < 2 {
		t.Errorf("the idempotent kcat tried %d times, want it to retry", tries)
	}

	produce := func(opts ...kgo.Opt) error {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(k.listen), kgo.ProducerBatchMaxBytes(16 << 20),
			kgo.RecordDeliveryTimeout(2 * time.Second)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return cl.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: blob, Headers: []kgo.RecordHeader{{Key: "LFS_BLOB"}}}).FirstErr()
	}
	if err := produce(); !errors.Is(err, kgo.ErrRecordTimeout) {
		t.Errorf("kgo, idempotent: %v, want %v", err, kgo.ErrRecordTimeout)
	}
	if err := produce(kgo.DisableIdempotentWrite(), kgo.RecordRetries(0), kgo.RecordDeliveryTimeout(0)); !errors.Is(err, kerr.KafkaStorageError) {
		t.Errorf("kgo, no retries: %v, want KAFKA_STORAGE_ERROR", err)
	}
}
