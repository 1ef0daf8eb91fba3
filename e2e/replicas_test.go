package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// A replica completes an upload at the store and is killed (SIGKILL)
// before it answers or removes the upload's state; the client retries the
// completion on another replica, which served one of the parts (so has
// the upload cached), and on a fresh one. Both answer the completion's
// success with its ETag, as S3 answers a repeated completion, the object
// reads back whole, and the dead replica's upload state is gone. Before
// the fix the retry answered 404 NoSuchUpload.
func TestCompletionRetriedAfterReplicaDied(t *testing.T) {
	t.Parallel()
	m, fp := motoBehindProxy(t)
	key := randomKey(t)
	a := startS3seal(t, sealOpts{Backend: &motoServer{Endpoint: fp.URL()}, Key: key})
	b := startS3seal(t, sealOpts{Backend: m, Key: key})
	ca, cb := sdkFor(t, a), sdkFor(t, b)
	ctx := ctxT(t)
	mustCreateBucket(t, cb, "died")
	cr, err := cb.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("died"), Key: aws.String("obj")})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(cr.UploadId)
	parts := []mpPart{{1, patternBytes(1601, 5*mib)}, {2, patternBytes(1602, 2*mib+7)}}
	mpSendParts(t, ca, "died", "obj", id, parts[:1])
	mpSendParts(t, cb, "died", "obj", id, parts[1:])

	// a's completion reaches the store, which completes the upload; its
	// answer never comes back to a, which is killed.
	fp.Inject(faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Fault: faultproxy.ForwardThenStall})
	var cps []types.CompletedPart
	for _, p := range parts {
		cps = append(cps, types.CompletedPart{PartNumber: aws.Int32(p.N), ETag: aws.String(`"` + md5Hex(p.Data) + `"`)})
	}
	complete := &s3.CompleteMultipartUploadInput{Bucket: aws.String("died"), Key: aws.String("obj"), UploadId: aws.String(id),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: cps}}
	first := make(chan error, 1)
	go func() { _, err := ca.CompleteMultipartUpload(ctx, complete); first <- err }()
	mc := motoClient(t, m)
	for i := 0; ; i++ {
		if _, err := mc.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("died"), Key: aws.String("obj")}); err == nil {
			break
		}
		if i == 200 {
			t.Fatal("the store did not complete the upload within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-a.done
	if err := <-first; err == nil {
		t.Fatal("the completion sent to the killed replica succeeded")
	}

	want := mpETag(parts[0].Data, parts[1].Data)
	c := startS3seal(t, sealOpts{Backend: m, Key: key})
	for name, cl := range map[string]*s3.Client{"replica that served a part": cb, "fresh replica": sdkFor(t, c)} {
		out, err := cl.CompleteMultipartUpload(ctx, complete)
		if err != nil {
			t.Fatalf("%s: the retried completion: %v, want success with ETag %s", name, err, want)
		}
		if unquote(out.ETag) != want {
			t.Fatalf("%s: the retried completion answered ETag %s, want %s", name, unquote(out.ETag), want)
		}
	}
	checkObject(t, cb, "died", "obj", joinParts(parts), want)
	if keys := backendKeys(t, mc, "died", ".s3seal/uploads/"); len(keys) != 0 {
		t.Errorf("the dead replica's upload state is still there: %v", keys)
	}
}

// backendKeys lists the keys under prefix in the store itself.
func backendKeys(t *testing.T, mc *s3.Client, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(mc, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys
}

// replicaSet is three s3seal processes on one moto_server, with one
// master key and one client credential, each with its own data dir and a
// fixed port, behind haproxy (round robin, health-checked on /readyz).
type replicaSet struct {
	t      *testing.T
	moto   *motoServer
	key    string
	addrs  []string
	dirs   []string
	procs  []*sealProc
	lb     *sealProc // the load balancer's endpoint and the credentials
	bucket string
}

// shutdownArgs: a short drain, long enough for haproxy (a check every
// 200 ms, down after one failure) to stop sending before the listener
// closes.
var shutdownArgs = []string{"--shutdown-delay", "1s", "--shutdown-timeout", "60s"}

func startReplicaSet(t *testing.T, bucket string) *replicaSet {
	t.Helper()
	haproxy := "/usr/sbin/haproxy" // Debian's, off the PATH of users other than root
	if _, err := os.Stat(haproxy); err != nil {
		haproxy = requireTool(t, "haproxy")
	}
	rs := &replicaSet{t: t, moto: startMoto(t), key: randomKey(t), bucket: bucket}
	for i := range 3 {
		rs.addrs = append(rs.addrs, "127.0.0.1:"+strconv.Itoa(freePort(t)))
		rs.dirs = append(rs.dirs, filepath.Join(t.TempDir(), fmt.Sprint("replica", i)))
		rs.procs = append(rs.procs, nil)
		rs.start(i)
	}
	lbAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	var servers strings.Builder
	for i, a := range rs.addrs {
		fmt.Fprintf(&servers, "    server r%d %s check\n", i, a)
	}
	cfg := writeFile(t, t.TempDir(), "haproxy.cfg", []byte(`global
    maxconn 512
defaults
    mode http
    timeout connect 2s
    timeout client 5m
    timeout server 5m
    retries 3
    option redispatch
    option http-server-close
frontend s3
    bind `+lbAddr+`
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 200ms fastinter 200ms downinter 200ms fall 1 rise 2
`+servers.String()))
	log := newLogBuffer(nil)
	cmd := exec.Command(haproxy, "-db", "-f", cfg)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start haproxy: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("haproxy log:\n%s", log.String())
		}
	})
	rs.lb = &sealProc{Endpoint: "http://" + lbAddr, Addr: lbAddr, AccessKey: rs.procs[0].AccessKey, SecretKey: rs.procs[0].SecretKey}
	waitHTTP(t, rs.lb.Endpoint+"/readyz", done, func(code int) bool { return code == 200 })
	mustCreateBucket(t, sdkFor(t, rs.lb), bucket)
	return rs
}

