package auth

import (
	"net/url"
	"testing"
	"time"
)

// The queue and blob SAS worked examples of the wire reference (dev key).
func TestServiceSASExamples(t *testing.T) {
	key := DevAccount().Keys[0]
	cases := []struct {
		name string
		s    SAS
		sts  string
		sig  string
	}{
		{"queue service", SAS{Kind: ServiceSAS, Service: ServiceQueue, ResourceName: "myqueue", Permissions: "raup",
			Start: "2025-01-01T00:00:00Z", Expiry: "2025-01-02T00:00:00Z", Protocol: "https,http", Version: "2021-02-12"},
			"raup\n2025-01-01T00:00:00Z\n2025-01-02T00:00:00Z\n/queue/devstoreaccount1/myqueue\n\n\nhttps,http\n2021-02-12",
			"Ly/uBkT8dcg+P0uKoGm2xCE5HXDm32pR3dXmmwpTSFA="},
		{"account q", SAS{Kind: AccountSAS, Service: ServiceQueue, Permissions: "raup", Services: "q", ResourceTypes: "sco",
			Expiry: "2025-01-02T00:00:00Z", Protocol: "https,http", Version: "2019-02-02"},
			"devstoreaccount1\nraup\nq\nsco\n\n2025-01-02T00:00:00Z\n\nhttps,http\n2019-02-02\n",
			"2bvjKHOn2luOgVmO05SKHXryu2JpRiFbcyLz5rOQSi0="},
		{"blob sr=b", SAS{Kind: ServiceSAS, Service: ServiceBlob, Resource: "b", ResourceName: "mycontainer/dir1/hello.txt", Permissions: "r",
			Start: "2025-01-01T00:00:00Z", Expiry: "2025-01-02T00:00:00Z", Protocol: "https,http", Version: "2021-12-02"},
			"r\n2025-01-01T00:00:00Z\n2025-01-02T00:00:00Z\n/blob/devstoreaccount1/mycontainer/dir1/hello.txt\n\n\nhttps,http\n2021-12-02\nb\n\n\n\n\n\n\n",
			"YwqhBUSqMes7sDTkvASdSwYUCadpGJiTEpaoy7xk25I="},
		{"blob sr=c", SAS{Kind: ServiceSAS, Service: ServiceBlob, Resource: "c", ResourceName: "mycontainer", Permissions: "rl",
			Expiry: "2025-01-02T00:00:00Z", Version: "2021-12-02"},
			"rl\n\n2025-01-02T00:00:00Z\n/blob/devstoreaccount1/mycontainer\n\n\n\n2021-12-02\nc\n\n\n\n\n\n\n",
			"/FVd4NiQNeRFquUA1AXViXCntbpkNOgrSJSiQjj/p30="},
		{"account bq", SAS{Kind: AccountSAS, Service: ServiceBlob, Permissions: "rl", Services: "bq", ResourceTypes: "sco",
			Expiry: "2025-01-02T00:00:00Z", Protocol: "https,http", Version: "2021-12-02"},
			"devstoreaccount1\nrl\nbq\nsco\n\n2025-01-02T00:00:00Z\n\nhttps,http\n2021-12-02\n\n",
			"vMBsXWbMVhp6IMgK1EyOgYgANMcb1edtE3e9qt0p7Xs="},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.StringToSign("devstoreaccount1"); got != tc.sts {
				t.Fatalf("string-to-sign\n got %q\nwant %q", got, tc.sts)
			}
			tc.s.Sign("devstoreaccount1", key)
			if tc.s.Signature != tc.sig {
				t.Fatalf("sig %s, want %s", tc.s.Signature, tc.sig)
			}
		})
	}
}

