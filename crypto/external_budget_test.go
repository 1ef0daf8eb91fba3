package crypto

import (
	"context"
	"crypto/md5"
	"strings"
	"testing"
)

// TestExternalEnvelopeFitsS3Limit: an object sealed under an AWS KMS key
// (s3seal-kid "aws-kms:" + an 75-character ARN, s3seal-kms of 184 bytes,
// what AWS KMS answers for a 32-byte key), with the longest encryption
// context, a bucket key, and the user metadata s3seal accepts for it
// (MaxObjectMetaFor the wrap key's MetaOverhead), fits S3's 2 KB of user
// metadata, as FORMAT.md promises for every object s3seal writes.
func TestExternalEnvelopeFitsS3Limit(t *testing.T) {
	kid := strings.Repeat("k", 64)
	kr := testKeyring(t, kid, kid)
	dk := testDataKey(t, "kms s3 limit")
	env, err := kr.Wrap(context.Background(), dk, kid, testName, Binding{PlainSize: 5 << 40, PlainMD5: md5.Sum(nil),
		Checksums: map[string]string{"crc64nvme": "AAAAAAAAAAA="}})
	if err != nil {
		t.Fatal(err)
	}
	env.KeyID = "aws-kms:arn:aws:kms:eu-west-2:111122223333:key/b74389fe-bd76-48d7-a652-1690ac76af3a"
	env.SealedKey = make([]byte, 184)
	env.KMSContext, env.BucketKey = `{"k":"`+strings.Repeat("v", MaxKMSContext-8)+`"}`, true
	wk := &WrapKey{keyID: env.KeyID, sealed: env.SealedKey, kmsCtx: env.KMSContext, bucketKey: true, external: true}
	m := ObjectMeta{User: map[string]string{"pad": ""}}
	m.User["pad"] = strings.Repeat("x", MaxObjectMetaFor(wk.MetaOverhead())-m.EncodedSize())
	if env.SealedMeta, err = SealObjectMeta(dk, m); err != nil {
		t.Fatal(err)
	}
	total := 0
	for k, v := range env.Metadata() {
		total += len(k) + len(v)
	}
	if total > 2048 {
		t.Fatalf("an SSE-KMS object with the user metadata s3seal accepts has %d bytes of metadata at the store, over S3's 2048", total)
	}
}
