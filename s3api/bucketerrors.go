package s3api

import "github.com/s3seal/s3seal/s3api/s3err"

// AWS's words for these two end without a period (not in the table,
// whose messages are sentences).
func errLocationConstraint() *s3err.Error {
	return err400("InvalidLocationConstraint", "The specified location-constraint is not valid")
}

func errACLWithEnforced() *s3err.Error {
	return err400("InvalidBucketAclWithObjectOwnership", "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting")
}
