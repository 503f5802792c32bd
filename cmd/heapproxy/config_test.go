package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// HTTP credentials for nodes: in the YAML, in a file of their own or in an
// environment variable; never printed.
func TestNodeHTTPCredentials(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HEAPPROXY_TEST_PW", "from-env")
	for _, c := range []struct {
		name, yaml, want, wantErr string
	}{
		{"inline", "http_password: inline-pw", "inline-pw", ""},
		{"file", "http_password_file: " + pwFile, "from-file", ""},
		{"env", "http_password_env: HEAPPROXY_TEST_PW", "from-env", ""},
		{"unset env", "http_password_env: HEAPPROXY_TEST_NOPE", "", "HEAPPROXY_TEST_NOPE is not set"},
		{"two sources", "http_password: a, http_password_env: HEAPPROXY_TEST_PW", "", "set one of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conf := filepath.Join(dir, c.name+".yaml")
			body := fmt.Sprintf("nodes:\n  - {id: 10002, kind: doris, host: 127.0.0.1, http_port: 8040, http_user: root, %s}\n", c.yaml)
			if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := defaultFileConfig()
			if err := loadConfig(conf, &cfg); err != nil {
				t.Fatal(err)
			}
			nodes, _, err := cfg.nodes()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n := nodes[0]
			if n.HTTPUser != "root" || string(n.HTTPPassword) != c.want {
				t.Fatalf("node credentials %q/%q, want root/%q", n.HTTPUser, n.HTTPPassword, c.want)
			}
			if printed := fmt.Sprintf("%v %+v", n, n); strings.Contains(printed, c.want) {
				t.Fatalf("the password is printed: %s", printed)
			}
		})
	}
}
