// Package kafkatest holds the test helpers the LFS packages share for
// watching a kfake cluster: a dialer that counts broker connections and a
// recorder of the node each Produce request reached. Only tests import it.
package kafkatest

import (
	"context"
	"maps"
	"net"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Dialer counts broker connections per address; its Dial fits
// brokers.Config.Dial.
type Dialer struct {
	mu sync.Mutex
	n  map[string]int
}

// Dial counts the connection, then dials.
func (d *Dialer) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	if d.n == nil {
		d.n = map[string]int{}
	}
	d.n[addr]++
	d.mu.Unlock()
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

// Total is the number of dials so far.
func (d *Dialer) Total() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := 0
	for _, v := range d.n {
		s += v
	}
	return s
}

// To is the number of dials to addr so far.
func (d *Dialer) To(addr string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n[addr]
}

// Counts is a copy of the dials so far by address.
func (d *Dialer) Counts() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.n)
}

// Produces records the node each Produce request reached.
type Produces struct {
	mu    sync.Mutex
	nodes []int32
}

// WatchProduce records, without handling them (kfake then handles them as
// usual), the Produce requests c receives.
func WatchProduce(c *kfake.Cluster) *Produces {
	ps := &Produces{}
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		ps.mu.Lock()
		ps.nodes = append(ps.nodes, c.CurrentNode())
		ps.mu.Unlock()
		return nil, nil, false
	})
	return ps
}

// Nodes is the node of each Produce request so far, in order.
func (ps *Produces) Nodes() []int32 {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return slices.Clone(ps.nodes)
}
