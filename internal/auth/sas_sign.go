package auth

import (
	"encoding/base64"
	"strings"
)

// StringToSign returns the string a client signs for this SAS on account (the plain account
// name: never the emulator path prefix, never "-secondary").
//
// Service SAS, sv ≥ 2015-04-05:
//
//	sp \n st \n se \n /table/{account}/{lower(tn)} \n si \n sip \n spr \n sv \n spk \n srk \n epk \n erk
//
// Service SAS, 2013-08-15 ≤ sv < 2015-04-05:
//
//	sp \n st \n se \n /{account}/{lower(tn)} \n si \n sv \n spk \n srk \n epk \n erk
//
// Account SAS (with a trailing newline; ses only from sv 2020-12-06):
//
//	account \n sp \n ss \n srt \n st \n se \n sip \n spr \n sv \n [ses \n]
func (s *SAS) StringToSign(account string) string {
	var fields []string
	switch {
	case s.Kind == AccountSAS:
		fields = []string{account, s.Permissions, s.Services, s.ResourceTypes, s.Start, s.Expiry, s.IP, s.Protocol, s.Version}
		if s.Version >= sesVersion {
			fields = append(fields, s.EncryptionScope)
		}
		fields = append(fields, "") // trailing newline
	case s.Version >= sipSprVersion:
		fields = []string{s.Permissions, s.Start, s.Expiry, "/table/" + account + "/" + strings.ToLower(s.TableName),
			s.Identifier, s.IP, s.Protocol, s.Version, s.StartPK, s.StartRK, s.EndPK, s.EndRK}
	default:
		fields = []string{s.Permissions, s.Start, s.Expiry, "/" + account + "/" + strings.ToLower(s.TableName),
			s.Identifier, s.Version, s.StartPK, s.StartRK, s.EndPK, s.EndRK}
	}
	return strings.Join(fields, "\n")
}

// Sign sets Signature to the signature of the SAS on account with key (for tests and clients).
func (s *SAS) Sign(account string, key []byte) {
	s.Signature = base64.StdEncoding.EncodeToString(mac(key, s.StringToSign(account)))
}
