package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/sealstore"
)

// gcFlags are s3seal gc's own flags, besides serve's backend and key flags.
type gcFlags struct {
	buckets string
	del     bool
	minAge  time.Duration
	prog    progressFlag
}

// define defines gc's own flags on fs.
func (gf *gcFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&gf.buckets, "bucket", "", "comma-separated buckets to collect (default: every bucket)")
	fs.BoolVar(&gf.del, "delete", false, "remove what is found (default: only print it)")
	fs.DurationVar(&gf.minAge, "min-age", 24*time.Hour, "leave alone anything younger (uploads and completions in progress); 0s only while no s3seal serves the buckets")
	gf.prog.register(fs, false)
}

// gc finds (and with --delete removes) what s3seal left in the backend that
// nothing refers to: manifests of objects that are gone, state of uploads
// that are gone, backend uploads without state. A dry run by default: it
// prints what it would remove. Exit code 0 when it finished (whatever it
// found), 1 when the backend failed or a bucket does not exist (which the
// summary says).
func gc(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var gf gcFlags
	cfg, err := parseCommandConfigHelp("gc", args, getenv, gf.define, stdout)
	if err != nil {
		return usageExit(err, stderr)
	}
	if gf.minAge < 0 {
		fmt.Fprintln(stderr, "s3seal: --min-age must not be negative")
		return 2
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		fmt.Fprintln(stderr, "s3seal: data dir:", err)
		return 1
	}
	unlock, err := lockEmbedded(cfg)
	if err != nil {
		return usageExit(err, stderr)
	}
	defer unlock()
	be, closeBackend, _, err := openBackend(cfg, nil)
	if err != nil {
		return usageExit(err, stderr)
	}
	defer closeBackend()
	// gc unwraps nothing: any keyring will do to build the store.
	key, _ := crypto.GenerateKey()
	kr, _ := crypto.NewKeyring("gc", map[string][]byte{"gc": key})
	st, err := sealstore.New(be, kr, sealstore.Options{SpoolDir: filepath.Join(cfg.DataDir, "spool")})
	if err != nil {
		fmt.Fprintln(stderr, "s3seal:", err)
		return 1
	}
	buckets := splitList(gf.buckets)
	if len(buckets) == 0 {
		all, err := be.ListBuckets(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "s3seal: list buckets:", err)
			return 1
		}
		for _, b := range all {
			buckets = append(buckets, b.Name)
		}
	}
	verb := "would remove"
	if gf.del {
		verb = "removed"
	}
	total, failed := 0, false
	var missing []string // "bucket B does not exist", for each such bucket
	prog := newProgress(stderr, getenv, gf.prog, progressSetup{unit: "entries"})
	stdout, stderr = prog.writer(stdout), prog.writer(stderr)
	for i, b := range buckets {
		prog.r.SetLabel(fmt.Sprintf("gc %s (bucket %d of %d)", b, i+1, len(buckets)))
		found, err := st.GC(ctx, b, sealstore.GCOptions{MinAge: gf.minAge, Delete: gf.del, Examined: prog.examined})
		for _, g := range found {
			if gf.del && !g.Removed {
				fmt.Fprintf(stderr, "s3seal: could not remove %s %s/%s: %v\n", g.Kind, b, g.Key, g.Err)
				continue
			}
			what := g.Key
			if g.Kind == "upload" {
				what = g.Key + " (upload " + g.UploadID + ")"
			}
			fmt.Fprintf(stdout, "%s %s %s/%s: %s\n", verb, g.Kind, b, what, g.Reason)
			total++
		}
		if err != nil {
			failed = true
			nobucket := backend.ErrorCode(err) == "NoSuchBucket"
			if nobucket {
				missing = append(missing, stopReason(b, err))
			}
			if !gf.del || nobucket { // with --delete, each failed removal was printed
				fmt.Fprintf(stderr, "s3seal: gc of bucket %s: %s\n", b, stopReason(b, err))
			}
		}
	}
	prog.r.SetLabel(fmt.Sprintf("gc of %d bucket(s)", len(buckets)))
	prog.done()
	fmt.Fprintf(stdout, "%d %s in %d bucket(s)", total, map[bool]string{true: "removed", false: "to remove"}[gf.del], len(buckets)-len(missing))
	for _, m := range missing {
		fmt.Fprintf(stdout, "; %s", m)
	}
	if !gf.del && total > 0 {
		fmt.Fprint(stdout, "; run again with --delete to remove them")
	}
	fmt.Fprintln(stdout)
	if failed {
		return 1
	}
	return 0
}
