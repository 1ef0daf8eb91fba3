package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

// stopReason says why a command's run over bucket stopped, for its
// summary: that the bucket does not exist, else the error.
func stopReason(bucket string, err error) string {
	if backend.ErrorCode(err) == "NoSuchBucket" {
		return "bucket " + bucket + " does not exist"
	}
	return err.Error()
}

// openToolStore opens the backend and the real keyring of cfg, as serve
// does, for the commands that read objects (verify, rewrap). The
// development key in --data-dir is used only with the embedded store.
// The returned function closes the backend.
func openToolStore(cfg *config) (*sealstore.Store, func(), error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("data dir: %w", err)
	}
	unlock, err := lockEmbedded(cfg)
	if err != nil {
		return nil, nil, err
	}
	ks, err := loadKeys(cfg, cfg.embedded(), nil)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	kr := ks.kr
	be, closeBackend, _, err := openBackend(cfg, nil)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	st, err := sealstore.New(be, kr, sealstore.Options{SpoolDir: filepath.Join(cfg.DataDir, "spool"), AllowPlaintextReads: true,
		KMS: ks.svc, KMSDefault: ks.kmsDefault})
	if err != nil {
		closeBackend()
		unlock()
		return nil, nil, err
	}
	return st, func() { closeBackend(); unlock() }, nil
}

// lockEmbedded takes the data dir's lock when cfg runs the embedded store,
// which one process at a time may open (a serve, gc, verify or rewrap).
func lockEmbedded(cfg *config) (unlock func(), err error) {
	if !cfg.embedded() {
		return func() {}, nil
	}
	return lockDataDir(cfg.DataDir)
}
