package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// The soak's settings, from the environment (scripts/soak.sh sets them).
const (
	soakDurationEnv = "S3SEAL_SOAK_DURATION"        // Go duration; default 90s (the suite's short form)
	soakSeedEnv     = "S3SEAL_SOAK_SEED"            // uint64; default drawn at random and logged
	soakRateEnv     = "S3SEAL_SOAK_RATE"            // fraction of backend requests faulted; default 0.1
	soakStallsEnv   = "S3SEAL_SOAK_STALLS"          // "0": leave the stall shapes out; default on, with short backend timeouts
	soakTimeoutEnv  = "S3SEAL_SOAK_BACKEND_TIMEOUT" // s3seal's three backend timeouts under stalls; default 3s
	soakSummaryEnv  = "S3SEAL_SOAK_SUMMARY"         // file to write the summary to
)

// soakCommandTimeout bounds one client command (a sync, a backup).
const soakCommandTimeout = 10 * time.Minute

// soakConfig is what one soak run does.
type soakConfig struct {
	duration       time.Duration
	seed           uint64
	rate           float64
	stalls         bool
	backendTimeout string
	summaryFile    string
}

func soakConfigFromEnv(t *testing.T) soakConfig {
	t.Helper()
	c := soakConfig{duration: 90 * time.Second, seed: rand.Uint64() % 1_000_000, rate: 0.1, backendTimeout: "3s",
		summaryFile: os.Getenv(soakSummaryEnv), stalls: os.Getenv(soakStallsEnv) != "0"}
	var err error
	if v := os.Getenv(soakDurationEnv); v != "" {
		if c.duration, err = time.ParseDuration(v); err != nil || c.duration <= 0 {
			t.Fatalf("%s=%q: want a positive Go duration (%v)", soakDurationEnv, v, err)
		}
	}
	if v := os.Getenv(soakSeedEnv); v != "" {
		if c.seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: want an unsigned number (%v)", soakSeedEnv, v, err)
		}
	}
	if v := os.Getenv(soakRateEnv); v != "" {
		if c.rate, err = strconv.ParseFloat(v, 64); err != nil || c.rate < 0 || c.rate >= 1 {
			t.Fatalf("%s=%q: want a fraction in [0, 1) (%v)", soakRateEnv, v, err)
		}
	}
	if v := os.Getenv(soakTimeoutEnv); v != "" {
		if _, err := time.ParseDuration(v); err != nil {
			t.Fatalf("%s=%q: want a Go duration (%v)", soakTimeoutEnv, v, err)
		}
		c.backendTimeout = v
	}
	return c
}

// soakRun tallies what the clients did.
type soakRun struct {
	t        *testing.T
	cfg      soakConfig
	deadline time.Time
	ctx      context.Context // ends a grace period after the deadline

	mu            sync.Mutex
	ops           map[string]int
	failures      map[string]int
	failureLog    []string
	verified      map[string]int64
	clientRetries map[string]int
}

func (s *soakRun) op(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops[client]++
}

// fail records a failure a client saw after its own retries.
func (s *soakRun) fail(client, what string, err error, output string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[client]++
	if len(output) > 4000 {
		output = "..." + output[len(output)-4000:]
	}
	msg := fmt.Sprintf("%s %s [%s]: %v\n%s", client, what, time.Now().Format("15:04:05"), err, output)
	s.failureLog = append(s.failureLog, msg)
	s.t.Logf("soak FAILURE: %s", msg)
}

func (s *soakRun) verify(client string, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.verified[client] += n
}

func (s *soakRun) retried(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clientRetries[client]++
}

// loop runs iteration(0), iteration(1), ... until the deadline.
func (s *soakRun) loop(iteration func(i int)) {
	for i := 0; i < 1_000_000 && time.Now().Before(s.deadline) && s.ctx.Err() == nil; i++ {
		iteration(i)
	}
}

// tool runs one client command (an operation of client): a non-zero exit
// is a failure after the client's own retries. It reports success and the
// combined output.
func (s *soakRun) tool(client, what string, env []string, name string, args ...string) (string, bool) {
	s.op(client)
	ctx, cancel := context.WithTimeout(s.ctx, soakCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		s.fail(client, what, err, out.String())
		return out.String(), false
	}
	return out.String(), true
}

