package lfs

import (
	"context"

	"github.com/s3seal/s3seal/lfs/brokers"
)

// The broker side of the module, as package lfs needs it. lfs/brokers
// implements it (Discovery, Session), through FromDiscovery; the sentinel
// errors are package brokers'.

// ErrNoBroker means no broker can be reached, or none accepted the record. The
// object must not be written, or must be deleted; the client gets 503
// backend_unavailable.
var ErrNoBroker = brokers.ErrNoBroker

// ErrSentThenFailed means the produce request was sent and then failed, so the
// broker may have written the record. The object is kept and counted as an
// orphan.
var ErrSentThenFailed = brokers.ErrSentThenFailed

// Produced is where a record landed.
type Produced struct {
	Partition int32
	Offset    int64
}

// Producer opens broker sessions.
type Producer interface {
	// Connect returns a checked broker connection, or an error matching
	// ErrNoBroker when no broker can be reached.
	Connect(ctx context.Context) (Session, error)
}

// Session is one broker connection, kept from before an upload to the
// produce after it.
type Session interface {
	// Check re-validates the session right before producing (errors match
	// ErrNoBroker).
	Check(ctx context.Context) error
	// Produce sends one record. partition < 0 lets the key's hash choose
	// (Kafka's default partitioner).
	Produce(ctx context.Context, topic string, partition int32, key, value []byte, headers map[string][]byte) (Produced, error)
	Close() error
}

// TopicChecker is a Session that can tell, before the upload, that the
// broker refuses the topic or partition (errors as Produce's: nothing was
// sent). Sessions without it are checked by their Produce only.
type TopicChecker interface {
	CheckTopic(ctx context.Context, topic string, partition int32) error
}

// FromDiscovery is the Producer over s3seal's broker discovery.
func FromDiscovery(d *brokers.Discovery) Producer { return discoveryProducer{d} }

type discoveryProducer struct{ d *brokers.Discovery }

func (p discoveryProducer) Connect(ctx context.Context) (Session, error) {
	s, err := p.d.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return discoverySession{s}, nil
}

type discoverySession struct{ s *brokers.Session }

func (s discoverySession) Check(ctx context.Context) error { return s.s.Check(ctx) }
func (s discoverySession) CheckTopic(ctx context.Context, topic string, partition int32) error {
	return s.s.CheckTopic(ctx, topic, partition)
}
func (s discoverySession) Close() error { return s.s.Close() }

func (s discoverySession) Produce(ctx context.Context, topic string, partition int32, key, value []byte, headers map[string][]byte) (Produced, error) {
	p, err := s.s.Produce(ctx, topic, partition, key, value, headers)
	return Produced{Partition: p.Partition, Offset: p.Offset}, err
}
