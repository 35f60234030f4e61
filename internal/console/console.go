// Package console serves Tablo's web console: a browser front end (embedded, no network at
// run time) and a small JSON back end that calls the storage services as the account owner.
//
// The browser never holds an account key. It calls /api/{table,queue,blob}/{account}/..., and
// the back end forwards the request over loopback to that service's endpoint, signed with the
// account's key (SharedKeyLite). Everything else it needs (partition statistics, server facts) comes from
// in-process sources passed in Options.
//
// Security: a request from a non-loopback address (or any request when Options.RequireLogin
// is set) must first sign in with an account name and key or with the start-up token; the
// session is an HttpOnly, SameSite=Strict cookie. Every request that changes state carries
// the session's CSRF token in X-CSRF-Token.
package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tablo/tablo/internal/auth"
)

//go:embed assets
var assets embed.FS

// Options configures the console.
type Options struct {
	// Accounts are the accounts the console may act as (the server's accounts).
	Accounts []auth.Account
	// TableURL is the Table endpoint's base, e.g. "http://127.0.0.1:10002" (path style).
	TableURL string
	// QueueURL is the Queue endpoint's base ("" when the Queue service is not served).
	QueueURL string
	// BlobURL is the Blob endpoint's base ("" when the Blob service is not served).
	BlobURL string
	// Partitions serves the partition layer's admin API (GET /partitions); nil hides the view.
	Partitions http.Handler
	// Version and Engine are shown on the Server view.
	Version, Engine string
	// Started is when the server started (uptime).
	Started time.Time
	// RequireLogin asks every request, loopback or not, to sign in first (set it when the
	// listener is exposed beyond loopback).
	RequireLogin bool
	// Token, when set, is a start-up token that signs in as the first account.
	Token string
	// Client forwards requests to the services; nil means a client with a 60 s timeout.
	Client *http.Client
}

// Console is the console's http.Handler.
type Console struct {
	o    Options
	mux  *http.ServeMux
	mu   sync.Mutex
	sess map[string]session // session id -> session
	// loopCSRF is the CSRF token of loopback requests that need no session.
	loopCSRF string
}

type session struct {
	csrf    string
	account string // the account signed in as; "" = all
	expires time.Time
}

const (
	cookieName = "tablo_console"
	sessionTTL = 12 * time.Hour
)

// New returns the console.
func New(o Options) *Console {
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 60 * time.Second}
	}
	if o.Started.IsZero() {
		o.Started = time.Now()
	}
	c := &Console{o: o, mux: http.NewServeMux(), sess: map[string]session{}, loopCSRF: randomToken()}
	static, _ := fs.Sub(assets, "assets") // constant path, known to exist
	files := http.FileServerFS(static)
	c.mux.Handle("GET /", files)
	c.mux.HandleFunc("POST /api/login", c.login)
	c.mux.HandleFunc("POST /api/logout", c.logout)
	c.mux.HandleFunc("GET /api/session", c.session)
	c.mux.HandleFunc("GET /api/server", c.server)
	c.mux.HandleFunc("GET /api/partitions", c.partitions)
	table := c.forward("table", auth.ServiceTable, func() string { return c.o.TableURL })
	queue := c.forward("queue", auth.ServiceQueue, func() string { return c.o.QueueURL })
	blob := c.forward("blob", auth.ServiceBlob, func() string { return c.o.BlobURL })
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "MERGE", "PATCH", "DELETE"} {
		c.mux.HandleFunc(m+" /api/table/{account}/{rest...}", table)
		c.mux.HandleFunc(m+" /api/queue/{account}", queue)
		c.mux.HandleFunc(m+" /api/queue/{account}/{rest...}", queue)
		c.mux.HandleFunc(m+" /api/blob/{account}", blob)
		c.mux.HandleFunc(m+" /api/blob/{account}/{rest...}", blob)
	}
	return c
}

