package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// lockDeletePathsScript tries, with boto3 as a client with full rights
// would, every path that could remove or weaken a COMPLIANCE-locked
// version: deletes by version id (with and without the governance
// bypass), DeleteObjects, suspending versioning, shortening or changing
// the retention, an overwrite, a copy and a multipart upload onto the key,
// a delete marker and deleting the bucket. After each it prints "HOLDS
// name: answer" when the locked version still reads back whole, "BROKEN
// name: answer" otherwise; then whether the version's retention is still
// COMPLIANCE until the date it was given, and versioning still Enabled.
const lockDeletePathsScript = `
import sys, datetime, boto3
from botocore.config import Config
s = boto3.client('s3', endpoint_url=sys.argv[1], aws_access_key_id='admin', aws_secret_access_key='admin-secret-key',
                 region_name='us-east-1', config=Config(s3={'addressing_style': 'path'}, retries={'max_attempts': 1}))
s.create_bucket(Bucket='lkb', ObjectLockEnabledForBucket=True)
until = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)).replace(microsecond=0)
v = s.put_object(Bucket='lkb', Key='k', Body=b'locked', ObjectLockMode='COMPLIANCE', ObjectLockRetainUntilDate=until)['VersionId']
def alive():
    try:
        return s.get_object(Bucket='lkb', Key='k', VersionId=v)['Body'].read() == b'locked'
    except Exception:
        return False
def attempt(name, f):
    try:
        r = f(); out = 'ok ' + str(r)[:120]
    except Exception as e:
        out = 'err ' + str(e)[:120]
    print(('HOLDS ' if alive() else 'BROKEN ') + name + ': ' + out)
attempt('DELETE ?versionId', lambda: s.delete_object(Bucket='lkb', Key='k', VersionId=v))
attempt('DELETE ?versionId bypass', lambda: s.delete_object(Bucket='lkb', Key='k', VersionId=v, BypassGovernanceRetention=True))
attempt('DeleteObjects', lambda: s.delete_objects(Bucket='lkb', Delete={'Objects': [{'Key': 'k', 'VersionId': v}]}))
attempt('suspend versioning', lambda: s.put_bucket_versioning(Bucket='lkb', VersioningConfiguration={'Status': 'Suspended'}))
attempt('shorten retention', lambda: s.put_object_retention(Bucket='lkb', Key='k', VersionId=v,
        Retention={'Mode': 'COMPLIANCE', 'RetainUntilDate': until - datetime.timedelta(minutes=30)}))
attempt('to GOVERNANCE', lambda: s.put_object_retention(Bucket='lkb', Key='k', VersionId=v,
        Retention={'Mode': 'GOVERNANCE', 'RetainUntilDate': until}, BypassGovernanceRetention=True))
attempt('overwrite', lambda: s.put_object(Bucket='lkb', Key='k', Body=b'x'))
s.put_object(Bucket='lkb', Key='src', Body=b'evil')
attempt('copy onto', lambda: s.copy_object(Bucket='lkb', Key='k', CopySource={'Bucket': 'lkb', 'Key': 'src'}))
def mpu():
    u = s.create_multipart_upload(Bucket='lkb', Key='k')['UploadId']
    p = s.upload_part(Bucket='lkb', Key='k', UploadId=u, PartNumber=1, Body=b'y')
    return s.complete_multipart_upload(Bucket='lkb', Key='k', UploadId=u, MultipartUpload={'Parts': [{'PartNumber': 1, 'ETag': p['ETag']}]})
attempt('multipart onto', mpu)
attempt('DELETE (marker)', lambda: s.delete_object(Bucket='lkb', Key='k'))
attempt('DeleteBucket', lambda: s.delete_bucket(Bucket='lkb'))
r = s.get_object_retention(Bucket='lkb', Key='k', VersionId=v)['Retention']
kept = r['Mode'] == 'COMPLIANCE' and r['RetainUntilDate'] >= until - datetime.timedelta(seconds=1)
print(('HOLDS ' if kept else 'BROKEN ') + 'retention: ' + str(r))
st = s.get_bucket_versioning(Bucket='lkb').get('Status')
print(('HOLDS ' if st == 'Enabled' else 'BROKEN ') + 'versioning: ' + str(st))
`

// TestLockedVersionSurvivesEveryDeletePath runs lockDeletePathsScript
// against s3seal on its embedded default, as an admin: the locked version
// reads back after every one of the 11 paths, and keeps its retention
// and its bucket's versioning.
func TestLockedVersionSurvivesEveryDeletePath(t *testing.T) {
	t.Parallel()
	py := requireBoto3(t)
	dir := t.TempDir()
	creds := writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "admin", "secret_key": "admin-secret-key", "read": []string{"*"}, "write": []string{"*"}, "admin": true},
	}})
	p := startS3seal(t, sealOpts{CredentialsFile: creds, DataDir: filepath.Join(dir, "data")})
	script := writeFile(t, dir, "lockpaths.py", []byte(lockDeletePathsScript))
	env := isolatedPythonEnv(dir)
	out := runTool(t, env, py, script, p.Endpoint)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, line := range lines {
		if !strings.HasPrefix(line, "HOLDS ") {
			t.Errorf("boto3: %s", line)
		}
	}
	if len(lines) != 13 {
		t.Fatalf("boto3 tried %d paths, want 13:\n%s", len(lines), out)
	}
}