// soakBytes is n bytes determined by the seed, the stream's name and i.
func soakBytes(seed uint64, name string, i, n int) []byte {
	h := sha256.New()
	_ = binary.Write(h, binary.LittleEndian, seed)
	_ = binary.Write(h, binary.LittleEndian, int64(i))
	h.Write([]byte(name))
	var k [32]byte
	copy(k[:], h.Sum(nil))
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(k).Read(b)
	return b
}

// sameFile compares a file with want byte for byte.
func sameFile(path string, want []byte) error {
	got, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s: %d bytes differ from the %d written", path, len(got), len(want))
	}
	return nil
}

// TestSoak runs real clients concurrently in loops through s3seal in front
// of moto behind the fault proxy, which fails a share of backend requests
// at random from a seed in every shape a real store produces, for a bounded
// time (S3SEAL_SOAK_DURATION, 90 s by default; scripts/soak.sh runs the
// long form). Every client operation must succeed after the client's own
// retries, everything read back must be what was written, and s3seal gc
// must find nothing left over. The summary is logged as a table (and
// written to S3SEAL_SOAK_SUMMARY when set).
func TestSoak(t *testing.T) {
	t.Parallel()
	cfg := soakConfigFromEnv(t)
	requireRclone(t)
	resticPath := requireTool(t, resticBin)
	requireTool(t, "aws")
	t.Logf("soak: seed %d, duration %v, fault rate %.2f, stalls %v (replay: scripts/soak.sh --seed %d --duration %v)",
		cfg.seed, cfg.duration, cfg.rate, cfg.stalls, cfg.seed, cfg.duration)

	moto, fp := motoBehindProxy(t)
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "soak"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	args := []string{"--lfs-brokers", kc.ListenAddrs()[0]}
	if cfg.stalls {
		args = append(args, "--backend-connect-timeout", cfg.backendTimeout,
			"--backend-response-timeout", cfg.backendTimeout, "--backend-idle-timeout", cfg.backendTimeout)
	}
	// The credential's lists name the LFS bucket, which LFS owns: the soak
	// deletes each blob it checked, as an operator's retention job would.
	creds := writeJSON(t, t.TempDir(), "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "e2e-access", "secret_key": "e2e-secret-key", "read": []string{"*", "lfs"}, "write": []string{"*", "lfs"}}}})
	p, lfsBase := startLFS(t, sealOpts{Backend: &motoServer{Endpoint: fp.URL()}, Args: args, CredentialsFile: creds,
		AccessKey: "e2e-access", SecretKey: "e2e-secret-key"})

	c := sdkFor(t, p)
	for _, b := range []string{"soak-rclone", "soak-restic", "soak-aws"} {
		mustCreateBucket(t, c, b)
	}
	resticEnv := cleanEnv([]string{"AWS_CA_BUNDLE"},
		"RESTIC_REPOSITORY=s3:"+p.Endpoint+"/soak-restic/repo",
		"RESTIC_PASSWORD=soak soak soak",
		"AWS_ACCESS_KEY_ID="+p.AccessKey, "AWS_SECRET_ACCESS_KEY="+p.SecretKey, "AWS_DEFAULT_REGION=us-east-1",
		"RESTIC_CACHE_DIR="+t.TempDir(), "HOME="+t.TempDir())
	runTool(t, resticEnv, resticPath, "--quiet", "init")

	fp.Chaos(faultproxy.ChaosConfig{Seed: cfg.seed, Rate: cfg.rate, Shapes: faultproxy.DefaultShapes(cfg.stalls)})
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.duration+2*soakCommandTimeout)
	defer cancel()
	s := &soakRun{t: t, cfg: cfg, deadline: start.Add(cfg.duration), ctx: ctx,
		ops: map[string]int{}, failures: map[string]int{}, verified: map[string]int64{}, clientRetries: map[string]int{}}

	rcEnv, awsEnv := rcloneEnv(t, p), soakAWSEnv(t, p)
	rcDir, resticDir, awsDir := t.TempDir(), t.TempDir(), t.TempDir()
	var wg sync.WaitGroup
	for _, client := range []func(){
		func() { soakRclone(s, rcEnv, rcDir) },
		func() { soakRestic(s, resticEnv, resticPath, resticDir) },
		func() { soakAWS(s, awsEnv, p.Endpoint, awsDir) },
		func() { soakLFS(s, lfsBase, c) },
	} {
		wg.Add(1)
		go func() { defer wg.Done(); client() }()
	}
	wg.Wait()
	elapsed := time.Since(start)
	chaos := fp.ChaosStats()
	fp.Reset() // chaos off: what follows reads the state the run left

	metricsText := soakGet(t, p.Endpoint+"/metrics")
	_, hwm := procMemory(t, p.PID())
	recoveries := strings.Count(p.Log(), "completion recovered")
	p.Stop()
	if cfg.summaryFile != "" { // s3seal's log beside the summary, for a look at what it retried
		if err := os.WriteFile(cfg.summaryFile+".s3seal.log", []byte(p.Log()), 0o644); err != nil {
			t.Errorf("write s3seal's log: %v", err)
		}
	}

	// s3seal gc straight against moto once its minimum age has passed
	// since s3seal stopped: what it finds (the manifests and part records
	// that completions and produces cut short leave for it, by design) is
	// reported; after gc --delete a second gc must find nothing.
	const gcMinAge = 5 * time.Second
	time.Sleep(gcMinAge + time.Second)
	gc := func(extra ...string) (int, int, string) {
		args := append([]string{"gc", "--data-dir", t.TempDir(), "--min-age", gcMinAge.String(),
			"--backend-endpoint", moto.Endpoint, "--backend-region", "us-east-1", "--backend-path-style",
			"--backend-access-key", "x"}, extra...)
		code, out := runS3sealExit(t, []string{"S3SEAL_KEY=" + p.Key, "S3SEAL_BACKEND_SECRET_KEY=y"}, args...)
		n := -1
		if m := regexp.MustCompile(`(?m)^(\d+) to remove in`).FindStringSubmatch(out); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		return code, n, out
	}
	code, found, gcOut := gc()
	delCode, _, delOut := gc("--delete")
	afterCode, leftover, afterOut := gc()

	summary := soakSummary(s, elapsed, chaos, metricsText, recoveries, hwm, found, leftover, gcOut)
	t.Log("\n" + summary)
	if cfg.summaryFile != "" {
		if err := os.WriteFile(cfg.summaryFile, []byte(summary), 0o644); err != nil {
			t.Errorf("write summary: %v", err)
		}
	}
	total := 0
	for _, n := range s.failures {
		total += n
	}
	if total > 0 {
		t.Errorf("%d client operations failed after the clients' own retries (seed %d):\n%s", total, cfg.seed, strings.Join(s.failureLog, "\n"))
	}
	if code != 0 || delCode != 0 || afterCode != 0 || leftover != 0 {
		t.Errorf("s3seal gc: exit %d, found %d; gc --delete exit %d:\n%s\nthen gc: exit %d, %d left (want 0):\n%s", code, found, delCode, delOut, afterCode, leftover, afterOut)
	}
	if chaos.Total() == 0 && cfg.rate > 0 {
		t.Errorf("no fault was injected")
	}
}

