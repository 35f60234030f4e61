package blob

import (
	"context"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// A block list of exactly 50,000 blocks commits; one more is 409 BlockCountExceedsLimit.
func TestPutBlockListCountLimit(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "count", "", nil)
	r := Ref{Account: "a", Container: "count", Name: "b"}
	if _, err := s.PutBlock(ctx, r, "QUFB", body0([]byte("x")), Cond{}); err != nil {
		t.Fatal(err)
	}
	list := make([]BlockRef, MaxCommittedBlocks+1)
	for i := range list {
		list[i] = BlockRef{ID: "QUFB", Where: "Latest"}
	}
	if _, err := s.PutBlockList(ctx, r, list, PutRequest{}); !azerr.Is(err, azerr.BlockCountExceedsLimit) {
		t.Errorf("%d blocks: %v", len(list), err)
	}
	b, err := s.PutBlockList(ctx, r, list[:MaxCommittedBlocks], PutRequest{})
	if err != nil || b.Size != MaxCommittedBlocks {
		t.Fatalf("%d blocks: %v", MaxCommittedBlocks, err)
	}
}

// Get Block List answers the blob's committed and staged blocks, and refuses a missing
// container, a lease id without a lease and a failing condition.
func TestGetBlockListAnswers(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	s.CreateContainer(ctx, "a", "lists", "", nil)
	r := Ref{Account: "a", Container: "lists", Name: "b"}
	s.PutBlock(ctx, r, "QUFB", body0([]byte("ab")), Cond{})
	s.PutBlock(ctx, r, "QkJC", body0([]byte("cde")), Cond{})
	b, committed, uncommitted, err := s.GetBlockList(ctx, r, Cond{})
	if err != nil || b != nil || len(committed) != 0 || len(uncommitted) != 2 || uncommitted[0].ID != "QUFB" || uncommitted[0].Size != 2 || uncommitted[1].Size != 3 {
		t.Fatalf("staged only: %v %v %v %v", b, committed, uncommitted, err)
	}
	if _, err := s.PutBlockList(ctx, r, []BlockRef{{ID: "QkJC", Where: "Latest"}}, PutRequest{}); err != nil {
		t.Fatal(err)
	}
	b, committed, uncommitted, err = s.GetBlockList(ctx, r, Cond{})
	if err != nil || b == nil || b.Size != 3 || len(committed) != 1 || committed[0].ID != "QkJC" || len(uncommitted) != 0 {
		t.Fatalf("committed: %v %v %v %v", b, committed, uncommitted, err)
	}
	if _, _, _, err := s.GetBlockList(ctx, Ref{Account: "a", Container: "none", Name: "b"}, Cond{}); !azerr.Is(err, azerr.ContainerNotFound) {
		t.Errorf("missing container: %v", err)
	}
	if _, _, _, err := s.GetBlockList(ctx, r, Cond{LeaseID: "aaaaaaaa-0000-4000-8000-000000000001"}); !azerr.Is(err, azerr.LeaseNotPresentWithBlobOperation) {
		t.Errorf("lease id without a lease: %v", err)
	}
	if _, _, _, err := s.GetBlockList(ctx, r, Cond{IfMatch: `"0x1"`}); !azerr.Is(err, azerr.ConditionNotMet) {
		t.Errorf("failing If-Match: %v", err)
	}
	if _, _, _, err := s.GetBlockList(ctx, Ref{Account: "a", Container: "lists", Name: "none"}, Cond{}); !azerr.Is(err, azerr.BlobNotFound) {
		t.Errorf("missing blob: %v", err)
	}
}

// Sequence number conditions of 0 are conditions: le 0, lt 0 and eq 0 all fail on a blob
// whose sequence number is 5.
func TestSeqCondZero(t *testing.T) {
	for _, c := range []SeqCond{{LE: 0, LT: -1, EQ: -1}, {LE: -1, LT: 0, EQ: -1}, {LE: -1, LT: -1, EQ: 0}} {
		if err := c.check(5); !azerr.Is(err, azerr.SequenceNumberConditionNotMet) {
			t.Errorf("%+v on 5: %v", c, err)
		}
	}
	if err := (SeqCond{LE: 0, LT: 1, EQ: 0}).check(0); err != nil {
		t.Errorf("conditions of 0 and 1 on 0: %v", err)
	}
}
