package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

// environ lists the environment, for the check of misspelt S3SEAL_*
// variables.
var environ = os.Environ

// envName is the environment variable of a flag: --backend-endpoint is
// S3SEAL_BACKEND_ENDPOINT.
func envName(flagName string) string {
	return "S3SEAL_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// badValue says what was wrong with value v of flag f: the value and what
// was expected.
func badValue(f *flag.Flag, v string) string {
	switch f.Value.(type) {
	case interface{ IsBoolFlag() bool }:
		return fmt.Sprintf("%q is not true or false", v)
	}
	switch fmt.Sprintf("%T", f.Value) {
	case "*flag.intValue", "*flag.int64Value", "*flag.uintValue", "*flag.uint64Value":
		return fmt.Sprintf("%q is not a number", v)
	case "*flag.durationValue":
		return fmt.Sprintf("%q is not a duration (such as 30s, 2m, 1h)", v)
	}
	return fmt.Sprintf("%q is not valid", v)
}

// flagError rewrites an error of the flag package in s3seal's words:
// `--max-requests: "abc" is not a number`.
func flagError(fs *flag.FlagSet, err error, command string) string {
	msg := err.Error()
	var v, name string
	if n, _ := fmt.Sscanf(msg, "invalid value %q for flag -%s", &v, &name); n == 2 {
		name = strings.TrimSuffix(name, ":")
		if f := fs.Lookup(name); f != nil {
			return "--" + name + ": " + badValue(f, v)
		}
	}
	if n, _ := fmt.Sscanf(msg, "invalid boolean value %q for -%s", &v, &name); n == 2 {
		return "--" + strings.TrimSuffix(name, ":") + ": " + fmt.Sprintf("%q is not true or false", v)
	}
	if rest, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag --" + strings.TrimPrefix(rest, "-") + " (s3seal " + command + " -h lists the flags)"
	}
	return msg
}

