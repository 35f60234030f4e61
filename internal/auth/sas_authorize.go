package auth

import (
	"strings"

	"github.com/tablo/tablo/internal/azerr"
)

// Authorize checks that a verified SAS allows op on table (auth.md §7.2 steps 6–7, §7.3, §8).
//
// table is the table the request addresses; it is compared with tn case-insensitively and is
// ignored for account SAS tokens. For Batch, table may be "" (the $batch URL names none): only
// the outer request is checked, and the caller must Authorize (and CheckKey) every
// sub-operation with its own table. Preflight passes for any verified SAS (the server should
// not authenticate OPTIONS at all).
//
// Errors (403): AuthorizationFailure (service SAS on a table- or service-level operation, tn
// names another table, account SAS on Get/Set ACL), AuthorizationPermissionMismatch,
// AuthorizationServiceMismatch (ss lacks t), AuthorizationResourceTypeMismatch; an unverified
// SAS is AuthenticationFailed.
func (s *SAS) Authorize(op Operation, table string) error {
	if !s.verified {
		return authFailed("SAS used before verification")
	}
	rule, ok := ruleOf(op)
	if !ok {
		return fail(azerr.AuthorizationFailure, "unknown operation "+op.String())
	}
	if op == Preflight {
		return nil
	}
	if s.Kind == AccountSAS {
		return s.authorizeAccount(op, rule)
	}
	if rule.serviceDenied {
		return fail(azerr.AuthorizationFailure, op.String()+" is not allowed with a "+s.Service.String()+" SAS")
	}
	// A queue or blob SAS signs the resource the URL names (Verify), so only a table SAS,
	// whose tn is a parameter, needs comparing.
	if s.Service == ServiceTable && (table != "" || op != Batch) && !strings.EqualFold(table, s.TableName) {
		return fail(azerr.AuthorizationFailure, "the SAS is for table "+s.TableName)
	}
	if !s.perm.has(rule.service) {
		return fail(azerr.AuthorizationPermissionMismatch, op.String()+" needs permission "+rule.service)
	}
	return nil
}

func (s *SAS) authorizeAccount(op Operation, rule sasRule) error {
	if strings.IndexByte(s.Services, s.Service.letter()) < 0 {
		return fail(azerr.AuthorizationServiceMismatch, "ss does not include the "+s.Service.String()+" service")
	}
	if rule.resource == 0 {
		return fail(azerr.AuthorizationFailure, op.String()+" is not allowed with an account SAS")
	}
	if strings.IndexByte(s.ResourceTypes, rule.resource) < 0 {
		return fail(azerr.AuthorizationResourceTypeMismatch, op.String()+" needs resource type "+string(rule.resource))
	}
	if rule.account != "" && !s.perm.hasAny(rule.account) {
		return fail(azerr.AuthorizationPermissionMismatch, op.String()+" needs one of the permissions "+rule.account)
	}
	return nil
}
