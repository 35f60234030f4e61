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
// Queue service SAS (sv ≥ 2015-04-05; before: no sip/spr and resource /{account}/{queue}):
//
//	sp \n st \n se \n /queue/{account}/{queue} \n si \n sip \n spr \n sv
//
// Blob service SAS (sr and the snapshot time from sv 2018-11-09, ses from 2020-12-06):
//
//	sp \n st \n se \n /blob/{account}/{container}[/{blob}] \n si \n sip \n spr \n sv \n
//	sr \n snapshotTime \n ses \n rscc \n rscd \n rsce \n rscl \n rsct
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
	case s.Service == ServiceQueue && s.Version >= sipSprVersion:
		fields = []string{s.Permissions, s.Start, s.Expiry, "/queue/" + account + "/" + s.ResourceName,
			s.Identifier, s.IP, s.Protocol, s.Version}
	case s.Service == ServiceQueue:
		fields = []string{s.Permissions, s.Start, s.Expiry, "/" + account + "/" + s.ResourceName, s.Identifier, s.Version}
	case s.Service == ServiceBlob:
		fields = []string{s.Permissions, s.Start, s.Expiry, "/blob/" + account + "/" + s.ResourceName,
			s.Identifier, s.IP, s.Protocol, s.Version}
		if s.Version >= blobSrVersion {
			fields = append(fields, s.Resource, s.SnapshotTime)
		}
		if s.Version >= sesVersion {
			fields = append(fields, s.EncryptionScope)
		}
		fields = append(fields, s.CacheControl, s.ContentDisposition, s.ContentEncoding, s.ContentLanguage, s.ContentType)
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
