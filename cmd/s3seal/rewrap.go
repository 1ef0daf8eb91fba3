package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

// rewrapSummary is what s3seal rewrap --json prints.
type rewrapSummary struct {
	Bucket  string         `json:"bucket"`
	Prefix  string         `json:"prefix"`
	To      string         `json:"to"`
	DryRun  bool           `json:"dry_run"`
	Objects int            `json:"objects"`
	Bytes   int64          `json:"bytes"`  // backend size of all objects seen
	Counts  map[string]int `json:"counts"` // by status: rewrapped, would-rewrap, already, changed, plaintext, failed
	// RewrappedBytes is the data left in place: bytes of the objects rewrapped
	// (or, with --dry-run, that would be).
	RewrappedBytes int64           `json:"rewrapped_bytes"`
	Problems       []rewrapProblem `json:"problems"`
	// Error says why the run stopped.
	Error string `json:"error,omitempty"`
	// NeedsNoWriters: a dry run found that the store ignores a copy
	// condition, so the real run stops unless given
	// --no-concurrent-writers. CheckError: why it could not tell.
	NeedsNoWriters bool   `json:"needs_no_concurrent_writers,omitempty"`
	CheckError     string `json:"copy_condition_check_error,omitempty"`
}

type rewrapProblem struct {
	Key    string `json:"key"`
	Status string `json:"status"` // changed or failed
	Error  string `json:"error,omitempty"`
}

// rewrapFlags are s3seal rewrap's own flags, besides serve's backend and
// key flags.
type rewrapFlags struct {
	bucket, prefix, to             string
	dry, asJSON, noWriters, latest bool
	every, conc                    int
	maxCopy                        int64
	prog                           progressFlag
}

// define defines rewrap's own flags on fs.
func (rf *rewrapFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&rf.bucket, "bucket", "", "bucket to rewrap (required)")
	fs.StringVar(&rf.prefix, "prefix", "", "rewrap only the keys under this prefix")
	fs.StringVar(&rf.to, "to", "", "id of the master key to wrap every data key under: a keyring id, or a KMS key (aws-kms:<ARN>, ...); it must be in the keyring (this or --latest is required)")
	fs.BoolVar(&rf.latest, "latest", false, "keep every object under its KMS key and have the KMS seal its key under the key's current version (AWS ReEncrypt, Transit rewrap, inside the HSM), after a rotation in the KMS; no data key leaves the KMS")
	fs.BoolVar(&rf.dry, "dry-run", false, "print what would be rewrapped, and whether the real run needs --no-concurrent-writers (told by a scratch object under .s3seal/, removed at once); change no object")
	fs.BoolVar(&rf.asJSON, "json", false, "print a JSON summary on stdout instead of a line per object")
	fs.IntVar(&rf.every, "progress-every", 1000, "print a progress line on stderr every N objects when stderr is not a terminal (0: never)")
	fs.IntVar(&rf.conc, "concurrency", 8, "objects rewrapped at once")
	fs.BoolVar(&rf.noWriters, "no-concurrent-writers", false, "promise that no client writes to the bucket during the run; needed only on an object store that ignores x-amz-copy-source-if-match")
	fs.Int64Var(&rf.maxCopy, "max-copy-size", backend.MaxCopySize, "largest object the backend copies in one request; larger ones are copied part by part")
	rf.prog.register(fs, true)
}

