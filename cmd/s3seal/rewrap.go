package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/s3seal/s3seal/sealstore"
)

// rewrap wraps every object's data key under another master key
// (sealstore.Store.Rewrap) and prints what it did and a summary: exit code
// 0 when every encrypted object is (or, with --dry-run, would be) under
// --to, 1 when some failed or were left alone, 2 for a usage mistake.
func rewrap(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var bucket, prefix, to string
	var dry bool
	var every, conc int
	cfg, err := parseCommandConfigHelp("rewrap", args, getenv, func(fs *flag.FlagSet) {
		fs.StringVar(&bucket, "bucket", "", "bucket to rewrap (required)")
		fs.StringVar(&prefix, "prefix", "", "rewrap only the keys under this prefix")
		fs.StringVar(&to, "to", "", "id of the master key to wrap every data key under (required; it must be in the keyring)")
		fs.BoolVar(&dry, "dry-run", false, "print what would be rewrapped, change nothing")
		fs.IntVar(&every, "progress-every", 1000, "print a progress line on stderr every N objects when stderr is not a terminal (0: never)")
		fs.IntVar(&conc, "concurrency", 8, "objects rewrapped at once")
	}, stdout)
	if err != nil {
		return usageExit(err, stderr)
	}
	if bucket == "" || to == "" {
		return usageExit(usagef("--bucket and --to are required"), stderr)
	}
	if conc < 1 || every < 0 {
		return usageExit(usagef("--concurrency must be at least 1 and --progress-every not negative"), stderr)
	}
	st, closeStore, err := openToolStore(cfg)
	if err != nil {
		return usageExit(err, stderr)
	}
	defer closeStore()
	if !st.HasKey(to) {
		return usageExit(usagef("--to: key id %q is not in the keyring", to), stderr)
	}
	counts := map[string]int{}
	var bytes int64
	prog := newProgress(stderr, every)
	err = st.Rewrap(ctx, bucket, sealstore.RewrapOptions{Prefix: prefix, To: to, DryRun: dry, Concurrency: conc}, func(r sealstore.RewrapResult) {
		prog.add(r.Size)
		counts[r.Status]++
		switch r.Status {
		case sealstore.RewrapDone, sealstore.RewrapWould:
			bytes += r.Size
			fmt.Fprintf(stdout, "%s %s/%s (%s -> %s)\n", r.Status, bucket, r.Key, r.From, to)
		case sealstore.RewrapChanged:
			fmt.Fprintf(stdout, "left alone %s/%s: written or deleted meanwhile; run again\n", bucket, r.Key)
		case sealstore.RewrapFailed, sealstore.RewrapTooLarge:
			fmt.Fprintf(stdout, "%s %s/%s: %v\n", r.Status, bucket, r.Key, r.Err)
		}
	})
	prog.done()
	var parts []string
	for _, s := range []string{sealstore.RewrapDone, sealstore.RewrapWould, sealstore.RewrapCurrent, sealstore.RewrapChanged,
		sealstore.RewrapPlaintext, sealstore.RewrapTooLarge, sealstore.RewrapFailed} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	if len(parts) == 0 {
		parts = []string{"no objects"}
	}
	fmt.Fprintf(stdout, "%s/%s under %s: %s (%d bytes of data left in place)\n", bucket, prefix, to, strings.Join(parts, ", "), bytes)
	if err != nil {
		fmt.Fprintf(stderr, "s3seal: rewrap of bucket %s stopped: %v\n", bucket, err)
		return 1
	}
	left := counts[sealstore.RewrapChanged] + counts[sealstore.RewrapTooLarge] + counts[sealstore.RewrapFailed]
	if left > 0 {
		return 1
	}
	return 0
}
