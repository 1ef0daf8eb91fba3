package sigv4

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
)

// trailerSet collects the trailing headers of one aws-chunked body.
type trailerSet struct {
	names   []string
	vals    map[string]string
	sig     string
	haveSig bool
	lines   int
	// bad is the first malformed trailing header of a signed trailer: S3
	// reports it only once the signature line has come (a signed trailer
	// without a well-formed signature line is a body cut short).
	bad error
}

// Where a trailer line stands, and so what it may be.
const (
	anyTrailer    = iota // AWS framing: a trailing header or the signature
	headerTrailer        // minio-go's block: a trailing header only
	sigTrailer           // after minio-go's block: the signature only
)

// readTrailers reads what follows the final chunk up to the empty line that
// ends the body, in either of the framings clients send:
//
//	AWS SDKs:  "name:value\r\n"... ["x-amz-trailer-signature:sig\r\n"] "\r\n"
//	minio-go:  "name:value\n"... "\r\n" ["x-amz-trailer-signature:sig\r\n"] "\r\n"
//
// minio-go sends the trailer block exactly as it signs it ("name:value\n"
// lines), closes it with CRLF, then the signature section. Lines ending in
// a bare LF are accepted only as such a block, first and unmixed; the
// signature is checked over the same canonical block either way. The lines
// are then checked against x-amz-trailer and, when signed, the signature.
func (c *chunkedReader) readTrailers() error {
	t := &trailerSet{vals: map[string]string{}}
	line, lf, err := c.readAnyLine()
	if err != nil {
		return err
	}
	allow := anyTrailer
	if lf {
		for lf {
			if err := c.addTrailer(t, line, headerTrailer); err != nil {
				return err
			}
			if line, lf, err = c.readAnyLine(); err != nil {
				return err
			}
		}
		if len(line) != 0 {
			return errTrailer("trailing header lines end in both LF and CRLF")
		}
		if line, lf, err = c.readAnyLine(); err != nil {
			return err
		}
		allow = sigTrailer
	}
	for len(line) > 0 || lf {
		if lf {
			return errChunkFormat("line not terminated by CRLF")
		}
		if err := c.addTrailer(t, line, allow); err != nil {
			return err
		}
		if line, lf, err = c.readAnyLine(); err != nil {
			return err
		}
	}
	return c.checkTrailers(t)
}

// addTrailer parses one trailer line into t.
func (c *chunkedReader) addTrailer(t *trailerSet, line []byte, allow int) error {
	if !c.cfg.trailer {
		return errChunkFormat("data after the final chunk")
	}
	if t.lines++; t.lines > maxTrailers {
		return errTrailer("more than %d trailing headers", maxTrailers)
	}
	err := c.trailerLine(t, line, allow)
	if err != nil && c.cfg.signer != nil && t.bad == nil {
		t.bad, err = err, nil
	}
	return err
}

// trailerLine parses one trailer line into t, or says what is wrong with it.
func (c *chunkedReader) trailerLine(t *trailerSet, line []byte, allow int) error {
	k, v, ok := strings.Cut(string(line), ":")
	k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
	if !ok || k == "" {
		return errTrailer("malformed trailing header line")
	}
	if k == "x-amz-trailer-signature" {
		switch {
		case allow == headerTrailer:
			return errTrailer("x-amz-trailer-signature inside the trailer block")
		case t.haveSig:
			return errTrailer("x-amz-trailer-signature repeated")
		case len(v) != 64 || !isLowerHex(v):
			return nil // not a signature line: the signature is missing
		}
		t.sig, t.haveSig = v, true
		return nil
	}
	if allow == sigTrailer {
		return errTrailer("trailing header %q after the trailer block", truncate(k))
	}
	if !c.cfg.declared[k] {
		return errTrailer("trailing header %q was not declared in x-amz-trailer", truncate(k))
	}
	if v == "" {
		return errTrailer("trailing header %q has no value", truncate(k))
	}
	if _, dup := t.vals[k]; dup {
		return errTrailer("trailing header %q repeated", truncate(k))
	}
	t.vals[k] = v
	t.names = append(t.names, k)
	return nil
}

// checkTrailers checks that every declared trailer came and, when signed,
// the trailer signature over "name:value\n" per trailer, names sorted.
func (c *chunkedReader) checkTrailers(t *trailerSet) error {
	if !c.cfg.trailer {
		return nil
	}
	if c.cfg.signer != nil {
		if !t.haveSig && t.lines == 0 {
			return errTrailer("no trailing header and no x-amz-trailer-signature")
		}
		if !t.haveSig {
			e := errIncomplete(msgBodyCut)
			e.detail = "signed trailer without a well-formed x-amz-trailer-signature line"
			return e
		}
		if t.bad != nil {
			return t.bad
		}
	}
	for k := range c.cfg.declared {
		if _, ok := t.vals[k]; !ok {
			return errTrailer("trailing header %q declared in x-amz-trailer is missing", truncate(k))
		}
	}
	if c.cfg.signer != nil {
		slices.Sort(t.names)
		var canon bytes.Buffer
		for _, k := range t.names {
			canon.WriteString(k + ":" + t.vals[k] + "\n")
		}
		if !c.cfg.signer.verifyTrailer(t.sig, canon.Bytes()) {
			return errTrailerSignature()
		}
	}
	if len(t.names) > 0 {
		c.trailer = http.Header{}
		for _, k := range t.names {
			c.trailer.Set(k, t.vals[k])
		}
	}
	return nil
}
