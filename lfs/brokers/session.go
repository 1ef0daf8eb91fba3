package brokers

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Session is a checked broker connection kept from before the upload to the
// produce after it. Not meant for concurrent use (calls are serialized).
type Session struct {
	d *Discovery

	mu     sync.Mutex
	conn   *brokerConn // nil after a failure until the next connect
	closed bool
}

// Produced is where the record landed.
type Produced struct {
	Partition int32
	Offset    int64
}

// errNotSent marks an attempt that failed before a Produce request was on
// the wire: the next attempt may try again.
var errNotSent = errors.New("not sent")

// errTopicNotReady marks a topic the broker is still creating: the produce
// asks again within Config.TopicWait, without using up a broker attempt.
var errTopicNotReady = errors.New("topic has no leader yet")

// Check re-validates right before producing: the broker list (the TTL when
// brokers come from etcd) and the connection (an ApiVersions round trip).
// A dead connection is replaced by a new one to any broker. ErrNoBroker on
// failure.
func (s *Session) Check(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("%w: session closed", ErrNoBroker)
	}
	v, err := s.d.view(ctx)
	if err != nil {
		return err
	}
	if s.conn != nil {
		err := s.conn.ping(ctx)
		if err == nil {
			return nil
		}
		s.d.cfg.Logger.Info("lfs brokers: connection lost, reconnecting", "broker", s.conn.addr, "err", err)
		s.conn.close()
		s.conn = nil
	}
	c, err := s.d.connectAny(ctx, v)
	if err != nil {
		return err
	}
	s.conn = c
	return nil
}

// CheckTopic asks the broker, before anything is uploaded, whether a
// record for topic (and partition, when >= 0) could be produced at all.
// It returns only the refusals that cannot change within a produce: the
// topic does not exist and the broker did not create it
// (kerr.UnknownTopicOrPartition), the broker's ACLs refuse it
// (kerr.TopicAuthorizationFailed), the name is refused
// (kerr.InvalidTopicException), or the topic has partitions and partition
// is not one of them (kerr.UnknownTopicOrPartition). Anything else (a topic
// still being created, a leader moving, a Metadata request that fails) is
// nil: Produce decides after the upload. Like Produce's Metadata it asks
// the broker to create a missing topic.
func (s *Session) CheckTopic(ctx context.Context, topic string, partition int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.conn == nil {
		return nil
	}
	md, err := s.metadata(ctx, topic)
	if err != nil {
		s.drop(s.conn) // Check reconnects before the produce
		return nil
	}
	if len(md.Topics) != 1 {
		return nil
	}
	t := md.Topics[0]
	switch err := kerrFor(t.ErrorCode); {
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.TopicAuthorizationFailed),
		errors.Is(err, kerr.InvalidTopicException):
		return fmt.Errorf("lfs brokers: topic %q: %w", topic, err)
	case err != nil:
		return nil
	}
	if partition < 0 || len(t.Partitions) == 0 {
		return nil
	}
	for _, mp := range t.Partitions {
		if mp.Partition == partition {
			return nil
		}
	}
	return fmt.Errorf("lfs brokers: %s/%d: %w", topic, partition, ErrNoPartition)
}

// Close closes the session's connection. Safe to call twice.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.conn.close()
	s.conn = nil
	return nil
}

