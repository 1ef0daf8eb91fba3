package main

import (
	"reflect"
	"testing"
	"time"
)

func TestLFSSettings(t *testing.T) {
	c, err := parseConfig(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := lfsConfig{Listen: "127.0.0.1:7071", Bucket: "lfs", Namespace: "default", CacheTTL: time.Minute,
		MaxBlobSize: 5 << 30, DevKafka: "127.0.0.1:9092", KafkaMaxRequest: 64 << 20, KafkaMaxInFlight: 8}
	if c.LFS != want {
		t.Fatalf("defaults %+v", c.LFS)
	}
	c, err = parseConfig([]string{"--lfs", "--lfs-brokers", "a:9092, b:9092"}, env(map[string]string{
		"S3SEAL_LFS_BROKERS":           "ignored:1", // the flag wins
		"S3SEAL_LFS_ETCD_ENDPOINTS":    "http://e1:2379,http://e2:2379",
		"S3SEAL_LFS_BACKEND_CACHE_TTL": "5s",
		"S3SEAL_LFS_MAX_BLOB_SIZE":     "1048576",
		"S3SEAL_LFS_API_KEY":           "k",
		"S3SEAL_LFS_NAMESPACE":         "prod",
		"S3SEAL_LFS_BUCKET":            "blobs",
		"S3SEAL_LFS_LISTEN":            "127.0.0.1:8081",
		"S3SEAL_LFS_DEV_KAFKA":         "127.0.0.1:19092",
	}))
	if err != nil {
		t.Fatal(err)
	}
	l := c.LFS
	if !l.Enabled || !reflect.DeepEqual(splitList(l.Brokers), []string{"a:9092", "b:9092"}) ||
		!reflect.DeepEqual(splitList(l.EtcdEndpoints), []string{"http://e1:2379", "http://e2:2379"}) || l.CacheTTL != 5*time.Second ||
		l.MaxBlobSize != 1<<20 || l.APIKey != "k" || l.Namespace != "prod" || l.Bucket != "blobs" || l.Listen != "127.0.0.1:8081" ||
		l.DevKafka != "127.0.0.1:19092" {
		t.Fatalf("%+v", l)
	}
	for _, args := range [][]string{
		{"--lfs", "--lfs-namespace", "a/b"},
		{"--lfs", "--lfs-max-blob-size", "0"},
		{"--lfs", "--lfs-backend-cache-ttl", "0s"},
	} {
		if _, err := parseConfig(args, env(nil)); err == nil {
			t.Fatalf("%v accepted", args)
		}
	}
	// The API key on the command line is warned about like other secrets.
	c, _ = parseConfig([]string{"--lfs-api-key", "k"}, env(nil))
	if len(c.cmdlineSecrets) != 1 || c.cmdlineSecrets[0] != "lfs-api-key" {
		t.Fatalf("%v", c.cmdlineSecrets)
	}
}
