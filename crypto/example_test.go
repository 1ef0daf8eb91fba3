package crypto_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/s3seal/s3seal/crypto"
)

// Example seals an object, stores its envelope as metadata, and reads a
// range of it back.
func Example() {
	kek, _ := crypto.GenerateKey()
	kr, err := crypto.NewKeyring("k1", map[string][]byte{"k1": kek})
	if err != nil {
		log.Fatal(err)
	}

	// PUT: a fresh data key per object; seal the body, wrap the key.
	plain := []byte(strings.Repeat("s3seal ", 20000)) // 140000 bytes, 3 segments
	dk, err := crypto.NewDataKey()
	if err != nil {
		log.Fatal(err)
	}
	var stored bytes.Buffer
	w := crypto.NewWriter(&stored, dk, crypto.Stream{})
	w.Write(plain)
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	name := crypto.Name{Bucket: "photos", Key: "cat.txt"}
	env, err := kr.Wrap(context.Background(), dk, kr.Primary(), name, crypto.Binding{PlainSize: int64(len(plain)), PlainMD5: md5.Sum(plain)})
	if err != nil {
		log.Fatal(err)
	}
	// What the client wrote beside the bytes is sealed with the data key too.
	if env.SealedMeta, err = crypto.SealObjectMeta(dk, crypto.ObjectMeta{ContentType: "text/plain"}); err != nil {
		log.Fatal(err)
	}
	meta := env.Metadata()
	fmt.Println("stored:", stored.Len(), "bytes =", crypto.CiphertextSize(int64(len(plain))))

	// GET Range: bytes=70000-70012.
	env2, encrypted, err := crypto.ParseMetadata(meta)
	if err != nil || !encrypted {
		log.Fatal(err)
	}
	dk2, b, err := kr.Unwrap(context.Background(), env2, name) // authenticates name, size and MD5 too
	if err != nil {
		log.Fatal(err)
	}
	om, err := crypto.OpenObjectMeta(dk2, env2.SealedMeta)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("Content-Type:", om.ContentType)
	size, off, length := b.PlainSize, int64(70000), int64(13)
	cOff, cLen := crypto.CipherRange(size, off, length)
	fmt.Println("fetch ciphertext bytes", cOff, "to", cOff+cLen-1)
	r, err := crypto.NewReader(bytes.NewReader(stored.Bytes()[cOff:cOff+cLen]), dk2, crypto.Stream{}, size, off, length)
	if err != nil {
		log.Fatal(err)
	}
	got, err := io.ReadAll(r)
	fmt.Printf("%q %v\n", got, err)
	// Output:
	// stored: 140084 bytes = 140084
	// Content-Type: text/plain
	// fetch ciphertext bytes 65564 to 131127
	// "s3seal s3seal" <nil>
}
