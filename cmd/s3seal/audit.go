package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/s3seal/s3seal/audit"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/internal/reqid"
	"github.com/s3seal/s3seal/kms"
)

// The audit trail (--audit-log): one line per access decision and per
// use of a master key, chained by HMAC-SHA256 under the key of
// --audit-key-file (package audit; docs/DESIGN.md, The audit trail).

func (c *config) auditFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.AuditLog, "audit-log", "", "write the audit trail to this file (- for stdout): one JSON line per access decision and per master-key use, chained by HMAC-SHA256 (s3seal audit verify checks it); SIGHUP reopens it after a rotation")
	fs.StringVar(&c.AuditKeyFile, "audit-key-file", "", "file holding the audit trail's chain key as s3seal keygen prints it (mode 600); needed with --audit-log; whoever holds it can verify the trail, and forge it")
	fs.Int64Var(&c.AuditLogMaxSize, "audit-log-max-size", 0, "rotate the audit trail once its file reaches this many bytes: renamed to FILE.<UTC time>, a new FILE begun (0: only on SIGHUP)")
	fs.BoolVar(&c.AuditLogSync, "audit-log-sync", false, "fsync every audit line before the request goes on (default: flushed every second, so a crash of the machine can lose the last second of lines)")
}

func (c *config) validateAudit() error {
	switch {
	case c.AuditLog == "" && (c.AuditKeyFile != "" || c.AuditLogMaxSize != 0 || c.AuditLogSync):
		return usagef("--audit-key-file, --audit-log-max-size and --audit-log-sync go with --audit-log")
	case c.AuditLog != "" && c.AuditKeyFile == "":
		return usagef("%s needs --audit-key-file: the key that chains its lines (s3seal keygen makes one)", c.src("audit-log"))
	case c.AuditLogMaxSize < 0 || c.AuditLogMaxSize > 0 && c.AuditLogMaxSize < 4096:
		return usagef("%s: %d is not 0 or at least 4096", c.src("audit-log-max-size"), c.AuditLogMaxSize)
	case c.AuditLog == "-" && c.AuditLogMaxSize > 0:
		return usagef("%s: standard output cannot be rotated", c.src("audit-log-max-size"))
	}
	return nil
}

// auditAnchorFile, in the data dir, keeps the audit trail's last anchor
// (audit.Options.AnchorFile).
const auditAnchorFile = "audit-anchor"

// auditTrail is serve's audit trail: the writer and its SIGHUP watch.
type auditTrail struct {
	w   *audit.Writer
	hup chan os.Signal
	log *slog.Logger
}

// openAudit opens the trail --audit-log names, nil without one.
func openAudit(cfg *config, log *slog.Logger) (*auditTrail, error) {
	if cfg.AuditLog == "" {
		return nil, nil
	}
	text, err := readPrivateFile(cfg.AuditKeyFile)
	if err != nil {
		return nil, usagef("%s: %v", cfg.src("audit-key-file"), err)
	}
	key, err := audit.ParseKey(text)
	if err != nil {
		return nil, usagef("%s: %v", cfg.src("audit-key-file"), err)
	}
	opt := audit.Options{Sync: cfg.AuditLogSync, MaxSize: cfg.AuditLogMaxSize,
		OnError: func(err error) {
			log.Error("the audit trail cannot be written: every request is refused until SIGHUP reopens it", "error", err)
		}}
	var w *audit.Writer
	if cfg.AuditLog == "-" {
		w, err = audit.NewStream(os.Stdout, key, opt)
	} else {
		// The last line's seq and MAC, kept in the data directory at
		// start, rotation and stop: a file moved aside or removed while
		// s3seal was stopped is continued from it, and a cut told.
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		opt.AnchorFile = filepath.Join(cfg.DataDir, auditAnchorFile)
		w, err = audit.Open(cfg.AuditLog, key, opt)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.src("audit-log"), err)
	}
	t := &auditTrail{w: w, hup: make(chan os.Signal, 1), log: log}
	seq, mac := w.Last()
	log.Info("audit trail open", "file", cfg.AuditLog, "seq", seq, "mac", mac)
	signal.Notify(t.hup, syscall.SIGHUP)
	go t.rotations()
	return t, nil
}

// rotations reopens the trail on each SIGHUP, logging the anchor the old
// file ended on.
func (t *auditTrail) rotations() {
	for range t.hup {
		err := t.w.Rotate()
		seq, mac := t.w.Last()
		if err != nil {
			t.log.Error("audit trail: reopening after SIGHUP failed", "error", err)
			continue
		}
		t.log.Info("audit trail rotated", "seq", seq, "mac", mac)
	}
}

// close ends the trail with a checkpoint and logs its last anchor (keep
// it: `s3seal audit verify --last-mac` proves no line after it was cut).
func (t *auditTrail) close() {
	signal.Stop(t.hup)
	close(t.hup)
	err := t.w.Close()
	seq, mac := t.w.Last()
	if err != nil {
		t.log.Error("audit trail: closing failed", "error", err, "seq", seq, "mac", mac)
		return
	}
	t.log.Info("audit trail closed", "seq", seq, "mac", mac)
}

// keyring returns kr telling the trail of every data key wrapped or
// unwrapped, and svc (when there is one) of every KMS call.
func (t *auditTrail) keyring(kr *crypto.Keyring, svc *kms.Service) *crypto.Keyring {
	if svc != nil {
		svc.AuditCalls(func(ctx context.Context, op, keyID, outcome string) {
			_ = t.w.KeyUse(audit.KeyUse{RequestID: reqid.From(ctx), Op: "kms:" + op, KeyID: keyID, Outcome: outcome})
		})
	}
	// A use the trail cannot record is not refused here: the trail's
	// error refuses every request from the next access decision on.
	return kr.WithKeyUses(func(ctx context.Context, u crypto.KeyUse) {
		_ = t.w.KeyUse(audit.KeyUse{RequestID: reqid.From(ctx), Op: u.Op, KeyID: u.KeyID,
			Bucket: u.Name.Bucket, Key: u.Name.Key, Outcome: keyOutcome(u.Err)})
	})
}

// keyOutcome names how a use of a master key ended: ok, or its kind of
// failure (never the error's text, which may quote more than a kind).
func keyOutcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, crypto.ErrAuth):
		return "auth_failed"
	case errors.Is(err, crypto.ErrUnknownKey):
		return "unknown_key"
	case errors.Is(err, crypto.ErrCorrupt):
		return "corrupt"
	}
	var ke *kms.Error
	if errors.As(err, &ke) {
		return "kms_" + strings.ReplaceAll(ke.Kind.String(), " ", "_")
	}
	return "error"
}
