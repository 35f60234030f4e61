package auth

import (
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

var allOperations = []Operation{
	QueryTables, CreateTable, DeleteTable, GetTable, QueryEntities, GetEntity, InsertEntity,
	UpdateEntity, MergeEntity, InsertOrReplace, InsertOrMerge, DeleteEntity, GetACL, SetACL,
	GetServiceProperties, SetServiceProperties, GetServiceStats, Batch, Preflight,
}

var allQueueOperations = []Operation{
	ListQueues, CreateQueue, DeleteQueue, GetQueueMetadata, SetQueueMetadata, GetQueueACL,
	SetQueueACL, PutMessage, GetMessages, PeekMessages, UpdateMessage, DeleteMessage, ClearMessages,
}

func verifiedSAS(t *testing.T, query string) *SAS {
	t.Helper()
	s := newSAS(t, query)
	if err := s.Verify(devAccount(), SASRequest{Now: time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s
}

func TestOperationString(t *testing.T) {
	for _, op := range append(allOperations[:len(allOperations):len(allOperations)], allQueueOperations...) {
		if s := op.String(); s == "" || strings.HasPrefix(s, "Operation(") {
			t.Errorf("%d has no name", op)
		}
	}
	if len(allOperations)+len(allQueueOperations) != len(operationNames)-1 || len(sasRules) != len(operationNames) {
		t.Fatal("operation tables out of step")
	}
	if Operation(0).String() != "Operation(0)" {
		t.Fatal(Operation(0).String())
	}
}

// serviceNeeds is auth.md §7.3, written out independently of sasRules ("" = not allowed).
var serviceNeeds = map[Operation]string{
	QueryEntities: "r", GetEntity: "r", InsertEntity: "a", UpdateEntity: "u", MergeEntity: "u",
	InsertOrReplace: "au", InsertOrMerge: "au", DeleteEntity: "d",
}

// TestAuthorizeServiceSAS tries every operation with every subset of raud.
func TestAuthorizeServiceSAS(t *testing.T) {
	for mask := 1; mask < 16; mask++ {
		var sp string
		for i := range 4 {
			if mask&(1<<i) != 0 {
				sp += string(tableLetters[i])
			}
		}
		s := verifiedSAS(t, "sv=2019-02-02&tn=MyTable&se=2025-01-02&sp="+sp)
		for _, op := range allOperations {
			var want azerr.Code
			need, entityOp := serviceNeeds[op]
			switch {
			case op == Preflight, op == Batch:
			case !entityOp:
				want = azerr.AuthorizationFailure
			case !s.perm.has(need):
				want = azerr.AuthorizationPermissionMismatch
			}
			if got := codeOf(s.Authorize(op, "mytable")); got != want {
				t.Errorf("sp=%s %s: got %q, want %q", sp, op, got, want)
			}
		}
	}
	s := verifiedSAS(t, "sv=2019-02-02&tn=MyTable&se=2025-01-02&sp=raud")
	wantCode(t, s.Authorize(GetEntity, "MYTABLE"), "")
	wantCode(t, s.Authorize(GetEntity, "other"), azerr.AuthorizationFailure)
	wantCode(t, s.Authorize(GetEntity, ""), azerr.AuthorizationFailure)
	wantCode(t, s.Authorize(Batch, ""), "")
	wantCode(t, s.Authorize(Batch, "mytable"), "")
	wantCode(t, s.Authorize(Batch, "other"), azerr.AuthorizationFailure)
	wantCode(t, s.Authorize(Operation(0), "mytable"), azerr.AuthorizationFailure)
	wantCode(t, s.Authorize(Operation(99), "mytable"), azerr.AuthorizationFailure)
}

// accountNeeds is auth.md §8, written out independently of sasRules: resource type and the
// letters of which one is needed (resource 0 = never allowed).
var accountNeeds = map[Operation]struct {
	res byte
	any string
}{
	GetServiceProperties: {'s', "r"}, SetServiceProperties: {'s', "w"}, GetServiceStats: {'s', "r"},
	QueryTables: {'c', "l"}, GetTable: {'c', "rl"}, CreateTable: {'c', "acw"}, DeleteTable: {'c', "d"},
	GetACL: {0, ""}, SetACL: {0, ""},
	QueryEntities: {'o', "r"}, GetEntity: {'o', "r"}, InsertEntity: {'o', "a"},
	UpdateEntity: {'o', "u"}, MergeEntity: {'o', "u"}, InsertOrReplace: {'o', "au"},
	InsertOrMerge: {'o', "au"}, DeleteEntity: {'o', "d"}, Batch: {'o', ""},
}

// TestAuthorizeAccountSAS tries every operation with every resource-type set and every single
// permission letter.
func TestAuthorizeAccountSAS(t *testing.T) {
	for _, srt := range []string{"s", "c", "o", "sc", "so", "co", "sco"} {
		for _, letter := range allLetters {
			s := verifiedSAS(t, "sv=2019-02-02&ss=bt&se=2025-01-02&srt="+srt+"&sp="+string(letter))
			for _, op := range allOperations {
				var want azerr.Code
				need := accountNeeds[op]
				switch {
				case op == Preflight:
				case need.res == 0:
					want = azerr.AuthorizationFailure
				case !strings.ContainsRune(srt, rune(need.res)):
					want = azerr.AuthorizationResourceTypeMismatch
				case need.any != "" && !strings.ContainsRune(need.any, letter):
					want = azerr.AuthorizationPermissionMismatch
				}
				if got := codeOf(s.Authorize(op, "anytable")); got != want {
					t.Errorf("srt=%s sp=%c %s: got %q, want %q", srt, letter, op, got, want)
				}
			}
		}
	}
	s := verifiedSAS(t, "sv=2019-02-02&ss=bq&srt=sco&sp=rwdlacu&se=2025-01-02")
	for _, op := range allOperations {
		want := azerr.AuthorizationServiceMismatch
		if op == Preflight {
			want = ""
		}
		wantCode(t, s.Authorize(op, "t"), want)
	}
}

func TestAuthorizeUnverified(t *testing.T) {
	s := newSAS(t, "sv=2019-02-02&tn=t&sp=raud&se=2025-01-02&spk=a")
	wantCode(t, s.Authorize(GetEntity, "t"), azerr.AuthenticationFailed)
	wantCode(t, s.CheckKey("b", ""), azerr.AuthenticationFailed)
	// A failed Verify revokes an earlier success.
	wantCode(t, s.Verify(devAccount(), SASRequest{Now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}), "")
	wantCode(t, s.Authorize(GetEntity, "t"), "")
	wantCode(t, s.CheckKey("", ""), azerr.AuthorizationFailure)
	wantCode(t, s.CheckKey("b", ""), "")
	wantCode(t, s.Verify(devAccount(), SASRequest{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}), azerr.AuthenticationFailed)
	wantCode(t, s.Authorize(GetEntity, "t"), azerr.AuthenticationFailed)
}
