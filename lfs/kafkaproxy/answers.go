package kafkaproxy

import (
	"context"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersions, Metadata and FindCoordinator are answered by s3seal: it is
// the only broker clients learn of.

// versionRange is the versions s3seal serves of one API.
type versionRange struct{ min, max int16 }

// apis are the APIs served, with the highest versions s3seal takes.
// Produce, Fetch and Metadata stop before the versions that name topics
// by id only (routing is by name); OffsetFetch before it batches groups
// and AddPartitionsToTxn before its broker-to-broker batching (each is
// routed to one coordinator). SaslHandshake starts at v0, as every
// broker's does: librdkafka takes a broker for one that speaks SASL only
// when v0 is listed, and then uses v1; a client that sends v0 sends its
// tokens raw (sasl.go).
var apis = map[kmsg.Key]versionRange{
	kmsg.Produce:              {3, 12}, // v3: record batch v2
	kmsg.Fetch:                {4, 12},
	kmsg.ListOffsets:          {1, 10},
	kmsg.Metadata:             {0, 12},
	kmsg.OffsetCommit:         {2, 9},
	kmsg.OffsetFetch:          {1, 7},
	kmsg.FindCoordinator:      {0, 6},
	kmsg.JoinGroup:            {0, 9},
	kmsg.Heartbeat:            {0, 4},
	kmsg.LeaveGroup:           {0, 5},
	kmsg.SyncGroup:            {0, 5},
	kmsg.DescribeGroups:       {0, 5},
	kmsg.ListGroups:           {0, 5},
	kmsg.SASLHandshake:        {0, 1},
	kmsg.ApiVersions:          {0, 3},
	kmsg.InitProducerID:       {0, 5},
	kmsg.OffsetForLeaderEpoch: {2, 4},
	kmsg.AddPartitionsToTxn:   {0, 3},
	kmsg.AddOffsetsToTxn:      {0, 4},
	kmsg.EndTxn:               {0, 4},
	kmsg.TxnOffsetCommit:      {0, 4},
	kmsg.SASLAuthenticate:     {0, 2},
}

// ours are the APIs s3seal answers itself, whatever the brokers take.
var ours = map[kmsg.Key]bool{kmsg.ApiVersions: true, kmsg.SASLHandshake: true, kmsg.SASLAuthenticate: true}

func served(key int16) bool {
	_, ok := apis[kmsg.Key(key)]
	return ok
}

// apiVersions lists, for each API served, the versions s3seal, kmsg and
// every broker seen take. With code set (UNSUPPORTED_VERSION), it is the
// answer to a version s3seal does not know.
func (p *Proxy) apiVersions(ctx context.Context, _ *kmsg.ApiVersionsRequest, code int16) kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ErrorCode = code
	bv, err := p.cfg.Brokers.Versions(ctx)
	if err != nil {
		p.log.Warn("kafka listener: no broker answers; listing s3seal's own APIs only", "err", err)
	}
	for key, r := range apis {
		lo, hi := r.min, min(r.max, kmsg.RequestForKey(key.Int16()).MaxVersion())
		if !ours[key] {
			b, ok := bv[key.Int16()]
			if !ok {
				continue
			}
			lo, hi = max(lo, b[0]), min(hi, b[1])
		}
		if lo > hi {
			continue
		}
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = key.Int16(), lo, hi
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	return resp
}

// metadata forwards the client's Metadata request to a broker and answers
// with s3seal as the only broker, the controller and the leader (and only
// replica) of every partition. Topics the client may not use are left out
// of a listing of all topics and answered TOPIC_AUTHORIZATION_FAILED when
// named.
func (c *conn) metadata(ctx context.Context, req *kmsg.MetadataRequest) kmsg.Response {
	fwd := *req
	if req.Topics != nil {
		fwd.Topics = nil
		for _, t := range req.Topics {
			if t.Topic != nil && c.mayUse(*t.Topic) {
				fwd.Topics = append(fwd.Topics, t)
			}
		}
	}
	resp := kmsg.NewPtrMetadataResponse()
	var md *kmsg.MetadataResponse
	if req.Topics == nil || len(fwd.Topics) > 0 {
		var err error
		if md, err = c.p.cfg.Brokers.Metadata(ctx, &fwd); err != nil {
			c.p.log.Warn("kafka listener: metadata from the brokers failed", "err", err)
			md = nil
		}
	}
	if md != nil {
		*resp = *md
	}
	resp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: nodeID, Host: c.p.adv.host, Port: c.p.adv.port}}
	resp.ControllerID = nodeID
	kept := resp.Topics[:0]
	for _, t := range resp.Topics {
		if t.Topic != nil && !c.mayUse(*t.Topic) {
			continue
		}
		for i := range t.Partitions {
			pt := &t.Partitions[i]
			pt.Leader = nodeID
			pt.Replicas, pt.ISR, pt.OfflineReplicas = []int32{nodeID}, []int32{nodeID}, nil
		}
		kept = append(kept, t)
	}
	resp.Topics = kept
	for _, t := range req.Topics {
		if t.Topic == nil {
			continue
		}
		code := int16(0)
		switch {
		case !c.mayUse(*t.Topic):
			code = kerr.TopicAuthorizationFailed.Code
		case md == nil:
			code = kerr.LeaderNotAvailable.Code // retriable: the brokers did not answer
		default:
			continue
		}
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, code
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// findCoordinator names s3seal as every coordinator; the requests that
// follow are forwarded to the real one.
func (p *Proxy) findCoordinator(req *kmsg.FindCoordinatorRequest) kmsg.Response {
	resp := kmsg.NewPtrFindCoordinatorResponse()
	resp.NodeID, resp.Host, resp.Port = nodeID, p.adv.host, p.adv.port
	for _, k := range req.CoordinatorKeys {
		rc := kmsg.NewFindCoordinatorResponseCoordinator()
		rc.Key, rc.NodeID, rc.Host, rc.Port = k, nodeID, p.adv.host, p.adv.port
		resp.Coordinators = append(resp.Coordinators, rc)
	}
	return resp
}

func splitHostPort(addr string) (string, int32, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", 0, &net.AddrError{Err: "bad port", Addr: addr}
	}
	return host, int32(n), nil
}