// start starts replica i on its port and data dir and waits until it is
// ready.
func (rs *replicaSet) start(i int) {
	rs.t.Helper()
	args := append([]string{"--listen", rs.addrs[i]}, shutdownArgs...)
	p := startS3seal(rs.t, sealOpts{Backend: rs.moto, Key: rs.key, DataDir: rs.dirs[i], Args: args})
	waitHTTP(rs.t, p.Endpoint+"/readyz", p.done, func(code int) bool { return code == 200 })
	rs.procs[i] = p
}

// kill ends replica i with SIGKILL.
func (rs *replicaSet) kill(i int) {
	rs.t.Helper()
	p := rs.procs[i]
	if err := p.cmd.Process.Kill(); err != nil {
		rs.t.Fatal(err)
	}
	<-p.done
}

// stop ends replica i with SIGTERM and checks that it drained and exited
// 0 within --shutdown-delay + --shutdown-timeout.
func (rs *replicaSet) stop(i int) {
	rs.t.Helper()
	p := rs.procs[i]
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		rs.t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(65 * time.Second):
		rs.t.Fatalf("replica %d still running 65s after SIGTERM", i)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		rs.t.Fatalf("replica %d exited %d after SIGTERM:\n%s", i, code, p.Log())
	}
}

// waitUploading waits (at most 30 s) until the store holds a multipart
// upload in progress in the bucket, so that what follows happens during
// an upload.
func (rs *replicaSet) waitUploading(mc *s3.Client) bool {
	for range 600 {
		out, err := mc.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(rs.bucket)})
		if err == nil && len(out.Uploads) > 0 {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// replicaClients uploads multipart objects through the load balancer with
// rclone and the aws CLI, each with its own retries, in rounds until
// stop is closed (at most maxRounds), each round under its own prefix,
// and checks every byte of each round afterwards.
type replicaClients struct {
	t        *testing.T
	rs       *replicaSet
	src      string   // rclone's source directory
	awsFiles []string // the aws CLI's files
	rclone   []string
	aws      *awsCLI
}

func newReplicaClients(t *testing.T, rs *replicaSet) *replicaClients {
	t.Helper()
	requireRclone(t)
	rc := &replicaClients{t: t, rs: rs, src: t.TempDir()}
	for i, size := range []int{28 * mib, 41*mib + 3} {
		writeFile(t, rc.src, fmt.Sprintf("r%d.bin", i), patternBytes(uint64(1700+i), size))
	}
	dir := t.TempDir()
	for i, size := range []int{20*mib + 5, 33 * mib} {
		rc.awsFiles = append(rc.awsFiles, writeFile(t, dir, fmt.Sprintf("a%d.bin", i), patternBytes(uint64(1800+i), size)))
	}
	rc.rclone = cleanEnv([]string{"AWS_CA_BUNDLE"},
		"RCLONE_CONFIG="+filepath.Join(t.TempDir(), "rclone.conf"),
		"RCLONE_CONFIG_S3SEAL_TYPE=s3",
		"RCLONE_CONFIG_S3SEAL_PROVIDER=Other",
		"RCLONE_CONFIG_S3SEAL_ENDPOINT="+rs.lb.Endpoint,
		"RCLONE_CONFIG_S3SEAL_ACCESS_KEY_ID="+rs.lb.AccessKey,
		"RCLONE_CONFIG_S3SEAL_SECRET_ACCESS_KEY="+rs.lb.SecretKey,
		"RCLONE_CONFIG_S3SEAL_REGION=us-east-1",
		"RCLONE_CONFIG_S3SEAL_FORCE_PATH_STYLE=true",
		"RCLONE_CONFIG_S3SEAL_CHUNK_SIZE=5M",
		"RCLONE_CONFIG_S3SEAL_UPLOAD_CUTOFF=5M",
		"HOME="+t.TempDir(),
	)
	rc.aws = newMultipartCLI(t, rs.lb)
	// The aws CLI with its own retries (standard mode).
	rc.aws.env = append(filterEnv(rc.aws.env, "AWS_MAX_ATTEMPTS"), "AWS_MAX_ATTEMPTS=10", "AWS_RETRY_MODE=standard")
	return rc
}

// filterEnv is env without the variables named.
func filterEnv(env []string, drop ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, d := range drop {
			keep = keep && name != d
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// run uploads in rounds until stop is closed; it returns the prefixes
// uploaded. Every client command must succeed.
func (rc *replicaClients) run(phase string, stop <-chan struct{}, maxRounds int) []string {
	t := rc.t
	var prefixes []string
	for round := 0; round < maxRounds; round++ {
		prefix := fmt.Sprintf("%s-%d", phase, round)
		prefixes = append(prefixes, prefix)
		var wg sync.WaitGroup
		errs := make([]string, 2)
		wg.Go(func() {
			out, errOut, err := tryTool(t, rc.rclone, rcloneBin, "copy", "--transfers", "2", "--s3-upload-concurrency", "2",
				"--retries", "5", "--low-level-retries", "20", rc.src, "s3seal:"+rc.rs.bucket+"/"+prefix+"/rclone")
			if err != nil {
				errs[0] = fmt.Sprintf("rclone copy (%s): %v\n%s%s", prefix, err, out, errOut)
			}
		})
		wg.Go(func() {
			for _, f := range rc.awsFiles {
				out, errOut, err := tryTool(t, rc.aws.env, "aws", "--endpoint-url", rc.aws.endpoint, "s3", "cp", f,
					"s3://"+rc.rs.bucket+"/"+prefix+"/aws/"+filepath.Base(f))
				if err != nil {
					errs[1] = fmt.Sprintf("aws s3 cp (%s): %v\n%s%s", prefix, err, out, errOut)
					return
				}
			}
		})
		wg.Wait()
		for _, e := range errs {
			if e != "" {
				t.Error(e)
			}
		}
		select {
		case <-stop:
			return prefixes
		default:
		}
	}
	return prefixes
}

// check verifies every byte of the rounds: rclone check --download, and a
// byte compare of what the aws CLI downloads.
func (rc *replicaClients) check(prefixes []string) {
	t := rc.t
	for _, prefix := range prefixes {
		out, errOut, err := tryTool(t, rc.rclone, rcloneBin, "check", "--download", rc.src, "s3seal:"+rc.rs.bucket+"/"+prefix+"/rclone")
		if all := out + errOut; err != nil || !strings.Contains(all, "2 matching files") || !strings.Contains(all, "0 differences found") {
			t.Errorf("rclone check --download %s: %v\n%s", prefix, err, all)
		}
		dir := t.TempDir()
		for _, f := range rc.awsFiles {
			got := filepath.Join(dir, filepath.Base(f))
			if _, errOut, err := tryTool(t, rc.aws.env, "aws", "--endpoint-url", rc.aws.endpoint, "s3", "cp",
				"s3://"+rc.rs.bucket+"/"+prefix+"/aws/"+filepath.Base(f), got); err != nil {
				t.Errorf("aws s3 cp down %s/%s: %v\n%s", prefix, filepath.Base(f), err, errOut)
				continue
			}
			if !bytes.Equal(readFile(t, got), readFile(t, f)) {
				t.Errorf("aws download of %s/%s differs from the file uploaded", prefix, filepath.Base(f))
			}
		}
	}
}

// gcLeavesNothing runs s3seal gc --delete once its minimum age has passed
// and checks the store: no upload state, no upload in progress, and one
// manifest for each multipart object, no more.
func (rs *replicaSet) gcLeavesNothing(mc *s3.Client) {
	t := rs.t
	const minAge = time.Second
	time.Sleep(minAge + 100*time.Millisecond) // everything is older than --min-age
	code, out := runS3sealExit(t, nil, "gc", "--data-dir", filepath.Join(t.TempDir(), "gc"),
		"--backend-endpoint", rs.moto.Endpoint, "--backend-region", "us-east-1", "--backend-path-style",
		"--backend-access-key", "x", "--backend-secret-key", "y", "--key", rs.key,
		"--bucket", rs.bucket, "--min-age", minAge.String(), "--delete")
	if code != 0 {
		t.Fatalf("s3seal gc: exit %d\n%s", code, out)
	}
	t.Logf("s3seal gc:\n%s", out)
	if keys := backendKeys(t, mc, rs.bucket, ".s3seal/uploads/"); len(keys) != 0 {
		t.Errorf("upload state left after gc: %v", keys)
	}
	ups, err := mc.ListMultipartUploads(ctxT(t), &s3.ListMultipartUploadsInput{Bucket: aws.String(rs.bucket)})
	if err != nil || len(ups.Uploads) != 0 {
		t.Errorf("uploads in progress at the store after gc: %v %v", err, ups)
	}
	manifests := backendKeys(t, mc, rs.bucket, ".s3seal/manifests/")
	objects := 0
	p := s3.NewListObjectsV2Paginator(mc, &s3.ListObjectsV2Input{Bucket: aws.String(rs.bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			if !strings.HasPrefix(aws.ToString(o.Key), ".s3seal/") && strings.Contains(aws.ToString(o.ETag), "-") {
				objects++
			}
		}
	}
	if len(manifests) != objects {
		t.Errorf("%d manifests for %d multipart objects after gc: %v", len(manifests), objects, manifests)
	}
}

// Three replicas behind haproxy while rclone and the aws CLI upload
// multipart objects: one replica is killed (SIGKILL) and started again,
// then another; then each is stopped in turn with SIGTERM and started
// again (a rolling restart). Every client command succeeds with its own
// retries, every byte verifies, and s3seal gc then leaves nothing of
// s3seal's behind.
func TestReplicasKilledAndRestartedDuringUploads(t *testing.T) {
	t.Parallel()
	requireRclone(t)
	requireTool(t, "aws")
	rs := startReplicaSet(t, "replicas")
	rc := newReplicaClients(t, rs)
	mc := motoClient(t, rs.moto)
	var prefixes []string
	for _, phase := range []string{"killed", "rolling"} {
		// The restarts run beside the uploads; a failure there (t.Fatal
		// off the test's goroutine) still ends the uploads' rounds.
		stop, finished := make(chan struct{}), make(chan struct{})
		var msg string
		go func() {
			defer close(finished)
			defer close(stop)
			order := []int{0, 1}
			if phase == "rolling" {
				order = []int{0, 1, 2}
			}
			for _, i := range order {
				if !rs.waitUploading(mc) {
					msg = fmt.Sprintf("%s: no upload in progress within 30s before replica %d", phase, i)
					return
				}
				if phase == "killed" {
					rs.kill(i)
				} else {
					rs.stop(i)
				}
				rs.start(i)
			}
		}()
		rounds := rc.run(phase, stop, 8)
		t.Logf("%s: %d rounds of uploads during the restarts", phase, len(rounds))
		prefixes = append(prefixes, rounds...)
		<-finished
		if msg != "" {
			t.Fatal(msg)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	rc.check(prefixes)
	rs.gcLeavesNothing(mc)
}
