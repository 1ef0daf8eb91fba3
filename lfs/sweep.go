package lfs

import (
	"context"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/internal/tick"
)

// SweepExpired aborts the storage uploads of expired sessions: uploads
// under the namespace started more than SessionTTL (plus a minute of clock
// grace) ago and idle as long (no part stored since). Sessions are also
// ended lazily when a request names an expired one; this catches those no
// client comes back to. A /lfs/produce streaming a large blob is a
// multipart upload too, but never idle that long while it lives. Several
// replicas may sweep at once: an upload already aborted is skipped.
func (h *Handler) SweepExpired(ctx context.Context) (aborted int, err error) {
	cutoff := h.now().Add(-h.cfg.SessionTTL - h.cfg.SweepGrace)
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
			last, err := h.lastPart(ctx, u.Key, u.UploadID)
			if err != nil || last.After(cutoff) {
				continue // still moving, or already gone
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
	tick.Every(ctx, interval, func() {
		if n, err := h.SweepExpired(ctx); err != nil {
			h.log.Warn("lfs: sweeping expired uploads failed", "err", err)
		} else if n > 0 {
			h.log.Info("lfs: aborted expired uploads", "count", n)
		}
	})
}

// lastPart is when the upload's newest part was stored (zero for none).
func (h *Handler) lastPart(ctx context.Context, key, uploadID string) (time.Time, error) {
	var last time.Time
	marker := 0
	for {
		page, err := h.cfg.Store.ListParts(ctx, h.cfg.Bucket, key, uploadID, marker, 1000)
		if err != nil {
			return last, err
		}
		for _, p := range page.Parts {
			if p.LastModified.After(last) {
				last = p.LastModified
			}
		}
		if !page.IsTruncated {
			return last, nil
		}
		marker = page.NextMarker
	}
}