// soakRclone: rclone sync of a tree with a 64 MiB file (multipart at
// 50 MiB chunks, as scylla-manager uploads SSTables) and small files,
// changed each round, then rclone check --download.
func soakRclone(s *soakRun, env []string, dir string) {
	src := filepath.Join(dir, "src")
	flags := []string{"--s3-chunk-size", "50M", "--s3-upload-cutoff", "50M", "--s3-upload-concurrency", "1",
		"--low-level-retries", "20", "--retries", "3", "--timeout", "10m"}
	s.loop(func(i int) {
		files := map[string][]byte{"big.bin": soakBytes(s.cfg.seed, "rclone-big", i, 64<<20+i%1000)}
		for k := 0; k < 8; k++ {
			files[fmt.Sprintf("small/f%d.txt", k)] = soakBytes(s.cfg.seed, "rclone-small", i*8+k, 1000+(i*37+k*4099)%200_000)
		}
		files[fmt.Sprintf("gen/round%d.txt", i)] = soakBytes(s.cfg.seed, "rclone-gen", i, 10_000)
		_ = os.RemoveAll(src)
		var size int64
		for name, data := range files {
			p := filepath.Join(src, filepath.FromSlash(name))
			// A file that fails to be written is missing from the check
			// below, which wants every one of them to match.
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				_ = os.WriteFile(p, data, 0o644)
			}
			size += int64(len(data))
		}
		if _, ok := s.tool("rclone", fmt.Sprintf("sync (round %d)", i), env, rcloneBin, append([]string{"sync", src, "s3seal:soak-rclone/tree"}, flags...)...); !ok {
			return
		}
		out, ok := s.tool("rclone", fmt.Sprintf("check --download (round %d)", i), env, rcloneBin,
			append([]string{"check", "--download", src, "s3seal:soak-rclone/tree"}, flags...)...)
		if !ok {
			return
		}
		if !strings.Contains(out, fmt.Sprintf("%d matching files", len(files))) || !strings.Contains(out, "0 differences found") {
			s.fail("rclone", fmt.Sprintf("check --download (round %d)", i), fmt.Errorf("want %d matching files and 0 differences", len(files)), out)
			return
		}
		s.verify("rclone", size)
	})
}

