package kafkaproxy

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/s3seal/s3seal/lfs/brokers"
)

// The requests split by partition leader: Fetch, ListOffsets and
// OffsetForLeaderEpoch.

// fetch forwards a Fetch to each leader, without fetch sessions (s3seal
// answers session id 0, so clients send full fetches), its MaxBytes capped
// at MaxRequest, and merges the answers.
func (c *conn) fetch(ctx context.Context, req *kmsg.FetchRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	groups, failed := c.byLeader(ctx, func(yield func(string, int32)) {
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				yield(t.Topic, p.Partition)
			}
		}
	})
	byTopic := map[string]int{}
	add := func(t kmsg.FetchResponseTopic) {
		i, ok := byTopic[t.Topic]
		if !ok {
			byTopic[t.Topic] = len(resp.Topics)
			resp.Topics = append(resp.Topics, t)
			return
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, t.Partitions...)
	}
	fail := func(topic string, partition int32, code int16) {
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition, p.ErrorCode, p.HighWatermark, p.LastStableOffset = partition, code, -1, -1
		t := kmsg.NewFetchResponseTopic()
		t.Topic, t.Partitions = topic, []kmsg.FetchResponseTopicPartition{p}
		add(t)
	}
	for t, ps := range failed {
		for p, code := range ps {
			fail(t, p, code)
		}
	}
	mk := func(tps map[string][]int32) kmsg.Request {
		r := *req
		r.SessionID, r.SessionEpoch, r.ForgottenTopics = 0, -1, nil
		limit := int32(min(c.p.cfg.MaxRequest, brokers.MaxResponse-1<<20))
		r.MaxBytes = min(r.MaxBytes, limit)
		if r.MaxBytes <= 0 {
			r.MaxBytes = limit
		}
		r.Topics = nil
		for _, t := range req.Topics {
			ps := tps[t.Topic]
			var keep []kmsg.FetchRequestTopicPartition
			for _, p := range t.Partitions {
				if has(ps, p.Partition) {
					keep = append(keep, p)
				}
			}
			if len(keep) > 0 {
				nt := t
				nt.Partitions = keep
				r.Topics = append(r.Topics, nt)
			}
		}
		return &r
	}
	c.fanOut(ctx, groups, mk, func(kr kmsg.Response) {
		fr := kr.(*kmsg.FetchResponse)
		resp.ThrottleMillis = max(resp.ThrottleMillis, fr.ThrottleMillis)
		if fr.ErrorCode != 0 && resp.ErrorCode == 0 {
			resp.ErrorCode = fr.ErrorCode
		}
		for _, t := range fr.Topics {
			for i := range t.Partitions {
				p := &t.Partitions[i]
				if p.CurrentLeader.LeaderID >= 0 {
					p.CurrentLeader.LeaderID = nodeID
				}
				if c.p.cfg.Brokers != nil && leaderMovedCode(p.ErrorCode) {
					c.p.cfg.Brokers.Forget(t.Topic, p.Partition)
				}
			}
			add(t)
		}
	}, func(t string, p int32) { fail(t, p, kerr.NotLeaderForPartition.Code) })
	resp.SessionID = 0
	resp.Brokers = nil
	return resp
}

func (c *conn) listOffsets(ctx context.Context, req *kmsg.ListOffsetsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	groups, failed := c.byLeader(ctx, func(yield func(string, int32)) {
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				yield(t.Topic, p.Partition)
			}
		}
	})
	fail := func(topic string, partition int32, code int16) {
		p := kmsg.NewListOffsetsResponseTopicPartition()
		p.Partition, p.ErrorCode = partition, code
		t := kmsg.NewListOffsetsResponseTopic()
		t.Topic, t.Partitions = topic, []kmsg.ListOffsetsResponseTopicPartition{p}
		resp.Topics = append(resp.Topics, t)
	}
	for t, ps := range failed {
		for p, code := range ps {
			fail(t, p, code)
		}
	}
	mk := func(tps map[string][]int32) kmsg.Request {
		r := *req
		r.Topics = nil
		for _, t := range req.Topics {
			var keep []kmsg.ListOffsetsRequestTopicPartition
			for _, p := range t.Partitions {
				if has(tps[t.Topic], p.Partition) {
					keep = append(keep, p)
				}
			}
			if len(keep) > 0 {
				nt := t
				nt.Partitions = keep
				r.Topics = append(r.Topics, nt)
			}
		}
		return &r
	}
	c.fanOut(ctx, groups, mk, func(kr kmsg.Response) {
		lr := kr.(*kmsg.ListOffsetsResponse)
		resp.ThrottleMillis = max(resp.ThrottleMillis, lr.ThrottleMillis)
		resp.Topics = append(resp.Topics, lr.Topics...)
	}, func(t string, p int32) { fail(t, p, kerr.NotLeaderForPartition.Code) })
	return resp
}

func (c *conn) offsetForLeaderEpoch(ctx context.Context, req *kmsg.OffsetForLeaderEpochRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	groups, failed := c.byLeader(ctx, func(yield func(string, int32)) {
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				yield(t.Topic, p.Partition)
			}
		}
	})
	fail := func(topic string, partition int32, code int16) {
		p := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
		p.Partition, p.ErrorCode, p.LeaderEpoch, p.EndOffset = partition, code, -1, -1
		t := kmsg.NewOffsetForLeaderEpochResponseTopic()
		t.Topic, t.Partitions = topic, []kmsg.OffsetForLeaderEpochResponseTopicPartition{p}
		resp.Topics = append(resp.Topics, t)
	}
	for t, ps := range failed {
		for p, code := range ps {
			fail(t, p, code)
		}
	}
	mk := func(tps map[string][]int32) kmsg.Request {
		r := *req
		r.Topics = nil
		for _, t := range req.Topics {
			var keep []kmsg.OffsetForLeaderEpochRequestTopicPartition
			for _, p := range t.Partitions {
				if has(tps[t.Topic], p.Partition) {
					keep = append(keep, p)
				}
			}
			if len(keep) > 0 {
				nt := t
				nt.Partitions = keep
				r.Topics = append(r.Topics, nt)
			}
		}
		return &r
	}
	c.fanOut(ctx, groups, mk, func(kr kmsg.Response) {
		or := kr.(*kmsg.OffsetForLeaderEpochResponse)
		resp.ThrottleMillis = max(resp.ThrottleMillis, or.ThrottleMillis)
		resp.Topics = append(resp.Topics, or.Topics...)
	}, func(t string, p int32) { fail(t, p, kerr.NotLeaderForPartition.Code) })
	return resp
}

// describeGroups asks each group's coordinator.
func (c *conn) describeGroups(ctx context.Context, req *kmsg.DescribeGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, g := range req.Groups {
		one := *req
		gid := c.groupID(g)
		one.Groups = []string{gid}
		kr := c.toCoordinator(ctx, coordGroup, gid, &one)
		if kr == nil {
			return nil
		}
		dr := kr.(*kmsg.DescribeGroupsResponse)
		resp.ThrottleMillis = max(resp.ThrottleMillis, dr.ThrottleMillis)
		for _, d := range dr.Groups {
			d.Group = g
			resp.Groups = append(resp.Groups, d)
		}
	}
	return resp
}

func leaderMovedCode(code int16) bool {
	switch code {
	case kerr.NotLeaderForPartition.Code, kerr.LeaderNotAvailable.Code, kerr.FencedLeaderEpoch.Code,
		kerr.UnknownLeaderEpoch.Code, kerr.UnknownTopicOrPartition.Code:
		return true
	}
	return false
}
