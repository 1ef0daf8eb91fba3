package s3api

import "sort"

// sortTags orders a tag set by key. A tag set has no order in S3, and
// stores differ (moto keeps the order written, Ceph RGW sorts by key):
// s3seal answers by key whatever the store, as RGW does.
func (t *tagDoc) sortTags() {
	sort.SliceStable(t.TagSet.Tags, func(i, j int) bool { return t.TagSet.Tags[i].Key < t.TagSet.Tags[j].Key })
}
