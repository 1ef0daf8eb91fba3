package brokers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Forwarder sends requests that clients of the Kafka listener made to the
// broker that owns them, over a pool of connections authenticated as
// s3seal. It keeps what routing needs: the brokers' addresses and the
// leaders of the partitions asked about (from the last Metadata answer,
// for at most metaTTL), the coordinators found, and the API versions every
// broker seen supports. Safe for concurrent use.
type Forwarder struct {
	d *Discovery

	mu       sync.Mutex
	idle     map[string][]*brokerConn // by address
	addrs    map[int32]string         // node id -> address, from Metadata
	leaders  map[topicPartition]int32
	metaAt   time.Time
	coords   map[coordKey]int32
	versions map[int16][2]int16 // api key -> [min, max] every broker seen takes
}

type topicPartition struct {
	topic     string
	partition int32
}

type coordKey struct {
	typ int8
	key string
}

// metaTTL bounds how long a leader learnt from Metadata is used without
// asking again; a broker that says it no longer leads drops it at once.
const metaTTL = 5 * time.Second

// maxIdlePerBroker bounds the idle connections kept per broker.
const maxIdlePerBroker = 8

// Forwarder returns a forwarder over the brokers d finds.
func (d *Discovery) Forwarder() *Forwarder {
	return &Forwarder{d: d, idle: map[string][]*brokerConn{}, addrs: map[int32]string{},
		leaders: map[topicPartition]int32{}, coords: map[coordKey]int32{}}
}

// Close closes every idle connection.
func (f *Forwarder) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for a, cs := range f.idle {
		for _, c := range cs {
			c.close()
		}
		delete(f.idle, a)
	}
}

// take returns an idle connection to addr, or dials one.
func (f *Forwarder) take(ctx context.Context, id int32, addr string) (*brokerConn, error) {
	f.mu.Lock()
	if cs := f.idle[addr]; len(cs) > 0 {
		c := cs[len(cs)-1]
		f.idle[addr] = cs[:len(cs)-1]
		f.mu.Unlock()
		return c, nil
	}
	f.mu.Unlock()
	c, err := dialBroker(ctx, f.d.cfg, id, addr)
	if err != nil {
		return nil, err
	}
	f.learnVersions(c)
	return c, nil
}

// put returns a connection to the pool (a broken one is closed).
func (f *Forwarder) put(c *brokerConn) {
	if c.broken {
		c.close()
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.idle[c.addr]) >= maxIdlePerBroker {
		c.close()
		return
	}
	f.idle[c.addr] = append(f.idle[c.addr], c)
}

func (f *Forwarder) learnVersions(c *brokerConn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.versions == nil {
		f.versions = make(map[int16][2]int16, len(c.versions))
		for k, v := range c.ranges {
			f.versions[k] = v
		}
		return
	}
	for k, v := range f.versions {
		r, ok := c.ranges[k]
		if !ok {
			delete(f.versions, k)
			continue
		}
		v[0], v[1] = max(v[0], r[0]), min(v[1], r[1])
		if v[0] > v[1] {
			delete(f.versions, k)
			continue
		}
		f.versions[k] = v
	}
}

// Versions returns, per API key, the versions every broker seen so far
// takes, connecting to one broker first if none was seen.
func (f *Forwarder) Versions(ctx context.Context) (map[int16][2]int16, error) {
	f.mu.Lock()
	known := f.versions != nil
	f.mu.Unlock()
	if !known {
		c, err := f.anyConn(ctx)
		if err != nil {
			return nil, err
		}
		f.put(c)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[int16][2]int16, len(f.versions))
	for k, v := range f.versions {
		out[k] = v
	}
	return out, nil
}

// anyConn returns a connection to any broker: an idle one, else one of
// the discovered brokers, tried in turn.
func (f *Forwarder) anyConn(ctx context.Context) (*brokerConn, error) {
	f.mu.Lock()
	for a, cs := range f.idle {
		if len(cs) > 0 {
			c := cs[len(cs)-1]
			f.idle[a] = cs[:len(cs)-1]
			f.mu.Unlock()
			return c, nil
		}
	}
	f.mu.Unlock()
	v, err := f.d.view(ctx)
	if err != nil {
		return nil, err
	}
	c, err := f.d.connectAny(ctx, v)
	if err != nil {
		return nil, err
	}
	f.learnVersions(c)
	return c, nil
}

// AnyBroker is the node id Send takes for "any broker".
const AnyBroker = -1

// ErrUnsent marks a request that never reached a broker whole: no broker
// can have acted on it.
var ErrUnsent = errors.New("request not sent")