// soakRestic: restic backup of a tree that changes each round, forget and
// prune to the last two snapshots, check --read-data, and a restore of the
// latest snapshot compared byte for byte.
func soakRestic(s *soakRun, env []string, bin, dir string) {
	src := filepath.Join(dir, "src")
	r := func(what string, args ...string) bool {
		_, ok := s.tool("restic", what, env, bin, append([]string{"--quiet"}, args...)...)
		return ok
	}
	s.loop(func(i int) {
		files := map[string][]byte{
			"data/changing.bin": soakBytes(s.cfg.seed, "restic-changing", i, 12<<20+i),
			"data/stable.bin":   soakBytes(s.cfg.seed, "restic-stable", 0, 6<<20),
			"notes.txt":         []byte(fmt.Sprintf("round %d of seed %d\n", i, s.cfg.seed)),
		}
		for name, data := range files {
			p := filepath.Join(src, filepath.FromSlash(name))
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			_ = os.WriteFile(p, data, 0o644)
		}
		if !r(fmt.Sprintf("backup (round %d)", i), "backup", "--host", "soak", src) {
			return
		}
		if i >= 2 && !r(fmt.Sprintf("forget --prune (round %d)", i), "forget", "--host", "soak", "--keep-last", "2", "--prune") {
			return
		}
		if !r(fmt.Sprintf("check --read-data (round %d)", i), "check", "--read-data") {
			return
		}
		dst := filepath.Join(dir, fmt.Sprintf("restore%d", i))
		if !r(fmt.Sprintf("restore (round %d)", i), "restore", "latest", "--host", "soak", "--target", dst) {
			return
		}
		for name, data := range files {
			if err := sameFile(filepath.Join(dst, src, filepath.FromSlash(name)), data); err != nil {
				s.fail("restic", fmt.Sprintf("restore compare (round %d)", i), err, "")
				return
			}
			s.verify("restic", int64(len(data)))
		}
		_ = os.RemoveAll(dst)
	})
}

// soakAWSEnv is the aws CLI's environment for the soak: multipart above
// 8 MiB in 8 MiB parts, its standard retries (5 attempts).
func soakAWSEnv(t *testing.T, p *sealProc) []string {
	t.Helper()
	dir := t.TempDir()
	config := writeFile(t, dir, "config", []byte("[default]\nregion = us-east-1\nretry_mode = standard\nmax_attempts = 5\n"+
		"s3 =\n    multipart_threshold = 8MB\n    multipart_chunksize = 8MB\n    addressing_style = path\n"))
	creds := writeFile(t, dir, "credentials", []byte(fmt.Sprintf("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n", p.AccessKey, p.SecretKey)))
	return cleanEnv(nil, "AWS_CONFIG_FILE="+config, "AWS_SHARED_CREDENTIALS_FILE="+creds,
		"AWS_EC2_METADATA_DISABLED=true", "HOME="+dir)
}