// ServeHTTP checks the caller (session, CSRF) and serves the console.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	// Scripts only from the console itself: no inline script can run even if a value escaped.
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'")
	if !strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/api/login" {
		if r.URL.Path == "/api/login" && !c.sameOrigin(r) {
			apiError(w, http.StatusForbidden, "CrossOrigin", "cross-origin request refused")
			return
		}
		c.mux.ServeHTTP(w, r)
		return
	}
	s, ok := c.caller(r)
	if !ok {
		apiError(w, http.StatusUnauthorized, "SignInRequired", "sign in with an account name and key, or the start-up token")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		tok := r.Header.Get("X-CSRF-Token")
		if tok == "" || !hmac.Equal([]byte(tok), []byte(s.csrf)) || !c.sameOrigin(r) {
			apiError(w, http.StatusForbidden, "CSRFTokenMismatch", "missing or wrong X-CSRF-Token")
			return
		}
	}
	c.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessKey{}, s)))
}

type sessKey struct{}

// caller is the request's session: a signed-in cookie, or the implicit loopback session.
func (c *Console) caller(r *http.Request) (session, bool) {
	if ck, err := r.Cookie(cookieName); err == nil {
		c.mu.Lock()
		s, ok := c.sess[ck.Value]
		if ok && time.Now().After(s.expires) {
			delete(c.sess, ck.Value)
			ok = false
		}
		c.mu.Unlock()
		if ok {
			return s, true
		}
	}
	// Loopback callers need no sign-in, but only under a loopback Host: a page on another
	// site whose name was rebound to 127.0.0.1 sends its own name as Host.
	if !c.o.RequireLogin && isLoopback(r.RemoteAddr) && loopbackHost(r.Host) {
		return session{csrf: c.loopCSRF}, true
	}
	return session{}, false
}

// sameOrigin refuses a request whose Origin (sent by browsers on cross-origin and on
// state-changing requests) names another host than the one addressed.
func (c *Console) sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	_, host, ok := strings.Cut(o, "://")
	return ok && host == r.Host
}

// loopbackHost reports whether a Host header names this machine by a loopback name.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return host == "localhost" || isLoopback(host)
}

func isLoopback(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// NewToken returns a fresh random start-up token.
func NewToken() string { return randomToken() }

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b)
}

func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	var in struct{ Account, Key, Token string }
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<10)).Decode(&in); err != nil {
		apiError(w, http.StatusBadRequest, "InvalidInput", "a JSON body {account,key} or {token}")
		return
	}
	account, ok := "", false
	switch {
	case in.Token != "":
		ok = c.o.Token != "" && hmac.Equal([]byte(in.Token), []byte(c.o.Token))
	default:
		key, err := base64.StdEncoding.DecodeString(in.Key)
		if err == nil {
			for _, a := range c.o.Accounts {
				if a.Name != in.Account {
					continue
				}
				for _, k := range a.Keys {
					if hmac.Equal(k, key) {
						account, ok = a.Name, true
					}
				}
			}
		}
	}
	if !ok {
		apiError(w, http.StatusForbidden, "AuthenticationFailed", "wrong account name, key or token")
		return
	}
	id := randomToken()
	s := session{csrf: randomToken(), account: account, expires: time.Now().Add(sessionTTL)}
	c.mu.Lock()
	for k, v := range c.sess { // drop expired sessions so the map stays bounded by use
		if time.Now().After(v.expires) {
			delete(c.sess, k)
		}
	}
	c.sess[id] = s
	c.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: int(sessionTTL / time.Second)})
	writeJSON(w, map[string]any{"ok": true})
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	if ck, err := r.Cookie(cookieName); err == nil {
		c.mu.Lock()
		delete(c.sess, ck.Value)
		c.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1})
	writeJSON(w, map[string]any{"ok": true})
}

// accounts lists the account names the session may use.
func (c *Console) accounts(s session) []string {
	var out []string
	for _, a := range c.o.Accounts {
		if s.account == "" || s.account == a.Name {
			out = append(out, a.Name)
		}
	}
	return out
}

func (c *Console) session(w http.ResponseWriter, r *http.Request) {
	s := r.Context().Value(sessKey{}).(session)
	writeJSON(w, map[string]any{
		"csrf": s.csrf, "accounts": c.accounts(s), "partitions": c.o.Partitions != nil,
		"services": c.services(),
	})
}

// services names the services the console can reach.
func (c *Console) services() []string {
	var out []string
	if c.o.TableURL != "" {
		out = append(out, "table")
	}
	if c.o.QueueURL != "" {
		out = append(out, "queue")
	}
	if c.o.BlobURL != "" {
		out = append(out, "blob")
	}
	return out
}

func apiError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}
