package kafkaproxy

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/lfs/brokers"
)

// Requests other than Produce and those s3seal answers are forwarded: by
// partition to each partition's leader (Fetch, ListOffsets,
// OffsetForLeaderEpoch), the answers merged; to the group or transaction
// coordinator the request names; or to any broker. A coordinator's
// request no broker answered is answered COORDINATOR_NOT_AVAILABLE (see
// coordinatorUnavailable); any other closes the client's connection, which
// every client takes as a network error to retry after asking for
// metadata again.

const (
	coordGroup = 0
	coordTxn   = 1
)

// forward sends req where it belongs and returns the answer; nil ends the
// connection.
func (c *conn) forward(ctx context.Context, req kmsg.Request) kmsg.Response {
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		return c.fetch(ctx, r)
	case *kmsg.ListOffsetsRequest:
		return c.listOffsets(ctx, r)
	case *kmsg.OffsetForLeaderEpochRequest:
		return c.offsetForLeaderEpoch(ctx, r)
	case *kmsg.InitProducerIDRequest:
		if r.TransactionalID == nil {
			return c.send(ctx, brokers.AnyBroker, req)
		}
		return c.initProducerID(ctx, r)
	case *kmsg.AddPartitionsToTxnRequest:
		return c.addPartitionsToTxn(ctx, r)
	case *kmsg.AddOffsetsToTxnRequest:
		r.TransactionalID = *c.txnID(r.TransactionalID)
		r.Group = c.groupID(r.Group)
		return c.toCoordinator(ctx, coordTxn, r.TransactionalID, req)
	case *kmsg.EndTxnRequest:
		return c.endTxn(ctx, r)
	case *kmsg.TxnOffsetCommitRequest:
		r.TransactionalID = *c.txnID(r.TransactionalID)
		r.Group = c.groupID(r.Group)
		r.Topics = keepTopics(c, r.Topics, func(t kmsg.TxnOffsetCommitRequestTopic) string { return t.Topic })
		return c.toCoordinator(ctx, coordGroup, r.Group, req)
	case *kmsg.OffsetCommitRequest:
		r.Group = c.groupID(r.Group)
		r.Topics = keepTopics(c, r.Topics, func(t kmsg.OffsetCommitRequestTopic) string { return t.Topic })
		return c.toCoordinator(ctx, coordGroup, r.Group, req)
	case *kmsg.OffsetFetchRequest:
		r.Group = c.groupID(r.Group)
		if r.Topics != nil {
			r.Topics = keepTopics(c, r.Topics, func(t kmsg.OffsetFetchRequestTopic) string { return t.Topic })
		}
		resp := c.toCoordinator(ctx, coordGroup, r.Group, req)
		if of, ok := resp.(*kmsg.OffsetFetchResponse); ok {
			of.Topics = keepTopics(c, of.Topics, func(t kmsg.OffsetFetchResponseTopic) string { return t.Topic })
		}
		return resp
	case *kmsg.JoinGroupRequest:
		r.Group = c.groupID(r.Group)
		return c.toCoordinator(ctx, coordGroup, r.Group, req)
	case *kmsg.SyncGroupRequest:
		r.Group = c.groupID(r.Group)
		return c.toCoordinator(ctx, coordGroup, r.Group, req)
	case *kmsg.HeartbeatRequest:
		r.Group = c.groupID(r.Group)
		return c.toCoordinator(ctx, coordGroup, r.Group, req)
	case *kmsg.LeaveGroupRequest:
		r.Group = c.groupID(r.Group)
		return c.toCoordinator(ctx, coordGroup, r.Group, req)
	case *kmsg.DescribeGroupsRequest:
		return c.describeGroups(ctx, r)
	case *kmsg.ListGroupsRequest:
		resp := c.send(ctx, brokers.AnyBroker, req)
		if lg, ok := resp.(*kmsg.ListGroupsResponse); ok {
			kept := lg.Groups[:0]
			for _, g := range lg.Groups {
				if name, ok := c.ownGroup(g.Group); ok {
					g.Group = name
					kept = append(kept, g)
				}
			}
			lg.Groups = kept
		}
		return resp
	}
	return nil
}

