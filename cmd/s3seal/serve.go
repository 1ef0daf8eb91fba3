package main

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/metrics"
	"github.com/s3seal/s3seal/retry"
	"github.com/s3seal/s3seal/s3api"
	"github.com/s3seal/s3seal/sealstore"
	"golang.org/x/net/http2"
)

// serve runs the proxy until ctx ends.
func serve(ctx context.Context, cfg *config, logOut io.Writer) error {
	log, err := newLogger(logOut, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	log.Info("s3seal starting", "version", buildVersion(), "go", runtime.Version())
	for _, name := range cfg.cmdlineSecrets {
		env := envName(name)
		hint := env + " or --" + name + "-file"
		if name == "lfs-api-key" {
			hint = env
		}
		log.Warn("a secret was given on the command line, where every local user can read it (ps, /proc/PID/cmdline); use "+hint,
			"flag", "--"+name)
	}
	for _, name := range cfg.unknownEnv {
		log.Warn("environment variable "+name+" names no flag of s3seal serve (misspelt?); it is ignored (s3seal serve -h lists the variables)", "variable", name)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	unlock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer unlock()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return usagef("--listen %s: %v", cfg.Listen, err)
	}
	defer ln.Close()
	loopback := isLoopback(ln.Addr())

	mets := metrics.New(buildVersion())
	ks, err := loadKeys(cfg, loopback, mets)
	if err != nil {
		return err
	}
	kr := ks.kr
	trail, err := openAudit(cfg, log)
	if err != nil {
		return err
	}
	if trail != nil {
		defer trail.close()
		kr = trail.keyring(kr, ks.svc)
	}
	creds, err := loadCredentials(cfg, loopback)
	if err != nil {
		return err
	}
	if err := checkCredentialKeys(creds, ks); err != nil {
		return err
	}
	raw, closeBackend, backendName, err := openRawBackend(cfg)
	if err != nil {
		return err
	}
	defer closeBackend()
	ps := cfg.retryPolicies(mets)
	be := retry.NewStore(raw, ps)
	ready := newReadiness(raw, kr, log)
	ready.kms, ready.kmsKeys, ready.kmsDefault = ks.svc, kmsProbeKeys(ks, creds), ks.kmsDefault

	spool := filepath.Join(cfg.DataDir, "spool")
	if err := os.MkdirAll(spool, 0o700); err != nil {
		return fmt.Errorf("spool dir: %w", err)
	}
	reserve := cfg.SpoolReserve
	if reserve == 0 {
		reserve = -1 // none
	}
	var settings backend.Forwarder // the store's own configurations (sealstore.Setting)
	if fw, ok := raw.(backend.Forwarder); ok {
		settings = retry.NewForwarder(fw, ps.Default)
	}
	store, err := sealstore.New(be, kr, sealstore.Options{KMS: ks.svc, KMSDefault: ks.kmsDefault, SpoolDir: spool, Settings: settings, SpoolReserve: reserve, CacheEntries: cfg.ListCacheEntries,
		ListCacheFile: filepath.Join(cfg.DataDir, listCacheFile), ListCacheScope: backendName,
		AllowPlaintextReads: cfg.AllowPlaintextReads, Logger: log, Observer: mets,
		// Over plain HTTP nothing else protects ciphertext in transit.
		BackendChecksum: strings.HasPrefix(strings.ToLower(cfg.BackendEndpoint), "http://")})
	if err != nil {
		return err
	}
	ready.store = store
	kctx, kcancel := context.WithTimeout(ctx, 10*time.Second)
	ready.keysErr, ready.keysAt = store.CheckKeyring(kctx), store.KeyFailures()
	kcancel()
	if err := ready.keysErr; err != nil {
		// Served all the same: what the keyring does not open is refused,
		// and once a request was, /readyz answers 503 and a replica with
		// a wrong key drops out of its load balancer. Not before: the
		// buckets sampled may be another deployment's on the same store
		// account, under its own key.
		log.Error("the master key looks wrong: " + err.Error() + "; give the key the store's objects were sealed with (--key-file, --keys-file), unless those buckets belong to another s3seal with a key of its own")
	}
	if cfg.AllowPlaintextReads {
		log.Warn("--allow-plaintext-reads: objects without s3seal metadata are served as they are, unauthenticated; turn it off once the bucket is migrated")
	}
	var presign s3api.Credential
	if cfg.LFS.Enabled {
		if presign, err = lfsPresignCredential(kr, cfg.LFS.Bucket, creds); err != nil {
			return err
		}
	}
	transferTimeout := cfg.TransferTimeout
	if transferTimeout == 0 {
		transferTimeout = -1 // off
	}
	apiCfg := s3api.Config{Store: store, Credentials: creds, Domains: splitList(cfg.Domains),
		MaxInFlight: cfg.MaxRequests, MaxInFlightPerKey: cfg.MaxRequestsKey,
		TransferTimeout: transferTimeout, TransferMinBytes: cfg.TransferMinBytes,
		Observer: mets, AllowAnonymous: cfg.AllowAnonymous}
	if trail != nil {
		ready.audit = trail.w.Err
		apiCfg.Audit = trail.w
	}
	if cfg.AllowAnonymous {
		log.Warn("--allow-anonymous: unsigned requests are served, allowed what a bucket's public ACL or policy grants everyone")
	}
	if !cfg.embedded() {
		apiCfg.Region = cfg.BackendRegion
	}
	if cfg.MetricsListen == "" {
		// Else both move to the metrics listener; /healthz, which costs
		// nothing and says nothing, stays on both.
		apiCfg.Metrics, apiCfg.Readiness = mets.Handler(), ready.check
	}
	api := s3api.New(apiCfg)
	var tlsCfg *tls.Config
	scheme := "http"
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return usagef("TLS: %v", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		scheme = "https"
	}
	srv := newAPIServer(api, cfg.HeaderTimeout, slog.NewLogLogger(log.Handler(), slog.LevelWarn), tlsCfg)
	log.Info(fmt.Sprintf("s3seal listening on %s://%s", scheme, ln.Addr()),
		"version", buildVersion(), "backend", loggedEndpoint(backendName), "primary_key", kr.Primary(), "data_dir", cfg.DataDir)
	srvs := []*http.Server{srv} // drained on SIGTERM
	if cfg.LFS.Enabled {
		mod, err := startLFS(ctx, cfg, store, kr, creds, presign, scheme+"://"+ln.Addr().String(), log)
		if err != nil {
			return err
		}
		defer mod.close()
		// The module's series name topics. With an LFS API key they are
		// the key's to see: s3seal's own /metrics shows them only on
		// --metrics-listen (private by design), never on the S3
		// listener, which every S3 client reaches unauthenticated.
		if cfg.LFS.APIKey == "" || cfg.MetricsListen != "" {
			if err := mets.Register(mod.metrics.Collectors()...); err != nil {
				return fmt.Errorf("LFS metrics: %w", err)
			}
			if mod.kafka != nil {
				if err := mets.Register(mod.kafka.proxy.Metrics().Collectors()...); err != nil {
					return fmt.Errorf("LFS Kafka listener metrics: %w", err)
				}
			}
		}
		if mod.kafka != nil {
			ready.kafka = mod.kafka.check
		}
		srvs = append(srvs, mod.srv)
	}
	if cfg.MetricsListen != "" {
		msrv, err := startMetrics(cfg.MetricsListen, mets.Handler(), ready.check, cfg.PProf, log)
		if err != nil {
			return err
		}
		defer msrv.Close()
		srvs = append(srvs, msrv)
	}

	go store.KeepListCache(ctx, listCacheSaveEvery)

	errc := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			errc <- srv.ServeTLS(ln, "", "")
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	err = drain(log, ready, cfg.ShutdownDelay, cfg.ShutdownTimeout, again, srvs...)
	if serr := store.SaveListCache(); serr != nil {
		log.Warn("the listing cache was not saved; the next start resolves listed objects afresh", "err", serr)
	}
	return err
}

// listCacheFile, in the data dir, keeps the listing cache across restarts
// (sealstore.Options.ListCacheFile); listCacheSaveEvery is how often it is
// written while entries are added, besides at shutdown.
const (
	listCacheFile      = "list-cache"
	listCacheSaveEvery = time.Minute
)

// maxHeaderBytes bounds the request line and header net/http reads of one
// request (it allows 4 KiB more): well above S3's 8 KiB, so that s3api
// answers a header section S3 refuses with S3's 400
// RequestHeaderSectionTooLarge, yet far below net/http's default of 1 MiB,
// which a connection may hold while --header-timeout runs. Past it
// net/http answers 431 Request Header Fields Too Large and closes.
const maxHeaderBytes = 64 << 10

// newAPIServer is the HTTP server of the S3 API: a connection's request
// line and header must arrive within headerTimeout and hold at most
// maxHeaderBytes; an idle connection is closed after 2 minutes. Bodies
// and answers are bounded by s3api (--transfer-timeout).
//
// Over TLS a client may negotiate HTTP/2, whose server applies neither
// ReadHeaderTimeout nor MaxHeaderBytes to a connection the way HTTP/1
// does: a client that opens a header block and never finishes it holds
// its connection until the connection's idle timeout. So HTTP/2 gets its
// own idle timeout, headerTimeout (a connection with no stream in flight,
// a header block half sent included, is closed then; streams being
// served, slow downloads included, are not idle), and the same header
// size limit. tlsCfg nil serves plain HTTP (HTTP/1 only).
func newAPIServer(h http.Handler, headerTimeout time.Duration, errLog *log.Logger, tlsCfg *tls.Config) *http.Server {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: headerTimeout, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: maxHeaderBytes, ErrorLog: errLog, TLSConfig: tlsCfg}
	if tlsCfg != nil {
		// net/http's own HTTP/2 (http.Server.HTTP2) has no idle timeout of
		// its own: it takes IdleTimeout, which would cut HTTP/1 keep-alive
		// to headerTimeout as well. x/net/http2 still sets one for HTTP/2
		// alone, so it stays until net/http can (DESIGN, "Linting").
		//lint:ignore SA1019 see above: the replacement cannot say this
		if err := http2.ConfigureServer(srv, &http2.Server{IdleTimeout: headerTimeout}); err != nil {
			panic(err) // only for a server already configured, which this one is not
		}
	}
	return srv
}

