package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func getVersion(t *testing.T, c *s3.Client, bucket, key, vid string) ([]byte, error) {
	t.Helper()
	out, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), VersionId: aws.String(vid)})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// TestVersionsSDK drives a versioned bucket with the Go SDK, in front of
// moto and on the embedded store: single and multipart versions, a delete
// marker, reads and a copy of older versions, the listing with plaintext
// sizes and ETags, and the permanent deletion of a version.
func TestVersionsSDK(t *testing.T) {
	t.Parallel()
	onEachStore(t, func(t *testing.T, p *sealProc) {
		c := sdkFor(t, p)
		ctx := ctxT(t)
		const b = "versioned"
		mustCreateVersionedBucket(t, c, b)
		if gv, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(b)}); err != nil || gv.Status != types.BucketVersioningStatusEnabled {
			t.Fatalf("GetBucketVersioning = %v, %v", gv, err)
		}
		d1, d2a, d2b, d3 := []byte("first"), bytes.Repeat([]byte("p"), 5<<20), []byte("tail"), []byte("third version")
		p1, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: bytes.NewReader(d1)})
		if err != nil {
			t.Fatal(err)
		}
		cm, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k")})
		if err != nil {
			t.Fatal(err)
		}
		var parts []types.CompletedPart
		for i, d := range [][]byte{d2a, d2b} {
			up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("k"), UploadId: cm.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(d)})
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
		}
		p2, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k"),
			UploadId: cm.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
		if err != nil {
			t.Fatal(err)
		}
		p3, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: bytes.NewReader(d3)})
		if err != nil {
			t.Fatal(err)
		}
		v1, v2, v3 := aws.ToString(p1.VersionId), aws.ToString(p2.VersionId), aws.ToString(p3.VersionId)
		if v1 == "" || v2 == "" || v3 == "" || v1 == v2 || v2 == v3 {
			t.Fatalf("version ids %q %q %q", v1, v2, v3)
		}
		d2 := append(append([]byte{}, d2a...), d2b...)
		del, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
		if err != nil || !aws.ToBool(del.DeleteMarker) || aws.ToString(del.VersionId) == "" {
			t.Fatalf("DELETE = %+v, %v; want a delete marker", del, err)
		}
		_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
		wantStatus(t, "GET behind a delete marker", err, http.StatusNotFound, "NoSuchKey")
		var re *smithyhttp.ResponseError
		if !errors.As(err, &re) || re.Response.Header.Get("x-amz-delete-marker") != "true" ||
			re.Response.Header.Get("x-amz-version-id") != aws.ToString(del.VersionId) {
			t.Fatalf("GET behind a delete marker: headers %v", re)
		}
		_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: del.VersionId})
		wantStatus(t, "HEAD of the delete marker by id", err, http.StatusMethodNotAllowed, "")
		_, err = getVersion(t, c, b, "k", aws.ToString(del.VersionId))
		wantStatus(t, "GET of the delete marker by id", err, http.StatusMethodNotAllowed, "MethodNotAllowed")
		for _, v := range []struct {
			id   string
			want []byte
		}{{v1, d1}, {v2, d2}, {v3, d3}} {
			got, err := getVersion(t, c, b, "k", v.id)
			if err != nil || !bytes.Equal(got, v.want) {
				t.Fatalf("GET version %s: %d bytes, %v", v.id, len(got), err)
			}
		}
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(v2)})
		if err != nil || aws.ToInt64(h.ContentLength) != int64(len(d2)) || aws.ToString(h.VersionId) != v2 || aws.ToString(h.ETag) != aws.ToString(p2.ETag) {
			t.Fatalf("HEAD v2 = %+v, %v", h, err)
		}

		lv, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(b)})
		if err != nil {
			t.Fatal(err)
		}
		if len(lv.DeleteMarkers) != 1 || aws.ToString(lv.DeleteMarkers[0].VersionId) != aws.ToString(del.VersionId) || !aws.ToBool(lv.DeleteMarkers[0].IsLatest) {
			t.Fatalf("delete markers %+v", lv.DeleteMarkers)
		}
		wantV := map[string][2]any{v1: {int64(len(d1)), `"` + md5Hex(d1) + `"`}, v2: {int64(len(d2)), aws.ToString(p2.ETag)}, v3: {int64(len(d3)), `"` + md5Hex(d3) + `"`}}
		if len(lv.Versions) != 3 {
			t.Fatalf("versions %+v", lv.Versions)
		}
		for _, v := range lv.Versions {
			w := wantV[aws.ToString(v.VersionId)]
			if aws.ToInt64(v.Size) != w[0] || aws.ToString(v.ETag) != w[1] || aws.ToBool(v.IsLatest) {
				t.Errorf("version %s: size %d etag %s latest %v; want %v", aws.ToString(v.VersionId), aws.ToInt64(v.Size), aws.ToString(v.ETag), aws.ToBool(v.IsLatest), w)
			}
		}

		// Restore version 1 by copying it over the marker.
		cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("k"), CopySource: aws.String(b + "/k?versionId=" + v1)})
		if err != nil || aws.ToString(cp.CopySourceVersionId) != v1 || aws.ToString(cp.VersionId) == "" {
			t.Fatalf("copy of v1 = %+v, %v", cp, err)
		}
		if got := getObj(t, c, b, "k"); !bytes.Equal(got, d1) {
			t.Fatalf("after restoring v1: %q", got)
		}
		// A part copied from an older version.
		cm2, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k2")})
		if err != nil {
			t.Fatal(err)
		}
		pc, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String(b), Key: aws.String("k2"), UploadId: cm2.UploadId,
			PartNumber: aws.Int32(1), CopySource: aws.String(b + "/k?versionId=" + v3)})
		if err != nil || aws.ToString(pc.CopySourceVersionId) != v3 {
			t.Fatalf("UploadPartCopy of v3 = %+v, %v", pc, err)
		}
		if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k2"), UploadId: cm2.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: pc.CopyPartResult.ETag, PartNumber: aws.Int32(1)}}}}); err != nil {
			t.Fatal(err)
		}
		g2, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("k2")})
		if err != nil {
			t.Fatal(err)
		}
		got2, _ := io.ReadAll(g2.Body)
		g2.Body.Close()
		if !bytes.Equal(got2, d3) {
			t.Fatalf("part copied from v3: %q", got2)
		}

		// Deleting v2 for good; v3 stays readable; a conditional delete on
		// the plaintext ETag.
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(v2)}); err != nil {
			t.Fatal(err)
		}
		_, err = getVersion(t, c, b, "k", v2)
		wantStatus(t, "GET of the deleted version", err, http.StatusNotFound, "")
		if got, err := getVersion(t, c, b, "k", v3); err != nil || !bytes.Equal(got, d3) {
			t.Fatalf("v3 after deleting v2: %v", err)
		}
		_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k"), IfMatch: aws.String(`"` + md5Hex(d3) + `"`)})
		wantStatus(t, "conditional delete with another version's ETag", err, http.StatusPreconditionFailed, "PreconditionFailed")
		dm, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
			{Key: aws.String("k"), VersionId: aws.String(v3)}, {Key: aws.String("k"), ETag: aws.String(`"` + md5Hex(d1) + `"`)}}}})
		if err != nil || len(dm.Errors) != 0 || len(dm.Deleted) != 2 {
			t.Fatalf("DeleteObjects = %+v, %v", dm, err)
		}
		if _, err := getVersion(t, c, b, "k", v3); err == nil {
			t.Fatal("v3 still there")
		}
		if got, err := getVersion(t, c, b, "k", v1); err != nil || !bytes.Equal(got, d1) {
			t.Fatalf("v1 at the end: %v", err)
		}
	})
}