// pathStyleHost reports whether an object store endpoint can only be
// addressed path-style: its host is an IP address or localhost, which no
// bucket name can be put in front of (bucket.127.0.0.1 and
// bucket.localhost do not resolve). The SDKs and minio-go decide so too;
// --backend-path-style given either way wins.
func pathStyleHost(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return net.ParseIP(h) != nil || h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// src names where the value of a flag came from: --name, or its
// environment variable.
func (c *config) src(name string) string {
	if env, ok := c.fromEnv[name]; ok {
		return env
	}
	return "--" + name
}

// config is every setting of `s3seal serve`. Each one is a flag and an
// environment variable: --backend-endpoint is S3SEAL_BACKEND_ENDPOINT.
type config struct {
	Listen          string
	DataDir         string
	TLSCert, TLSKey string
	Domains         string

	BackendEndpoint  string
	BackendRegion    string
	BackendAccessKey string
	BackendSecretKey string
	BackendPathStyle bool
	// Bounds on a backend that stops moving (backend.Timeouts).
	BackendConnectTimeout, BackendResponseTimeout, BackendIdleTimeout time.Duration

	AccessKey, SecretKey string
	CredentialsFile      string

	Key      string
	KeysFile string
	// Master keys held outside s3seal (kmskeys.go).
	KMSKey                                   string
	KMSCacheTTL, KMSBucketKeyTTL, KMSTimeout time.Duration
	KMSCacheSize                             int
	KMSCheckWrites                           bool

	// The secrets above can also come from files (--key-file, ...).
	KeyFile, SecretKeyFile, BackendSecretKeyFile string
	// cmdlineSecrets names the secret flags given on the command line,
	// where every local user can read them: serve warns about each.
	cmdlineSecrets []string

	AllowPlaintextReads bool
	AllowAnonymous      bool
	MaxRequests         int
	MaxRequestsKey      int
	TransferTimeout     time.Duration
	TransferMinBytes    int64
	HeaderTimeout       time.Duration // bound on reading a request's header
	SpoolReserve        int64
	ListCacheEntries    int
	LogLevel            string
	LogFormat           string
	MetricsListen       string
	PProf               bool // net/http/pprof on the metrics listener
	// Graceful shutdown: serving on after SIGTERM, then draining.
	ShutdownDelay, ShutdownTimeout time.Duration
	// The audit trail (audit.go).
	AuditLog, AuditKeyFile string
	AuditLogMaxSize        int64
	AuditLogSync           bool

	// fromEnv maps each flag whose value came from the environment to
	// its variable, so that messages name where a value came from.
	fromEnv map[string]string
	// unknownEnv lists the S3SEAL_* variables set that name no flag
	// (misspelt ones): serve warns about each.
	unknownEnv []string

	// tool is set for the commands other than serve, which serve no
	// clients and so need no client credentials.
	tool bool

	// Retries of backend calls (retry.Policies), per kind of operation.
	CompleteRetryAttempts int
	CompleteRetryBackoff  time.Duration
	PartRetryAttempts     int
	PartRetryBackoff      time.Duration
	SourceReadAttempts    int
	SourceReadBackoff     time.Duration

	LFS lfsConfig
}

// Development defaults, used only with the embedded store on a loopback
// address. The README names them.
const (
	devAccessKey = "s3seal"
	devSecretKey = "s3seal-dev-secret"
)

// usageError is a configuration mistake: s3seal exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// parseConfig reads serve's flags, falling back to S3SEAL_* environment
// variables for every flag not given on the command line.
func parseConfig(args []string, getenv func(string) string) (*config, error) {
	return parseCommandConfig("serve", args, getenv, nil)
}

// parseCommandConfig is parseConfig for the command name, whose own flags
// extra adds (the S3SEAL_* variables apply to them too). A command other
// than serve needs no client credentials.
func parseCommandConfig(name string, args []string, getenv func(string) string, extra func(*flag.FlagSet)) (*config, error) {
	return parseCommandConfigHelp(name, args, getenv, extra, io.Discard)
}

// commandFlags defines the flags of command name on a new FlagSet: extra's
// (the command's own) first, then those every command shares (the LFS
// ones for serve alone). It returns the config they set, the FlagSet and
// the group each flag is listed under in docs/CONFIGURATION.md: a flag
// belongs to the group of the last g.start before it, extra's to none
// (""). A flag added among others joins their group.
func commandFlags(name string, extra func(*flag.FlagSet)) (*config, *flag.FlagSet, *flagGroups) {
	c := &config{tool: name != "serve"}
	fs := flag.NewFlagSet("s3seal "+name, flag.ContinueOnError)
	g := newFlagGroups(fs)
	if extra != nil {
		extra(fs)
	}
	str := func(p *string, name, def, usage string) { fs.StringVar(p, name, def, usage) }
	g.start("Listener, TLS and data directory")
	str(&c.Listen, "listen", "127.0.0.1:7070", "address to serve the S3 API on")
	str(&c.DataDir, "data-dir", "./s3seal-data", "directory for spool files, the listing cache kept across restarts (list-cache, sealed) and, without --backend-endpoint, the embedded store and the development key")
	str(&c.TLSCert, "tls-cert", "", "PEM certificate; with --tls-key, serve HTTPS (HTTP/1.1 and HTTP/2)")
	str(&c.TLSKey, "tls-key", "", "PEM private key for --tls-cert")
	str(&c.Domains, "domains", "localhost", "comma-separated host names for virtual-hosted-style requests")
	g.start("Object store (backend)")
	str(&c.BackendEndpoint, "backend-endpoint", "", "URL of the S3 object store; empty = embedded store in --data-dir")
	str(&c.BackendRegion, "backend-region", "us-east-1", "region of the object store")
	str(&c.BackendAccessKey, "backend-access-key", "", "access key for the object store")
	str(&c.BackendSecretKey, "backend-secret-key", "", "secret key for the object store (for tests: prefer S3SEAL_BACKEND_SECRET_KEY or --backend-secret-key-file)")
	str(&c.BackendSecretKeyFile, "backend-secret-key-file", "", "file holding the secret key for the object store (mode 600)")
	fs.BoolVar(&c.BackendPathStyle, "backend-path-style", false, "address the object store path-style (default: true for an endpoint whose host is an IP address or localhost, false otherwise)")
	dt := backend.DefaultTimeouts
	fs.DurationVar(&c.BackendConnectTimeout, "backend-connect-timeout", dt.Connect, "bound on connecting to the object store (TCP and TLS); 0: the system's")
	fs.DurationVar(&c.BackendResponseTimeout, "backend-response-timeout", dt.Response, "bound on the wait for the object store's answer once a request is sent (a stalled attempt is retried once); 0: none")
	fs.DurationVar(&c.BackendIdleTimeout, "backend-idle-timeout", dt.Idle, "bound on the time no byte of a request or response body moves to or from the object store; 0: none")
	g.start("Clients and access")
	str(&c.AccessKey, "access-key", "", "the access key clients sign with")
	str(&c.SecretKey, "secret-key", "", "the secret key clients sign with (for tests: prefer S3SEAL_SECRET_KEY or --secret-key-file)")
	str(&c.SecretKeyFile, "secret-key-file", "", "file holding the secret key clients sign with (mode 600)")
	str(&c.CredentialsFile, "credentials-file", "", "JSON file of client credentials (instead of --access-key/--secret-key)")
	g.start("Master keys and KMS")
	str(&c.Key, "key", "", "master key, base64 of 32 bytes (key id \"default\"; for tests: prefer S3SEAL_KEY or --key-file)")
	str(&c.KeyFile, "key-file", "", "file holding the master key as s3seal keygen prints it (mode 600)")
	str(&c.KeysFile, "keys-file", "", "JSON keyring file (instead of --key)")
	str(&c.KMSKey, "kms-key", "", "master key held in a KMS or HSM, by URI: aws-kms://<key id, ARN or alias>, hcvault://<host:port>/<mount>/keys/<name>, pkcs11:token=<label>;object=<label>?module-path=<path>&pin-source=file:<path>; it seals new objects and is SSE-KMS's default key (a URI without a key configures the service alone)")
	fs.DurationVar(&c.KMSCacheTTL, "kms-cache-ttl", 5*time.Minute, "how long a data key opened through the KMS is kept, so reads of recent objects make no KMS call (and keep working while the KMS is down); a disabled key stops reading after it; negative: no cache")
	fs.IntVar(&c.KMSCacheSize, "kms-cache-size", 10000, "opened data keys kept (about 100 bytes each)")
	fs.DurationVar(&c.KMSBucketKeyTTL, "kms-bucket-key-ttl", 5*time.Minute, "how long one bucket key seals new objects of a bucket before the KMS makes a new one (SSE-KMS with bucket keys)")
	fs.BoolVar(&c.KMSCheckWrites, "kms-check-writes", true, "open every key the KMS makes before sealing with it (one more KMS call per object written without a bucket key; bucket keys are always checked): a KMS that answers a key its sealed form does not hold fails the write instead of losing the object")
	fs.DurationVar(&c.KMSTimeout, "kms-timeout", 5*time.Second, "bound on one KMS call; a call the KMS does not answer is tried 3 times in all")
	g.start("Clients and access")
	fs.BoolVar(&c.AllowAnonymous, "allow-anonymous", false, "serve unsigned (anonymous) requests, allowed only what a bucket's public ACL grants or policy allows to everyone")
	fs.BoolVar(&c.AllowPlaintextReads, "allow-plaintext-reads", false, "serve objects without s3seal metadata as they are (migrating a bucket; each such read is logged at WARN)")
	g.start("Limits and timeouts")
	fs.IntVar(&c.MaxRequests, "max-requests", 256, "S3 requests served at once, and LFS requests on their own listener; more wait up to 10 s, then get 503 (S3 SlowDown, LFS proxy_busy)")
	fs.IntVar(&c.MaxRequestsKey, "max-requests-per-key", 0, "S3 requests of one access key served at once (default: half of --max-requests)")
	fs.DurationVar(&c.TransferTimeout, "transfer-timeout", 30*time.Second, "cut a client whose request body or response moves less than --transfer-min-bytes in this time (0: never)")
	fs.Int64Var(&c.TransferMinBytes, "transfer-min-bytes", 16<<10, "bytes a client must move within every --transfer-timeout")
	fs.DurationVar(&c.HeaderTimeout, "header-timeout", 30*time.Second, "close a connection whose request line and header have not all arrived in this time (1s to 10m); a header section past 8 KiB is refused (400 RequestHeaderSectionTooLarge), one past 64 KiB is not read (431)")
	fs.Int64Var(&c.SpoolReserve, "spool-reserve", sealstore.DefaultSpoolReserve, "bytes of --data-dir's filesystem that spool files leave free: a PUT or part that would take them gets 503 SlowDown before its body is read (0: none)")
	fs.IntVar(&c.ListCacheEntries, "list-cache-entries", sealstore.DefaultCacheEntries, "listing entries whose plaintext size and ETag are kept in memory (least recently used dropped; about 320 bytes each), and across restarts in --data-dir")
	g.start("Logging, metrics and profiling")
	str(&c.LogLevel, "log-level", "info", "debug, info, warn or error (debug adds an access log, without query strings or headers)")
	str(&c.LogFormat, "log-format", "text", "text or json")
	str(&c.MetricsListen, "metrics-listen", "", "serve /metrics and /readyz on this address instead of beside the S3 API (/healthz answers on both)")
	fs.BoolVar(&c.PProf, "pprof", false, "serve Go's profiles (net/http/pprof) under /debug/pprof/ on --metrics-listen, which it needs")
	g.start("Graceful shutdown")
	fs.DurationVar(&c.ShutdownDelay, "shutdown-delay", 5*time.Second, "on SIGTERM, keep serving this long with /readyz answering 503, then close the listener")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 60*time.Second, "then wait this long for requests in flight before cutting them")
	g.start("Object store retries")
	fs.IntVar(&c.CompleteRetryAttempts, "complete-retry-attempts", 4, "attempts of a backend CompleteMultipartUpload, the first included")
	fs.DurationVar(&c.CompleteRetryBackoff, "complete-retry-backoff", 500*time.Millisecond, "first backoff ceiling between completion attempts (doubles per attempt up to 8s; each wait drawn at random below it)")
	fs.IntVar(&c.PartRetryAttempts, "part-retry-attempts", 4, "attempts of a backend UploadPart, the first included")
	fs.DurationVar(&c.PartRetryBackoff, "part-retry-backoff", 500*time.Millisecond, "first backoff ceiling between UploadPart attempts")
	fs.IntVar(&c.SourceReadAttempts, "source-read-attempts", 4, "attempts to read a copy source at one offset (reopened where it broke)")
	fs.DurationVar(&c.SourceReadBackoff, "source-read-backoff", 500*time.Millisecond, "first backoff ceiling between copy-source reopens")
	if name == "serve" {
		c.LFS.flags(fs, g.start)
		g.start("Audit trail")
		c.auditFlags(fs)
	}
	g.end()
	return c, fs, g
}