// A queue SAS parsed from a query verifies against the queue the URL names, and only that
// queue; its letters map to the queue operations; a stored policy (si) supplies fields.
func TestQueueSASVerifyAuthorize(t *testing.T) {
	acct := DevAccount()
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	src := SAS{Kind: ServiceSAS, Service: ServiceQueue, ResourceName: "myqueue", Permissions: "rp",
		Expiry: "2025-01-02T00:00:00Z", Version: "2021-02-12"}
	src.Sign(acct.Name, acct.Keys[0])
	parse := func(q url.Values) *SAS {
		t.Helper()
		s, ok, err := ParseSASFor(ServiceQueue, q)
		if err != nil || !ok {
			t.Fatalf("parse: %v %v", ok, err)
		}
		return s
	}
	s := parse(src.Query())
	wantCode(t, s.Verify(&acct, SASRequest{Now: now, Resource: "otherqueue"}), "AuthenticationFailed")
	s = parse(src.Query())
	wantCode(t, s.Verify(&acct, SASRequest{Now: now, Resource: "myqueue"}), "")
	wantCode(t, s.Authorize(PeekMessages, ""), "")
	wantCode(t, s.Authorize(GetMessages, ""), "")
	wantCode(t, s.Authorize(DeleteMessage, ""), "")
	wantCode(t, s.Authorize(PutMessage, ""), "AuthorizationPermissionMismatch")
	wantCode(t, s.Authorize(ClearMessages, ""), "AuthorizationFailure")
	wantCode(t, s.Authorize(ListQueues, ""), "AuthorizationFailure")

	// si: the policy gives the permissions and expiry.
	pol := SAS{Kind: ServiceSAS, Service: ServiceQueue, ResourceName: "myqueue", Identifier: "p1", Version: "2021-02-12"}
	pol.Sign(acct.Name, acct.Keys[0])
	exp := now.Add(time.Hour)
	lookup := func(id string) (*AccessPolicy, bool) {
		if id == "p1" {
			return &AccessPolicy{Expiry: &exp, Permission: "a"}, true
		}
		return nil, false
	}
	s = parse(pol.Query())
	wantCode(t, s.Verify(&acct, SASRequest{Now: now, Resource: "myqueue", Policy: lookup}), "")
	wantCode(t, s.Authorize(PutMessage, ""), "")
	wantCode(t, s.Authorize(PeekMessages, ""), "AuthorizationPermissionMismatch")
	s = parse(pol.Query())
	wantCode(t, s.Verify(&acct, SASRequest{Now: exp.Add(time.Second), Resource: "myqueue", Policy: lookup}), "AuthenticationFailed")

	// A table letter is not a queue letter.
	bad := src
	bad.Permissions = "d"
	bad.Sign(acct.Name, acct.Keys[0])
	if _, _, err := ParseSASFor(ServiceQueue, bad.Query()); codeOf(err) != "AuthenticationFailed" {
		t.Fatalf("sp=d on a queue SAS: %v", err)
	}

	// Account SAS: ss must name the queue service.
	acc := SAS{Kind: AccountSAS, Service: ServiceQueue, Permissions: "l", Services: "t", ResourceTypes: "s",
		Expiry: "2025-01-02T00:00:00Z", Version: "2021-02-12"}
	acc.Sign(acct.Name, acct.Keys[0])
	s = parse(acc.Query())
	wantCode(t, s.Verify(&acct, SASRequest{Now: now}), "")
	wantCode(t, s.Authorize(ListQueues, ""), "AuthorizationServiceMismatch")
	acc.Services = "qt"
	acc.Sign(acct.Name, acct.Keys[0])
	s = parse(acc.Query())
	wantCode(t, s.Verify(&acct, SASRequest{Now: now}), "")
	wantCode(t, s.Authorize(ListQueues, ""), "")
	wantCode(t, s.Authorize(PutMessage, ""), "AuthorizationResourceTypeMismatch")
}

// Queue ACLs take the queue letters, in canonical order raup.
func TestQueueSignedIdentifiers(t *testing.T) {
	ids, err := ParseSignedIdentifiersFor(ServiceQueue, []byte(`<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Permission>pura</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`))
	if err != nil || ids[0].Policy.Permission != "raup" {
		t.Fatalf("%v %+v", err, ids)
	}
	if _, err := ParseSignedIdentifiersFor(ServiceQueue, []byte(`<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Permission>d</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`)); codeOf(err) != "InvalidXmlDocument" {
		t.Fatalf("d in a queue policy: %v", err)
	}
}

// The blob service SAS string-to-sign grows with sv: sr and the snapshot time from
// 2018-11-09 on, ses from 2020-12-06 on ("and later" in the service's documentation), so a
// token at exactly those versions signs the new fields and one a day older does not.
func TestSASVersionEdges(t *testing.T) {
	const res = "/blob/devstoreaccount1/c/b.txt"
	cases := []struct{ sv, sts string }{
		{"2018-03-28", "r\n\n2025-01-02T00:00:00Z\n" + res + "\n\n\n\n2018-03-28\n\n\n\n\n"},
		{"2018-11-09", "r\n\n2025-01-02T00:00:00Z\n" + res + "\n\n\n\n2018-11-09\nb\n\n\n\n\n\n"},
		{"2020-12-05", "r\n\n2025-01-02T00:00:00Z\n" + res + "\n\n\n\n2020-12-05\nb\n\n\n\n\n\n"},
		{"2020-12-06", "r\n\n2025-01-02T00:00:00Z\n" + res + "\n\n\n\n2020-12-06\nb\n\n\n\n\n\n\n"},
	}
	for _, tc := range cases {
		s := SAS{Kind: ServiceSAS, Service: ServiceBlob, Resource: "b", ResourceName: "c/b.txt", Permissions: "r",
			Expiry: "2025-01-02T00:00:00Z", Version: tc.sv}
		if got := s.StringToSign("devstoreaccount1"); got != tc.sts {
			t.Errorf("sv %s: string-to-sign\n got %q\nwant %q", tc.sv, got, tc.sts)
		}
	}
	// A queue SAS gains sip, spr and the /queue/ prefix at exactly 2015-04-05.
	for _, tc := range []struct{ sv, sts string }{
		{"2015-02-21", "r\n\n2025-01-02T00:00:00Z\n/devstoreaccount1/q\n\n2015-02-21"},
		{"2015-04-05", "r\n\n2025-01-02T00:00:00Z\n/queue/devstoreaccount1/q\n\n\n\n2015-04-05"},
	} {
		s := SAS{Kind: ServiceSAS, Service: ServiceQueue, ResourceName: "q", Permissions: "r", Expiry: "2025-01-02T00:00:00Z", Version: tc.sv}
		if got := s.StringToSign("devstoreaccount1"); got != tc.sts {
			t.Errorf("queue sv %s: string-to-sign\n got %q\nwant %q", tc.sv, got, tc.sts)
		}
	}
}
