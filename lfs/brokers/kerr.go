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
