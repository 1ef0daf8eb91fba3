package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// writeJSON writes v as JSON under dir and returns the path.
func writeJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name, b)
}

type keysFile struct {
	Primary string            `json:"primary"`
	Keys    map[string]string `json:"keys"`
}

// TestAccessAndKeyring runs s3seal with several client credentials and a
// keyring: bucket access per client, the key each client's objects are
// sealed with, rotation, a key removed from the keyring, and that no
// secret ever reaches the log.
func TestAccessAndKeyring(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	mc := motoClient(t, m)
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")

	k1, k2 := randomKey(t), randomKey(t)
	adminSK, readerSK, teamSK := "adm-"+randomKey(t)[:30], "rdr-"+randomKey(t)[:30], "tm-"+randomKey(t)[:30]
	credFile := writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "admin", "secret_key": adminSK, "read": []string{"*"}, "write": []string{"*"}},
		{"access_key": "reader", "secret_key": readerSK, "read": []string{"shared"}, "write": []string{}},
		{"access_key": "team", "secret_key": teamSK, "read": []string{}, "write": []string{"team"}, "key_id": "k2"},
	}})
	var procs []*sealProc
	start := func(keys keysFile) *sealProc {
		t.Helper()
		kf := writeJSON(t, t.TempDir(), "keys.json", keys)
		p := startS3seal(t, sealOpts{Backend: m, DataDir: dataDir, KeysFile: kf, CredentialsFile: credFile, Args: []string{"--log-level", "debug"}})
		procs = append(procs, p)
		return p
	}
	p := start(keysFile{Primary: "k1", Keys: map[string]string{"k1": k1, "k2": k2}})
	admin := newSDKClient(t, p.Endpoint, "admin", adminSK, true)
	reader := newSDKClient(t, p.Endpoint, "reader", readerSK, true)
	team := newSDKClient(t, p.Endpoint, "team", teamSK, true)
	ctx := ctxT(t)

	for _, b := range []string{"shared", "team", "private"} {
		mustCreateBucket(t, admin, b)
	}
	sharedBody, privBody, teamBody := patternBytes(1001, 70000), patternBytes(1002, 1000), patternBytes(1003, 65537)
	putObj(t, admin, "shared", "a", sharedBody)
	putObj(t, admin, "private", "p", privBody)
	putObj(t, team, "team", "t", teamBody)

	t.Run("ListBuckets", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			client *s3.Client
			want   []string
		}{{"admin", admin, []string{"private", "shared", "team"}}, {"reader", reader, []string{"shared"}}, {"team", team, []string{"team"}}} {
			out, err := c.client.ListBuckets(ctx, &s3.ListBucketsInput{})
			if err != nil {
				t.Fatalf("%s ListBuckets: %v", c.name, err)
			}
			var got []string
			for _, b := range out.Buckets {
				got = append(got, aws.ToString(b.Name))
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s ListBuckets = %q, want %q", c.name, got, c.want)
			}
		}
	})

	t.Run("Allowed", func(t *testing.T) {
		if got := getObj(t, reader, "shared", "a"); !bytes.Equal(got, sharedBody) {
			t.Error("reader GET shared/a: body differs")
		}
		if _, err := reader.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("shared")}); err != nil {
			t.Errorf("reader list shared: %v", err)
		}
		if got := getObj(t, team, "team", "t"); !bytes.Equal(got, teamBody) {
			t.Error("team GET team/t (write implies read): body differs")
		}
		if _, err := team.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("team"), Key: aws.String("t2"), CopySource: aws.String("team/t")}); err != nil {
			t.Errorf("team copy team/t -> team/t2: %v", err)
		}
		if _, err := admin.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("shared"), Key: aws.String("from-team"), CopySource: aws.String("team/t")}); err != nil {
			t.Errorf("admin copy team/t -> shared/from-team: %v", err)
		}
	})

	t.Run("Denied", func(t *testing.T) {
		denied := func(what string, err error) {
			t.Helper()
			wantStatus(t, what, err, http.StatusForbidden, "AccessDenied")
		}
		deniedHead := func(what string, err error) {
			t.Helper()
			wantStatus(t, what, err, http.StatusForbidden, "")
		}
		put := func(c *s3.Client, b, k string) error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(k), Body: strings.NewReader("intruder")})
			return err
		}
		get := func(c *s3.Client, b, k string) error {
			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(k)})
			if err == nil {
				out.Body.Close()
			}
			return err
		}
		del := func(c *s3.Client, b, k string) error {
			_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String(k)})
			return err
		}
		list := func(c *s3.Client, b string) error {
			_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(b)})
			return err
		}
		listV1 := func(c *s3.Client, b string) error {
			_, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String(b)})
			return err
		}
		cp := func(c *s3.Client, b, k, src string) error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String(k), CopySource: aws.String(src)})
			return err
		}
		// reader: read-only on shared, nothing elsewhere.
		denied("reader PUT shared/x", put(reader, "shared", "x"))
		denied("reader DELETE shared/a", del(reader, "shared", "a"))
		_, err := reader.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("shared"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("a")}}}})
		denied("reader DeleteObjects shared", err)
		denied("reader GET private/p", get(reader, "private", "p"))
		_, err = reader.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("private"), Key: aws.String("p")})
		deniedHead("reader HEAD private/p", err)
		denied("reader list private", list(reader, "private"))
		denied("reader list V1 team", listV1(reader, "team"))
		denied("reader PUT private/x", put(reader, "private", "x"))
		denied("reader copy shared/a -> shared/c", cp(reader, "shared", "c", "shared/a"))
		// team: read-write on team only.
		denied("team GET shared/a", get(team, "shared", "a"))
		denied("team GET private/p", get(team, "private", "p"))
		denied("team PUT shared/x", put(team, "shared", "x"))
		denied("team DELETE private/p", del(team, "private", "p"))
		denied("team list shared", list(team, "shared"))
		denied("team copy-source private/p -> team/stolen", cp(team, "team", "stolen", "private/p"))
		denied("team copy-source shared/a -> team/stolen2", cp(team, "team", "stolen2", "shared/a"))
		denied("team copy team/t -> shared/leak", cp(team, "shared", "leak", "team/t"))
		_, err = team.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("team-new")})
		denied("team CreateBucket team-new", err)
		_, err = reader.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("shared")})
		denied("reader DeleteBucket shared", err)

		// Nothing changed on the backend.
		for _, k := range []struct{ b, k string }{{"shared", "x"}, {"private", "x"}, {"team", "stolen"}, {"team", "stolen2"}, {"shared", "leak"}, {"shared", "c"}} {
			_, err := mc.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(k.b), Key: aws.String(k.k)})
			if _, status := apiCode(err); status != http.StatusNotFound {
				t.Errorf("backend %s/%s after a denied write: %v, want 404", k.b, k.k, err)
			}
		}
		if got := getObj(t, admin, "shared", "a"); !bytes.Equal(got, sharedBody) {
			t.Error("shared/a changed after denied requests")
		}
		if got := getObj(t, admin, "private", "p"); !bytes.Equal(got, privBody) {
			t.Error("private/p changed after denied requests")
		}
	})

	kid := func(b, k string) string {
		t.Helper()
		out, err := mc.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(k)})
		if err != nil {
			t.Fatalf("backend HEAD %s/%s: %v", b, k, err)
		}
		for name, v := range out.Metadata {
			if strings.EqualFold(name, "s3seal-kid") {
				return v
			}
		}
		return ""
	}
	t.Run("KeyPerClient", func(t *testing.T) {
		for _, c := range []struct{ b, k, want string }{
			{"shared", "a", "k1"}, {"private", "p", "k1"}, {"team", "t", "k2"}, {"team", "t2", "k2"}, {"shared", "from-team", "k1"},
		} {
			if got := kid(c.b, c.k); got != c.want {
				t.Errorf("backend s3seal-kid of %s/%s = %q, want %q", c.b, c.k, got, c.want)
			}
		}
	})

	// Rotation: k2 becomes primary, k1 stays readable.
	p.Stop()
	p = start(keysFile{Primary: "k2", Keys: map[string]string{"k1": k1, "k2": k2}})
	admin = newSDKClient(t, p.Endpoint, "admin", adminSK, true)
	team = newSDKClient(t, p.Endpoint, "team", teamSK, true)
	t.Run("Rotated", func(t *testing.T) {
		if got := getObj(t, admin, "private", "p"); !bytes.Equal(got, privBody) {
			t.Error("k1 object after rotation: body differs")
		}
		if got := getObj(t, admin, "shared", "a"); !bytes.Equal(got, sharedBody) {
			t.Error("k1 object shared/a after rotation: body differs")
		}
		if got := getObj(t, team, "team", "t"); !bytes.Equal(got, teamBody) {
			t.Error("k2 object after rotation: body differs")
		}
		putObj(t, admin, "private", "new", []byte("sealed with the new primary"))
		if got := kid("private", "new"); got != "k2" {
			t.Errorf("admin object after rotation: s3seal-kid %q, want k2 (the new primary)", got)
		}
	})

	// Before k1 goes, the operator rewraps what s3seal keeps of each
	// bucket (its documents: every bucket has its owner's since issue 22)
	// to k2, as a key is retired; the clients' k1 objects stay as they are.
	p.Stop()
	both := writeJSON(t, t.TempDir(), "both.json", keysFile{Primary: "k2", Keys: map[string]string{"k1": k1, "k2": k2}})
	for _, b := range []string{"shared", "private", "team"} {
		args := []string{"rewrap", "--data-dir", filepath.Join(t.TempDir(), "d"), "--keys-file", both,
			"--backend-endpoint", m.Endpoint, "--backend-region", "us-east-1", "--backend-path-style",
			"--backend-access-key", "x", "--backend-secret-key", "y", "--bucket", b, "--prefix", ".s3seal/bucket/", "--to", "k2", "--no-concurrent-writers"}
		if code, out := runS3sealExit(t, nil, args...); code != 0 {
			t.Fatalf("rewrap of %s's documents: exit %d\n%s", b, code, out)
		}
	}
	// k1 removed: its objects must fail to read, never come out as garbage.
	p = start(keysFile{Primary: "k2", Keys: map[string]string{"k2": k2}})
	admin = newSDKClient(t, p.Endpoint, "admin", adminSK, true)
	// A wrong secret, logged as a refused request.
	_, err := newSDKClient(t, p.Endpoint, "admin", teamSK, true).ListBuckets(ctx, &s3.ListBucketsInput{})
	wantStatus(t, "admin with the team's secret", err, http.StatusForbidden, "SignatureDoesNotMatch")
	t.Run("KeyRemoved", func(t *testing.T) {
		out, err := admin.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("private"), Key: aws.String("p")})
		if err == nil {
			body, rerr := io.ReadAll(out.Body)
			out.Body.Close()
			if rerr == nil {
				t.Errorf("GET of a k1 object without k1: 200 with %d bytes (equal to plaintext: %v), want an error", len(body), bytes.Equal(body, privBody))
			}
		} else if code, status := apiCode(err); status < 400 {
			t.Errorf("GET of a k1 object without k1: %v (%s)", err, code)
		} else {
			t.Logf("GET of a k1 object without k1: HTTP %d %s", status, code)
		}
		rng, err := admin.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("private"), Key: aws.String("p"), Range: aws.String("bytes=0-9")})
		if err == nil {
			b, rerr := io.ReadAll(rng.Body)
			rng.Body.Close()
			if rerr == nil {
				t.Errorf("range GET of a k1 object without k1: 200 with %q, want an error", b)
			}
		}
		if got := getObj(t, admin, "private", "new"); !bytes.Equal(got, []byte("sealed with the new primary")) {
			t.Error("k2 object with k1 removed: body differs")
		}
		if got := getObj(t, admin, "team", "t"); !bytes.Equal(got, teamBody) {
			t.Error("k2 object team/t with k1 removed: body differs")
		}
	})

	// A bad credentials file is refused without quoting secrets.
	dupFile := writeJSON(t, dir, "dup.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "admin", "secret_key": adminSK, "read": []string{"*"}, "write": []string{"*"}},
		{"access_key": "admin", "secret_key": teamSK, "read": []string{"*"}, "write": []string{}},
	}})
	code, startOut := runS3sealExit(t, nil, "serve", "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "dup-data"),
		"--backend-endpoint", m.Endpoint, "--backend-path-style", "--backend-access-key", "x", "--backend-secret-key", "y",
		"--keys-file", writeJSON(t, dir, "keys-all.json", keysFile{Primary: "k1", Keys: map[string]string{"k1": k1, "k2": k2}}),
		"--credentials-file", dupFile)
	if code != 2 {
		t.Errorf("serve with a duplicate access key: exit %d, want 2:\n%s", code, startOut)
	}

	// No secret and no master key anywhere in what s3seal printed.
	p.Stop()
	secrets := map[string]string{"admin secret": adminSK, "reader secret": readerSK, "team secret": teamSK, "k1": k1, "k2": k2}
	for name, k := range map[string]string{"k1": k1, "k2": k2} {
		raw, _ := base64.StdEncoding.DecodeString(k)
		secrets["hex of "+name] = hex.EncodeToString(raw)
		secrets["base64url of "+name] = base64.RawURLEncoding.EncodeToString(raw)
	}
	logs := startOut
	for _, pr := range procs {
		logs += pr.Log()
	}
	t.Logf("checked %d bytes of s3seal output for secrets", len(logs))
	if len(logs) < 200 {
		t.Fatalf("suspiciously little log output captured (%d bytes)", len(logs))
	}
	for what, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("s3seal's log contains the %s", what)
		}
	}
}
