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
func (e *Error) Status() int { return e.Code.Status() }

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
