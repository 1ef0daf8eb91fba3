package brokers

import "github.com/twmb/franz-go/pkg/kerr"

// kerrFor turns a Kafka error code into an error (nil for 0).
func kerrFor(code int16) error { return kerr.ErrorForCode(code) }

// leaderMoved reports the answers after which the produce is retried on the
// current partition owner: the broker did not write the record.
func leaderMoved(code int16) bool {
	switch kerr.ErrorForCode(code) {
	case kerr.NotLeaderForPartition, kerr.LeaderNotAvailable,
		kerr.FencedLeaderEpoch, kerr.UnknownLeaderEpoch:
		return true
	}
	return false
}

// notAppended reports the Produce answers a broker gives before it appends
// anything (the topic or partition is gone, an ACL, a record or request it
// will not take, too few in-sync replicas to start): the record was not
// written, so its blob can be removed. NOT_ENOUGH_REPLICAS_AFTER_APPEND
// and REQUEST_TIMED_OUT are not among them: the record may exist.
func notAppended(code int16) bool {
	switch kerr.ErrorForCode(code) {
	case kerr.UnknownTopicOrPartition, kerr.TopicAuthorizationFailed,
		kerr.InvalidTopicException, kerr.MessageTooLarge,
		kerr.RecordListTooLarge, kerr.CorruptMessage, kerr.InvalidRecord,
		kerr.NotEnoughReplicas, kerr.InvalidRequiredAcks,
		kerr.InvalidTimestamp, kerr.UnsupportedForMessageFormat:
		return true
	}
	return false
}
