package batch

import (
	"fmt"

	"github.com/tablo/tablo/internal/azerr"
)

// OpError is a failure that belongs to one operation of a changeset. The server reports it as
// the single failed sub-response of a 202 response (Failed(e.Index, e, …)), not as the status
// of the whole request. Err wraps an *azerr.Error, so azerr.From and azerr.Is see through it.
type OpError struct {
	Index int // 0-based position of the operation in the changeset
	Err   error
}

func (e *OpError) Error() string { return fmt.Sprintf("batch: operation %d: %v", e.Index, e.Err) }

func (e *OpError) Unwrap() error { return e.Err }

// invalid returns a whole-request InvalidInput error whose wrapping text says what was wrong;
// clients only see Azure's generic message.
func invalid(format string, args ...any) error {
	return fmt.Errorf("batch: "+format+": %w", append(args, azerr.New(azerr.InvalidInput))...)
}

// opInvalid is invalid for operation i.
func opInvalid(i int, format string, args ...any) error {
	return &OpError{Index: i, Err: invalid(format, args...)}
}

// tooManyOperations is Azure's answer to a changeset of more than limit operations. The index
// follows the real service's recorded "99:" (Azurite says 0): the last operation that fits.
func tooManyOperations(limit int) error {
	return &OpError{
		Index: limit - 1,
		Err: azerr.Newf(azerr.InvalidInput,
			"The batch request operation exceeds the maximum %d changes per change set.", limit),
	}
}
