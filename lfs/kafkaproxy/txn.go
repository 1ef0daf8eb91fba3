package kafkaproxy

import (
	"context"
	"strings"
	"time"

	"github.com/s3seal/s3seal/lfs"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Identity and transactions. The brokers see one principal, s3seal's, so
// s3seal keeps clients apart itself: an authenticated client's
// transactional ids and group ids are sent to the brokers prefixed with
// its name and a slash (a client naming another's transactional id names
// a different one, and cannot fence it), and a client uses only the topics
// MayUse grants it.

// mayUse reports whether the client may use topic.
func (c *conn) mayUse(topic string) bool {
	return c.p.cfg.MayUse == nil || c.p.cfg.MayUse(c.principal, topic)
}

// txnID is the transactional id the brokers see for the client's id.
func (c *conn) txnID(id string) *string {
	if c.principal == "" {
		return &id
	}
	s := idPrefix(c.principal) + id
	return &s
}

// groupID is the group id the brokers see for the client's group.
func (c *conn) groupID(id string) string {
	if c.principal == "" {
		return id
	}
	return idPrefix(c.principal) + id
}

// ownGroup returns the client's name of a group the brokers list, false
// for another client's.
func (c *conn) ownGroup(id string) (string, bool) {
	if c.principal == "" {
		return id, true
	}
	return strings.CutPrefix(id, idPrefix(c.principal))
}

// prefixEscaper writes a principal without slashes, so that the first
// slash of an id the brokers see ends the principal: access keys may
// hold slashes, and "alice" naming "x/t" must not be "alice/x" naming
// "t".
var prefixEscaper = strings.NewReplacer("%", "%25", "/", "%2F")

// idPrefix is what an authenticated principal's transactional and group
// ids are prefixed with: the principal, its "%" and "/" escaped, and a
// slash.
func idPrefix(principal string) string {
	return prefixEscaper.Replace(principal) + "/"
}

// initProducerID forwards a transactional InitProducerID. The coordinator
// fences the transactional id: a transaction still open under it is
// aborted, and no EndTxn says so. That is how a client restarted under
// the same id ends the transaction its previous run left open, and how
// kgo ends one whose EndTxn answer it never got. So s3seal first aborts,
// itself, each transaction of the id it holds blobs of, and deletes them
// once the coordinator answers that abort OK. Any other answer (the
// transaction committed, or is committing) keeps them.
func (c *conn) initProducerID(ctx context.Context, r *kmsg.InitProducerIDRequest) kmsg.Response {
	r.TransactionalID = c.txnID(*r.TransactionalID)
	for _, k := range c.p.txns.openFor(*r.TransactionalID) {
		c.abortLeft(ctx, k)
	}
	return c.toCoordinator(ctx, coordTxn, *r.TransactionalID, r)
}

// abortLeft aborts transaction k, which its producer is leaving, and
// deletes its blobs if the coordinator answers the abort OK.
func (c *conn) abortLeft(ctx context.Context, k txnKey) {
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = k.id, k.pid, k.epoch, false
	code := kerr.UnsupportedVersion.Code
	vs, err := c.p.cfg.Brokers.Versions(ctx)
	// Version 5 on would bump the producer's epoch under it: at most 4,
	// as clients are offered.
	if v, ok := vs[kmsg.EndTxn.Int16()]; err == nil && ok && v[0] <= apis[kmsg.EndTxn].max {
		req.SetVersion(min(v[1], apis[kmsg.EndTxn].max))
		// An abort whose answer was lost is answered OK again: the
		// coordinator takes a retried EndTxn of an ended transaction.
		for attempt := 0; attempt < 3; attempt++ {
			code = kerr.CoordinatorNotAvailable.Code
			if er, ok := c.toCoordinator(ctx, coordTxn, k.id, req).(*kmsg.EndTxnResponse); ok {
				code = er.ErrorCode
			}
			if !retryEnd(code) || !sleepCtx(ctx, time.Duration(attempt+1)*20*time.Millisecond) {
				break
			}
		}
	}
	blobs := c.p.txns.end(k)
	if code != 0 {
		c.p.log.Info("kafka listener: a transaction left open ends with the producer's InitProducerID; its blobs are kept",
			"transactional_id", k.id, "producer_id", k.pid, "epoch", k.epoch, "blobs", len(blobs), "abort", kerr.ErrorForCode(code))
		return
	}
	c.dropAborted(ctx, blobs, "transaction aborted as its producer started again")
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// retryEnd reports the EndTxn answers worth asking again.
func retryEnd(code int16) bool {
	switch code {
	case kerr.CoordinatorNotAvailable.Code, kerr.NotCoordinator.Code, kerr.CoordinatorLoadInProgress.Code, kerr.ConcurrentTransactions.Code:
		return true
	}
	return false
}

// addPartitionsToTxn checks the topics before forwarding: a request
// naming a topic the client may not use is answered without being sent,
// as a broker answers one failing its ACLs.
func (c *conn) addPartitionsToTxn(ctx context.Context, r *kmsg.AddPartitionsToTxnRequest) kmsg.Response {
	denied := false
	for _, t := range r.Topics {
		denied = denied || !c.mayUse(t.Topic)
	}
	if denied {
		resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
		resp.Topics = addPartitionsAnswer(r, func(topic string) int16 {
			if !c.mayUse(topic) {
				return kerr.TopicAuthorizationFailed.Code
			}
			return kerr.OperationNotAttempted.Code
		})
		return resp
	}
	r.TransactionalID = *c.txnID(r.TransactionalID)
	return c.toCoordinator(ctx, coordTxn, r.TransactionalID, r)
}

// addPartitionsAnswer answers each partition r names with the code of
// its topic.
func addPartitionsAnswer(r *kmsg.AddPartitionsToTxnRequest, code func(topic string) int16) []kmsg.AddPartitionsToTxnResponseTopic {
	var out []kmsg.AddPartitionsToTxnResponseTopic
	for _, t := range r.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code(t.Topic)
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	}
	return out
}

// endTxn forwards EndTxn; a committed transaction's blobs are its records'
// from now on, an aborted one's are deleted once the coordinator answered.
func (c *conn) endTxn(ctx context.Context, r *kmsg.EndTxnRequest) kmsg.Response {
	r.TransactionalID = *c.txnID(r.TransactionalID)
	resp := c.toCoordinator(ctx, coordTxn, r.TransactionalID, r)
	er, ok := resp.(*kmsg.EndTxnResponse)
	if !ok || er.ErrorCode != 0 {
		return resp
	}
	blobs := c.p.txns.end(txnKey{r.TransactionalID, r.ProducerID, r.ProducerEpoch})
	if !r.Commit {
		c.dropAborted(ctx, blobs, "transaction aborted")
	}
	return resp
}

// dropAborted deletes the blobs of an aborted transaction, but those a
// committed envelope names: up to EndTxn v4 a producer's consecutive
// transactions share its id and epoch, and an earlier one may have
// committed through another replica, its blobs still in the book. Its
// records are not yet followed by their abort marker, perhaps: the read
// waits a little for the markers of the transactions it judges
// (lognames.go), and keeps the blobs still in doubt for the sweep.
func (c *conn) dropAborted(ctx context.Context, blobs []lfs.KafkaBlob, why string) {
	deleted, _ := c.p.dropUnnamed(ctx, blobs, true, why)
	c.p.metrics.abortedBlobs.Add(float64(deleted))
}