// soakAWS: aws s3 cp of a 24 MiB file up (multipart), a server-side copy
// (multipart with UploadPartCopy), both down again compared byte for byte,
// then removed.
func soakAWS(s *soakRun, env []string, endpoint, dir string) {
	cli := func(what string, args ...string) bool {
		_, ok := s.tool("aws", what, env, "aws", append([]string{"--endpoint-url", endpoint}, args...)...)
		return ok
	}
	up, down := filepath.Join(dir, "up.bin"), filepath.Join(dir, "down.bin")
	s.loop(func(i int) {
		data := soakBytes(s.cfg.seed, "aws", i, 24<<20+i%4096)
		if err := os.WriteFile(up, data, 0o644); err != nil {
			s.fail("aws", "write", err, "")
			return
		}
		obj, cp := fmt.Sprintf("s3://soak-aws/obj%d", i), fmt.Sprintf("s3://soak-aws/copy%d", i)
		if !cli(fmt.Sprintf("cp up (round %d)", i), "s3", "cp", "--no-progress", up, obj) {
			return
		}
		if !cli(fmt.Sprintf("cp copy (round %d)", i), "s3", "cp", "--no-progress", obj, cp) {
			return
		}
		for _, o := range []string{obj, cp} {
			_ = os.Remove(down)
			if !cli(fmt.Sprintf("cp down %s (round %d)", o, i), "s3", "cp", "--no-progress", o, down) {
				return
			}
			if err := sameFile(down, data); err != nil {
				s.fail("aws", fmt.Sprintf("compare %s (round %d)", o, i), err, "")
				return
			}
			s.verify("aws", int64(len(data)))
		}
		cli(fmt.Sprintf("rm (round %d)", i), "s3", "rm", "--recursive", "--quiet", "s3://soak-aws/")
	})
}

// soakLFS: LFS produces of 20 MiB blobs (a multipart upload in s3seal),
// each streamed back through /lfs/download and compared, then deleted
// through the S3 API. The produce and the download are retried on a 5xx
// or a broken connection, up to 4 attempts, as an HTTP client with a
// retry policy does; those retries are counted.
func soakLFS(s *soakRun, base string, c *s3.Client) {
	client := &http.Client{Timeout: 5 * time.Minute}
	post := func(what, url string, h map[string]string, body []byte) ([]byte, bool) {
		s.op("lfs")
		var last string
		for attempt := 1; attempt <= 4; attempt++ {
			if attempt > 1 {
				s.retried("lfs")
				time.Sleep(time.Duration(attempt) * time.Second)
			}
			req, _ := http.NewRequestWithContext(s.ctx, http.MethodPost, url, bytes.NewReader(body))
			for k, v := range h {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				last = err.Error()
				continue
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case err != nil:
				last = "reading the answer: " + err.Error()
				continue
			case resp.StatusCode >= 500:
				last = fmt.Sprintf("%d %s", resp.StatusCode, b)
				continue
			case resp.StatusCode != 200:
				s.fail("lfs", what, fmt.Errorf("status %d", resp.StatusCode), string(b))
				return nil, false
			}
			return b, true
		}
		s.fail("lfs", what, fmt.Errorf("4 attempts failed"), last)
		return nil, false
	}
	s.loop(func(i int) {
		blob := soakBytes(s.cfg.seed, "lfs", i, 20<<20+i)
		out, ok := post(fmt.Sprintf("produce (round %d)", i), base+"/lfs/produce",
			map[string]string{"X-Kafka-Topic": "soak", "Content-Type": "application/octet-stream"}, blob)
		if !ok {
			return
		}
		var env envelope
		if err := json.Unmarshal(out, &env); err != nil || env.Size != int64(len(blob)) {
			s.fail("lfs", fmt.Sprintf("produce (round %d)", i), fmt.Errorf("envelope %v", err), string(out))
			return
		}
		got, ok := post(fmt.Sprintf("download (round %d)", i), base+"/lfs/download", nil,
			[]byte(fmt.Sprintf(`{"bucket":%q,"key":%q,"mode":"stream"}`, env.Bucket, env.Key)))
		if !ok {
			return
		}
		if !bytes.Equal(got, blob) {
			s.fail("lfs", fmt.Sprintf("download compare (round %d)", i), fmt.Errorf("%d bytes, want the %d produced", len(got), len(blob)), "")
			return
		}
		s.verify("lfs", int64(len(blob)))
		s.op("lfs")
		var err error
		for attempt := 1; attempt <= 4; attempt++ {
			if attempt > 1 {
				s.retried("lfs")
				time.Sleep(time.Second)
			}
			ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
			_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(env.Bucket), Key: aws.String(env.Key)})
			cancel()
			if err == nil {
				break
			}
		}
		if err != nil {
			s.fail("lfs", fmt.Sprintf("delete blob (round %d)", i), err, "")
		}
	})
}

func soakGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// metricSums sums a Prometheus counter's samples by the value of label.
func metricSums(text, name, label string) map[string]float64 {
	out := map[string]float64{}
	re := regexp.MustCompile(label + `="([^"]*)"`)
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		m := re.FindStringSubmatch(line)
		if err == nil && m != nil {
			out[m[1]] += v
		}
	}
	return out
}