// send forwards req to broker id; nil when it could not be answered.
func (c *conn) send(ctx context.Context, id int32, req kmsg.Request) kmsg.Response {
	resp, err := c.p.cfg.Brokers.Send(ctx, id, req)
	if err != nil {
		c.p.log.Info("kafka listener: forwarding failed; closing the client's connection",
			"api", kmsg.NameForKey(req.Key()), "broker", id, "err", err)
		c.p.metrics.brokerErrors.Inc()
		return nil
	}
	return resp
}

// toCoordinator forwards req to the coordinator of key; an answer saying
// the broker is not (or no longer) it makes s3seal ask again next time.
func (c *conn) toCoordinator(ctx context.Context, typ int8, key string, req kmsg.Request) kmsg.Response {
	id, err := c.p.cfg.Brokers.Coordinator(ctx, typ, key)
	if err != nil {
		c.p.log.Info("kafka listener: no coordinator", "type", typ, "err", err)
		c.p.metrics.brokerErrors.Inc()
		return nil
	}
	resp := c.send(ctx, id, req)
	if resp == nil || coordinatorMoved(resp) {
		c.p.cfg.Brokers.ForgetCoordinator(typ, key)
	}
	return resp
}

// coordinatorUnavailable is the answer to a request no broker answered
// when it is a coordinator's (or an InitProducerID or ListGroups, which
// any broker answers): COORDINATOR_NOT_AVAILABLE, as a broker whose
// coordinator moved answers. Clients look the coordinator up again
// (s3seal) and retry on the same connection. A closed connection would
// do less: kgo does not retry a request that was the first on its
// connection, and gives up a producer id or an EndTxn. A request the
// coordinator acted on before its answer was lost is safe to retry: it
// answers a retried EndTxn of a transaction it already ended as it did
// the first. Nil, closing the connection, for other requests.
func coordinatorUnavailable(req kmsg.Request) kmsg.Response {
	code := kerr.CoordinatorNotAvailable.Code
	resp := req.ResponseKind()
	switch r := resp.(type) {
	case *kmsg.InitProducerIDResponse:
		r.ErrorCode, r.ProducerID, r.ProducerEpoch = code, -1, -1
	case *kmsg.EndTxnResponse:
		r.ErrorCode, r.ProducerID, r.ProducerEpoch = code, -1, -1
	case *kmsg.AddOffsetsToTxnResponse:
		r.ErrorCode = code
	case *kmsg.JoinGroupResponse:
		r.ErrorCode, r.Generation = code, -1
	case *kmsg.SyncGroupResponse:
		r.ErrorCode = code
	case *kmsg.HeartbeatResponse:
		r.ErrorCode = code
	case *kmsg.LeaveGroupResponse:
		r.ErrorCode = code
	case *kmsg.ListGroupsResponse:
		r.ErrorCode = code
	case *kmsg.AddPartitionsToTxnResponse:
		r.Topics = addPartitionsAnswer(req.(*kmsg.AddPartitionsToTxnRequest), func(string) int16 { return code })
	case *kmsg.TxnOffsetCommitResponse:
		for _, t := range req.(*kmsg.TxnOffsetCommitRequest).Topics {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
	case *kmsg.OffsetCommitResponse:
		for _, t := range req.(*kmsg.OffsetCommitRequest).Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
	case *kmsg.OffsetFetchResponse:
		// v2 on has the top-level code; v1 only the partitions'.
		r.ErrorCode = code
		for _, t := range req.(*kmsg.OffsetFetchRequest).Topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.Offset = p, code, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
	case *kmsg.DescribeGroupsResponse:
		for _, g := range req.(*kmsg.DescribeGroupsRequest).Groups {
			rg := kmsg.NewDescribeGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, code
			r.Groups = append(r.Groups, rg)
		}
	default:
		return nil
	}
	return resp
}

// coordinatorMoved reports an answer saying the broker is not the
// coordinator (any more).
func coordinatorMoved(resp kmsg.Response) bool {
	code := int16(0)
	switch r := resp.(type) {
	case *kmsg.InitProducerIDResponse:
		code = r.ErrorCode
	case *kmsg.EndTxnResponse:
		code = r.ErrorCode
	case *kmsg.AddOffsetsToTxnResponse:
		code = r.ErrorCode
	case *kmsg.JoinGroupResponse:
		code = r.ErrorCode
	case *kmsg.SyncGroupResponse:
		code = r.ErrorCode
	case *kmsg.HeartbeatResponse:
		code = r.ErrorCode
	case *kmsg.LeaveGroupResponse:
		code = r.ErrorCode
	case *kmsg.OffsetFetchResponse:
		code = r.ErrorCode
	case *kmsg.OffsetCommitResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				code = max(code, p.ErrorCode)
			}
		}
	case *kmsg.TxnOffsetCommitResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				code = max(code, p.ErrorCode)
			}
		}
	case *kmsg.AddPartitionsToTxnResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				code = max(code, p.ErrorCode)
			}
		}
	}
	return code == kerr.NotCoordinator.Code || code == kerr.CoordinatorNotAvailable.Code
}

