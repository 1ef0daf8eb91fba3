package lfs

import (
	"context"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// sweepGrace allows for clocks that differ between replicas and the store.
const sweepGrace = time.Minute

// SweepExpired aborts the storage uploads of expired sessions: uploads
// under the namespace started more than SessionTTL (plus a minute of clock
// grace) ago. Sessions are also ended lazily when a request names an
// expired one; this catches those no client comes back to. Several
// replicas may sweep at once: an upload already aborted is skipped.
func (h *Handler) SweepExpired(ctx context.Context) (aborted int, err error) {
	cutoff := h.now().Add(-h.cfg.SessionTTL - sweepGrace)
	in := backend.ListUploadsInput{Bucket: h.cfg.Bucket, Prefix: h.cfg.Namespace + "/"}
	for {
		out, err := h.cfg.Store.ListUploads(ctx, in)
		if err != nil {
			h.metrics.storageErrors.Inc()
			return aborted, err
		}
		for _, u := range out.Uploads {
			if u.Initiated.IsZero() || !u.Initiated.Before(cutoff) || !strings.Contains(u.Key, "/lfs/") {
				continue
			}
			h.abort(ctx, u.Key, u.UploadID)
			aborted++
		}
		if !out.IsTruncated {
			return aborted, nil
		}
		in.KeyMarker, in.UploadIDMarker = out.NextKeyMarker, out.NextUploadIDMarker
	}
}

// RunSweeper calls SweepExpired every interval until ctx ends.
func (h *Handler) RunSweeper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := h.SweepExpired(ctx); err != nil {
				h.log.Warn("lfs: sweeping expired uploads failed", "err", err)
			} else if n > 0 {
				h.log.Info("lfs: aborted expired uploads", "count", n)
			}
		}
	}
}
