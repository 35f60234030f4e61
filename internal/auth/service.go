package auth

// Service is the storage service a request addresses. It selects the Shared Key flavour,
// the SAS canonical resource, the SAS and stored-policy permission letters, and the
// account SAS ss letter.
type Service uint8

// The services. The zero value is the Table service, so that callers written before there
// were several services keep their meaning.
const (
	ServiceTable Service = iota
	ServiceQueue
	ServiceBlob
)

func (s Service) String() string {
	switch s {
	case ServiceQueue:
		return "queue"
	case ServiceBlob:
		return "blob"
	}
	return "table"
}

// letter is the service's letter in an account SAS's ss.
func (s Service) letter() byte {
	switch s {
	case ServiceQueue:
		return 'q'
	case ServiceBlob:
		return 'b'
	}
	return 't'
}

// policyLetters are the permission letters of the service's stored access policies.
func (s Service) policyLetters() string {
	switch s {
	case ServiceQueue:
		return queueLetters
	case ServiceBlob:
		return containerLetters
	}
	return tableLetters
}
