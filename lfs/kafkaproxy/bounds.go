package kafkaproxy

import (
	"context"
	"encoding/binary"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// What a request may cost: its size by kind, the room it takes in the
// budget as its bytes arrive and while it is decoded, and how many names
// it may carry.

// Bounds of requests other than a Produce: before SASL authentication
// (ApiVersions and SASL exchanges are a few hundred bytes) and after (a
// Fetch of every partition of thousands of topics is well under it).
const (
	maxPreAuthRequest = 64 << 10
	maxOtherRequest   = 1 << 20
	// decodeFactor is the room a request other than Produce takes per
	// byte while kmsg decodes it and s3seal answers it: measured at 190
	// for a Metadata request of empty topic names; the lists s3seal
	// answers are capped (maxListed) well below that.
	decodeFactor = 64
	// maxListed bounds the topics or partitions a request may name.
	maxListed  = 10000
	readChunk  = 1 << 20
	firstChunk = 4 << 10
)

// readBody reads a request of n bytes, taking room in the budget for each
// chunk only once its first byte has arrived, and a chunk at most as large
// as what arrived before it (firstChunk at first): a client that
// announces a large request and then sends slowly, or nothing, holds at
// most twice what it sent plus firstChunk, and at most until the
// request's deadline. A request other than Produce then takes room for
// its decoding. held is the room taken, to release.
func (c *conn) readBody(n int64) (body []byte, held int64, ok bool) {
	// A request that started arriving must finish within the wait.
	_ = c.nc.SetReadDeadline(time.Now().Add(c.p.cfg.Wait + 30*time.Second))
	var first [1]byte
	for int64(len(body)) < n {
		if _, err := io.ReadFull(c.nc, first[:]); err != nil {
			return nil, held, false
		}
		chunk := min(n-int64(len(body)), readChunk, max(firstChunk, int64(len(body))))
		if !c.acquire(chunk, n) {
			return nil, held, false
		}
		held += chunk
		if body == nil {
			body = c.p.bufs.take(int(n))
		}
		if int64(cap(body)-len(body)) < chunk {
			// Grown as bytes arrive, never ahead of them: at most twice
			// what was received.
			grown := make([]byte, len(body), min(n, max(int64(cap(body))*2, int64(len(body))+chunk)))
			copy(grown, body)
			body = grown
		}
		m := len(body)
		body = append(body, first[0])
		if _, err := io.ReadFull(c.nc, body[m+1:m+int(chunk)]); err != nil {
			return nil, held, false
		}
		body = body[:m+int(chunk)]
		if m == 0 && !isProduce(body) && n > maxOtherRequest {
			c.p.log.Warn("kafka listener: a request other than Produce past its bound; closing the connection",
				"client", c.nc.RemoteAddr().String(), "size", n, "max", maxOtherRequest)
			c.p.metrics.refused.WithLabelValues("too_large").Inc()
			return nil, held, false
		}
	}
	if !c.rawSASL() && !isProduce(body) {
		// kmsg decodes an array of tiny elements into structs many
		// times their size (a Metadata request naming millions of empty
		// topics): the decoding and the answer take room for that.
		extra := min(n*(decodeFactor-1), int64(c.p.cfg.MaxRequest)*int64(c.p.cfg.MaxInFlight)-held)
		if !c.acquire(extra, n) {
			return nil, held, false
		}
		held += extra
	}
	return body, held, true
}

// isProduce reports whether a request's first bytes name a Produce.
func isProduce(body []byte) bool {
	return len(body) >= 2 && int16(binary.BigEndian.Uint16(body)) == kmsg.Produce.Int16()
}

// acquire takes room in the budget for a request of n bytes, waiting up to
// the wait; false (logged) when none came.
func (c *conn) acquire(room, n int64) bool {
	if room <= 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.p.cfg.Wait)
	defer cancel()
	if err := c.p.budget.Acquire(ctx, room); err != nil {
		c.p.log.Warn("kafka listener: no room for a request within the wait; closing the connection",
			"client", c.nc.RemoteAddr().String(), "size", n)
		c.p.metrics.refused.WithLabelValues("busy").Inc()
		return false
	}
	return true
}

// listed is the number of topics, partitions or groups a request names:
// what s3seal holds, routes and answers one by one.
func listed(req kmsg.Request) int {
	switch r := req.(type) {
	case *kmsg.MetadataRequest:
		return len(r.Topics)
	case *kmsg.ProduceRequest:
		return named(r.Topics, func(t kmsg.ProduceRequestTopic) int { return len(t.Partitions) })
	case *kmsg.FetchRequest:
		return named(r.Topics, func(t kmsg.FetchRequestTopic) int { return len(t.Partitions) }) + len(r.ForgottenTopics)
	case *kmsg.ListOffsetsRequest:
		return named(r.Topics, func(t kmsg.ListOffsetsRequestTopic) int { return len(t.Partitions) })
	case *kmsg.OffsetForLeaderEpochRequest:
		return named(r.Topics, func(t kmsg.OffsetForLeaderEpochRequestTopic) int { return len(t.Partitions) })
	case *kmsg.OffsetCommitRequest:
		return named(r.Topics, func(t kmsg.OffsetCommitRequestTopic) int { return len(t.Partitions) })
	case *kmsg.TxnOffsetCommitRequest:
		return named(r.Topics, func(t kmsg.TxnOffsetCommitRequestTopic) int { return len(t.Partitions) })
	case *kmsg.OffsetFetchRequest:
		return named(r.Topics, func(t kmsg.OffsetFetchRequestTopic) int { return len(t.Partitions) })
	case *kmsg.AddPartitionsToTxnRequest:
		return named(r.Topics, func(t kmsg.AddPartitionsToTxnRequestTopic) int { return len(t.Partitions) })
	case *kmsg.DescribeGroupsRequest:
		return len(r.Groups)
	case *kmsg.FindCoordinatorRequest:
		return len(r.CoordinatorKeys)
	}
	return 0
}

// named counts topics and the partitions each names.
func named[T any](topics []T, partitions func(T) int) int {
	n := len(topics)
	for _, t := range topics {
		n += partitions(t)
	}
	return n
}
