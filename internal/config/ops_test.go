package config

import (
	"io"
	"strings"
	"testing"
)

func TestOpsFlags(t *testing.T) {
	c, err := Load(nil, env(nil), io.Discard)
	if err != nil || c.AdminAddr != "127.0.0.1:10010" || c.TLS() || c.OAuth != "off" {
		t.Fatalf("defaults: %+v %v", c.Ops, err)
	}
	c, err = Load([]string{"--admin-port", "-1"}, env(nil), io.Discard)
	if err != nil || c.AdminAddr != "" {
		t.Fatalf("admin off: %+v %v", c.Ops, err)
	}
	c, err = Load([]string{"--admin-host", "::1", "--admin-port", "0"}, env(nil), io.Discard)
	if err != nil || c.AdminAddr != "[::1]:0" {
		t.Fatalf("admin host: %+v %v", c.Ops, err)
	}
	c, err = Load([]string{"--tls-self-signed", "--oauth", "Basic"}, env(nil), io.Discard)
	if err != nil || !c.TLSSelfSigned || c.OAuth != "basic" {
		t.Fatalf("self-signed + oauth: %+v %v", c.Ops, err)
	}
	c, err = Load(nil, env(map[string]string{"TABLO_TLS_SELF_SIGNED": "Yes", "TABLO_OAUTH": "basic", "TABLO_ADMIN_PORT": "9999"}), io.Discard)
	if err != nil || !c.TLSSelfSigned || c.OAuth != "basic" || c.AdminAddr != "127.0.0.1:9999" {
		t.Fatalf("env: %+v %v", c.Ops, err)
	}
	c, err = Load([]string{"--cert", "c.pem", "--key", "k.pem"}, env(nil), io.Discard)
	if err != nil || !c.TLS() {
		t.Fatalf("cert files: %+v %v", c.Ops, err)
	}
	for _, bad := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--cert", "c.pem"}, nil, "--cert and --key"},
		{[]string{"--cert", "c.pem", "--key", "k.pem", "--tls-self-signed"}, nil, "exclude"},
		{[]string{"--oauth", "basic"}, nil, "needs HTTPS"},
		{[]string{"--oauth", "full", "--tls-self-signed"}, nil, "basic"},
		{[]string{"--admin-port", "x"}, nil, "--admin-port"},
		{[]string{"--admin-port", "-2"}, nil, "--admin-port"},
		{nil, map[string]string{"TABLO_TLS_SELF_SIGNED": "maybe"}, "TABLO_TLS_SELF_SIGNED"},
	} {
		_, err := Load(bad.args, env(bad.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v %v: %v, want %q", bad.args, bad.env, err, bad.want)
		}
	}
}

func TestHelpPrintsOpsFlags(t *testing.T) {
	var out strings.Builder
	_, _ = Load([]string{"-h"}, env(nil), &out)
	if strings.Contains(out.String(), "panic") || !strings.Contains(out.String(), "-tls-self-signed") || !strings.Contains(out.String(), "-admin-port") {
		t.Fatalf("help:\n%s", out.String())
	}
}
