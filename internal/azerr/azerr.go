// Package azerr is Tablo's one error table: every Azure error code the server can answer with,
// its HTTP status and its default message. Packages below the HTTP edge return *Error values
// (or wrap them with %w); the server maps them to the wire exactly once.
package azerr

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is an Azure Storage error code as it appears in odata.error.code.
type Code string

// The codes Tablo answers with. Each must have an entry in table; TestTableComplete checks it.
const (
	TableAlreadyExists                      Code = "TableAlreadyExists"
	TableBeingDeleted                       Code = "TableBeingDeleted"
	TableNotFound                           Code = "TableNotFound"
	ResourceNotFound                        Code = "ResourceNotFound"
	EntityAlreadyExists                     Code = "EntityAlreadyExists"
	UpdateConditionNotSatisfied             Code = "UpdateConditionNotSatisfied"
	InvalidInput                            Code = "InvalidInput"
	OutOfRangeInput                         Code = "OutOfRangeInput"
	InvalidResourceName                     Code = "InvalidResourceName"
	PropertiesNeedValue                     Code = "PropertiesNeedValue"
	PropertyNameInvalid                     Code = "PropertyNameInvalid"
	PropertyNameTooLong                     Code = "PropertyNameTooLong"
	PropertyValueTooLarge                   Code = "PropertyValueTooLarge"
	EntityTooLarge                          Code = "EntityTooLarge"
	TooManyProperties                       Code = "TooManyProperties"
	DuplicatePropertiesSpecified            Code = "DuplicatePropertiesSpecified"
	InvalidValueType                        Code = "InvalidValueType"
	InvalidDuplicateRow                     Code = "InvalidDuplicateRow"
	CommandsInBatchActOnDifferentPartitions Code = "CommandsInBatchActOnDifferentPartitions"
	AtomFormatNotSupported                  Code = "AtomFormatNotSupported"
	JSONFormatNotSupported                  Code = "JsonFormatNotSupported"
	MethodNotAllowed                        Code = "MethodNotAllowed"
	NotImplemented                          Code = "NotImplemented"
	HostInformationNotPresent               Code = "HostInformationNotPresent"
	XMethodIncorrectCount                   Code = "XMethodIncorrectCount"
	XMethodIncorrectValue                   Code = "XMethodIncorrectValue"
	XMethodNotUsingPost                     Code = "XMethodNotUsingPost"
	AuthenticationFailed                    Code = "AuthenticationFailed"
	AuthorizationFailure                    Code = "AuthorizationFailure"
	AuthorizationPermissionMismatch         Code = "AuthorizationPermissionMismatch"
	AuthorizationServiceMismatch            Code = "AuthorizationServiceMismatch"
	AuthorizationResourceTypeMismatch       Code = "AuthorizationResourceTypeMismatch"
	AuthorizationProtocolMismatch           Code = "AuthorizationProtocolMismatch"
	AuthorizationSourceIPMismatch           Code = "AuthorizationSourceIPMismatch"
	InsufficientAccountPermissions          Code = "InsufficientAccountPermissions"
	NoAuthenticationInformation             Code = "NoAuthenticationInformation"
	InvalidAuthenticationInfo               Code = "InvalidAuthenticationInfo"
	InvalidHeaderValue                      Code = "InvalidHeaderValue"
	MissingRequiredHeader                   Code = "MissingRequiredHeader"
	InvalidQueryParameterValue              Code = "InvalidQueryParameterValue"
	InvalidURI                              Code = "InvalidUri"
	InvalidXMLDocument                      Code = "InvalidXmlDocument"
	InvalidXMLNodeValue                     Code = "InvalidXmlNodeValue"
	RequestBodyTooLarge                     Code = "RequestBodyTooLarge"
	UnsupportedHTTPVerb                     Code = "UnsupportedHttpVerb"
	CorsPreflightFailure                    Code = "CorsPreflightFailure"
	InternalError                           Code = "InternalError"
	OperationTimedOut                       Code = "OperationTimedOut"
	ServerBusy                              Code = "ServerBusy"

	// Queue service.
	QueueAlreadyExists            Code = "QueueAlreadyExists"
	QueueBeingDeleted             Code = "QueueBeingDeleted"
	QueueNotFound                 Code = "QueueNotFound"
	QueueDisabled                 Code = "QueueDisabled"
	MessageNotFound               Code = "MessageNotFound"
	PopReceiptMismatch            Code = "PopReceiptMismatch"
	MessageTooLarge               Code = "MessageTooLarge"
	InvalidMarker                 Code = "InvalidMarker"
	OutOfRangeQueryParameterValue Code = "OutOfRangeQueryParameterValue"
	MissingRequiredQueryParameter Code = "MissingRequiredQueryParameter"
	InvalidMetadata               Code = "InvalidMetadata"
	MetadataTooLarge              Code = "MetadataTooLarge"
	UnsupportedHeader             Code = "UnsupportedHeader"

	// Blob service.
	ContainerAlreadyExists                Code = "ContainerAlreadyExists"
	ContainerBeingDeleted                 Code = "ContainerBeingDeleted"
	ContainerNotFound                     Code = "ContainerNotFound"
	BlobNotFound                          Code = "BlobNotFound"
	BlobAlreadyExists                     Code = "BlobAlreadyExists"
	SnapshotsPresent                      Code = "SnapshotsPresent"
	InvalidBlobType                       Code = "InvalidBlobType"
	InvalidBlockList                      Code = "InvalidBlockList"
	InvalidBlockID                        Code = "InvalidBlockId"
	InvalidBlobOrBlock                    Code = "InvalidBlobOrBlock"
	BlockCountExceedsLimit                Code = "BlockCountExceedsLimit"
	MD5Mismatch                           Code = "Md5Mismatch"
	CRC64Mismatch                         Code = "Crc64Mismatch"
	InvalidRange                          Code = "InvalidRange"
	InvalidPageRange                      Code = "InvalidPageRange"
	ConditionNotMet                       Code = "ConditionNotMet"
	AppendPositionConditionNotMet         Code = "AppendPositionConditionNotMet"
	MaxBlobSizeConditionNotMet            Code = "MaxBlobSizeConditionNotMet"
	SequenceNumberConditionNotMet         Code = "SequenceNumberConditionNotMet"
	SourceConditionNotMet                 Code = "SourceConditionNotMet"
	LeaseIDMissing                        Code = "LeaseIdMissing"
	LeaseIDMismatchWithBlobOperation      Code = "LeaseIdMismatchWithBlobOperation"
	LeaseIDMismatchWithContainerOperation Code = "LeaseIdMismatchWithContainerOperation"
	LeaseNotPresentWithBlobOperation      Code = "LeaseNotPresentWithBlobOperation"
	LeaseNotPresentWithContainerOperation Code = "LeaseNotPresentWithContainerOperation"
	LeaseAlreadyPresent                   Code = "LeaseAlreadyPresent"
	LeaseIDMismatchWithLeaseOperation     Code = "LeaseIdMismatchWithLeaseOperation"
	LeaseNotPresentWithLeaseOperation     Code = "LeaseNotPresentWithLeaseOperation"
	LeaseIsBreakingAndCannotBeAcquired    Code = "LeaseIsBreakingAndCannotBeAcquired"
	LeaseIsBreakingAndCannotBeChanged     Code = "LeaseIsBreakingAndCannotBeChanged"
	LeaseIsBrokenAndCannotBeRenewed       Code = "LeaseIsBrokenAndCannotBeRenewed"
	LeaseLost                             Code = "LeaseLost"
	CannotVerifyCopySource                Code = "CannotVerifyCopySource"
	NoPendingCopyOperation                Code = "NoPendingCopyOperation"
	PendingCopyOperation                  Code = "PendingCopyOperation"
	BlobArchived                          Code = "BlobArchived"
	// Blob index tags.
	TagsTooLarge      Code = "TagsTooLarge"
	EmptyTagName      Code = "EmptyTagName"
	DuplicateTagNames Code = "DuplicateTagNames"
	InvalidTag        Code = "InvalidTag"
	// Page blob diffs.
	PreviousSnapshotNotFound      Code = "PreviousSnapshotNotFound"
	PreviousSnapshotCannotBeNewer Code = "PreviousSnapshotCannotBeNewer"
)

