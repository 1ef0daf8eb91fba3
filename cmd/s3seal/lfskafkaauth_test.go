package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/s3seal/s3seal/internal/kafkatest"
)

// waitLFS returns the LFS listener's address from serve's log.
func waitLFS(t *testing.T, log *syncBuffer) string {
	t.Helper()
	re := regexp.MustCompile(`LFS API listening on http://([0-9.:]+)`)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(log.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the LFS API did not start:\n%s", log.String())
		}
	}
}

func writeFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// serve --lfs toward a broker that requires mutual TLS and SCRAM: the
// flags, the password from a file, and a produce that lands.
func TestLFSKafkaTLSAndSASL(t *testing.T) {
	f := kafkatest.NewTLS(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "secure"), kfake.TLS(f.ServerConfig(true)),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "lfs", "pw-512"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seen := kafkatest.WatchProduce(c)
	_, _, log := startServeWithLog(t, "--lfs", "--lfs-listen", "127.0.0.1:0", "--lfs-brokers", c.ListenAddrs()[0],
		"--lfs-kafka-tls-ca-file", f.CAFile, "--lfs-kafka-tls-cert-file", f.ClientCertFile, "--lfs-kafka-tls-key-file", f.ClientKeyFile,
		"--lfs-kafka-tls-server-name", "kafka.test",
		"--lfs-kafka-sasl-mechanism", "scram-sha-512", "--lfs-kafka-sasl-user", "lfs",
		"--lfs-kafka-sasl-password-file", writeFile(t, "pw-512\n", 0o600))
	addr := waitLFS(t, log)
	if code, body := lfsCall(t, "POST", "http://"+addr+"/lfs/produce", "secure", "blob over TLS"); code != 200 {
		t.Fatalf("produce: %d %s\n%s", code, body, log.String())
	}
	if !strings.Contains(log.String(), "kafka=\"TLS, SASL SCRAM-SHA-512\"") {
		t.Fatalf("start log does not name TLS and SASL:\n%s", log.String())
	}
	if len(seen.Nodes()) != 1 {
		t.Fatalf("produce requests reached nodes %v", seen.Nodes())
	}
}

// The password from S3SEAL_LFS_KAFKA_SASL_PASSWORD or a private file; on
// the command line it is warned about like every secret.
func TestLFSKafkaSASLPasswordSources(t *testing.T) {
	base := []string{"--lfs", "--lfs-brokers", "k:9092", "--lfs-kafka-sasl-mechanism", "PLAIN", "--lfs-kafka-sasl-user", "u"}
	c, err := parseConfig(base, env(map[string]string{"S3SEAL_LFS_KAFKA_SASL_PASSWORD": "from-env"}))
	if err != nil || c.LFS.KafkaSASLPassword != "from-env" || len(c.cmdlineSecrets) != 0 {
		t.Fatalf("from the environment: %v %+v", err, c)
	}
	c, err = parseConfig(append(base, "--lfs-kafka-sasl-password-file", writeFile(t, "from-file\n", 0o600)), env(nil))
	if err != nil || c.LFS.KafkaSASLPassword != "from-file" {
		t.Fatalf("from a file: %v", err)
	}
	open := writeFile(t, "pw", 0o644)
	if _, err := parseConfig(append(base, "--lfs-kafka-sasl-password-file", open), env(nil)); err == nil ||
		!strings.Contains(err.Error(), "--lfs-kafka-sasl-password-file") || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a file others may read: %v", err)
	}
	c, err = parseConfig(append(base, "--lfs-kafka-sasl-password", "on-cmdline"), env(nil))
	if err != nil || !slices.Equal(c.cmdlineSecrets, []string{"lfs-kafka-sasl-password"}) {
		t.Fatalf("on the command line: %v %v", err, c.cmdlineSecrets)
	}
	var log bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.DataDir, c.Listen = t.TempDir(), "127.0.0.1:0"
	_ = serve(ctx, c, &log)
	if !strings.Contains(log.String(), "S3SEAL_LFS_KAFKA_SASL_PASSWORD or --lfs-kafka-sasl-password-file") {
		t.Fatalf("no warning about the password on the command line:\n%s", log.String())
	}
}

