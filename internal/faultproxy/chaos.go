package faultproxy

import (
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"time"
)

// Shape is one fault of one operation, drawn at Weight relative to the
// other shapes of that operation.
type Shape struct {
	Op     Op
	Fault  Fault
	Weight int
}

// ChaosConfig programs a seeded random fault mode: each request of an
// operation that has shapes is faulted with probability Rate, the fault
// drawn among that operation's shapes by weight.
type ChaosConfig struct {
	// Seed makes the run replayable: every operation draws from a random
	// stream of its own, seeded by Seed and the operation's name, so the
	// n-th request of an operation gets the same decision in every run
	// with the same seed, however requests of different operations
	// interleave.
	Seed uint64
	// Rate is the fraction of requests faulted, of the operations that
	// have shapes (others are never faulted).
	Rate float64
	// Shapes to draw from; DefaultShapes(false) when empty.
	Shapes []Shape
	// Delay is Drip's pace (Rule.Delay); default 1 s.
	Delay time.Duration
}

// The two faults chaos adds to the programmed ones.
const (
	// ServerError answers 500 InternalError without forwarding.
	ServerError Fault = iota + 100
	// CompleteThenGone forwards a CompleteMultipartUpload and answers it
	// 200 with an <Error> body, as ForwardThenErrorInBody; from then on the
	// proxy answers every request of that upload id 404 NoSuchUpload
	// without forwarding, as a real store does once an upload is
	// completed (moto would complete it again). In chaos mode every
	// completion the store accepted makes its upload gone so, whatever
	// fault its answer met (a cut, a stall, a 200 <Error>).
	CompleteThenGone
)

var faultNames = map[Fault]string{
	ErrorInBody: "ErrorInBody", ForwardThenErrorInBody: "ForwardThenErrorInBody", ForwardThenCut: "ForwardThenCut",
	Delay: "Delay", SlowDown: "SlowDown", NoSuchUpload: "NoSuchUpload", Stall: "Stall",
	ForwardThenStall: "ForwardThenStall", StallReading: "StallReading", ForwardThenStallBody: "ForwardThenStallBody",
	Drip: "Drip", ServerError: "ServerError", CompleteThenGone: "CompleteThenGone",
}

func (f Fault) String() string {
	if n, ok := faultNames[f]; ok {
		return n
	}
	if f == 0 {
		return "none"
	}
	return "Fault(" + strconv.Itoa(int(f)) + ")"
}

// IsStall reports whether f holds a request without an answer for as long
// as the client waits (or answers at a crawl): a client without a timeout
// hangs on it.
func (f Fault) IsStall() bool {
	switch f {
	case Stall, ForwardThenStall, StallReading, ForwardThenStallBody, Drip:
		return true
	}
	return false
}

// DefaultShapes are the faults a real store produces, by operation: a 200
// with an <Error> body after the work was done only where S3 answers a
// 200 before it has finished (UploadPart, UploadPartCopy, CopyObject,
// CompleteMultipartUpload, PutObject, never a read); 503 SlowDown and 500
// everywhere; a connection reset after the work (ForwardThenCut) for
// requests that are safe to have done twice, a cut GET body; a completion
// that succeeded, whose retry finds the upload gone. Nothing that creates
// state the client cannot know of (no forwarded-then-failed
// CreateMultipartUpload: the store would keep an upload nobody holds the
// id of). With stalls, the stall shapes are added at a lower weight.
// Drip is left out: it moves a byte at a time, so no idle timeout ends it,
// and a dripped 50 MiB part takes days.
func DefaultShapes(stalls bool) []Shape {
	var s []Shape
	add := func(op Op, faults ...Fault) {
		for _, f := range faults {
			s = append(s, Shape{op, f, 10})
		}
	}
	addStalls := func(op Op, faults ...Fault) {
		if stalls {
			for _, f := range faults {
				s = append(s, Shape{op, f, 3})
			}
		}
	}
	add(PutObject, ForwardThenErrorInBody, SlowDown, ServerError, ForwardThenCut)
	addStalls(PutObject, Stall, StallReading, ForwardThenStall)
	add(UploadPart, ForwardThenErrorInBody, SlowDown, ServerError, ForwardThenCut)
	addStalls(UploadPart, Stall, StallReading, ForwardThenStall)
	add(UploadPartCopy, ForwardThenErrorInBody, SlowDown, ServerError, ForwardThenCut)
	addStalls(UploadPartCopy, Stall, ForwardThenStall)
	add(CopyObject, ForwardThenErrorInBody, SlowDown, ServerError)
	add(CompleteMultipartUpload, ForwardThenErrorInBody, CompleteThenGone, SlowDown, ServerError, ForwardThenCut)
	addStalls(CompleteMultipartUpload, ForwardThenStall)
	add(GetObject, SlowDown, ServerError, ForwardThenCut)
	addStalls(GetObject, Stall, ForwardThenStallBody)
	add(HeadObject, SlowDown, ServerError)
	addStalls(HeadObject, Stall)
	add(ListObjects, SlowDown, ServerError, ForwardThenCut)
	addStalls(ListObjects, Stall)
	add(CreateMultipartUpload, SlowDown, ServerError)
	addStalls(CreateMultipartUpload, Stall)
	add(DeleteObject, SlowDown, ServerError, ForwardThenCut)
	add(DeleteObjects, SlowDown, ServerError)
	add(ListParts, SlowDown, ServerError)
	add(ListMultipartUploads, SlowDown, ServerError)
	add(AbortMultipartUpload, SlowDown, ServerError)
	return s
}