type definition struct {
	status  int
	message string
}

// table maps every Code to its HTTP status and Azure's default message.
var table = map[Code]definition{
	TableAlreadyExists:                      {http.StatusConflict, "The table specified already exists."},
	TableBeingDeleted:                       {http.StatusConflict, "The specified table is being deleted. Try operation later."},
	TableNotFound:                           {http.StatusNotFound, "The table specified does not exist."},
	ResourceNotFound:                        {http.StatusNotFound, "The specified resource does not exist."},
	EntityAlreadyExists:                     {http.StatusConflict, "The specified entity already exists."},
	UpdateConditionNotSatisfied:             {http.StatusPreconditionFailed, "The update condition specified in the request was not satisfied."},
	InvalidInput:                            {http.StatusBadRequest, "One of the request inputs is not valid."},
	OutOfRangeInput:                         {http.StatusBadRequest, "One of the request inputs is out of range."},
	InvalidResourceName:                     {http.StatusBadRequest, "The specifed resource name contains invalid characters."},
	PropertiesNeedValue:                     {http.StatusBadRequest, "The values are not specified for all properties in the entity."},
	PropertyNameInvalid:                     {http.StatusBadRequest, "The property name is invalid."},
	PropertyNameTooLong:                     {http.StatusBadRequest, "The property name exceeds the maximum allowed length (255)."},
	PropertyValueTooLarge:                   {http.StatusBadRequest, "The property value exceeds the maximum allowed size (64KB). If the property value is a string, it is UTF-16 encoded and the maximum number of characters should be 32K or less."},
	EntityTooLarge:                          {http.StatusBadRequest, "The entity is larger than the maximum allowed size (1MB)."},
	TooManyProperties:                       {http.StatusBadRequest, "The entity contains more properties than allowed."},
	DuplicatePropertiesSpecified:            {http.StatusBadRequest, "A property is specified more than one time."},
	InvalidValueType:                        {http.StatusBadRequest, "The value specified is invalid."},
	InvalidDuplicateRow:                     {http.StatusBadRequest, "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request."},
	CommandsInBatchActOnDifferentPartitions: {http.StatusBadRequest, "All commands in a batch must operate on same entity group."},
	AtomFormatNotSupported:                  {http.StatusUnsupportedMediaType, "Atom format is not supported."},
	JSONFormatNotSupported:                  {http.StatusUnsupportedMediaType, "JSON format is not supported."},
	MethodNotAllowed:                        {http.StatusMethodNotAllowed, "The requested method is not allowed on the specified resource."},
	NotImplemented:                          {http.StatusNotImplemented, "The requested operation is not implemented on the specified resource."},
	HostInformationNotPresent:               {http.StatusBadRequest, "The required host information is not present in the request. You must send a non-empty Host header or include the absolute URI in the request line."},
	XMethodIncorrectCount:                   {http.StatusBadRequest, "More than one X-HTTP-Method is specified."},
	XMethodIncorrectValue:                   {http.StatusBadRequest, "The specified X-HTTP-Method is invalid."},
	XMethodNotUsingPost:                     {http.StatusBadRequest, "The request uses X-HTTP-Method with an HTTP verb other than POST."},
	AuthenticationFailed:                    {http.StatusForbidden, "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."},
	AuthorizationFailure:                    {http.StatusForbidden, "This request is not authorized to perform this operation."},
	AuthorizationPermissionMismatch:         {http.StatusForbidden, "This request is not authorized to perform this operation using this permission."},
	AuthorizationServiceMismatch:            {http.StatusForbidden, "This request is not authorized to perform this operation using this service."},
	AuthorizationResourceTypeMismatch:       {http.StatusForbidden, "This request is not authorized to perform this operation using this resource type."},
	AuthorizationProtocolMismatch:           {http.StatusForbidden, "This request is not authorized to perform this operation using this protocol."},
	AuthorizationSourceIPMismatch:           {http.StatusForbidden, "This request is not authorized to perform this operation using this source IP."},
	InsufficientAccountPermissions:          {http.StatusForbidden, "Write operations are not allowed."},
	NoAuthenticationInformation:             {http.StatusUnauthorized, "Server failed to authenticate the request. Please refer to the information in the www-authenticate header."},
	InvalidAuthenticationInfo:               {http.StatusBadRequest, "Authentication information is not given in the correct format. Check the value of Authorization header."},
	InvalidHeaderValue:                      {http.StatusBadRequest, "The value for one of the HTTP headers is not in the correct format."},
	MissingRequiredHeader:                   {http.StatusBadRequest, "An HTTP header that's mandatory for this request is not specified."},
	InvalidQueryParameterValue:              {http.StatusBadRequest, "Value for one of the query parameters specified in the request URI is invalid."},
	InvalidURI:                              {http.StatusBadRequest, "The requested URI does not represent any resource on the server."},
	InvalidXMLDocument:                      {http.StatusBadRequest, "The specified XML is not syntactically valid."},
	InvalidXMLNodeValue:                     {http.StatusBadRequest, "The value for one of the XML nodes is not in the correct format."},
	RequestBodyTooLarge:                     {http.StatusRequestEntityTooLarge, "The request body is too large and exceeds the maximum permissible limit."},
	UnsupportedHTTPVerb:                     {http.StatusMethodNotAllowed, "The resource doesn't support the specified HTTP verb."},
	CorsPreflightFailure:                    {http.StatusForbidden, "CORS not enabled or no matching rule found for this request."},
	InternalError:                           {http.StatusInternalServerError, "The server encountered an internal error. Please retry the request."},
	OperationTimedOut:                       {http.StatusInternalServerError, "Operation could not be completed within the specified time."},
	ServerBusy:                              {http.StatusServiceUnavailable, "The server is currently unable to receive requests. Please retry your request."},
	QueueAlreadyExists:                      {http.StatusConflict, "The specified queue already exists."},
	QueueBeingDeleted:                       {http.StatusConflict, "The specified queue is being deleted."},
	QueueNotFound:                           {http.StatusNotFound, "The specified queue does not exist."},
	QueueDisabled:                           {http.StatusConflict, "The specified queue has been disabled by the administrator."},
	MessageNotFound:                         {http.StatusNotFound, "The specified message does not exist."},
	PopReceiptMismatch:                      {http.StatusBadRequest, "The specified pop receipt did not match the pop receipt for a dequeued message."},
	MessageTooLarge:                         {http.StatusBadRequest, "The message exceeds the maximum allowed size."},
	InvalidMarker:                           {http.StatusBadRequest, "The specified marker is invalid."},
	OutOfRangeQueryParameterValue:           {http.StatusBadRequest, "One of the query parameters specified in the request URI is outside the permissible range."},
	MissingRequiredQueryParameter:           {http.StatusBadRequest, "A query parameter that's mandatory for this request is not specified."},
	InvalidMetadata:                         {http.StatusBadRequest, "The metadata specified is invalid. It has characters that are not permitted."},
	MetadataTooLarge:                        {http.StatusBadRequest, "The size of the specified metadata exceeds the maximum size permitted."},
	UnsupportedHeader:                       {http.StatusBadRequest, "One of the HTTP headers specified in the request is not supported."},
	ContainerAlreadyExists:                  {http.StatusConflict, "The specified container already exists."},
	ContainerBeingDeleted:                   {http.StatusConflict, "The specified container is being deleted."},
	ContainerNotFound:                       {http.StatusNotFound, "The specified container does not exist."},
	BlobNotFound:                            {http.StatusNotFound, "The specified blob does not exist."},
	BlobAlreadyExists:                       {http.StatusConflict, "The specified blob already exists."},
	SnapshotsPresent:                        {http.StatusConflict, "This operation is not permitted while the blob has snapshots."},
	InvalidBlobType:                         {http.StatusConflict, "The blob type is invalid for this operation."},
	InvalidBlockList:                        {http.StatusBadRequest, "The specified block list is invalid."},
	InvalidBlockID:                          {http.StatusBadRequest, "The specified block ID is invalid. The block ID must be Base64-encoded."},
	InvalidBlobOrBlock:                      {http.StatusBadRequest, "The specified blob or block content is invalid."},
	BlockCountExceedsLimit:                  {http.StatusConflict, "The committed block count cannot exceed the maximum limit of 50,000 blocks."},
	MD5Mismatch:                             {http.StatusBadRequest, "The MD5 value specified in the request did not match with the MD5 value calculated by the server."},
	CRC64Mismatch:                           {http.StatusBadRequest, "The CRC64 value specified in the request did not match with the CRC64 value calculated by the server."},
	InvalidRange:                            {http.StatusRequestedRangeNotSatisfiable, "The range specified is invalid for the current size of the resource."},
	InvalidPageRange:                        {http.StatusRequestedRangeNotSatisfiable, "The page range specified is invalid."},
	ConditionNotMet:                         {http.StatusPreconditionFailed, "The condition specified using HTTP conditional header(s) is not met."},
	AppendPositionConditionNotMet:           {http.StatusPreconditionFailed, "The append position condition specified was not met."},
	MaxBlobSizeConditionNotMet:              {http.StatusPreconditionFailed, "The max blob size condition specified was not met."},
	SequenceNumberConditionNotMet:           {http.StatusPreconditionFailed, "The sequence number condition specified was not met."},
	SourceConditionNotMet:                   {http.StatusPreconditionFailed, "The source condition specified using HTTP conditional header(s) is not met."},
	LeaseIDMissing:                          {http.StatusPreconditionFailed, "There is currently a lease on the blob and no lease ID was specified in the request."},
	LeaseIDMismatchWithBlobOperation:        {http.StatusPreconditionFailed, "The lease ID specified did not match the lease ID for the blob."},
	LeaseIDMismatchWithContainerOperation:   {http.StatusPreconditionFailed, "The lease ID specified did not match the lease ID for the container."},
	LeaseNotPresentWithBlobOperation:        {http.StatusPreconditionFailed, "There is currently no lease on the blob."},
	LeaseNotPresentWithContainerOperation:   {http.StatusPreconditionFailed, "There is currently no lease on the container."},
	LeaseAlreadyPresent:                     {http.StatusConflict, "There is already a lease present."},
	LeaseIDMismatchWithLeaseOperation:       {http.StatusConflict, "The lease ID specified did not match the lease ID for the blob."},
	LeaseNotPresentWithLeaseOperation:       {http.StatusConflict, "There is currently no lease on the blob."},
	LeaseIsBreakingAndCannotBeAcquired:      {http.StatusConflict, "There is already a breaking lease, and can't be acquired."},
	LeaseIsBreakingAndCannotBeChanged:       {http.StatusConflict, "The lease ID matched, but the lease is currently in breaking state and cannot be changed."},
	LeaseIsBrokenAndCannotBeRenewed:         {http.StatusConflict, "The lease ID matched, but the lease has been broken explicitly and cannot be renewed."},
	LeaseLost:                               {http.StatusPreconditionFailed, "A lease ID was specified, but the lease for the blob has expired."},
	CannotVerifyCopySource:                  {http.StatusNotFound, "Could not verify the copy source within the specified time."},
	NoPendingCopyOperation:                  {http.StatusConflict, "There is currently no pending copy operation."},
	PendingCopyOperation:                    {http.StatusConflict, "There is currently a pending copy operation."},
	BlobArchived:                            {http.StatusConflict, "This operation is not permitted on an archived blob."},
	TagsTooLarge:                            {http.StatusBadRequest, "The tags specified exceed the maximum permissible limit."},
	EmptyTagName:                            {http.StatusBadRequest, "The name of one of the tag key-value pairs is empty."},
	DuplicateTagNames:                       {http.StatusBadRequest, "The tags specified contain duplicate names."},
	InvalidTag:                              {http.StatusBadRequest, "The tags specified are invalid. It contains characters that are not permitted."},
	PreviousSnapshotNotFound:                {http.StatusConflict, "The previous snapshot is not found."},
	PreviousSnapshotCannotBeNewer:           {http.StatusBadRequest, "The prevsnapshot query parameter value cannot be newer than snapshot query parameter value."},
}