// parseCommandConfigHelp is parseCommandConfig writing the usage to help
// when the flags ask for it (-h, --help).
func parseCommandConfigHelp(name string, args []string, getenv func(string) string, extra func(*flag.FlagSet), help io.Writer) (*config, error) {
	c, fs, _ := commandFlags(name, extra)
	fs.VisitAll(func(f *flag.Flag) { f.Usage += " [" + envName(f.Name) + "]" })
	// The flag package would print errors and the usage itself: run
	// prints the error once, and the usage goes to the writer of -h.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(help)
			fmt.Fprintf(help, "usage: s3seal %s [flags]\n\nEvery flag is also the environment variable in brackets; a flag on the\ncommand line wins.\n\n", name)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, &usageError{flagError(fs, err, name)}
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c.fromEnv = map[string]string{}
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		env := envName(f.Name)
		if v := getenv(env); v != "" && !set[f.Name] {
			c.fromEnv[f.Name] = env
			if err := f.Value.Set(v); err != nil && envErr == nil {
				envErr = usagef("%s: %s", env, badValue(f, v))
			}
		}
	})
	if envErr != nil {
		return nil, envErr
	}
	if _, fromEnv := c.fromEnv["backend-path-style"]; !set["backend-path-style"] && !fromEnv && pathStyleHost(c.BackendEndpoint) {
		c.BackendPathStyle = true
	}
	for _, kv := range environ() {
		k, _, _ := strings.Cut(kv, "=")
		if rest, ok := strings.CutPrefix(k, "S3SEAL_"); ok && fs.Lookup(strings.ToLower(strings.ReplaceAll(rest, "_", "-"))) == nil {
			c.unknownEnv = append(c.unknownEnv, k)
		}
	}
	if set["key"] && c.Key == "" {
		return nil, usagef(`--key "": empty; give a master key (s3seal keygen makes one), or leave --key out`)
	}
	for _, name := range []string{"key", "secret-key", "backend-secret-key", "lfs-api-key", "lfs-kafka-sasl-password"} {
		if set[name] {
			c.cmdlineSecrets = append(c.cmdlineSecrets, name)
		}
	}
	if err := c.readSecretFiles(); err != nil {
		return nil, err
	}
	return c, c.validate()
}

