// Package embedded is the S3 store that s3seal runs inside its own process
// when no backend endpoint is configured: the zero-setup default, and the
// store that the tests of s3seal's other packages run against. Start
// serves it on a loopback port; NewStore returns a backend.S3 client
// pointed at it. Only that client, which knows the random access key of
// each start, is let in.
//
// It is built on gofakes3 over the local file system and overrides what
// gofakes3 gets wrong or lacks, so the store answers as S3 does for every
// request s3seal sends: copies, ETags (multipart ones included),
// conditional requests and the routing of query parameters. Everything it
// keeps is on disk under the data directory and survives a restart:
//
//	objects/    object data and metadata (s3afero layout: fixedbackend.go),
//	            older versions and delete markers (versions.go)
//	multipart/  uploads in progress, with their parts (multipart.go)
//	attrs/      Object Lock (bucket configuration, retention, legal hold),
//	            tags and ACLs of objects and uploads, and bucket documents:
//	            policy, CORS, lifecycle, ownership controls (attrs.go)
//
// It is meant for one s3seal process; two processes over one data
// directory are not coordinated. Package backend, the S3 client, does not
// import this package.
package embedded