// Produce sends one record (acks=all) to topic. partition >= 0 is used as
// given; otherwise a non-nil key picks Kafka's default partition
// (murmur2, as the Java producer), and a nil key any partition, preferably
// one the session's broker leads. The record goes to the partition owner
// (the etcd lease when brokers come from etcd, else the Kafka metadata
// leader) over the session's connection when that is the owner, else over
// a new connection that replaces it.
//
// On NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, FENCED_LEADER_EPOCH or
// UNKNOWN_LEADER_EPOCH it refreshes the route and retries the current
// owner, at most 3 attempts, waiting RetryBackoff in between (the wait ends
// when ctx ends, returning ErrNoBroker wrapping ctx's error) and checking
// the broker list and TTL before each attempt. Metadata asks the broker to
// create a missing topic, as Kafka's producers do (the broker's
// auto.create.topics.enable decides); while the broker answers that the
// topic or the partition has no leader yet (LEADER_NOT_AVAILABLE, or the
// partition listed with leader -1), or lists the topic without partitions
// (it is being created), the produce asks again
// every RetryBackoff for up to TopicWait without using up an attempt.
//
// Errors: ErrNoBroker when no broker accepted the record (not written:
// delete the object); ErrSentThenFailed when the request was sent and then
// failed otherwise, including a partition error in the response other than
// the refusals of notAppended (the broker may have written it: keep the
// object, count an orphan). Other errors (unknown topic, partition out of
// range, a refusal of notAppended in the Produce response) mean nothing was
// written.
func (s *Session) Produce(ctx context.Context, topic string, partition int32, key, value []byte, headers map[string][]byte) (Produced, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Produced{}, fmt.Errorf("%w: session closed", ErrNoBroker)
	}
	batch := recordBatch(key, value, headers, time.Now())
	topicDeadline := time.Now().Add(s.d.cfg.TopicWait)
	var lastErr error
	for attempt, first := 1, true; attempt <= maxAttempts; first = false {
		if !first {
			if err := sleepCtx(ctx, s.d.cfg.RetryBackoff); err != nil {
				return Produced{}, fmt.Errorf("%w: retry wait ended: %w (last attempt: %v)", ErrNoBroker, err, lastErr)
			}
		}
		v, err := s.d.view(ctx)
		if err != nil {
			return Produced{}, err
		}
		target, p, err := s.route(ctx, v, topic, partition, key)
		if errors.Is(err, errTopicNotReady) && time.Now().Before(topicDeadline) {
			// Being created: ask again, no broker attempt used up.
			s.d.cfg.Logger.Debug("lfs brokers: topic not ready yet", "topic", topic, "err", err)
			lastErr = err
			continue
		}
		if err != nil {
			if !errors.Is(err, errNotSent) {
				return Produced{}, err
			}
			lastErr = err
			s.d.cfg.Logger.Info("lfs brokers: produce attempt failed", "attempt", attempt, "topic", topic, "err", err)
			attempt++
			continue
		}
		partition = p // the partition stays fixed across retries
		out, err := s.send(ctx, target, topic, p, batch)
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, errNotSent) {
			return Produced{}, err
		}
		lastErr = err
		s.d.cfg.Logger.Info("lfs brokers: produce attempt failed", "attempt", attempt,
			"topic", topic, "partition", p, "broker", target.addr, "err", err)
		attempt++
	}
	return Produced{}, fmt.Errorf("%w: no broker accepted the record after %d attempts: %w", ErrNoBroker, maxAttempts, lastErr)
}

// send sends the Produce request to c and checks its response.
func (s *Session) send(ctx context.Context, c *brokerConn, topic string, p int32, batch []byte) (Produced, error) {
	ver, ok := c.version(kmsg.Produce.Int16(), maxProduceVersion)
	if !ok || ver < minProduceVersion {
		return Produced{}, fmt.Errorf("%w: broker %s does not support produce v%d+", errNotSent, c.addr, minProduceVersion)
	}
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(ver)
	req.Acks = -1
	req.TimeoutMillis = int32(s.d.cfg.ProduceTimeout / time.Millisecond)
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = p
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	kresp, sent, err := c.request(ctx, req)
	if err != nil {
		s.drop(c)
		if sent {
			return Produced{}, fmt.Errorf("%w: %s/%d via %s: %w", ErrSentThenFailed, topic, p, c.addr, err)
		}
		return Produced{}, fmt.Errorf("%w: %w", errNotSent, err)
	}
	resp := kresp.(*kmsg.ProduceResponse)
	for _, t := range resp.Topics {
		if t.Topic != topic {
			continue
		}
		for _, rp := range t.Partitions {
			if rp.Partition != p {
				continue
			}
			if leaderMoved(rp.ErrorCode) {
				return Produced{}, fmt.Errorf("%w: %s/%d via %s: %w", errNotSent, topic, p, c.addr, kerrFor(rp.ErrorCode))
			}
			if notAppended(rp.ErrorCode) {
				// Refused before the append: no record, nothing to retry.
				return Produced{}, fmt.Errorf("lfs brokers: %s/%d via %s: produce refused, nothing written: %w", topic, p, c.addr, kerrFor(rp.ErrorCode))
			}
			if err := kerrFor(rp.ErrorCode); err != nil {
				return Produced{}, fmt.Errorf("%w: %s/%d via %s: %w", ErrSentThenFailed, topic, p, c.addr, err)
			}
			return Produced{Partition: p, Offset: rp.BaseOffset}, nil
		}
	}
	return Produced{}, fmt.Errorf("%w: %s/%d via %s: partition missing from produce response", ErrSentThenFailed, topic, p, c.addr)
}

// drop forgets c when it is the session's connection (it is broken).
func (s *Session) drop(c *brokerConn) {
	c.close()
	if s.conn == c {
		s.conn = nil
	}
}