// readSecretFiles fills each secret given as a file. The file must be
// private to its owner (see readPrivateFile); surrounding whitespace, such
// as the newline s3seal keygen prints, is dropped.
func (c *config) readSecretFiles() error {
	for _, s := range []struct {
		name       string
		file, dest *string
	}{
		{"key", &c.KeyFile, &c.Key},
		{"secret-key", &c.SecretKeyFile, &c.SecretKey},
		{"backend-secret-key", &c.BackendSecretKeyFile, &c.BackendSecretKey},
		{"lfs-kafka-sasl-password", &c.LFS.KafkaSASLPasswordFile, &c.LFS.KafkaSASLPassword},
	} {
		if *s.file == "" {
			continue
		}
		if *s.dest != "" {
			return usagef("give --%s or --%s-file, not both", s.name, s.name)
		}
		data, err := readPrivateFile(*s.file)
		if err != nil {
			return usagef("%s: %v", c.src(s.name+"-file"), err)
		}
		if *s.dest = strings.TrimSpace(string(data)); *s.dest == "" {
			return usagef("%s: %s is empty", c.src(s.name+"-file"), *s.file)
		}
	}
	return nil
}

func (c *config) validate() error {
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return usagef("%s: %q is not text or json", c.src("log-format"), c.LogFormat)
	}
	var level slog.Level
	if level.UnmarshalText([]byte(c.LogLevel)) != nil {
		return usagef("%s: %q is not a level; give debug, info, warn or error", c.src("log-level"), c.LogLevel)
	}
	if c.MaxRequests < 1 {
		return usagef("%s: %d is below 1; give at least 1", c.src("max-requests"), c.MaxRequests)
	}
	if err := c.LFS.validate(); err != nil {
		return err
	}
	if err := c.validateLFSKafka(); err != nil {
		return err
	}
	for _, r := range []struct {
		name     string
		attempts int
		backoff  time.Duration
	}{
		{"complete-retry", c.CompleteRetryAttempts, c.CompleteRetryBackoff},
		{"part-retry", c.PartRetryAttempts, c.PartRetryBackoff},
		{"source-read", c.SourceReadAttempts, c.SourceReadBackoff},
	} {
		if r.attempts < 1 || r.attempts > 100 {
			return usagef("%s: %d is not between 1 and 100", c.src(r.name+"-attempts"), r.attempts)
		}
		if r.backoff <= 0 || r.backoff > time.Minute {
			return usagef("%s: %v is not above 0 and at most 1m", c.src(r.name+"-backoff"), r.backoff)
		}
	}
	if c.MaxRequestsKey < 0 || c.MaxRequestsKey > c.MaxRequests {
		return usagef("%s: %d is not between 1 and --max-requests (%d); 0 means half of --max-requests", c.src("max-requests-per-key"), c.MaxRequestsKey, c.MaxRequests)
	}
	if c.TransferTimeout < 0 || (c.TransferTimeout > 0 && c.TransferTimeout < time.Second) {
		return usagef("%s: %v is below 1s; give at least 1s, or 0 to turn the check off", c.src("transfer-timeout"), c.TransferTimeout)
	}
	if c.HeaderTimeout < time.Second || c.HeaderTimeout > 10*time.Minute {
		return usagef("%s: %v is not between 1s and 10m", c.src("header-timeout"), c.HeaderTimeout)
	}
	for _, t := range []struct {
		name string
		d    time.Duration
	}{
		{"backend-connect-timeout", c.BackendConnectTimeout},
		{"backend-response-timeout", c.BackendResponseTimeout},
		{"backend-idle-timeout", c.BackendIdleTimeout},
	} {
		if t.d < 0 || (t.d > 0 && t.d < 100*time.Millisecond) {
			return usagef("%s: %v is below 100ms; give at least 100ms, or 0 for no bound", c.src(t.name), t.d)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"shutdown-delay", c.ShutdownDelay}, {"shutdown-timeout", c.ShutdownTimeout}} {
		if d.v < 0 || d.v > time.Hour {
			return usagef("%s: %v is not between 0s and 1h", c.src(d.name), d.v)
		}
	}
	if c.PProf && c.MetricsListen == "" && !c.tool {
		return usagef("%s needs --metrics-listen: the profiles are served on the metrics listener only, never beside the S3 API, which faces clients", c.src("pprof"))
	}
	if err := c.validateAudit(); err != nil {
		return err
	}
	if c.ListCacheEntries < 1 {
		return usagef("%s: %d is below 1; give at least 1", c.src("list-cache-entries"), c.ListCacheEntries)
	}
	if c.SpoolReserve < 0 {
		return usagef("%s: %d is below 0; give a number of bytes, or 0 for no reserve", c.src("spool-reserve"), c.SpoolReserve)
	}
	if c.TransferMinBytes < 1 {
		return usagef("%s: %d is below 1; give at least 1", c.src("transfer-min-bytes"), c.TransferMinBytes)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	if c.Key != "" && c.KeysFile != "" {
		return usagef("give %s or %s, not both", c.keySource(), c.src("keys-file"))
	}
	if (c.AccessKey == "") != (c.SecretKey == "") {
		return usagef("--access-key and --secret-key go together")
	}
	if c.AccessKey != "" && c.CredentialsFile != "" {
		return usagef("give --access-key/--secret-key or --credentials-file, not both")
	}
	if c.embedded() {
		return nil
	}
	if err := c.validateEndpoint(); err != nil {
		return err
	}
	if c.Key == "" && c.KeysFile == "" && (c.KMSKey == "" || !kmsURINamesKey(c.KMSKey)) {
		return usagef("a real backend needs a master key: --key-file, --keys-file or --kms-key (s3seal keygen makes one)")
	}
	if c.AccessKey == "" && c.CredentialsFile == "" && !c.tool {
		return usagef("a real backend needs client credentials: --access-key with --secret-key-file, or --credentials-file")
	}
	if c.BackendAccessKey == "" || c.BackendSecretKey == "" {
		return usagef("a real backend needs --backend-access-key and --backend-secret-key-file (or S3SEAL_BACKEND_SECRET_KEY)")
	}
	return nil
}

func (c *config) embedded() bool { return c.BackendEndpoint == "" }

// keySource names where the master key came from: "--key-file master.key"
// (or its variable) when read from a file, else --key or S3SEAL_KEY.
func (c *config) keySource() string {
	if c.KeyFile != "" {
		return c.src("key-file") + " " + c.KeyFile
	}
	return c.src("key")
}

// validateEndpoint refuses a --backend-endpoint that is not an http(s) URL
// with a host, naming the value (user information hidden: it may hold a
// secret) and the URL it probably meant.
func (c *config) validateEndpoint() error {
	v := c.BackendEndpoint
	u, err := url.Parse(v)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return nil
	}
	if at := strings.LastIndex(v, "@"); at >= 0 {
		scheme := ""
		if i := strings.Index(v[:at], "://"); i >= 0 {
			scheme = v[:i+3]
		}
		v = scheme + "xxxxx" + v[at:]
	}
	example := "http://127.0.0.1:9000"
	if !strings.Contains(v, "://") && v != "" {
		example = "http://" + v
	}
	return usagef("%s %q: not an http(s) URL; give the scheme and host, as %s", c.src("backend-endpoint"), v, example)
}