// Status returns the HTTP status of c, or 500 for a code missing from the table.
func (c Code) Status() int {
	if d, ok := table[c]; ok {
		return d.status
	}
	return http.StatusInternalServerError
}

// Message returns Azure's default message for c.
func (c Code) Message() string {
	if d, ok := table[c]; ok {
		return d.message
	}
	return table[InternalError].message
}

// Error is an Azure error: a code plus an optional message that replaces the default one.
type Error struct {
	Code Code
	// Msg, when set, replaces the code's default message (e.g. to name a bad value or a position).
	Msg string
	// Details are extra elements the XML envelope writes after Message (MaxLimit,
	// QueryParameterName, ...), in order.
	Details []Detail
	// HTTPStatus, when set, replaces the code's status (Azure answers some codes with more
	// than one: InvalidAuthenticationInfo is 400 for a bad Shared Key header, 401 for a bad
	// bearer token).
	HTTPStatus int
}

// Detail is one extra element of an XML error body.
type Detail struct{ Name, Value string }

// With returns a copy of e with a detail element added.
func (e *Error) With(name, value string) *Error {
	c := *e
	c.Details = append(append([]Detail(nil), e.Details...), Detail{name, value})
	return &c
}

// New returns an *Error with the code's default message.
func New(c Code) *Error { return &Error{Code: c} }

// Newf returns an *Error with a specific message.
func Newf(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Msg: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message() }

// Message is the text Azure puts in message.value (before the RequestId/Time suffix).
func (e *Error) Message() string {
	if e.Msg != "" {
		return e.Msg
	}
	return e.Code.Message()
}

// Status is the HTTP status for the error.
func (e *Error) Status() int {
	if e.HTTPStatus != 0 {
		return e.HTTPStatus
	}
	return e.Code.Status()
}

// From finds the *Error inside err. Anything that is not an Azure error becomes InternalError,
// so an unexpected failure never leaks its text to clients.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return New(InternalError)
}

// Is reports whether err carries the Azure code c.
func Is(err error, c Code) bool {
	if err == nil {
		return false // before errors.As, whose target escapes: an allocation on every success
	}
	var e *Error
	return errors.As(err, &e) && e.Code == c
}