// route picks the partition and a connection to its owner. Errors wrapping
// errNotSent may be retried; others end the produce (nothing sent).
func (s *Session) route(ctx context.Context, v view, topic string, partition int32, key []byte) (*brokerConn, int32, error) {
	if s.conn == nil {
		c, err := s.d.connectAny(ctx, v)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: %w", errNotSent, err)
		}
		s.conn = c
	}
	md, err := s.metadata(ctx, topic)
	if err != nil {
		s.drop(s.conn)
		return nil, 0, fmt.Errorf("%w: metadata: %w", errNotSent, err)
	}
	addrs := make(map[int32]string, len(md.Brokers))
	for _, b := range md.Brokers {
		a := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		addrs[b.NodeID] = a
		if s.conn.id < 0 && a == s.conn.addr {
			s.conn.id = b.NodeID
		}
	}
	if len(md.Topics) != 1 {
		return nil, 0, fmt.Errorf("%w: metadata for %q: %d topics in answer", errNotSent, topic, len(md.Topics))
	}
	t := md.Topics[0]
	if err := kerrFor(t.ErrorCode); err != nil {
		if errors.Is(err, kerr.LeaderNotAvailable) {
			// What a broker answers while it creates the topic.
			return nil, 0, fmt.Errorf("%w: %w: topic %q: %w", errNotSent, errTopicNotReady, topic, err)
		}
		if leaderMoved(t.ErrorCode) {
			return nil, 0, fmt.Errorf("%w: topic %q: %w", errNotSent, topic, err)
		}
		return nil, 0, fmt.Errorf("lfs brokers: topic %q: %w", topic, err)
	}
	n := int32(len(t.Partitions))
	if n == 0 {
		// Listed without partitions: still being created.
		return nil, 0, fmt.Errorf("%w: %w: topic %q has no partitions yet", errNotSent, errTopicNotReady, topic)
	}
	leaders := make(map[int32]int32, n)
	electing := map[int32]bool{} // LEADER_NOT_AVAILABLE: no leader yet
	for _, mp := range t.Partitions {
		leaders[mp.Partition] = mp.Leader
		if mp.ErrorCode != 0 && leaderMoved(mp.ErrorCode) {
			leaders[mp.Partition] = -1
			electing[mp.Partition] = errors.Is(kerrFor(mp.ErrorCode), kerr.LeaderNotAvailable)
		}
		if mp.ErrorCode == 0 && mp.Leader < 0 {
			electing[mp.Partition] = true // listed without a leader, no error
		}
	}
	p := partition
	switch {
	case p >= 0:
	case key != nil:
		p = keyPartition(key, n)
	default:
		p = s.anyPartition(leaders, n)
	}
	if _, ok := leaders[p]; !ok {
		if partition < 0 {
			// s3seal chose p from the partition count: the broker lists
			// partitions with gaps, which says nothing of the client's.
			return nil, 0, fmt.Errorf("lfs brokers: %s/%d: %w", topic, p, kerr.UnknownTopicOrPartition)
		}
		return nil, 0, fmt.Errorf("lfs brokers: %s/%d: %w", topic, p, ErrNoPartition)
	}

	// With etcd unreadable (cached view) the lease cannot be read either:
	// the Kafka metadata leader is used without waiting for etcd again.
	owner := int32(-1)
	if v.fromEtcd && !v.cached {
		if id, ok := s.d.leaseOwner(ctx, v, topic, p); ok {
			owner = id
		}
	}
	if owner < 0 && electing[p] {
		return nil, 0, fmt.Errorf("%w: %w: %s/%d: %w", errNotSent, errTopicNotReady, topic, p, kerr.LeaderNotAvailable)
	}
	if owner < 0 {
		owner = leaders[p]
	}
	addr := ""
	if owner >= 0 {
		if a, ok := v.addrOf(owner); ok {
			addr = a
		} else {
			addr = addrs[owner]
		}
	}
	// Owner not known yet: the session's broker is tried, as the seed
	// does; its answer tells whether to route elsewhere.
	if addr == "" || s.isConn(owner, addr) {
		return s.conn, p, nil
	}
	c, err := dialBroker(ctx, s.d.cfg, owner, addr)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: owner of %s/%d: %w", errNotSent, topic, p, err)
	}
	s.conn.close()
	s.conn = c
	return c, p, nil
}

func (s *Session) isConn(owner int32, addr string) bool {
	if s.conn.id >= 0 && owner >= 0 {
		return s.conn.id == owner
	}
	return s.conn.addr == addr
}

// anyPartition picks a random partition, preferring those the session's
// broker leads (no extra connection).
func (s *Session) anyPartition(leaders map[int32]int32, n int32) int32 {
	var mine []int32
	for p, l := range leaders {
		if l >= 0 && l == s.conn.id {
			mine = append(mine, p)
		}
	}
	if len(mine) > 0 {
		return mine[rand.IntN(len(mine))]
	}
	return rand.Int32N(n)
}

func (s *Session) metadata(ctx context.Context, topic string) (*kmsg.MetadataResponse, error) {
	ver, ok := s.conn.version(kmsg.Metadata.Int16(), maxMetadataVersion)
	if !ok {
		return nil, fmt.Errorf("broker %s does not support metadata", s.conn.addr)
	}
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(ver)
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = &topic
	req.Topics = append(req.Topics, rt)
	// As Kafka's own producers do: the broker's auto.create.topics.enable
	// decides whether a missing topic is created.
	req.AllowAutoTopicCreation = true
	kresp, _, err := s.conn.request(ctx, req)
	if err != nil {
		return nil, err
	}
	return kresp.(*kmsg.MetadataResponse), nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
