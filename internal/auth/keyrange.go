package auth

import (
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/keys"
)

// KeyBound is one inclusive end of a SAS key range.
//
// As a lower bound it admits (PK, RK) with PK > PartitionKey, or PK == PartitionKey and (no
// RowKey bound or RK ≥ RowKey). As an upper bound it admits PK < PartitionKey, or
// PK == PartitionKey and (no RowKey bound or RK ≤ RowKey): without a RowKey the whole
// partition is included.
type KeyBound struct {
	PartitionKey string
	RowKey       string
	HasRowKey    bool
}

// KeyRange returns the SAS's key range for the query engine to intersect with its plan; a nil
// bound is unbounded. Account SAS tokens have no range. Empty spk/epk count as absent.
func (s *SAS) KeyRange() (start, end *KeyBound) {
	if s.Kind != ServiceSAS {
		return nil, nil
	}
	if s.StartPK != "" {
		start = &KeyBound{PartitionKey: s.StartPK, RowKey: s.StartRK, HasRowKey: s.StartRK != ""}
	}
	if s.EndPK != "" {
		end = &KeyBound{PartitionKey: s.EndPK, RowKey: s.EndRK, HasRowKey: s.EndRK != ""}
	}
	return start, end
}

// InRange reports whether the entity (pk, rk) lies inside the SAS key range (auth.md §7.4),
// comparing keys in UTF-16 code-unit order.
func (s *SAS) InRange(pk, rk string) bool {
	start, end := s.KeyRange()
	if start != nil {
		c := keys.CompareOrdinal(pk, start.PartitionKey)
		if c < 0 || (c == 0 && start.HasRowKey && keys.CompareOrdinal(rk, start.RowKey) < 0) {
			return false
		}
	}
	if end != nil {
		c := keys.CompareOrdinal(pk, end.PartitionKey)
		if c > 0 || (c == 0 && end.HasRowKey && keys.CompareOrdinal(rk, end.RowKey) > 0) {
			return false
		}
	}
	return true
}

// CheckKey is the write-side range check: 403 AuthorizationFailure when (pk, rk) is outside
// the range of a verified SAS (auth.md §7.4; the code is unverified against Azure).
func (s *SAS) CheckKey(pk, rk string) error {
	if !s.verified {
		return authFailed("SAS used before verification")
	}
	if !s.InRange(pk, rk) {
		return fail(azerr.AuthorizationFailure, "the entity is outside the SAS key range")
	}
	return nil
}
