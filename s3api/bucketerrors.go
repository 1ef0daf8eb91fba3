package s3api

// The bucket documents' and Object Lock's own codes, worded as AWS words them; a store's
// refusal with one of them reads so (storeRefusal), whatever the store's
// words (moto's and the embedded store's lack the period).
func init() {
	for code, e := range map[string]APIError{
		"NoSuchBucketPolicy":             {StatusCode: 404, Message: "The bucket policy does not exist."},
		"NoSuchTagSet":                   {StatusCode: 404, Message: "The TagSet does not exist."},
		"OwnershipControlsNotFoundError": {StatusCode: 404, Message: "The bucket ownership controls were not found."},
		"MalformedACLError":              {StatusCode: 400, Message: "The XML you provided was not well-formed or did not validate against our published schema."},
		"UnexpectedContent":              {StatusCode: 400, Message: "This request does not support content."},
		"MissingSecurityHeader":          {StatusCode: 400, Message: "Your request was missing a required header."},
		"AccessControlListNotSupported":  {StatusCode: 400, Message: "The bucket does not allow ACLs."},
		// Object Lock's (lockcheck.go).
		"ObjectLockConfigurationNotFoundError": {StatusCode: 404, Message: "Object Lock configuration does not exist for this bucket."},
		"NoSuchObjectLockConfiguration":        {StatusCode: 404, Message: "The specified object does not have a ObjectLock configuration."},
	} {
		if _, ok := errorTable[code]; !ok {
			errorTable[code] = e
		}
	}
}

// AWS's words for these two end without a period (not in the table,
// whose messages are sentences).
func errLocationConstraint() *APIError {
	return err400("InvalidLocationConstraint", "The specified location-constraint is not valid")
}

func errACLWithEnforced() *APIError {
	return err400("InvalidBucketAclWithObjectOwnership", "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting")
}