// Send sends req (its version set by the client) to broker id, or to any
// broker for AnyBroker, and returns its answer. An error wrapping
// ErrUnsent means the broker cannot have seen the request.
func (f *Forwarder) Send(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	var c *brokerConn
	var err error
	if id == AnyBroker {
		c, err = f.anyConn(ctx)
	} else {
		addr, aerr := f.addrOf(ctx, id)
		if aerr != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnsent, aerr)
		}
		c, err = f.take(ctx, id, addr)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsent, err)
	}
	resp, sent, err := c.request(ctx, req)
	f.put(c)
	if err != nil && !sent {
		return nil, fmt.Errorf("%w: %w", ErrUnsent, err)
	}
	return resp, err
}

// addrOf resolves a node id: from etcd's snapshot when brokers come from
// there, else from the last Metadata answer (asking for one if unknown).
func (f *Forwarder) addrOf(ctx context.Context, id int32) (string, error) {
	if f.d.etcd != nil {
		if v, err := f.d.view(ctx); err == nil {
			if a, ok := v.addrOf(id); ok {
				return a, nil
			}
		}
	}
	f.mu.Lock()
	a, ok := f.addrs[id]
	f.mu.Unlock()
	if ok {
		return a, nil
	}
	if _, err := f.refresh(ctx, nil); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.addrs[id]; ok {
		return a, nil
	}
	return "", fmt.Errorf("broker %d is not in the cluster's metadata", id)
}

// Metadata sends a client's Metadata request to any broker, learns the
// brokers and leaders it names, and returns the answer.
func (f *Forwarder) Metadata(ctx context.Context, req *kmsg.MetadataRequest) (*kmsg.MetadataResponse, error) {
	resp, err := f.Send(ctx, AnyBroker, req)
	if err != nil {
		return nil, err
	}
	md := resp.(*kmsg.MetadataResponse)
	f.learn(md, req.Topics == nil)
	return md, nil
}