// Bad settings are refused at start, naming the flag and the value.
func TestLFSKafkaSettingsErrors(t *testing.T) {
	f := kafkatest.NewTLS(t)
	notPEM := writeFile(t, "not a certificate", 0o644)
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{[]string{"--lfs-kafka-tls"}, nil, []string{"--lfs-brokers or --lfs-etcd-endpoints"}},
		{[]string{"--lfs-brokers", "k:1", "--lfs-kafka-tls-ca-file", notPEM}, nil, []string{"--lfs-kafka-tls-ca-file " + notPEM, "no PEM certificate"}},
		{[]string{"--lfs-brokers", "k:1"}, map[string]string{"S3SEAL_LFS_KAFKA_TLS_CA_FILE": "/nonexistent"}, []string{"S3SEAL_LFS_KAFKA_TLS_CA_FILE", "/nonexistent"}},
		{[]string{"--lfs-brokers", "k:1", "--lfs-kafka-tls-cert-file", f.ClientCertFile}, nil, []string{"--lfs-kafka-tls-cert-file and --lfs-kafka-tls-key-file go together"}},
		{[]string{"--lfs-brokers", "k:1", "--lfs-kafka-tls-cert-file", f.ClientCertFile, "--lfs-kafka-tls-key-file", f.KeyFile}, nil, []string{"--lfs-kafka-tls-cert-file " + f.ClientCertFile, f.KeyFile}},
		{[]string{"--lfs-brokers", "k:1", "--lfs-kafka-sasl-user", "u"}, nil, []string{"--lfs-kafka-sasl-mechanism is needed"}},
		{[]string{"--lfs-brokers", "k:1", "--lfs-kafka-sasl-mechanism", "PLAIN"}, nil, []string{"--lfs-kafka-sasl-mechanism PLAIN needs --lfs-kafka-sasl-user"}},
		{[]string{"--lfs-brokers", "k:1", "--lfs-kafka-sasl-mechanism", "PLAIN", "--lfs-kafka-sasl-user", "u"}, nil, []string{"needs a password"}},
		{[]string{"--lfs-brokers", "k:1", "--lfs-kafka-sasl-mechanism", "GSSAPI", "--lfs-kafka-sasl-user", "u"},
			map[string]string{"S3SEAL_LFS_KAFKA_SASL_PASSWORD": "p"}, []string{"--lfs-kafka-sasl-mechanism", `"GSSAPI"`, "SCRAM-SHA-512"}},
	} {
		_, err := parseConfig(append([]string{"--lfs"}, tc.args...), env(tc.env))
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v %v: %v, want it to name %q", tc.args, tc.env, err, w)
			}
		}
	}
}

// SASL PLAIN without TLS sends the password in clear: serve warns, and
// still produces.
func TestLFSKafkaPlainWithoutTLSWarns(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"), kfake.EnableSASL(), kfake.Superuser("PLAIN", "lfs", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _, log := startServeWithLog(t, "--lfs", "--lfs-listen", "127.0.0.1:0", "--lfs-brokers", c.ListenAddrs()[0],
		"--lfs-kafka-sasl-mechanism", "PLAIN", "--lfs-kafka-sasl-user", "lfs", "--lfs-kafka-sasl-password-file", writeFile(t, "pw", 0o600))
	addr := waitLFS(t, log)
	if code, body := lfsCall(t, "POST", "http://"+addr+"/lfs/produce", "t", "blob"); code != 200 {
		t.Fatalf("produce: %d %s", code, body)
	}
	if !strings.Contains(log.String(), "SASL PLAIN without TLS sends the Kafka password in clear") {
		t.Fatalf("no warning:\n%s", log.String())
	}
}
