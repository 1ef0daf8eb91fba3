package lfs

import (
	"context"
	"errors"
)

// The broker side of the module, as package lfs needs it. lfs/brokers
// implements it (Discovery, Session); cmd/s3seal adapts one to the other.
// The sentinel errors mean what brokers.ErrNoBroker and
// brokers.ErrSentThenFailed mean; the adapter maps those onto these (or,
// once both packages are merged, these become aliases of those).

// ErrNoBroker: no broker can be reached, or none accepted the record. The
// object must not be written, or must be deleted; the client gets 503
// backend_unavailable.
var ErrNoBroker = errors.New("no broker available")

// ErrSentThenFailed: the produce request was sent and then failed, so the
// broker may have written the record. The object is kept and counted as an
// orphan.
var ErrSentThenFailed = errors.New("produce sent, then failed")

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