// metricValue is the value of an unlabelled Prometheus sample (0 when
// absent).
func metricValue(text, name string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			v, _ := strconv.ParseFloat(f[1], 64)
			return v
		}
	}
	return 0
}

// soakSummary is the run's table.
func soakSummary(s *soakRun, elapsed time.Duration, chaos faultproxy.ChaosStats, metricsText string, recoveries int, hwm int64, found, leftover int, gcOut string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	row := func(k, v string) { fmt.Fprintf(&b, "| %-44s | %s |\n", k, v) }
	sum := func(m map[string]int) (n int) {
		for _, v := range m {
			n += v
		}
		return n
	}
	byClient := func(m map[string]int) string {
		var parts []string
		for _, c := range []string{"rclone", "restic", "aws", "lfs"} {
			parts = append(parts, fmt.Sprintf("%s %d", c, m[c]))
		}
		return strings.Join(parts, ", ")
	}
	var verified int64
	var vparts []string
	for _, c := range []string{"rclone", "restic", "aws", "lfs"} {
		verified += s.verified[c]
		vparts = append(vparts, fmt.Sprintf("%s %.0f", c, float64(s.verified[c])/(1<<20)))
	}
	fmt.Fprintf(&b, "s3seal soak summary\n\n| %-44s | %s |\n|---|---|\n", "what", "value")
	stalls := "off"
	if s.cfg.stalls {
		stalls = "on (backend timeouts " + s.cfg.backendTimeout + ")"
	}
	row("duration", fmt.Sprintf("%v (asked %v)", elapsed.Round(time.Second), s.cfg.duration))
	row("seed", fmt.Sprint(s.cfg.seed))
	row("fault rate; stall shapes", fmt.Sprintf("%.2f; %s", s.cfg.rate, stalls))
	row("client operations", fmt.Sprintf("%d (%s)", sum(s.ops), byClient(s.ops)))
	row("failures after the clients' retries", fmt.Sprintf("%d (%s)", sum(s.failures), byClient(s.failures)))
	row("client-side retries (lfs HTTP client)", fmt.Sprint(sum(s.clientRetries)))
	row("bytes verified", fmt.Sprintf("%.0f MiB (%s MiB)", float64(verified)/(1<<20), strings.Join(vparts, ", ")))
	row("backend requests of faulted operations", fmt.Sprint(chaos.Requests))
	row("faults injected", fmt.Sprintf("%d (%.1f%%)", chaos.Total(), 100*float64(chaos.Total())/float64(max(chaos.Requests, 1))))
	for _, k := range chaos.Sorted() {
		row("  "+string(k.Op)+" "+k.Fault.String(), fmt.Sprint(chaos.Faults[k]))
	}
	row("  NoSuchUpload after a completed upload", fmt.Sprint(chaos.GoneAnswers))
	for _, m := range []struct{ title, name, label string }{
		{"s3seal retries by operation", "s3seal_backend_retries_total", "operation"},
		{"s3seal retries by cause", "s3seal_backend_retries_total", "cause"},
		{"s3seal give-ups by operation", "s3seal_backend_giveups_total", "operation"},
		{"s3seal give-ups by cause", "s3seal_backend_giveups_total", "cause"},
	} {
		sums := metricSums(metricsText, m.name, m.label)
		var ops []string
		total := 0.0
		for op, v := range sums {
			ops = append(ops, op)
			total += v
		}
		sort.Strings(ops)
		row(m.title, fmt.Sprint(total))
		for _, op := range ops {
			row("  "+op, fmt.Sprint(sums[op]))
		}
	}
	row("s3seal completion recoveries (log)", fmt.Sprint(recoveries))
	row("s3seal integrity failures (metric)", fmt.Sprint(metricValue(metricsText, "s3seal_integrity_failures_total")))
	row("s3seal peak RSS (VmHWM)", fmt.Sprintf("%.0f MiB", float64(hwm)/(1<<20)))
	row("s3seal gc: found, removed by gc --delete", fmt.Sprint(found))
	row("s3seal gc after that (want 0)", fmt.Sprint(leftover))
	if leftover != 0 {
		b.WriteString("\ns3seal gc:\n" + gcOut)
	}
	return b.String()
}
