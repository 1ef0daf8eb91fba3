package s3api

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func hexSHA(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func hmacOf(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// streamSigner continues a request's signature chain over aws-chunked
// chunks and the trailer, for hand-made bodies.
type streamSigner struct {
	key         []byte
	date, scope string
	prev        string
}

func newStreamSigner(sk string, at time.Time, seed string) *streamSigner {
	day := at.Format("20060102")
	k := hmacOf([]byte("AWS4"+sk), day)
	for _, s := range []string{"us-east-1", "s3", "aws4_request"} {
		k = hmacOf(k, s)
	}
	return &streamSigner{key: k, date: at.Format("20060102T150405Z"), scope: day + "/us-east-1/s3/aws4_request", prev: seed}
}

func (s *streamSigner) chunk(data []byte) string {
	sts := strings.Join([]string{"AWS4-HMAC-SHA256-PAYLOAD", s.date, s.scope, s.prev, hexSHA(nil), hexSHA(data)}, "\n")
	s.prev = hex.EncodeToString(hmacOf(s.key, sts))
	return s.prev
}

func (s *streamSigner) trailer(canonical string) string {
	sts := strings.Join([]string{"AWS4-HMAC-SHA256-TRAILER", s.date, s.scope, s.prev, hexSHA([]byte(canonical))}, "\n")
	return hex.EncodeToString(hmacOf(s.key, sts))
}

// cutUpload is one hand-made PUT: its signed header block and full body.
type cutUpload struct {
	head []string // request line and headers, Content-Length excluded
	body []byte
	// clSigned: Content-Length is among the signed headers (so it must be
	// sent as len(body), and a cut body can only end by cutting the
	// connection).
	clSigned bool
}

// newCutUpload signs a PUT of data to path in payload mode mode (a literal
// SHA-256 is "sha256") and encodes its body.
func newCutUpload(t *testing.T, host, path, mode string, data []byte, clSigned bool) cutUpload {
	t.Helper()
	now := time.Now().UTC()
	hash := mode
	if mode == "sha256" {
		hash = hexSHA(data)
	}
	streaming := strings.HasPrefix(mode, "STREAMING-")
	signedChunks := mode == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" || mode == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	withTrailer := strings.HasSuffix(mode, "-TRAILER")
	req, _ := http.NewRequest(http.MethodPut, "http://"+host+path, nil)
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if streaming {
		req.Header.Set("Content-Encoding", "aws-chunked")
		req.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(len(data)))
	}
	if withTrailer {
		req.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
	}
	body := data
	var ss *streamSigner
	build := func() {
		if !streaming {
			return
		}
		var b bytes.Buffer
		for _, c := range [][]byte{data, nil} {
			fmt.Fprintf(&b, "%x", len(c))
			if ss != nil {
				b.WriteString(";chunk-signature=" + ss.chunk(c))
			}
			b.WriteString("\r\n")
			if len(c) > 0 {
				b.Write(c)
				b.WriteString("\r\n")
			}
		}
		if withTrailer {
			var sum [4]byte
			binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(data))
			line := "x-amz-checksum-crc32:" + base64.StdEncoding.EncodeToString(sum[:])
			b.WriteString(line + "\r\n")
			if ss != nil {
				b.WriteString("x-amz-trailer-signature:" + ss.trailer(line+"\n") + "\r\n")
			}
		}
		b.WriteString("\r\n")
		body = b.Bytes()
	}
	if signedChunks {
		ss = newStreamSigner("x", now, "seed")
	}
	build() // with a throw-away chain: only the length matters here
	if clSigned {
		req.ContentLength = int64(len(body))
	}
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"},
		req, hash, "s3", "us-east-1", now); err != nil {
		t.Fatal(err)
	}
	auth := req.Header.Get("Authorization")
	if signedChunks {
		ss = newStreamSigner("sk", now, auth[strings.LastIndex(auth, "Signature=")+len("Signature="):])
	}
	build()
	if (strings.Contains(auth, "=content-length;") || strings.Contains(auth, ";content-length;")) != clSigned {
		t.Fatalf("content-length signed: %v, want %v (%s)", !clSigned, clSigned, auth)
	}
	head := []string{"PUT " + path + " HTTP/1.1", "Host: " + host}
	for k, vs := range req.Header {
		for _, v := range vs {
			head = append(head, k+": "+v)
		}
	}
	return cutUpload{head: head, body: body, clSigned: clSigned}
}

