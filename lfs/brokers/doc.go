// Package brokers finds the Kafka brokers the LFS module produces to and
// sends one record to the partition owner.
//
// Brokers come from a static list when one is configured; otherwise from
// etcd in KafScale's layout: the JSON cluster snapshot at
// /kafscale/metadata/snapshot and the partition leases at
// /kafscale/partition-leases/<topic>/<partition>. The snapshot shape read
// here is
//
//	{"Brokers": [{"NodeID": 0, "Host": "broker-0.kafscale", "Port": 9092}, ...]}
//
// (field names match case-insensitively, other fields are ignored; a
// missing key or an empty list means no broker). A lease's value is the
// owning broker's id, a string: KafScale's brokers write their node id in
// decimal ("0"), and, as KafScale's proxy, a lease is resolved by exact
// match against the decimal node ids of the snapshot; one naming no listed
// broker ("broker-a") leaves the Kafka metadata leader as the owner.
//
// Rules (from KafScale PR 319, required by issue 8):
//   - A successful etcd read that lists no broker means there is no broker,
//     whatever the cache holds. When etcd cannot be read, the brokers found
//     last are used only while Config.CacheTTL has not passed since the last
//     SUCCESSFUL read; a failed read never refreshes the cache.
//   - [Discovery.Connect] connects to a broker before the caller writes
//     anything; [Session.Check] re-validates the TTL and the connection right
//     before producing; [Session.Produce] reuses the session's connection
//     when it goes to the partition owner, so a produce opens one broker
//     connection.
//   - Produce goes to the owner (the etcd lease when brokers come from etcd,
//     else the leader in Kafka metadata). On NOT_LEADER_OR_FOLLOWER,
//     LEADER_NOT_AVAILABLE, FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH it
//     refreshes the route and retries the current owner, at most
//     maxAttempts brokers, checking the TTL before each attempt.
//   - Metadata asks the broker to create a missing topic, as Kafka's own
//     producers do; a topic or partition without a leader yet is asked for
//     again within Config.TopicWait without using up an attempt.
//
// The Kafka wire protocol is franz-go's kmsg, spoken over one net.Conn per
// session (see conn.go for why not kgo.Client), over TLS when Config.TLS is
// set and authenticated with Config.SASL (franz-go's sasl mechanisms,
// auth.go) when that is set.
package brokers

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrNoBroker means no broker can be reached (or etcd lists none, or the cache
// TTL passed), or no broker accepted the record as partition owner. Nothing
// was written to Kafka: the caller answers 503 backend_unavailable and must
// not have written (or must delete) the object.
var ErrNoBroker = errors.New("no broker available")

// ErrSentThenFailed wraps a produce failure after the request was sent: the
// broker may have written the record, so the object is kept and counted as
// an orphan. Match with errors.Is.
var ErrSentThenFailed = errors.New("produce sent, then failed")

// ErrNoPartition means the broker lists the topic but not the partition
// asked for: the topic exists, the partition does not. It wraps
// kerr.UnknownTopicOrPartition, the code a broker gives for both, so that
// a caller can tell this case from a missing topic, which a broker's
// answer alone cannot.
var ErrNoPartition = fmt.Errorf("the topic has no such partition: %w", kerr.UnknownTopicOrPartition)
