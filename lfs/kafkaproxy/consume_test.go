package kafkaproxy

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Consumers through the listener: a consumer group on a three-broker
// cluster reads every record of a three-partition topic (fetches split by
// leader, group requests sent to the coordinator), commits, and a second
// member of the group starts after the committed offsets.
func TestConsumerGroupThroughListener(t *testing.T) {
	h := newHarness(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := h.client(kgo.DefaultProduceTopic("cg"))
	for i := range 30 {
		r := &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint("v", i))}
		if i%3 == 0 {
			r = lfsRecord("cg", i)
		}
		if err := p.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	read := func(n int) map[string]bool {
		c := h.client(kgo.ConsumerGroup("readers"), kgo.ConsumeTopics("cg"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.DisableAutoCommit())
		got := map[string]bool{}
		for len(got) < n {
			fs := c.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("read %d of %d", len(got), n)
			}
			if errs := fs.Errors(); len(errs) > 0 {
				t.Fatalf("fetch errors: %v", errs)
			}
			fs.EachRecord(func(r *kgo.Record) {
				var i int
				if fmt.Sscan(string(r.Key), &i); i%3 == 0 && i < 30 {
					h.envelope(r)
				}
				got[string(r.Key)] = true
			})
		}
		if err := c.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
		return got
	}
	if got := read(30); len(got) != 30 {
		t.Fatalf("first member read %d", len(got))
	}
	for i := 30; i < 33; i++ {
		if err := p.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte("late")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	got := read(3)
	for k := range got {
		var i int
		fmt.Sscan(k, &i)
		if i < 30 {
			t.Fatalf("the second member read record %d again: the committed offsets were not kept", i)
		}
	}
}