// refresh asks for the metadata of topics (nil: all) at a version every
// broker takes.
func (f *Forwarder) refresh(ctx context.Context, topics []string) (*kmsg.MetadataResponse, error) {
	c, err := f.anyConn(ctx)
	if err != nil {
		return nil, err
	}
	defer f.put(c)
	ver, ok := c.version(kmsg.Metadata.Int16(), maxMetadataVersion)
	if !ok {
		return nil, fmt.Errorf("broker %s does not take Metadata", c.addr)
	}
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(ver)
	// As Kafka's own producers do: the broker's auto.create.topics.enable
	// decides whether a missing topic is created.
	req.AllowAutoTopicCreation = true
	if topics != nil {
		req.Topics = []kmsg.MetadataRequestTopic{}
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	resp, _, err := c.request(ctx, req)
	if err != nil {
		return nil, err
	}
	md := resp.(*kmsg.MetadataResponse)
	f.learn(md, topics == nil)
	return md, nil
}

func (f *Forwarder) learn(md *kmsg.MetadataResponse, all bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range md.Brokers {
		f.addrs[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}
	if all {
		clear(f.leaders)
	}
	for _, t := range md.Topics {
		if t.Topic == nil {
			continue
		}
		for _, p := range t.Partitions {
			tp := topicPartition{*t.Topic, p.Partition}
			if p.ErrorCode == 0 && p.Leader >= 0 {
				f.leaders[tp] = p.Leader
			} else {
				delete(f.leaders, tp)
			}
		}
	}
	f.metaAt = time.Now()
}

// Leader returns the broker a request for topic/partition goes to: the
// KafScale lease owner when brokers come from etcd and a lease names one,
// else the Kafka metadata leader (asked for when not known or older than
// metaTTL). kerr.UnknownTopicOrPartition or kerr.LeaderNotAvailable when
// there is none.
func (f *Forwarder) Leader(ctx context.Context, topic string, partition int32) (int32, error) {
	return f.leader(ctx, topic, partition, nil)
}

// Lookup finds the leaders of the partitions one client request names,
// asking the brokers for a topic's metadata at most once: a request
// naming a hundred thousand partitions a topic does not have costs one
// Metadata request, not one per partition. Not safe for concurrent use.
type Lookup struct {
	f      *Forwarder
	topics map[string]*topicAnswer
}

// topicAnswer is what one Metadata answer (or its failure) said of a
// topic.
type topicAnswer struct {
	err   error
	parts map[int32]partitionAnswer
}

type partitionAnswer struct {
	leader int32
	code   int16
}

func (a *topicAnswer) leader(partition int32) (int32, error) {
	if a.err != nil {
		return 0, a.err
	}
	p, ok := a.parts[partition]
	switch {
	case !ok:
		return 0, kerr.UnknownTopicOrPartition
	case p.code != 0:
		return 0, kerrFor(p.code)
	case p.leader < 0:
		return 0, kerr.LeaderNotAvailable
	}
	return p.leader, nil
}

// Lookup returns a Lookup for one request.
func (f *Forwarder) Lookup() *Lookup { return &Lookup{f: f, topics: map[string]*topicAnswer{}} }

// Leader is Forwarder.Leader, asking for topic's metadata at most once in
// this lookup.
func (l *Lookup) Leader(ctx context.Context, topic string, partition int32) (int32, error) {
	return l.f.leader(ctx, topic, partition, l)
}

func (f *Forwarder) leader(ctx context.Context, topic string, partition int32, l *Lookup) (int32, error) {
	if f.d.etcd != nil {
		if v, err := f.d.view(ctx); err == nil && !v.cached {
			if id, ok := f.d.leaseOwner(ctx, v, topic, partition); ok {
				return id, nil
			}
		}
	}
	tp := topicPartition{topic, partition}
	f.mu.Lock()
	id, ok := f.leaders[tp]
	fresh := time.Since(f.metaAt) < metaTTL
	f.mu.Unlock()
	if ok && fresh {
		return id, nil
	}
	if l != nil {
		if a, ok := l.topics[topic]; ok {
			return a.leader(partition)
		}
	}
	a := &topicAnswer{parts: map[int32]partitionAnswer{}}
	md, err := f.refresh(ctx, []string{topic})
	if err != nil {
		a.err = fmt.Errorf("%w: metadata: %w", ErrUnsent, err)
	} else {
		a.err = kerr.UnknownTopicOrPartition
		for _, t := range md.Topics {
			if t.Topic == nil || *t.Topic != topic {
				continue
			}
			a.err = kerrFor(t.ErrorCode)
			for _, p := range t.Partitions {
				a.parts[p.Partition] = partitionAnswer{p.Leader, p.ErrorCode}
			}
		}
	}
	if l != nil {
		l.topics[topic] = a
	}
	return a.leader(partition)
}

// Forget drops what is known of topic/partition's leader (after a broker
// said it does not lead it).
func (f *Forwarder) Forget(topic string, partition int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.leaders, topicPartition{topic, partition})
}

// Coordinator returns the broker coordinating key (typ 0: a group, 1: a
// transactional id), asking any broker when not known.
func (f *Forwarder) Coordinator(ctx context.Context, typ int8, key string) (int32, error) {
	ck := coordKey{typ, key}
	f.mu.Lock()
	id, ok := f.coords[ck]
	f.mu.Unlock()
	if ok {
		return id, nil
	}
	c, err := f.anyConn(ctx)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnsent, err)
	}
	defer f.put(c)
	ver, ok := c.version(kmsg.FindCoordinator.Int16(), 3)
	if !ok {
		return 0, fmt.Errorf("broker %s does not take FindCoordinator", c.addr)
	}
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.SetVersion(ver)
	req.CoordinatorKey, req.CoordinatorType = key, typ
	resp, _, err := c.request(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("%w: find coordinator: %w", ErrUnsent, err)
	}
	fc := resp.(*kmsg.FindCoordinatorResponse)
	if err := kerrFor(fc.ErrorCode); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.coords[ck] = fc.NodeID
	f.addrs[fc.NodeID] = net.JoinHostPort(fc.Host, strconv.Itoa(int(fc.Port)))
	return fc.NodeID, nil
}

// ForgetCoordinator drops a coordinator a broker said it no longer is.
func (f *Forwarder) ForgetCoordinator(typ int8, key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.coords, coordKey{typ, key})
}

// Check connects to a broker (or takes an idle connection) and pings it:
// the listener's part of /readyz.
func (f *Forwarder) Check(ctx context.Context) error {
	c, err := f.anyConn(ctx)
	if err != nil {
		return err
	}
	err = c.ping(ctx)
	f.put(c)
	return err
}

// NotAppended reports a Produce answer after which the broker wrote
// nothing of the batch (see notAppended).
func NotAppended(code int16) bool { return notAppended(code) }

// LeaderMoved reports a Produce or Fetch answer saying the broker does not
// lead the partition (any more).
func LeaderMoved(code int16) bool { return leaderMoved(code) }

// SkipTags skips a tag buffer of a flexible header.
func SkipTags(b []byte) ([]byte, error) { return skipTags(b) }

// MaxResponse is the largest answer read from a broker: a Fetch asked for
// on a client's behalf must ask for less.
const MaxResponse = maxResponseSize
