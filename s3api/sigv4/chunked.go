package sigv4

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"strconv"
)

const (
	// maxChunkLine caps a chunk header or trailer line (CRLF included), so a
	// hostile client cannot make the decoder buffer without bound.
	maxChunkLine = 4096
	// maxTrailers caps the number of trailing header lines.
	maxTrailers = 16
	// chunkBufSize is the read buffer of the decoder.
	chunkBufSize = 64 << 10
	// minChunkSize is the least size of every data chunk but the last.
	minChunkSize = 8192

	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	chunkSigExt = ";chunk-signature="
)

// chunkSigner verifies the chain of chunk signatures seeded by the request
// signature.
type chunkSigner struct {
	key            []byte
	amzDate, scope string
	prevSig        string
}

// verify checks sig for a chunk whose data hashed to sum and advances the
// chain.
func (s *chunkSigner) verify(sig string, sum []byte) bool {
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + s.amzDate + "\n" + s.scope + "\n" + s.prevSig + "\n" + emptySHA256 + "\n" + hex.EncodeToString(sum)
	want := hex.EncodeToString(hmacSHA256(s.key, sts))
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return false
	}
	s.prevSig = sig
	return true
}

// verifyTrailer checks the x-amz-trailer-signature over the canonical
// trailer block ("name:value\n" per trailer, names sorted).
func (s *chunkSigner) verifyTrailer(sig string, canonical []byte) bool {
	sts := "AWS4-HMAC-SHA256-TRAILER\n" + s.amzDate + "\n" + s.scope + "\n" + s.prevSig + "\n" + hexSHA256(canonical)
	want := hex.EncodeToString(hmacSHA256(s.key, sts))
	return hmac.Equal([]byte(want), []byte(sig))
}

type chunkConfig struct {
	signer        *chunkSigner    // nil: chunks carry no signatures
	trailer       bool            // a trailer block follows the final chunk
	declared      map[string]bool // names announced in x-amz-trailer
	decodedLength int64           // -1 if unknown
	minChunk      int64           // least size of a data chunk but the last
}

// chunkedReader decodes an aws-chunked body, verifying chunk signatures,
// trailers and the decoded length as it goes. Errors are sticky.
type chunkedReader struct {
	cfg       chunkConfig
	src       io.ReadCloser
	br        *bufio.Reader
	inChunk   bool
	remaining int64
	decoded   int64
	chunkSig  string
	chunks    int   // data chunks begun so far
	lastSize  int64 // size of the last data chunk
	h         hash.Hash
	trailer   http.Header
	err       error
}

func newChunkedReader(src io.ReadCloser, cfg chunkConfig) *chunkedReader {
	c := &chunkedReader{cfg: cfg, src: src, br: bufio.NewReaderSize(src, chunkBufSize)}
	if cfg.signer != nil {
		c.h = sha256.New()
	}
	return c
}

// Trailer returns the verified trailing headers after io.EOF, else nil.
func (c *chunkedReader) Trailer() http.Header {
	if c.err != io.EOF {
		return nil
	}
	return c.trailer
}

// Close closes the original body.
func (c *chunkedReader) Close() error { return c.src.Close() }

func (c *chunkedReader) Read(p []byte) (int, error) {
	for c.err == nil {
		if c.remaining == 0 {
			c.err = c.next()
			continue
		}
		if len(p) == 0 {
			return 0, nil
		}
		b := p
		if int64(len(b)) > c.remaining {
			b = b[:c.remaining]
		}
		n, err := c.br.Read(b)
		c.remaining -= int64(n)
		c.decoded += int64(n)
		if c.h != nil {
			c.h.Write(b[:n])
		}
		if err != nil {
			c.err = c.srcErr(err)
		}
		return n, c.err
	}
	return 0, c.err
}

// srcErr turns an error of the source met before the end of the encoding
// into the reader's error: any end of stream there (io.EOF, wrapped or
// not, io.ErrUnexpectedEOF) is IncompleteBody, never an end of stream.
func (c *chunkedReader) srcErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		e := errIncomplete(msgBodyCut)
		e.detail = "the aws-chunked body ended before the final chunk and its trailer"
		return e
	}
	return err
}

