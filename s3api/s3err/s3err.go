// Package s3err is the table of the S3 errors s3seal answers with: each
// code, a constant of type Code named as the code, with its HTTP status
// and default message (in AWS's words), and the Error that carries a
// code, its status and its message to the client.
//
// New is how s3seal builds an error of its own: its status always comes
// from the table, its message from the table unless the caller gives one.
// A code s3seal answers with is added here first (a constant and its row;
// TestEveryCodeInTable holds them together). Forward is the one way a
// code outside the table, or a status other than the table's, reaches a
// client: an error another layer decided (the store's refusals, sigv4's
// and checksum's errors), passed on as it came by s3api/errors.go. s3api's
// TestErrorsFromTable keeps the rest of s3api to New.
package s3err

//lint:file-ignore ST1003 a code's constant is named as S3 spells the code (InvalidBucketAclWithObjectOwnership)

import "github.com/s3seal/s3seal/s3api/sigv4"

// Code is an S3 error code. Use the constants: each is in the table.
type Code string

// Error is an S3 error as the client sees it: a code, an HTTP status
// and a message rendered in the S3 XML error body. Its code and status
// are New's (the table's) or Forward's; the rest a handler may set.
type Error struct {
	Code       Code
	StatusCode int
	Message    string
	Resource   string
	Fields     []sigv4.Field // extra elements of the body, as S3 adds them
	// CalculatedDigest is the MD5 (base64) of a body whose Content-MD5
	// did not match (BadDigest).
	CalculatedDigest string
	// Why is the rule that refused the request, for the log only (the
	// client reads S3's words).
	Why string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// The codes s3seal answers with, each named as the code.
const (
	AccessControlListNotSupported                  Code = "AccessControlListNotSupported"
	AccessDenied                                   Code = "AccessDenied"
	AccessForbidden                                Code = "AccessForbidden"
	BadDigest                                      Code = "BadDigest"
	BadRequest                                     Code = "BadRequest"
	BucketAlreadyExists                            Code = "BucketAlreadyExists"
	BucketAlreadyOwnedByYou                        Code = "BucketAlreadyOwnedByYou"
	BucketNotEmpty                                 Code = "BucketNotEmpty"
	ConditionalRequestConflict                     Code = "ConditionalRequestConflict"
	EntityTooLarge                                 Code = "EntityTooLarge"
	EntityTooSmall                                 Code = "EntityTooSmall"
	IncompleteBody                                 Code = "IncompleteBody"
	InternalError                                  Code = "InternalError"
	InvalidArgument                                Code = "InvalidArgument"
	KMSDisabledException                           Code = "KMS.DisabledException"
	KMSNotFoundException                           Code = "KMS.NotFoundException"
	InvalidBucketAclWithObjectOwnership            Code = "InvalidBucketAclWithObjectOwnership"
	InvalidBucketName                              Code = "InvalidBucketName"
	InvalidBucketState                             Code = "InvalidBucketState"
	InvalidDigest                                  Code = "InvalidDigest"
	InvalidLocationConstraint                      Code = "InvalidLocationConstraint"
	InvalidObjectState                             Code = "InvalidObjectState"
	InvalidPart                                    Code = "InvalidPart"
	InvalidPartNumber                              Code = "InvalidPartNumber"
	InvalidPartOrder                               Code = "InvalidPartOrder"
	InvalidPolicyDocument                          Code = "InvalidPolicyDocument"
	InvalidRange                                   Code = "InvalidRange"
	InvalidRedirectLocation                        Code = "InvalidRedirectLocation"
	InvalidRequest                                 Code = "InvalidRequest"
	InvalidRetentionPeriod                         Code = "InvalidRetentionPeriod"
	InvalidStorageClass                            Code = "InvalidStorageClass"
	InvalidTag                                     Code = "InvalidTag"
	InvalidTargetBucketForLogging                  Code = "InvalidTargetBucketForLogging"
	KeyTooLongError                                Code = "KeyTooLongError"
	MalformedACLError                              Code = "MalformedACLError"
	MalformedPOSTRequest                           Code = "MalformedPOSTRequest"
	MalformedPolicy                                Code = "MalformedPolicy"
	MalformedXML                                   Code = "MalformedXML"
	MaxMessageLengthExceeded                       Code = "MaxMessageLengthExceeded"
	MaxPostPreDataLengthExceeded                   Code = "MaxPostPreDataLengthExceeded"
	MetadataTooLarge                               Code = "MetadataTooLarge"
	MethodNotAllowed                               Code = "MethodNotAllowed"
	MissingContentLength                           Code = "MissingContentLength"
	MissingRequestBodyError                        Code = "MissingRequestBodyError"
	MissingSecurityHeader                          Code = "MissingSecurityHeader"
	NoSuchBucket                                   Code = "NoSuchBucket"
	NoSuchBucketPolicy                             Code = "NoSuchBucketPolicy"
	NoSuchCORSConfiguration                        Code = "NoSuchCORSConfiguration"
	NoSuchKey                                      Code = "NoSuchKey"
	NoSuchObjectLockConfiguration                  Code = "NoSuchObjectLockConfiguration"
	NoSuchPublicAccessBlockConfiguration           Code = "NoSuchPublicAccessBlockConfiguration"
	NoSuchTagSet                                   Code = "NoSuchTagSet"
	NoSuchUpload                                   Code = "NoSuchUpload"
	NoSuchVersion                                  Code = "NoSuchVersion"
	NoSuchWebsiteConfiguration                     Code = "NoSuchWebsiteConfiguration"
	NotImplemented                                 Code = "NotImplemented"
	NotModified                                    Code = "NotModified"
	ObjectLockConfigurationNotFoundError           Code = "ObjectLockConfigurationNotFoundError"
	OperationAborted                               Code = "OperationAborted"
	OwnershipControlsNotFoundError                 Code = "OwnershipControlsNotFoundError"
	PreconditionFailed                             Code = "PreconditionFailed"
	RequestHeaderSectionTooLarge                   Code = "RequestHeaderSectionTooLarge"
	RequestTimeout                                 Code = "RequestTimeout"
	ServerSideEncryptionConfigurationNotFoundError Code = "ServerSideEncryptionConfigurationNotFoundError"
	ServiceUnavailable                             Code = "ServiceUnavailable"
	SlowDown                                       Code = "SlowDown"
	UnexpectedContent                              Code = "UnexpectedContent"
	UnresolvableGrantByEmailAddress                Code = "UnresolvableGrantByEmailAddress"
)

// table holds the status and default message of every code s3seal
// answers with itself.
var table = map[Code]Error{
	AccessDenied:                 {StatusCode: 403, Message: "Access Denied."},
	AccessForbidden:              {StatusCode: 403, Message: "CORSResponse: This CORS request is not allowed."},
	BadDigest:                    {StatusCode: 400, Message: "The Content-MD5 you specified did not match what we received."},
	BadRequest:                   {StatusCode: 400, Message: "Bad Request."},
	BucketAlreadyExists:          {StatusCode: 409, Message: "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again."},
	BucketAlreadyOwnedByYou:      {StatusCode: 409, Message: "Your previous request to create the named bucket succeeded and you already own it."},
	BucketNotEmpty:               {StatusCode: 409, Message: "The bucket you tried to delete is not empty."},
	ConditionalRequestConflict:   {StatusCode: 409, Message: "A conflicting operation occurred. If using PutObject you can retry the request. If using multipart upload you should initiate another CreateMultipartUpload request and re-upload each part."},
	EntityTooSmall:               {StatusCode: 400, Message: "Your proposed upload is smaller than the minimum allowed object size."},
	EntityTooLarge:               {StatusCode: 400, Message: "Your proposed upload exceeds the maximum allowed object size."},
	IncompleteBody:               {StatusCode: 400, Message: "You did not provide the number of bytes specified by the Content-Length HTTP header."},
	InternalError:                {StatusCode: 500, Message: "We encountered an internal error. Please try again."},
	InvalidArgument:              {StatusCode: 400, Message: "Invalid Argument."},
	InvalidBucketName:            {StatusCode: 400, Message: "The specified bucket is not valid."},
	InvalidDigest:                {StatusCode: 400, Message: "The Content-MD5 you specified was invalid."},
	InvalidPart:                  {StatusCode: 400, Message: "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag."},
	InvalidPartNumber:            {StatusCode: 416, Message: "The requested partnumber is not satisfiable"},
	InvalidPartOrder:             {StatusCode: 400, Message: "The list of parts was not in ascending order. Parts must be ordered by part number."},
	InvalidRange:                 {StatusCode: 416, Message: "The requested range is not satisfiable"},
	InvalidRequest:               {StatusCode: 400, Message: "Invalid Request."},
	InvalidStorageClass:          {StatusCode: 400, Message: "The storage class you specified is not valid."},
	InvalidObjectState:           {StatusCode: 403, Message: "The operation is not valid for the object's storage class."},
	KeyTooLongError:              {StatusCode: 400, Message: "Your key is too long."},
	MalformedXML:                 {StatusCode: 400, Message: "The XML you provided was not well-formed or did not validate against our published schema."},
	MetadataTooLarge:             {StatusCode: 400, Message: "Your metadata headers exceed the maximum allowed metadata size."},
	MaxMessageLengthExceeded:     {StatusCode: 400, Message: "Your request was too big."},
	MethodNotAllowed:             {StatusCode: 405, Message: "The specified method is not allowed against this resource."},
	MissingContentLength:         {StatusCode: 411, Message: "You must provide the Content-Length HTTP header."},
	NoSuchBucket:                 {StatusCode: 404, Message: "The specified bucket does not exist."},
	NoSuchKey:                    {StatusCode: 404, Message: "The specified key does not exist."},
	NoSuchUpload:                 {StatusCode: 404, Message: "The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."},
	NoSuchVersion:                {StatusCode: 404, Message: "The specified version does not exist."},
	NotImplemented:               {StatusCode: 501, Message: "A header you provided implies functionality that is not implemented."},
	NotModified:                  {StatusCode: 304, Message: "Not Modified."},
	OperationAborted:             {StatusCode: 409, Message: "A conflicting conditional operation is currently in progress against this resource. Please try again."},
	PreconditionFailed:           {StatusCode: 412, Message: "At least one of the pre-conditions you specified did not hold."},
	RequestHeaderSectionTooLarge: {StatusCode: 400, Message: "Your request header section exceeds the maximum allowed size."},
	ServiceUnavailable:           {StatusCode: 503, Message: "Please reduce your request rate."},
	RequestTimeout:               {StatusCode: 400, Message: "Your socket connection to the server was not read from or written to within the timeout period."},
	SlowDown:                     {StatusCode: 503, Message: "Please reduce your request rate."},
	// SSE-KMS terminated in s3seal: the KMS key a write or read needs.
	KMSDisabledException: {StatusCode: 400, Message: "The KMS key is disabled."},
	KMSNotFoundException: {StatusCode: 400, Message: "The KMS key does not exist."},
	// POST (browser-based) uploads and their policy.
	InvalidPolicyDocument:        {StatusCode: 400, Message: "The content of the form does not meet the conditions specified in the policy document."},
	MalformedPOSTRequest:         {StatusCode: 400, Message: "The body of your POST request is not well-formed multipart/form-data."},
	MaxPostPreDataLengthExceeded: {StatusCode: 400, Message: "Your POST request fields preceding the upload file were too large."},
	// Tags, website redirects, logging and bucket creation.
	InvalidTag:                          {StatusCode: 400, Message: "The tag provided was not a valid tag."},
	InvalidRedirectLocation:             {StatusCode: 400, Message: "The website redirect location must have a prefix of 'http://' or 'https://' or '/'."},
	InvalidTargetBucketForLogging:       {StatusCode: 400, Message: "The target bucket for logging does not exist, is not owned by you, or does not have the appropriate grants for the log-delivery group."},
	InvalidLocationConstraint:           {StatusCode: 400, Message: "The specified location (Region) constraint is not valid."},
	InvalidBucketAclWithObjectOwnership: {StatusCode: 400, Message: "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting."},
	UnresolvableGrantByEmailAddress:     {StatusCode: 400, Message: "The email address you provided does not match any account on record."},
	// The bucket documents' and Object Lock's own codes, worded as AWS words
	// them; a store's refusal with one of them reads so, whatever the
	// store's words (moto's and the embedded store's lack the period).
	NoSuchBucketPolicy:                             {StatusCode: 404, Message: "The bucket policy does not exist."},
	NoSuchTagSet:                                   {StatusCode: 404, Message: "The TagSet does not exist."},
	NoSuchCORSConfiguration:                        {StatusCode: 404, Message: "The CORS configuration does not exist."},
	NoSuchWebsiteConfiguration:                     {StatusCode: 404, Message: "The specified bucket does not have a website configuration."},
	NoSuchPublicAccessBlockConfiguration:           {StatusCode: 404, Message: "The public access block configuration was not found."},
	ServerSideEncryptionConfigurationNotFoundError: {StatusCode: 404, Message: "The server side encryption configuration was not found."},
	OwnershipControlsNotFoundError:                 {StatusCode: 404, Message: "The bucket ownership controls were not found."},
	MalformedACLError:                              {StatusCode: 400, Message: "The XML you provided was not well-formed or did not validate against our published schema."},
	MalformedPolicy:                                {StatusCode: 400, Message: "The policy you provided is not valid."},
	UnexpectedContent:                              {StatusCode: 400, Message: "This request does not support content."},
	MissingSecurityHeader:                          {StatusCode: 400, Message: "Your request was missing a required header."},
	MissingRequestBodyError:                        {StatusCode: 400, Message: "Request body is empty."},
	AccessControlListNotSupported:                  {StatusCode: 400, Message: "The bucket does not allow ACLs."},
	// Object Lock's.
	ObjectLockConfigurationNotFoundError: {StatusCode: 404, Message: "Object Lock configuration does not exist for this bucket."},
	NoSuchObjectLockConfiguration:        {StatusCode: 404, Message: "The specified object does not have a ObjectLock configuration."},
	InvalidBucketState:                   {StatusCode: 409, Message: "The request is not valid with the current state of the bucket."},
	InvalidRetentionPeriod:               {StatusCode: 400, Message: "Default retention period must be a positive integer value."},
}

// New builds an Error for a code from the table: the table's status,
// and its default message unless msg is not empty. A code the table does
// not hold (only a code read from another layer's error can be one) gets
// InternalError's status and message.
func New(code Code, msg string) *Error {
	e, ok := table[code]
	if !ok {
		e = table[InternalError]
	}
	e.Code = code
	if msg != "" {
		e.Message = msg
	}
	return &e
}

// Forward is an error another layer decided, passed on with its code,
// status and message as it came: a store's refusal, or sigv4's or
// checksum's error (they carry their own status). It is the one way a
// code outside the table, or a status other than the table's, reaches a
// client; only s3api/errors.go calls it.
func Forward(code string, status int, msg string) *Error {
	return &Error{Code: Code(code), StatusCode: status, Message: msg}
}

// Lookup is the table's entry for a code: its status and default message.
func Lookup(code Code) (Error, bool) {
	e, ok := table[code]
	return e, ok
}
