package brokers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcd keys of KafScale's layout.
const (
	snapshotKey = "/kafscale/metadata/snapshot"
	leasePrefix = "/kafscale/partition-leases/"
)

// snapshot is the part of KafScale's cluster snapshot read here.
type snapshot struct {
	Brokers []struct {
		NodeID int32
		Host   string
		Port   int32
	}
}

type broker struct {
	id   int32 // -1 for a static address
	addr string
}

// view is the broker list a decision is made on.
type view struct {
	brokers  []broker
	fromEtcd bool
	cached   bool // etcd unreadable, brokers from the cache (within the TTL)
}

func (v view) addrOf(id int32) (string, bool) {
	for _, b := range v.brokers {
		if b.id == id && id >= 0 {
			return b.addr, true
		}
	}
	return "", false
}

// Discovery finds brokers and opens sessions. Safe for concurrent use.
type Discovery struct {
	cfg  Config
	etcd *clientv3.Client
	next atomic.Uint32 // round-robin start for Connect

	mu     sync.Mutex
	cache  []broker  // brokers of the last successful etcd read
	lastOK time.Time // time of the last successful etcd read
}

// New returns a Discovery for cfg. With a static list it never touches
// etcd; otherwise it creates an etcd client (lazy: an unreachable etcd is
// not an error here, only when brokers are looked up).
func New(ctx context.Context, cfg Config) (*Discovery, error) {
	cfg = cfg.withDefaults()
	d := &Discovery{cfg: cfg}
	if len(cfg.Static) > 0 {
		for _, a := range cfg.Static {
			if _, _, err := net.SplitHostPort(strings.TrimSpace(a)); err != nil {
				return nil, fmt.Errorf("lfs brokers: bad broker address %q: %w", a, err)
			}
		}
		return d, nil
	}
	if len(cfg.EtcdEndpoints) == 0 {
		return nil, errors.New("lfs brokers: neither static brokers nor etcd endpoints configured")
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.EtcdEndpoints,
		DialTimeout: cfg.EtcdTimeout,
		Context:     context.WithoutCancel(ctx),
		Logger:      zap.NewNop(), // this package logs through cfg.Logger
	})
	if err != nil {
		return nil, fmt.Errorf("lfs brokers: etcd client: %w", err)
	}
	d.etcd = cli
	return d, nil
}

// Close releases the etcd client. Sessions stay usable for the static list.
func (d *Discovery) Close() error {
	if d.etcd != nil {
		return d.etcd.Close()
	}
	return nil
}

// view returns the brokers to use now, applying the seed's rules: static
// wins; a successful etcd read is the truth (none listed: ErrNoBroker); a
// failed read falls back to the cache only while CacheTTL has not passed
// since the last successful read, and never refreshes it.
func (d *Discovery) view(ctx context.Context) (view, error) {
	if len(d.cfg.Static) > 0 {
		v := view{}
		for _, a := range d.cfg.Static {
			v.brokers = append(v.brokers, broker{id: -1, addr: strings.TrimSpace(a)})
		}
		return v, nil
	}
	list, err := d.readSnapshot(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		d.cache, d.lastOK = list, time.Now()
		if len(list) == 0 {
			return view{}, fmt.Errorf("%w: etcd lists no brokers", ErrNoBroker)
		}
		return view{brokers: list, fromEtcd: true}, nil
	}
	if len(d.cache) == 0 {
		return view{}, fmt.Errorf("%w: etcd: %w", ErrNoBroker, err)
	}
	if age := time.Since(d.lastOK); age >= d.cfg.CacheTTL {
		return view{}, fmt.Errorf("%w: etcd unreadable and broker cache %s old (ttl %s): %w",
			ErrNoBroker, age.Round(time.Millisecond), d.cfg.CacheTTL, err)
	}
	d.cfg.Logger.Warn("lfs brokers: etcd unreadable, using cached brokers", "err", err)
	return view{brokers: d.cache, fromEtcd: true, cached: true}, nil
}

func (d *Discovery) readSnapshot(ctx context.Context) ([]broker, error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.EtcdTimeout)
	defer cancel()
	resp, err := d.etcd.Get(ctx, snapshotKey)
	if err != nil {
		return nil, err
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	var snap snapshot
	if err := json.Unmarshal(resp.Kvs[0].Value, &snap); err != nil {
		return nil, fmt.Errorf("decode %s: %w", snapshotKey, err)
	}
	var list []broker
	for _, b := range snap.Brokers {
		if b.Host == "" || b.Port <= 0 {
			continue
		}
		list = append(list, broker{id: b.NodeID, addr: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))})
	}
	return list, nil
}

// leaseOwner reads the owner of topic/partition from etcd and resolves it
// to a broker of v as KafScale's proxy does: a lease holds the owner's
// broker id as a string (KafScale's brokers write their node id in
// decimal), matched exactly against the decimal node id of each broker in
// the snapshot. ok is false when there is no lease, it cannot be read, or
// it names no listed broker (a string id such as "broker-a", or a broker
// gone from the snapshot); the caller then uses the Kafka metadata leader.
func (d *Discovery) leaseOwner(ctx context.Context, v view, topic string, partition int32) (int32, bool) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.EtcdTimeout)
	defer cancel()
	key := leasePrefix + topic + "/" + strconv.Itoa(int(partition))
	resp, err := d.etcd.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 {
		return -1, false
	}
	owner := string(resp.Kvs[0].Value)
	for _, b := range v.brokers {
		if b.id >= 0 && strconv.Itoa(int(b.id)) == owner {
			return b.id, true
		}
	}
	d.cfg.Logger.Debug("lfs brokers: partition lease names no listed broker; using the Kafka metadata leader",
		"key", key, "owner", owner)
	return -1, false
}

// Connect returns a session holding a checked connection to one of the
// brokers (tried in turn, starting round robin). ErrNoBroker when there is
// no broker or none can be reached. Call it before writing anything.
func (d *Discovery) Connect(ctx context.Context) (*Session, error) {
	v, err := d.view(ctx)
	if err != nil {
		return nil, err
	}
	c, err := d.connectAny(ctx, v)
	if err != nil {
		return nil, err
	}
	return &Session{d: d, conn: c}, nil
}

func (d *Discovery) connectAny(ctx context.Context, v view) (*brokerConn, error) {
	start := int(d.next.Add(1))
	var errs []error
	for i := range v.brokers {
		b := v.brokers[(start+i)%len(v.brokers)]
		c, err := dialBroker(ctx, d.cfg, b.id, b.addr)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("%w: %w", ErrNoBroker, errors.Join(errs...))
}