// next finishes the current chunk and reads the next chunk header. At the
// final chunk it reads the trailers and returns io.EOF if all checks pass.
func (c *chunkedReader) next() error {
	if c.inChunk {
		var crlf [2]byte
		if _, err := io.ReadFull(c.br, crlf[:]); err != nil {
			return c.srcErr(err)
		}
		if crlf != [2]byte{'\r', '\n'} {
			return errChunkFormat("chunk data is not followed by CRLF (chunk size does not match its data)")
		}
		if err := c.verifyChunk(); err != nil {
			return err
		}
		c.inChunk = false
	}
	line, err := c.readLine()
	if err != nil {
		return err
	}
	size, sig, err := parseChunkHeader(line, c.cfg.signer != nil)
	if err != nil {
		return err
	}
	if c.cfg.decodedLength >= 0 && size > c.cfg.decodedLength-c.decoded {
		return c.overlong(size)
	}
	if size > 0 && c.chunks > 0 && c.lastSize < c.cfg.minChunk {
		// S3 allows only the last data chunk to be under 8 KiB.
		return newErr(CodeInvalidChunkSize, http.StatusBadRequest, "Only the last chunk is allowed to have a size less than 8192 bytes").with(
			"Chunk", strconv.Itoa(c.chunks), "BadChunkSize", strconv.FormatInt(c.lastSize, 10))
	}
	if size > 0 {
		c.chunks++
		c.lastSize = size
	}
	c.chunkSig = sig
	if c.h != nil {
		c.h.Reset()
	}
	if size > 0 {
		c.inChunk, c.remaining = true, size
		return nil
	}
	if err := c.verifyChunk(); err != nil {
		return err
	}
	if err := c.readTrailers(); err != nil {
		return err
	}
	if c.cfg.decodedLength >= 0 && c.decoded != c.cfg.decodedLength {
		return errDecodedLength("the aws-chunked body is shorter than x-amz-decoded-content-length")
	}
	return c.atEnd()
}

// overlong reads past a chunk that would take the body beyond its
// x-amz-decoded-content-length, delivering none of it, to tell the two
// faults apart as S3 does: a chunk framed as declared is a length
// mismatch, one whose data is not followed by CRLF is a broken body.
func (c *chunkedReader) overlong(size int64) error {
	if _, err := io.CopyN(io.Discard, c.br, size); err != nil {
		return c.srcErr(err)
	}
	var crlf [2]byte
	if _, err := io.ReadFull(c.br, crlf[:]); err != nil {
		return c.srcErr(err)
	}
	if crlf != [2]byte{'\r', '\n'} {
		return errChunkFormat("chunk data is not followed by CRLF (chunk size does not match its data)")
	}
	return errDecodedLength("the aws-chunked body is longer than x-amz-decoded-content-length")
}

// atEnd returns io.EOF if the source ends right here with a bare io.EOF,
// else the error to report: data after the final chunk, a body shorter
// than its Content-Length, or whatever else the source failed with.
func (c *chunkedReader) atEnd() error {
	var one [1]byte
	for range 100 {
		n, err := c.br.Read(one[:])
		switch {
		case n > 0:
			return errChunkFormat("data after the final chunk")
		case err == io.EOF:
			return io.EOF
		case err != nil:
			return c.srcErr(err)
		}
	}
	return io.ErrNoProgress
}

func (c *chunkedReader) verifyChunk() error {
	if c.cfg.signer == nil {
		return nil
	}
	if !c.cfg.signer.verify(c.chunkSig, c.h.Sum(nil)) {
		return errChunkSignature()
	}
	return nil
}

// readLine returns the next CRLF-terminated line without its CRLF.
func (c *chunkedReader) readLine() ([]byte, error) {
	line, lf, err := c.readAnyLine()
	if err == nil && lf {
		return nil, errChunkFormat("line not terminated by CRLF")
	}
	return line, err
}

// readAnyLine returns the next line without its ending, and whether that
// ending was a bare LF rather than CRLF. The line is valid until the next
// read.
func (c *chunkedReader) readAnyLine() ([]byte, bool, error) {
	line, err := c.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || len(line) > maxChunkLine {
		return nil, false, errChunkFormat("chunk header or trailer line longer than %d bytes", maxChunkLine)
	}
	if err != nil {
		return nil, false, c.srcErr(err)
	}
	if len(line) >= 2 && line[len(line)-2] == '\r' {
		return line[:len(line)-2], false, nil
	}
	return line[:len(line)-1], true, nil
}

// parseChunkHeader parses "hex-size" or "hex-size;chunk-signature=sig".
func parseChunkHeader(line []byte, signed bool) (int64, string, error) {
	sizeHex, sig := line, ""
	if signed {
		i := bytes.Index(line, []byte(chunkSigExt))
		if i < 0 {
			return 0, "", errChunkFormat("chunk header without chunk-signature")
		}
		sizeHex, sig = line[:i], string(line[i+len(chunkSigExt):])
		if len(sig) != 64 || !isLowerHex(sig) {
			return 0, "", errChunkFormat("malformed chunk-signature")
		}
	}
	if len(sizeHex) == 0 || len(sizeHex) > 15 {
		return 0, "", errChunkFormat("malformed chunk size")
	}
	for _, b := range sizeHex {
		if !('0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F') {
			return 0, "", errChunkFormat("malformed chunk size")
		}
	}
	n, err := strconv.ParseInt(string(sizeHex), 16, 64)
	if err != nil {
		return 0, "", errChunkFormat("malformed chunk size")
	}
	return n, sig, nil
}