// send writes the request with the first cut bytes of the body and
// Content-Length cl and returns the response. A body shorter than cl ends
// the way a client that went away ends it: the sending side is closed.
func (u cutUpload) send(t *testing.T, addr string, cut, cl int) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	msg := strings.Join(append(slices.Clone(u.head), "Connection: close", "Content-Length: "+strconv.Itoa(cl)), "\r\n") + "\r\n\r\n"
	if _, err := io.WriteString(conn, msg); err != nil {
		t.Fatal(err)
	}
	_, _ = conn.Write(u.body[:cut])
	if cut < cl {
		_ = conn.(*net.TCPConn).CloseWrite()
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response to a body cut at %d (Content-Length %d): %v", cut, cl, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// cutPoints returns the offsets to cut a body at: inside the chunk header,
// inside the data, right after it, between data and CRLF, before and
// inside the final chunk header, before and inside the trailer, before and
// inside the closing CRLF. A plain body is cut at its start, middle, end-1.
func cutPoints(body []byte, streaming bool) []int {
	if !streaming {
		return []int{0, len(body) / 2, len(body) - 1}
	}
	hdr := bytes.Index(body, []byte("\r\n")) + 2
	const n = 16 // the data chunk's size
	final := hdr + n + 2
	finalEnd := final + bytes.Index(body[final:], []byte("\r\n")) + 2
	pts := []int{0, 3, hdr - 1, hdr, hdr + n/2, hdr + n, hdr + n + 1, final, final + 1, finalEnd - 1, finalEnd, finalEnd + 10, len(body) - 2, len(body) - 1}
	slices.Sort(pts)
	pts = slices.Compact(pts)
	return slices.DeleteFunc(pts, func(p int) bool { return p >= len(body) })
}

// TestCutBodiesAreRefused sends a PUT in every payload mode with its body
// cut at every structural point: with Content-Length unsigned and set to
// the cut length, and with Content-Length signed and the connection cut
// short of it. Each must be refused with 400 IncompleteBody (a literal
// SHA-256 with a shorter Content-Length: XAmzContentSHA256Mismatch) and
// nothing stored; the whole bodies (the controls) are stored.
func TestCutBodiesAreRefused(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: SingleCredential("ak", "sk")})
	u, _ := url.Parse(srv.URL)
	ctx := context.Background()
	c := sdkClient(srv.URL, "ak", "sk")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("cut")}); err != nil {
		t.Fatal(err)
	}
	data := []byte("0123456789abcdef") // one 16-byte chunk
	modes := []string{"sha256", "UNSIGNED-PAYLOAD", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
		"STREAMING-UNSIGNED-PAYLOAD-TRAILER", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"}
	stored := func(key string) bool {
		_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("cut"), Key: aws.String(key)})
		if err != nil && apiCode(err) != "NotFound" {
			t.Fatalf("HEAD %s: %v", key, err)
		}
		return err == nil
	}
	for _, mode := range modes {
		streaming := strings.HasPrefix(mode, "STREAMING-")
		for _, clSigned := range []bool{false, true} {
			name := fmt.Sprintf("%s/content-length-signed=%v", mode, clSigned)
			t.Run(name, func(t *testing.T) {
				key := fmt.Sprintf("ok-%s-%v", strings.ToLower(mode), clSigned)
				up := newCutUpload(t, u.Host, "/cut/"+key, mode, data, clSigned)
				if st, b := up.send(t, u.Host, len(up.body), len(up.body)); st != 200 || !stored(key) {
					t.Fatalf("control: whole body: HTTP %d %s", st, b)
				}
				if !clSigned && !streaming && mode == "UNSIGNED-PAYLOAD" {
					return // an unsigned payload of any length is a valid body
				}
				for _, cut := range cutPoints(up.body, streaming) {
					key := fmt.Sprintf("cut-%s-%v-%d", strings.ToLower(mode), clSigned, cut)
					up := newCutUpload(t, u.Host, "/cut/"+key, mode, data, clSigned)
					cl := cut
					if clSigned {
						cl = len(up.body)
					}
					status, body := up.send(t, u.Host, cut, cl)
					want := "IncompleteBody"
					if mode == "sha256" && !clSigned {
						want = "XAmzContentSHA256Mismatch"
					}
					if status != 400 || !strings.Contains(body, "<Code>"+want+"</Code>") {
						t.Errorf("cut at %d of %d (Content-Length %d): HTTP %d %s, want 400 %s", cut, len(up.body), cl, status, body, want)
					}
					if stored(key) {
						t.Errorf("cut at %d of %d (Content-Length %d): the object was stored", cut, len(up.body), cl)
					}
				}
			})
		}
	}
}

// TestDeleteObjectsBodyReadToItsEnd: a DeleteObjects body is acted on only
// after the payload hash was checked at its end. A body past the size
// limit, whose first bytes are a valid request, is refused and deletes
// nothing (reading only up to the limit would skip the hash check).
func TestDeleteObjectsBodyReadToItsEnd(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: SingleCredential("ak", "sk")})
	ctx := context.Background()
	c := sdkClient(srv.URL, "ak", "sk")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	if err := put(ctx, c, "bkt", "victim"); err != nil {
		t.Fatal(err)
	}
	xmlBody := "<Delete><Object><Key>victim</Key></Object></Delete>"
	signedFor := []byte("<Delete><Object><Key>other</Key></Object></Delete>")
	body := []byte(xmlBody + strings.Repeat(" ", 2<<20))
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/bkt?delete=", bytes.NewReader(body))
	req.Header.Set("X-Amz-Content-Sha256", hexSHA(signedFor))
	if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"}, req, hexSHA(signedFor), "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "<Code>MaxMessageLengthExceeded</Code>") {
		t.Errorf("oversized DeleteObjects body: HTTP %d %s, want 400 MaxMessageLengthExceeded", resp.StatusCode, b)
	}
	if err := get(ctx, c, "bkt", "victim"); err != nil {
		t.Fatalf("an unverified DeleteObjects body deleted the object: %v", err)
	}
}
