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
// below the largest answer s3seal reads, and merges the answers.
func (c *conn) fetch(ctx context.Context, req *kmsg.FetchRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
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
	sp := partitioned[kmsg.FetchRequestTopic, kmsg.FetchRequestTopicPartition]{req.Topics,
		func(t kmsg.FetchRequestTopic) (string, []kmsg.FetchRequestTopicPartition) {
			return t.Topic, t.Partitions
		},
		func(p kmsg.FetchRequestTopicPartition) int32 { return p.Partition },
		func(t kmsg.FetchRequestTopic, ps []kmsg.FetchRequestTopicPartition) kmsg.FetchRequestTopic {
			t.Partitions = ps
			return t
		}}
	limit := int32(min(c.p.cfg.MaxRequest, brokers.MaxResponse-1<<20))
	c.splitByLeader(ctx, sp.each, func(tps map[string][]int32) kmsg.Request {
		r := *req
		r.SessionID, r.SessionEpoch, r.ForgottenTopics = 0, -1, nil
		if r.MaxBytes = min(r.MaxBytes, limit); r.MaxBytes <= 0 {
			r.MaxBytes = limit
		}
		r.Topics = sp.only(tps)
		return &r
	}, func(kr kmsg.Response) {
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
				if leaderMovedCode(p.ErrorCode) {
					c.p.cfg.Brokers.Forget(t.Topic, p.Partition)
				}
			}
			add(t)
		}
	}, func(topic string, partition int32, code int16) {
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition, p.ErrorCode, p.HighWatermark, p.LastStableOffset = partition, code, -1, -1
		t := kmsg.NewFetchResponseTopic()
		t.Topic, t.Partitions = topic, []kmsg.FetchResponseTopicPartition{p}
		add(t)
	})
	resp.SessionID = 0
	resp.Brokers = nil
	return resp
}

func (c *conn) listOffsets(ctx context.Context, req *kmsg.ListOffsetsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	sp := partitioned[kmsg.ListOffsetsRequestTopic, kmsg.ListOffsetsRequestTopicPartition]{req.Topics,
		func(t kmsg.ListOffsetsRequestTopic) (string, []kmsg.ListOffsetsRequestTopicPartition) {
			return t.Topic, t.Partitions
		},
		func(p kmsg.ListOffsetsRequestTopicPartition) int32 { return p.Partition },
		func(t kmsg.ListOffsetsRequestTopic, ps []kmsg.ListOffsetsRequestTopicPartition) kmsg.ListOffsetsRequestTopic {
			t.Partitions = ps
			return t
		}}
	c.splitByLeader(ctx, sp.each, func(tps map[string][]int32) kmsg.Request {
		r := *req
		r.Topics = sp.only(tps)
		return &r
	}, func(kr kmsg.Response) {
		lr := kr.(*kmsg.ListOffsetsResponse)
		resp.ThrottleMillis = max(resp.ThrottleMillis, lr.ThrottleMillis)
		resp.Topics = append(resp.Topics, lr.Topics...)
	}, func(topic string, partition int32, code int16) {
		p := kmsg.NewListOffsetsResponseTopicPartition()
		p.Partition, p.ErrorCode = partition, code
		t := kmsg.NewListOffsetsResponseTopic()
		t.Topic, t.Partitions = topic, []kmsg.ListOffsetsResponseTopicPartition{p}
		resp.Topics = append(resp.Topics, t)
	})
	return resp
}

func (c *conn) offsetForLeaderEpoch(ctx context.Context, req *kmsg.OffsetForLeaderEpochRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	sp := partitioned[kmsg.OffsetForLeaderEpochRequestTopic, kmsg.OffsetForLeaderEpochRequestTopicPartition]{req.Topics,
		func(t kmsg.OffsetForLeaderEpochRequestTopic) (string, []kmsg.OffsetForLeaderEpochRequestTopicPartition) {
			return t.Topic, t.Partitions
		},
		func(p kmsg.OffsetForLeaderEpochRequestTopicPartition) int32 { return p.Partition },
		func(t kmsg.OffsetForLeaderEpochRequestTopic, ps []kmsg.OffsetForLeaderEpochRequestTopicPartition) kmsg.OffsetForLeaderEpochRequestTopic {
			t.Partitions = ps
			return t
		}}
	c.splitByLeader(ctx, sp.each, func(tps map[string][]int32) kmsg.Request {
		r := *req
		r.Topics = sp.only(tps)
		return &r
	}, func(kr kmsg.Response) {
		or := kr.(*kmsg.OffsetForLeaderEpochResponse)
		resp.ThrottleMillis = max(resp.ThrottleMillis, or.ThrottleMillis)
		resp.Topics = append(resp.Topics, or.Topics...)
	}, func(topic string, partition int32, code int16) {
		p := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
		p.Partition, p.ErrorCode, p.LeaderEpoch, p.EndOffset = partition, code, -1, -1
		t := kmsg.NewOffsetForLeaderEpochResponseTopic()
		t.Topic, t.Partitions = topic, []kmsg.OffsetForLeaderEpochResponseTopicPartition{p}
		resp.Topics = append(resp.Topics, t)
	})
	return resp
}

// partitioned reads and cuts the topics of a request that names
// partitions (T a topic, P one of its partitions).
type partitioned[T, P any] struct {
	topics []T
	of     func(T) (string, []P)
	number func(P) int32
	with   func(T, []P) T
}

func (s partitioned[T, P]) each(yield func(string, int32)) {
	for _, t := range s.topics {
		name, ps := s.of(t)
		for _, p := range ps {
			yield(name, s.number(p))
		}
	}
}

// only returns the topics with only the partitions tps names.
func (s partitioned[T, P]) only(tps map[string][]int32) []T {
	var out []T
	for _, t := range s.topics {
		name, ps := s.of(t)
		var keep []P
		for _, p := range ps {
			if has(tps[name], s.number(p)) {
				keep = append(keep, p)
			}
		}
		if len(keep) > 0 {
			out = append(out, s.with(t, keep))
		}
	}
	return out
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

// leaderMovedCode reports an answer after which s3seal asks for the
// partition's leader again: the broker does not lead it (any more), or
// does not know it yet.
func leaderMovedCode(code int16) bool {
	return brokers.LeaderMoved(code) || code == kerr.UnknownTopicOrPartition.Code
}
