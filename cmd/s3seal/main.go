// Command s3seal is an S3-compatible proxy that encrypts every object
// before it reaches the object store. `s3seal serve` runs it; `s3seal
// keygen` prints a new master key.
package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/internal/reqid"
)

const usage = `usage: s3seal <command> [flags]

commands:
  serve    run the proxy (s3seal serve -h lists every flag)
  keygen   print a new master key (base64 of 32 random bytes)
  gc       find (and with --delete remove) what s3seal left in the backend
           that nothing refers to any more (s3seal gc -h)
  verify   check every object of a bucket: metadata, wrapped key and, with
           --deep, every segment (s3seal verify -h)
  rewrap   wrap every object's data key under another master key, without
           rewriting the data (s3seal rewrap -h)
  audit verify FILE...
           prove an audit trail (--audit-log) was not edited: no line
           changed, removed or reordered, across rotated files given in
           order (s3seal audit verify -h)
  version  print the version and commit s3seal was built from (also --version)
`

const keygenUsage = `usage: s3seal keygen

Prints a new master key: base64 of 32 random bytes, as --key-file and
S3SEAL_KEY take it. Keep it safe: without it the data is gone.

    (umask 077; s3seal keygen > master.key)
`

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run executes a command and returns the process exit code: 0 on success,
// 2 for a usage or configuration mistake, 1 for any other failure.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		cfg, err := parseCommandConfigHelp("serve", args[1:], getenv, nil, stdout)
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if err != nil {
			fmt.Fprintln(stderr, "s3seal:", err)
			return 2
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := serve(ctx, cfg, stderr); err != nil {
			fmt.Fprintln(stderr, "s3seal:", err)
			var ue *usageError
			if errors.As(err, &ue) {
				return 2
			}
			return 1
		}
		return 0
	case "gc":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return gc(ctx, args[1:], getenv, stdout, stderr)
	case "verify":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return verify(ctx, args[1:], getenv, stdout, stderr)
	case "rewrap":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return rewrap(ctx, args[1:], getenv, stdout, stderr)
	case "audit":
		return auditCommand(args[1:], getenv, stdout, stderr)
	case "keygen":
		if len(args) > 1 {
			if a := args[1]; a == "-h" || a == "-help" || a == "--help" {
				fmt.Fprint(stdout, keygenUsage)
				return 0
			}
			fmt.Fprintf(stderr, "s3seal: keygen takes no arguments, got %q\n%s", args[1], keygenUsage)
			return 2
		}
		key, err := crypto.GenerateKey()
		if err != nil {
			fmt.Fprintln(stderr, "s3seal:", err)
			return 1
		}
		fmt.Fprintln(stdout, base64.StdEncoding.EncodeToString(key))
		return 0
	case "config-reference": // hidden: writes docs/CONFIGURATION.md (configref.go)
		return configReferenceCommand(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "s3seal", buildVersion())
		return 0
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "s3seal: unknown command %q\n%s", args[0], usage)
		return 2
	}
}

// usageExit reports a configuration error and returns its exit code: 0
// for -h, 2 for a usage mistake, 1 otherwise.
func usageExit(err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "s3seal:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// newLogger returns a logger on w at the named level, in text or JSON
// (format "json"). Records logged with a request's context carry its
// request_id (the S3 x-amz-request-id).
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level: %v", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(reqid.Handler(h)), nil
}