// rewrap wraps every object's data key under another master key
// (sealstore.Store.Rewrap) and prints what it did and a summary: exit code
// 0 when every encrypted object is (or, with --dry-run, would be) under
// --to, 1 when some failed or were left alone or the run stopped, 2 for
// a usage mistake.
func rewrap(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var rf rewrapFlags
	cfg, err := parseCommandConfigHelp("rewrap", args, getenv, rf.define, stdout)
	if err != nil {
		return usageExit(err, stderr)
	}
	bucket, prefix, to := rf.bucket, rf.prefix, rf.to
	dry, asJSON, noWriters, latest := rf.dry, rf.asJSON, rf.noWriters, rf.latest
	every, conc, maxCopy := rf.every, rf.conc, rf.maxCopy
	if bucket == "" || (to == "") == !latest {
		return usageExit(usagef("--bucket and one of --to and --latest are required"), stderr)
	}
	if conc < 1 || every < 0 || maxCopy < 1 {
		return usageExit(usagef("--concurrency and --max-copy-size must be at least 1 and --progress-every not negative"), stderr)
	}
	st, closeStore, err := openToolStore(cfg)
	if err != nil {
		return usageExit(err, stderr)
	}
	defer closeStore()
	if latest && !st.HasKMS() {
		return usageExit(usagef("--latest needs the KMS: give --kms-key (or a keys file's kms entries)"), stderr)
	}
	if !latest && !st.HasKey(to) {
		return usageExit(usagef("--to: key id %q is not in the keyring", to), stderr)
	}
	sum := rewrapSummary{Bucket: bucket, Prefix: prefix, To: to, DryRun: dry, Counts: map[string]int{}, Problems: []rewrapProblem{}}
	prog := newProgress(stderr, getenv, rf.prog, progressSetup{label: "rewrap " + bucket, bytes: true, every: every})
	stdout = prog.writer(stdout)
	if latest {
		sum.To = "their KMS keys' current versions"
	}
	opt := sealstore.RewrapOptions{Prefix: prefix, To: to, Latest: latest, DryRun: dry, Concurrency: conc, MaxCopySize: maxCopy, NoWriters: noWriters,
		Listed: prog.listing()}
	err = st.Rewrap(ctx, bucket, opt, func(r sealstore.RewrapResult) {
		prog.add(r.Size)
		sum.Objects++
		sum.Bytes += r.Size
		sum.Counts[r.Status]++
		var line string
		switch r.Status {
		case sealstore.RewrapDone, sealstore.RewrapWould:
			sum.RewrappedBytes += r.Size
			line = fmt.Sprintf("%s %s/%s (%s -> %s)", r.Status, bucket, r.Key, r.From, to)
			if latest {
				line = fmt.Sprintf("%s %s/%s (%s %s -> %s)", r.Status, bucket, r.Key, r.From, cmp.Or(r.FromVersion, "?"), cmp.Or(r.ToVersion, "current"))
			}
		case sealstore.RewrapInProgress:
			sum.Problems = append(sum.Problems, rewrapProblem{Key: r.Key, Status: r.Status, Error: "multipart upload in progress under " + r.From})
			line = fmt.Sprintf("in progress %s/%s: an upload under %s; complete or abort it, then run again before removing %s", bucket, r.Key, r.From, r.From)
		case sealstore.RewrapChanged:
			sum.Problems = append(sum.Problems, rewrapProblem{Key: r.Key, Status: r.Status, Error: "written or deleted meanwhile"})
			line = fmt.Sprintf("left alone %s/%s: written or deleted meanwhile; run again", bucket, r.Key)
		case sealstore.RewrapFailed:
			sum.Problems = append(sum.Problems, rewrapProblem{Key: r.Key, Status: r.Status, Error: r.Err.Error()})
			line = fmt.Sprintf("%s %s/%s: %v", r.Status, bucket, r.Key, r.Err)
		}
		if line != "" && !asJSON {
			fmt.Fprintln(stdout, line)
		}
	})
	prog.done()
	if err != nil {
		sum.Error = stopReason(bucket, err)
		fmt.Fprintf(stderr, "s3seal: rewrap of bucket %s stopped: %s\n", bucket, sum.Error)
		if errors.Is(err, sealstore.ErrCopyConditionIgnored) {
			fmt.Fprintf(stderr, "s3seal: this store would let rewrap give an object written during the run the old object's wrapped key,\n"+
				"  losing it. Stop every writer to %s, then run again with --no-concurrent-writers.\n", bucket)
		}
	} else if dry && !noWriters {
		// The real run checks the store first; tell now what it will find.
		switch cerr := st.CheckCopyConditions(ctx, bucket); {
		case errors.Is(cerr, sealstore.ErrCopyConditionIgnored):
			sum.NeedsNoWriters = true
		case cerr != nil:
			sum.CheckError = cerr.Error()
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(sum)
	} else {
		printRewrapSummary(stdout, sum, err)
	}
	if err != nil || len(sum.Problems) > 0 {
		return 1
	}
	return 0
}

// printRewrapSummary prints the last lines of a run: what it did, by
// status, and, when it stopped, that it did and why, so that it never
// reads as a bucket without objects; after a dry run, whether the real
// run will need --no-concurrent-writers. err is the run's error.
func printRewrapSummary(w io.Writer, sum rewrapSummary, err error) {
	var parts []string
	for _, s := range []string{sealstore.RewrapDone, sealstore.RewrapWould, sealstore.RewrapCurrent, sealstore.RewrapChanged, sealstore.RewrapInProgress,
		sealstore.RewrapPlaintext, sealstore.RewrapFailed} {
		if sum.Counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", sum.Counts[s], s))
		}
	}
	what := strings.Join(parts, ", ")
	switch {
	case sum.Error != "" && len(parts) == 0:
		what = "stopped before any object was rewrapped: " + sum.Error
	case sum.Error != "":
		what = "stopped (" + sum.Error + ") after " + what
	case len(parts) == 0:
		what = "no objects"
	}
	if errors.Is(err, sealstore.ErrCopyConditionIgnored) {
		what += "; stop every writer, then run again with --no-concurrent-writers"
	}
	fmt.Fprintf(w, "%s/%s under %s: %s (%d objects, %d bytes seen; %d bytes of data left in place)\n",
		sum.Bucket, sum.Prefix, sum.To, what, sum.Objects, sum.Bytes, sum.RewrappedBytes)
	switch {
	case sum.NeedsNoWriters:
		fmt.Fprintf(w, "the real run will stop unless given --no-concurrent-writers: %v; stop every writer to %s first\n",
			sealstore.ErrCopyConditionIgnored, sum.Bucket)
	case sum.CheckError != "":
		fmt.Fprintf(w, "could not tell whether the real run needs --no-concurrent-writers: %s\n", sum.CheckError)
	}
}
