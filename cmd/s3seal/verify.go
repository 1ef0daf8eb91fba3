package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/s3seal/s3seal/sealstore"
)

// verifyReport is what s3seal verify --json prints.
type verifyReport struct {
	Bucket  string `json:"bucket"`
	Prefix  string `json:"prefix"`
	Deep    bool   `json:"deep"`
	Objects int    `json:"objects"`
	Bytes   int64  `json:"bytes"`
	OK      int    `json:"ok"`
	// CustomerKeyed counts objects sealed with a customer key (SSE-C),
	// whose content cannot be read without it: only their metadata,
	// wrapped key and manifest are checked, also with --deep.
	CustomerKeyed int `json:"customer_keyed"`
	// Keys counts the objects under each master key and, for a KMS key
	// whose service tells, version ("<key id> <version>"): before an old
	// key or version is retired, nothing may be under it.
	Keys     map[string]int  `json:"keys"`
	Problems []verifyProblem `json:"problems"`
	Error    string          `json:"error,omitempty"`
}

type verifyProblem struct {
	Key    string `json:"key"`
	Status string `json:"status"` // plaintext, unknown-key, wrong-key or corrupt
	KeyID  string `json:"key_id,omitempty"`
	Error  string `json:"error"`
}

// verifyFlags are s3seal verify's own flags, besides serve's backend and
// key flags.
type verifyFlags struct {
	bucket, prefix string
	deep, asJSON   bool
	every, conc    int
	prog           progressFlag
}

// define defines verify's own flags on fs.
func (vf *verifyFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&vf.bucket, "bucket", "", "bucket to verify (required)")
	fs.StringVar(&vf.prefix, "prefix", "", "verify only the keys under this prefix")
	fs.BoolVar(&vf.deep, "deep", false, "read every object and authenticate every segment (default: metadata, wrapped key and manifest only)")
	fs.BoolVar(&vf.asJSON, "json", false, "print a JSON report on stdout")
	fs.IntVar(&vf.every, "progress-every", 1000, "print a progress line on stderr every N objects when stderr is not a terminal (0: never)")
	fs.IntVar(&vf.conc, "concurrency", 8, "objects checked at once")
	vf.prog.register(fs, true)
}

// verify checks every object of a bucket (sealstore.Store.Verify): exit
// code 0 when all are good, 1 when problems were found or the backend
// failed, 2 for a usage mistake.
func verify(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var vf verifyFlags
	cfg, err := parseCommandConfigHelp("verify", args, getenv, vf.define, stdout)
	if err != nil {
		return usageExit(err, stderr)
	}
	bucket, prefix, deep, asJSON, every, conc := vf.bucket, vf.prefix, vf.deep, vf.asJSON, vf.every, vf.conc
	if bucket == "" {
		return usageExit(usagef("--bucket is required"), stderr)
	}
	if conc < 1 || every < 0 {
		return usageExit(usagef("--concurrency must be at least 1 and --progress-every not negative"), stderr)
	}
	st, closeStore, err := openToolStore(cfg)
	if err != nil {
		return usageExit(err, stderr)
	}
	defer closeStore()
	rep := verifyReport{Bucket: bucket, Prefix: prefix, Deep: deep, Problems: []verifyProblem{}, Keys: map[string]int{}}
	prog := newProgress(stderr, getenv, vf.prog, progressSetup{label: "verify " + bucket, bytes: true, byBytes: deep, every: every})
	stdout = prog.writer(stdout)
	err = st.Verify(ctx, bucket, sealstore.VerifyOptions{Prefix: prefix, Deep: deep, Concurrency: conc, Listed: prog.listing()}, func(r sealstore.VerifyResult) {
		prog.add(r.Size)
		rep.Objects++
		rep.Bytes += r.Size
		if r.CustomerKeyed {
			rep.CustomerKeyed++
		}
		if r.KeyID != "" {
			rep.Keys[strings.TrimSpace(r.KeyID+" "+r.KeyVersion)]++
		}
		if r.Status == sealstore.VerifyOK {
			rep.OK++
			return
		}
		rep.Problems = append(rep.Problems, verifyProblem{Key: r.Key, Status: r.Status, KeyID: r.KeyID, Error: r.Err.Error()})
		if !asJSON {
			fmt.Fprintf(stdout, "%s %s/%s: %s\n", r.Status, bucket, r.Key, problemWords(r))
		}
	})
	prog.done()
	if err != nil {
		rep.Error = stopReason(bucket, err)
		fmt.Fprintf(stderr, "s3seal: verify of bucket %s stopped: %s\n", bucket, rep.Error)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		switch {
		case err != nil && rep.Objects == 0:
			fmt.Fprintf(stdout, "%s: nothing checked\n", rep.Error)
		case err != nil:
			fmt.Fprintf(stdout, "%d object(s), %d bytes checked in %s before it stopped (%s): %d ok, %d problem(s)\n",
				rep.Objects, rep.Bytes, bucket, rep.Error, rep.OK, len(rep.Problems))
		default:
			fmt.Fprintf(stdout, "%d object(s), %d bytes checked in %s: %d ok, %d problem(s)\n", rep.Objects, rep.Bytes, bucket, rep.OK, len(rep.Problems))
		}
		for _, k := range slices.Sorted(maps.Keys(rep.Keys)) {
			fmt.Fprintf(stdout, "under %s: %d object(s)\n", k, rep.Keys[k])
		}
		for _, line := range wrongKeyring(rep) {
			fmt.Fprintln(stdout, line)
		}
		if rep.CustomerKeyed > 0 {
			fmt.Fprintf(stdout, "%d object(s) sealed with a customer key (SSE-C): metadata, wrapped key and manifest checked; their content needs the customer's key and was not read\n", rep.CustomerKeyed)
		}
	}
	if err != nil || len(rep.Problems) > 0 {
		return 1
	}
	return 0
}

// problemWords says what verify found of an object that is not ok.
func problemWords(r sealstore.VerifyResult) string {
	switch r.Status {
	case sealstore.VerifyUnknownKey:
		return fmt.Sprintf("sealed under master key %q, which this keyring lacks (%v)", r.KeyID, r.Err)
	case sealstore.VerifyWrongKey:
		return fmt.Sprintf("sealed under a key this keyring lacks: its key %q does not open the wrapped data key (another key under that id, the wrapped key altered, or the object copied at the store from another bucket or key: s3seal binds each object to its name)", r.KeyID)
	}
	return r.Err.Error()
}

// wrongKeyring names each master key id under which objects were found
// and none opened: then the keyring, not the objects, is wrong.
func wrongKeyring(rep verifyReport) []string {
	bad, wrong := map[string]int{}, map[string]bool{}
	for _, p := range rep.Problems {
		if p.Status == sealstore.VerifyUnknownKey || p.Status == sealstore.VerifyWrongKey {
			bad[p.KeyID]++
		}
		if p.Status == sealstore.VerifyWrongKey {
			wrong[p.KeyID] = true
		}
	}
	var out []string
	for _, id := range slices.Sorted(maps.Keys(bad)) {
		if rep.Keys[id] > bad[id] {
			continue // some objects under id opened: those that did not are the objects' problem
		}
		line := fmt.Sprintf("no object under master key %q opens with this keyring (%d object(s)): it is not the key they were sealed with; give the one they were sealed with (--key-file, --keys-file), then verify again", id, bad[id])
		if wrong[id] {
			line += " (unless they were copied here at the store from another bucket: s3seal binds each object to its bucket and key, and no key opens such a copy)"
		}
		out = append(out, line)
	}
	return out
}
