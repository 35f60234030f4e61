package azerr

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// allCodes lists every declared Code; adding a const without listing it here fails the
// completeness check below via the count of table entries.
var allCodes = []Code{
	TableAlreadyExists, TableBeingDeleted, TableNotFound, ResourceNotFound, EntityAlreadyExists,
	UpdateConditionNotSatisfied, InvalidInput, OutOfRangeInput, InvalidResourceName,
	PropertiesNeedValue, PropertyNameInvalid, PropertyNameTooLong, PropertyValueTooLarge,
	EntityTooLarge, TooManyProperties, DuplicatePropertiesSpecified, InvalidValueType,
	InvalidDuplicateRow, CommandsInBatchActOnDifferentPartitions, AtomFormatNotSupported,
	JSONFormatNotSupported, MethodNotAllowed, NotImplemented, HostInformationNotPresent,
	XMethodIncorrectCount, XMethodIncorrectValue, XMethodNotUsingPost, AuthenticationFailed,
	AuthorizationFailure, AuthorizationPermissionMismatch, AuthorizationServiceMismatch,
	AuthorizationResourceTypeMismatch, AuthorizationProtocolMismatch,
	AuthorizationSourceIPMismatch, InsufficientAccountPermissions, NoAuthenticationInformation, InvalidAuthenticationInfo,
	InvalidHeaderValue, MissingRequiredHeader, InvalidQueryParameterValue, InvalidURI,
	InvalidXMLDocument, InvalidXMLNodeValue, RequestBodyTooLarge, UnsupportedHTTPVerb,
	CorsPreflightFailure, InternalError, OperationTimedOut, ServerBusy,
	QueueAlreadyExists, QueueBeingDeleted, QueueNotFound, QueueDisabled, MessageNotFound, PopReceiptMismatch, MessageTooLarge, InvalidMarker, OutOfRangeQueryParameterValue, MissingRequiredQueryParameter, InvalidMetadata, MetadataTooLarge, UnsupportedHeader, ContainerAlreadyExists, ContainerBeingDeleted, ContainerNotFound, BlobNotFound, BlobAlreadyExists, SnapshotsPresent, InvalidBlobType, InvalidBlockList, InvalidBlockID, InvalidBlobOrBlock, BlockCountExceedsLimit, MD5Mismatch, CRC64Mismatch, InvalidRange, InvalidPageRange, ConditionNotMet, AppendPositionConditionNotMet, MaxBlobSizeConditionNotMet, SequenceNumberConditionNotMet, SourceConditionNotMet, LeaseIDMissing, LeaseIDMismatchWithBlobOperation, LeaseIDMismatchWithContainerOperation, LeaseNotPresentWithBlobOperation, LeaseNotPresentWithContainerOperation, LeaseAlreadyPresent, LeaseIDMismatchWithLeaseOperation, LeaseNotPresentWithLeaseOperation, LeaseIsBreakingAndCannotBeAcquired, LeaseIsBreakingAndCannotBeChanged, LeaseIsBrokenAndCannotBeRenewed, LeaseLost, CannotVerifyCopySource, NoPendingCopyOperation, PendingCopyOperation, BlobArchived,
	TagsTooLarge, EmptyTagName, DuplicateTagNames, InvalidTag, PreviousSnapshotNotFound, PreviousSnapshotCannotBeNewer,
}

func TestTableComplete(t *testing.T) {
	if len(allCodes) != len(table) {
		t.Fatalf("%d codes listed, %d in table", len(allCodes), len(table))
	}
	seen := map[Code]bool{}
	for _, c := range allCodes {
		if seen[c] {
			t.Errorf("%s listed twice", c)
		}
		seen[c] = true
		d, ok := table[c]
		if !ok {
			t.Errorf("%s has no table entry", c)
			continue
		}
		if http.StatusText(d.status) == "" || d.status < 400 {
			t.Errorf("%s: bad status %d", c, d.status)
		}
		if d.message == "" || !strings.HasSuffix(d.message, ".") {
			t.Errorf("%s: message %q must be a sentence", c, d.message)
		}
	}
}

func TestFromWrapped(t *testing.T) {
	err := fmt.Errorf("table: insert: %w", New(EntityAlreadyExists))
	if e := From(err); e.Code != EntityAlreadyExists || e.Status() != 409 {
		t.Fatalf("got %v", e)
	}
	if !Is(err, EntityAlreadyExists) || Is(err, TableNotFound) {
		t.Fatal("Is")
	}
	if e := From(fmt.Errorf("disk on fire")); e.Code != InternalError || e.Status() != 500 {
		t.Fatalf("got %v", e)
	}
	if e := Newf(InvalidInput, "bad %d", 3); e.Message() != "bad 3" {
		t.Fatal(e.Message())
	}
}

// TestIsNilAllocatesNothing: callers test successful results with Is on every request.
func TestIsNilAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = Is(nil, ResourceNotFound) }); n != 0 {
		t.Fatalf("Is(nil) allocates %v times", n)
	}
}

func TestEnvelopes(t *testing.T) {
	e := New(RequestBodyTooLarge).With("MaxLimit", "65536")
	x := string(AppendXML(nil, string(e.Code), "too <big>", e.Details...))
	want := `<?xml version="1.0" encoding="utf-8"?><Error><Code>RequestBodyTooLarge</Code><Message>too &lt;big&gt;</Message><MaxLimit>65536</MaxLimit></Error>`
	if x != want {
		t.Fatalf("XML\n got %s\nwant %s", x, want)
	}
}