const boto3VersionsScript = `
import json, sys
import boto3
from botocore.config import Config

endpoint, ak, sk, bucket = sys.argv[1:5]
c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk,
                 region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))
c.create_bucket(Bucket=bucket)
c.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
ids = [c.put_object(Bucket=bucket, Key="doc", Body=b"backup %d" % i)["VersionId"] for i in range(3)]
d = c.delete_object(Bucket=bucket, Key="doc")
try:
    c.get_object(Bucket=bucket, Key="doc")
    after_delete = "found"
except c.exceptions.NoSuchKey:
    after_delete = "NoSuchKey"
lv = c.list_object_versions(Bucket=bucket, Prefix="doc")
old = c.get_object(Bucket=bucket, Key="doc", VersionId=ids[0])["Body"].read().decode()
c.copy_object(Bucket=bucket, Key="doc", CopySource={"Bucket": bucket, "Key": "doc", "VersionId": ids[1]})
restored = c.get_object(Bucket=bucket, Key="doc")["Body"].read().decode()
r = c.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "doc", "VersionId": ids[0]}]})
print(json.dumps({
    "ids": ids, "marker": d.get("DeleteMarker", False), "after_delete": after_delete,
    "versions": [[v["VersionId"], v["Size"], v["ETag"], v["IsLatest"]] for v in lv.get("Versions", [])],
    "markers": [[m["VersionId"], m["IsLatest"]] for m in lv.get("DeleteMarkers", [])],
    "old": old, "restored": restored, "deleted": [x.get("VersionId") for x in r.get("Deleted", [])],
    "status": c.get_bucket_versioning(Bucket=bucket).get("Status"),
}))
`

// TestVersionsBoto3 restores an older version with boto3 after the newer
// ones were deleted, in front of moto and on the embedded store.
func TestVersionsBoto3(t *testing.T) {
	t.Parallel()
	py := requireBoto3(t)
	onEachStore(t, func(t *testing.T, p *sealProc) {
		dir := t.TempDir()
		script := writeFile(t, dir, "versions.py", []byte(boto3VersionsScript))
		env := isolatedPythonEnv(dir)
		out := runTool(t, env, py, script, p.Endpoint, p.AccessKey, p.SecretKey, "boto3-versions")
		var got struct {
			IDs         []string `json:"ids"`
			Marker      bool     `json:"marker"`
			AfterDelete string   `json:"after_delete"`
			Versions    [][]any  `json:"versions"`
			Markers     [][]any  `json:"markers"`
			Old         string   `json:"old"`
			Restored    string   `json:"restored"`
			Deleted     []string `json:"deleted"`
			Status      string   `json:"status"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("boto3 output %q: %v", out, err)
		}
		if !got.Marker || got.AfterDelete != "NoSuchKey" || got.Old != "backup 0" || got.Restored != "backup 1" || got.Status != "Enabled" {
			t.Fatalf("boto3: %+v", got)
		}
		if len(got.Versions) != 3 || len(got.Markers) != 1 || got.Markers[0][1] != true {
			t.Fatalf("boto3 listing: %+v", got)
		}
		for i, v := range got.Versions { // newest first
			want := []byte("backup " + string(rune('2'-i)))
			if v[0] != got.IDs[2-i] || v[1] != float64(len(want)) || v[2] != `"`+md5Hex(want)+`"` || v[3] != false {
				t.Errorf("version %d = %v, want %s size %d etag %s", i, v, got.IDs[2-i], len(want), md5Hex(want))
			}
		}
		if len(got.Deleted) != 1 || got.Deleted[0] != got.IDs[0] {
			t.Fatalf("delete_objects: %v", got.Deleted)
		}
	})
}
