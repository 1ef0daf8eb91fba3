package brokers

// Why not kgo.Client: kgo opens a connection per seed, then one per broker
// node id for metadata and a separate one for produce requests, so a produce
// through kgo costs two or three dials and the connection checked before the
// upload is not the one the record goes over. The seed requires one broker
// connection per produce, kept from the check to the produce, and the
// routing rules need to pick the broker per attempt. So this file speaks the
// protocol with kmsg (franz-go's message types and request framing) over
// one net.Conn.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Highest versions this package sends: Produce v13 and Metadata v13 address
// topics by id only, which this package does not track.
const (
	maxProduceVersion  = 12
	minProduceVersion  = 3 // record batch v2
	maxMetadataVersion = 12
	maxResponseSize    = 64 << 20
)

// brokerConn is one connection to one broker. Not safe for concurrent use.
type brokerConn struct {
	id       int32 // node id, -1 until known
	addr     string
	nc       net.Conn
	corr     int32
	versions map[int16]int16    // api key -> broker's max version
	ranges   map[int16][2]int16 // api key -> broker's [min, max] version
	format   *kmsg.RequestFormatter
	timeout  time.Duration
	broken   bool
}

// dialBroker connects to addr (over TLS when configured), runs the
// ApiVersions handshake and SASL authentication when configured, so a
// returned connection is a broker that answers and has accepted us.
func dialBroker(ctx context.Context, cfg Config, id int32, addr string) (*brokerConn, error) {
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	nc, err := cfg.Dial(dctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial broker %s: %w", addr, err)
	}
	if cfg.TLS != nil {
		tc, err := startTLS(dctx, cfg.TLS, nc, addr)
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("broker %s: %w", addr, err)
		}
		nc = tc
	}
	c := &brokerConn{
		id: id, addr: addr, nc: nc,
		format:  kmsg.NewRequestFormatter(kmsg.FormatterClientID(cfg.ClientID)),
		timeout: cfg.RequestTimeout,
	}
	if err := c.handshake(dctx); err != nil {
		c.close()
		return nil, fmt.Errorf("broker %s: %w", addr, err)
	}
	if cfg.SASL != nil {
		if err := c.authenticate(dctx, cfg.SASL); err != nil {
			c.close()
			return nil, fmt.Errorf("broker %s: %w", addr, err)
		}
	}
	return c, nil
}

func (c *brokerConn) handshake(ctx context.Context) error {
	req := kmsg.NewPtrApiVersionsRequest() // v0: every broker answers it
	kresp, _, err := c.request(ctx, req)
	if err != nil {
		return fmt.Errorf("api versions: %w", err)
	}
	resp := kresp.(*kmsg.ApiVersionsResponse)
	if err := kerrFor(resp.ErrorCode); err != nil {
		return fmt.Errorf("api versions: %w", err)
	}
	c.versions = make(map[int16]int16, len(resp.ApiKeys))
	c.ranges = make(map[int16][2]int16, len(resp.ApiKeys))
	for _, k := range resp.ApiKeys {
		c.versions[k.ApiKey] = k.MaxVersion
		c.ranges[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	return nil
}

// ping checks that the connection still answers (an ApiVersions round trip).
func (c *brokerConn) ping(ctx context.Context) error {
	if c.broken {
		return errors.New("connection broken")
	}
	_, _, err := c.request(ctx, kmsg.NewPtrApiVersionsRequest())
	return err
}

// version picks min(our cap, broker max) for key.
func (c *brokerConn) version(key, ours int16) (int16, bool) {
	max, ok := c.versions[key]
	if !ok {
		return 0, false
	}
	if max > ours {
		max = ours
	}
	return max, true
}

// request sends req (its version already set) and reads the response.
// sent reports whether the whole request reached the socket: a request
// whose write failed was never complete on the wire, so the broker cannot
// have acted on it. Any error leaves the connection broken.
func (c *brokerConn) request(ctx context.Context, req kmsg.Request) (resp kmsg.Response, sent bool, err error) {
	if c.broken {
		return nil, false, errors.New("connection broken")
	}
	defer func() {
		if err != nil {
			c.broken = true
		}
	}()
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.nc.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		if !stop() && err != nil && ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
	}()

	c.corr++
	buf := c.format.AppendRequest(nil, req, c.corr)
	if _, err := c.nc.Write(buf); err != nil {
		return nil, false, fmt.Errorf("write %s: %w", c.addr, err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c.nc, size[:]); err != nil {
		return nil, true, fmt.Errorf("read %s: %w", c.addr, err)
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > maxResponseSize {
		return nil, true, fmt.Errorf("read %s: bad response size %d", c.addr, n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.nc, body); err != nil {
		return nil, true, fmt.Errorf("read %s: %w", c.addr, err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != c.corr {
		return nil, true, fmt.Errorf("read %s: correlation id %d, want %d", c.addr, got, c.corr)
	}
	body = body[4:]
	resp = req.ResponseKind()
	// Flexible responses carry a tag buffer in the header, except
	// ApiVersions, whose response header is always v0.
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		if body, err = skipTags(body); err != nil {
			return nil, true, fmt.Errorf("read %s: %w", c.addr, err)
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, true, fmt.Errorf("decode %s response from %s: %w", kmsg.NameForKey(req.Key()), c.addr, err)
	}
	return resp, true, nil
}

func skipTags(b []byte) ([]byte, error) {
	num, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errors.New("bad header tags")
	}
	b = b[n:]
	for i := uint64(0); i < num; i++ {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, errors.New("bad header tag")
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < size {
			return nil, errors.New("bad header tag size")
		}
		b = b[n+int(size):]
	}
	return b, nil
}

func (c *brokerConn) close() {
	if c != nil && c.nc != nil {
		c.broken = true
		_ = c.nc.Close()
	}
}

// recordBatch encodes one record as an uncompressed record batch (magic 2).
func recordBatch(key, value []byte, headers map[string][]byte, now time.Time) []byte {
	rec := kmsg.Record{Key: key, Value: value}
	for k, v := range headers {
		rec.Headers = append(rec.Headers, kmsg.Header{Key: k, Value: v})
	}
	probe := rec.AppendTo(nil) // Length 0 takes one varint byte
	rec.Length = int32(len(probe) - 1)
	records := rec.AppendTo(nil)

	ts := now.UnixMilli()
	batch := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		FirstTimestamp:       ts,
		MaxTimestamp:         ts,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           1,
		Records:              records,
	}
	b := batch.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	// CRC-32C over everything after the CRC field (attributes onward).
	crc := crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(b[17:], crc)
	return b
}