// openBackend connects to the configured object store, or starts the
// embedded one in the data dir. The SDK client does not retry by itself
// (MaxAttempts 1): every call goes through the retry package's policies,
// which would otherwise be multiplied by the SDK's own attempts. obs, when
// not nil, is told of every attempt (metrics).
func openBackend(cfg *config, obs retry.Observer) (retry.Backend, func(), string, error) {
	st, closeFn, name, err := openRawBackend(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	return retry.NewStore(st, cfg.retryPolicies(obs)), closeFn, name, nil
}

// openRawBackend is openBackend without the retries.
func openRawBackend(cfg *config) (backend.Store, func(), string, error) {
	var s3cfg backend.S3Config
	closeFn, name := func() {}, cfg.BackendEndpoint
	if cfg.embedded() {
		emb, err := embedded.Start(cfg.DataDir)
		if err != nil {
			return nil, nil, "", err // "backend: embedded store: ..."
		}
		s3cfg = emb.Config()
		closeFn = func() { emb.Close() }
		name = "embedded (" + filepath.Join(cfg.DataDir, "objects") + ")"
	} else {
		s3cfg = backend.S3Config{
			Endpoint: cfg.BackendEndpoint, Region: cfg.BackendRegion,
			AccessKey: cfg.BackendAccessKey, SecretKey: cfg.BackendSecretKey,
			PathStyle: cfg.BackendPathStyle,
		}
	}
	s3cfg.MaxAttempts = 1
	s3cfg.Timeouts = cfg.backendTimeouts()
	st, err := backend.NewS3(s3cfg)
	if err != nil {
		closeFn()
		return nil, nil, "", &usageError{err.Error()} // "backend: ..."
	}
	return st, closeFn, name, nil
}

// backendTimeouts are the bounds on a backend that stops moving.
func (c *config) backendTimeouts() backend.Timeouts {
	return backend.Timeouts{Connect: c.BackendConnectTimeout, Response: c.BackendResponseTimeout, Idle: c.BackendIdleTimeout,
		MinBytes: backend.DefaultTimeouts.MinBytes}
}

// retryPolicies are the backend retry policies the configuration sets; the
// calls without their own setting keep the package default (4 attempts,
// 500 ms). Each tells obs (metrics; nil: none) of its attempts.
func (c *config) retryPolicies(obs retry.Observer) retry.Policies {
	return retry.Policies{
		Default:    retry.Policy{Observer: obs},
		Complete:   retry.Policy{Attempts: c.CompleteRetryAttempts, Backoff: c.CompleteRetryBackoff, Observer: obs},
		Part:       retry.Policy{Attempts: c.PartRetryAttempts, Backoff: c.PartRetryBackoff, Observer: obs},
		SourceRead: retry.Policy{Attempts: c.SourceReadAttempts, Backoff: c.SourceReadBackoff, Observer: obs},
	}
}

// devKeyFile is where the embedded default keeps its development master key.
const devKeyFile = "dev-master.key"

// devKeyring is the keyring of the development key when no master key is
// given (loadKeys): on the embedded store and a loopback address only, a
// key in the data dir, made on first start.
func devKeyring(cfg *config, loopback bool) (*crypto.Keyring, error) {
	if !loopback {
		return nil, usagef("no master key given: the development key is only used on a loopback --listen address; give --key-file or --keys-file")
	}
	path := filepath.Join(cfg.DataDir, devKeyFile)
	if err := checkDevKeyFits(cfg.DataDir, path); err != nil {
		return nil, err
	}
	key, err := readOrCreateDevKey(path)
	if err != nil {
		return nil, err
	}
	slog.Warn("using the development master key; give --key-file or --keys-file for real data", "path", path)
	return crypto.NewKeyring("dev", map[string][]byte{"dev": key})
}

// checkDevKeyFits refuses to make a development key beside an embedded
// store that already holds buckets: their objects were sealed under a
// master key given before (--key or --key-file), which was forgotten this
// time. Serving with a new key would answer every request with an
// integrity failure. A development key that is there already is used.
func checkDevKeyFits(dataDir, keyPath string) error {
	if _, err := os.Stat(keyPath); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	buckets, err := embedded.Buckets(dataDir)
	if err != nil {
		return err
	}
	if len(buckets) == 0 {
		return nil
	}
	return usagef("no master key given, and the data directory %s holds an embedded store with %d bucket(s) (%s) sealed under a master key that is not there: "+
		"give the key they were sealed with (--key-file, --key or --keys-file; S3SEAL_KEY_FILE). "+
		"s3seal makes a development key only for an empty data directory", dataDir, len(buckets), strings.Join(buckets[:min(len(buckets), 3)], ", "))
}

func readOrCreateDevKey(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		key, err := crypto.ParseKey(strings.TrimSpace(string(data)))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key, err := crypto.GenerateKey()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintln(f, base64.StdEncoding.EncodeToString(key)); err != nil {
		f.Close()
		return nil, err
	}
	return key, f.Close()
}

// loadCredentials returns the client credentials; with none configured,
// on a loopback address only, the development pair the README names.
func loadCredentials(cfg *config, loopback bool) (s3api.Credentials, error) {
	switch {
	case cfg.AccessKey != "":
		return s3api.SingleCredential(cfg.AccessKey, cfg.SecretKey), nil
	case cfg.CredentialsFile != "":
		data, err := readPrivateFile(cfg.CredentialsFile)
		if err != nil {
			return nil, usagef("--credentials-file: %v", err)
		}
		c, err := s3api.ParseCredentials(data)
		if err != nil {
			return nil, usagef("--credentials-file %s: %v", cfg.CredentialsFile, err)
		}
		return c, nil
	}
	if !loopback {
		return nil, usagef("no client credentials given: the development credentials are only used on a loopback --listen address")
	}
	slog.Warn("using development client credentials; give --access-key with --secret-key-file, or --credentials-file, for real use",
		"access_key", devAccessKey)
	return s3api.SingleCredential(devAccessKey, devSecretKey), nil
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// loggedEndpoint is the backend's name as logged: an endpoint URL's
// password (user:password@host) is replaced by xxxxx.
func loggedEndpoint(name string) string {
	u, err := url.Parse(name)
	if err != nil || u.User == nil {
		return name
	}
	return u.Redacted()
}
