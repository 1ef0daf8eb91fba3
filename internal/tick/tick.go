// Package tick runs the periodic chores of long-lived parts (sweeps,
// saves) until their context ends.
package tick

import (
	"context"
	"time"
)

// Every calls f every interval, the first time one interval from now,
// until ctx ends. f runs on the caller's goroutine, one call at a time;
// a call that outlasts the interval delays the next rather than overlap.
func Every(ctx context.Context, interval time.Duration, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}