// keepTopics drops the topics the client may not use.
func keepTopics[T any](c *conn, ts []T, name func(T) string) []T {
	kept := ts[:0]
	for _, t := range ts {
		if c.mayUse(name(t)) {
			kept = append(kept, t)
		}
	}
	return kept
}

// byLeader groups topic partitions by the broker leading each; those
// without a leader are returned apart with the error to answer them with.
func (c *conn) byLeader(ctx context.Context, each func(yield func(topic string, partition int32))) (map[int32]map[string][]int32, map[string]map[int32]int16) {
	out := map[int32]map[string][]int32{}
	failed := map[string]map[int32]int16{}
	leaders := c.p.cfg.Brokers.Lookup()
	each(func(topic string, partition int32) {
		code := int16(0)
		var id int32
		if !c.mayUse(topic) {
			code = kerr.TopicAuthorizationFailed.Code
		} else {
			var err error
			if id, err = leaders.Leader(ctx, topic, partition); err != nil {
				code = kerr.NotLeaderForPartition.Code
				if ke, ok := err.(*kerr.Error); ok {
					code = ke.Code
				}
			}
		}
		if code != 0 {
			if failed[topic] == nil {
				failed[topic] = map[int32]int16{}
			}
			failed[topic][partition] = code
			return
		}
		if out[id] == nil {
			out[id] = map[string][]int32{}
		}
		out[id][topic] = append(out[id][topic], partition)
	})
	return out, failed
}

// splitByLeader sends the partitions each names to their leaders, one
// request per leader built by mk, and merges the answers; a partition
// without a leader or whose leader does not answer is answered by fail.
func (c *conn) splitByLeader(ctx context.Context, each func(yield func(string, int32)), mk func(map[string][]int32) kmsg.Request,
	merge func(kmsg.Response), fail func(topic string, partition int32, code int16)) {
	groups, failed := c.byLeader(ctx, each)
	for t, ps := range failed {
		for p, code := range ps {
			fail(t, p, code)
		}
	}
	c.fanOut(ctx, groups, mk, merge, func(t string, p int32) { fail(t, p, kerr.NotLeaderForPartition.Code) })
}

// fanOut sends one request per leader, built by mk, in parallel, and
// calls merge with each answer; a leader that fails gets fail for its
// partitions.
func (c *conn) fanOut(ctx context.Context, groups map[int32]map[string][]int32, mk func(map[string][]int32) kmsg.Request,
	merge func(kmsg.Response), fail func(topic string, partition int32)) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, tps := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.p.cfg.Brokers.Send(ctx, id, mk(tps))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				c.p.metrics.brokerErrors.Inc()
				c.p.log.Info("kafka listener: a leader did not answer", "broker", id, "err", err)
				for t, ps := range tps {
					for _, p := range ps {
						c.p.cfg.Brokers.Forget(t, p)
						fail(t, p)
					}
				}
				return
			}
			merge(resp)
		}()
	}
	wg.Wait()
}

func has(ps []int32, p int32) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}