// chaos is the state of the random mode.
type chaos struct {
	cfg     ChaosConfig
	byOp    map[Op][]Shape
	streams map[Op]*rand.Rand
	counts  map[ShapeCount]int
	seen    int             // requests of operations with shapes
	gone    map[string]bool // upload ids the store completed
}

// ShapeCount names one shape in ChaosStats' counts.
type ShapeCount struct {
	Op    Op
	Fault Fault
}

// ChaosStats is what the random mode did so far.
type ChaosStats struct {
	Requests int                // requests of operations with shapes
	Faults   map[ShapeCount]int // faults injected, by shape
	// GoneAnswers counts the NoSuchUpload answers to requests of uploads
	// the store completed.
	GoneAnswers int
}

// Total is the number of faults injected (GoneAnswers not included).
func (s ChaosStats) Total() int {
	n := 0
	for _, c := range s.Faults {
		n += c
	}
	return n
}

// Sorted lists the shapes with faults, most frequent first.
func (s ChaosStats) Sorted() []ShapeCount {
	var out []ShapeCount
	for k := range s.Faults {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if s.Faults[a] != s.Faults[b] {
			return s.Faults[a] > s.Faults[b]
		}
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		return a.Fault < b.Fault
	})
	return out
}

// Chaos turns on the seeded random mode (replacing an earlier one). Rules
// given to Inject still win: a request a rule matches is not drawn for.
// While chaos is on, the proxy forgets an upload once the store completed
// it, as real stores do: every later request of that upload id is 404
// NoSuchUpload without forwarding (moto would complete it again, or answer
// 500). It keeps no list of requests (Requests
// returns none of them; a long run would hold millions) and hashes no
// bodies.
func (p *Proxy) Chaos(cfg ChaosConfig) {
	if len(cfg.Shapes) == 0 {
		cfg.Shapes = DefaultShapes(false)
	}
	c := &chaos{cfg: cfg, byOp: map[Op][]Shape{}, streams: map[Op]*rand.Rand{},
		counts: map[ShapeCount]int{}, gone: map[string]bool{}}
	for _, s := range cfg.Shapes {
		if s.Weight > 0 {
			c.byOp[s.Op] = append(c.byOp[s.Op], s)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chaos = c
}

// ChaosStats returns the counts of the random mode (zero when it is off).
func (p *Proxy) ChaosStats() ChaosStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := ChaosStats{Faults: map[ShapeCount]int{}}
	if p.chaos == nil {
		return st
	}
	st.Requests = p.chaos.seen
	for k, v := range p.chaos.counts {
		if k.Fault == NoSuchUpload {
			st.GoneAnswers += v
			continue
		}
		st.Faults[k] = v
	}
	return st
}

// draw decides the fault of a request of op (0: none). Called with p.mu
// held. Two numbers are drawn for every request, faulted or not, so the
// n-th request of op always gets the same decision for a seed.
func (c *chaos) draw(op Op, r *http.Request) Fault {
	if id := r.URL.Query().Get("uploadId"); id != "" && c.gone[id] {
		c.counts[ShapeCount{op, NoSuchUpload}]++
		return NoSuchUpload
	}
	shapes := c.byOp[op]
	if len(shapes) == 0 {
		return 0
	}
	c.seen++
	rng := c.streams[op]
	if rng == nil {
		h := fnv.New64a()
		_, _ = h.Write([]byte(op))
		rng = rand.New(rand.NewPCG(c.cfg.Seed, h.Sum64()))
		c.streams[op] = rng
	}
	hit, pick := rng.Float64(), rng.Float64()
	if hit >= c.cfg.Rate {
		return 0
	}
	total := 0
	for _, s := range shapes {
		total += s.Weight
	}
	x := int(pick * float64(total))
	for _, s := range shapes {
		if x < s.Weight {
			c.counts[ShapeCount{op, s.Fault}]++
			return s.Fault
		}
		x -= s.Weight
	}
	return 0 // not reached
}

func (p *Proxy) chaosOn() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.chaos != nil
}

// markGone records that the store completed upload id.
func (p *Proxy) markGone(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.chaos != nil {
		p.chaos.gone[id] = true
	}
}
