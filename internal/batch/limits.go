package batch

// Limits bounds the work Parse does on untrusted input. Zero fields take the defaults.
type Limits struct {
	// MaxBodyBytes caps the whole $batch body (Azure: 4 MiB → 413 RequestBodyTooLarge).
	MaxBodyBytes int
	// MaxOperations caps the sub-requests in one changeset (Azure: 100).
	MaxOperations int
	// MaxBoundaryLen caps a multipart boundary (RFC 2046: 70 characters).
	MaxBoundaryLen int
	// MaxHeaderBytes caps one header block, request line included.
	MaxHeaderBytes int
	// MaxHeaders caps the fields in one header block.
	MaxHeaders int
}

// Default limits, from Azure's documented limits and RFC 2046.
const (
	DefaultMaxBodyBytes   = 4 << 20
	DefaultMaxOperations  = 100
	DefaultMaxBoundaryLen = 70
	DefaultMaxHeaderBytes = 32 << 10
	DefaultMaxHeaders     = 100
)

// withDefaults returns l with every zero or negative field replaced by its default.
func (l Limits) withDefaults() Limits {
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.MaxBodyBytes, DefaultMaxBodyBytes)
	set(&l.MaxOperations, DefaultMaxOperations)
	set(&l.MaxBoundaryLen, DefaultMaxBoundaryLen)
	set(&l.MaxHeaderBytes, DefaultMaxHeaderBytes)
	set(&l.MaxHeaders, DefaultMaxHeaders)
	return l
}
