package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Configuration errors speak YAML: the key, its line, what it wants.
func TestConfigErrorsSpeakYAML(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want       []string // each in the error; none: the file is accepted
		notWant    []string
	}{
		{name: "unknown key", yaml: "listen: 127.0.0.1:0\nupstream: \"\"\nlisten_addr: x\n",
			want: []string{`unknown key "listen_addr" at line 3, did you mean "listen"? (known: listen, upstream, users, auth, `,
				// fileConfig's own keys after the inline server.Config's
				", server_version, nodes, self_node_id, ", ", snapshots, sql)"},
			notWant: []string{"main.fileConfig", "field "}},
		{name: "unknown key in a list item, inline keys known", yaml: "nodes:\n  - {id: 5, kind: tikv, host: h, http_port: 1, http_pasword: x}\n",
			want: []string{`unknown key "http_pasword" in nodes[0] at line 2, did you mean "http_password"? (known: id, kind, host, http_port, binary, role, http_user, http_password, http_password_file, http_password_env)`}},
		{name: "unknown key nested", yaml: "tls: {cert: a.pem, kee: b.pem}\n",
			want: []string{`unknown key "kee" in tls at line 1, did you mean "key"? (known: `, "cert", "key"}},
		{name: "unknown key, nothing near", yaml: "timeouts:\n  connect: 1s\n  zzz: 1s\n",
			want: []string{`unknown key "zzz" in timeouts at line 3 (known: connect, `}, notWant: []string{"did you mean"}},
		{name: "duration word", yaml: "timeouts:\n  connect: thirty\n",
			want: []string{`timeouts.connect at line 2: want a duration like "30s" or "1m30s", got "thirty"`}, notWant: []string{"time.Duration", "!!str"}},
		{name: "duration without unit", yaml: "node_timeout: 30\n",
			want: []string{`node_timeout at line 1: want a duration like "30s" or "1m30s", got 30 (a number: add a unit, s, m or h)`}},
		{name: "duration in a list item", yaml: "schedules:\n  - {node: 1, every: 5}\n",
			want: []string{`schedules[0].every at line 2: want a duration like "30s"`}},
		{name: "number", yaml: "max_connections: many\n",
			want: []string{`max_connections at line 1: want a whole number, got "many"`}, notWant: []string{"int"}},
		{name: "number, not a list", yaml: "max_dumps: [1, 2]\n",
			want: []string{`max_dumps at line 1: want a whole number, got a list`}},
		{name: "bool", yaml: "self_profile_active: maybe\n",
			want: []string{`self_profile_active at line 1: want true or false, got "maybe"`}},
		{name: "list", yaml: "symbol_path: /srv/debug\n",
			want: []string{`symbol_path at line 1: want a list of strings, got "/srv/debug" (a list is [/srv/debug] or one "- item" per line)`}},
		{name: "list of mappings", yaml: "nodes: 10001\n",
			want: []string{`nodes at line 1: want a list of mappings, got 10001`}},
		{name: "mapping", yaml: "discovery: monitor\n",
			want: []string{`discovery at line 1: want a mapping (key: value, or {key: value, ...}), got "monitor"`}},
		{name: "string, not a mapping", yaml: "listen: {host: a}\n",
			want: []string{`listen at line 1: want a string, got a mapping`}},
		{name: "the whole file", yaml: "- listen\n",
			want: []string{`the file at line 1: want a mapping`}},
		{name: "every problem", yaml: "listen_addr: x\ntimeouts: {connect: soon}\nmax_dumps: lots\n",
			want: []string{"3 problems:\n  unknown key \"listen_addr\" at line 1", "\n  timeouts.connect at line 2: want a duration", "\n  max_dumps at line 3: want a whole number"}},
		{name: "syntax error", yaml: "listen: [\n", want: []string{"line "}},
		{name: "duplicate key", yaml: "listen: a\nlisten: b\n", want: []string{`"listen" already defined`}},
		{name: "empty file", yaml: ""},
		{name: "only comments", yaml: "# nothing yet\n"},
		{name: "null values", yaml: "listen:\nnodes:\ntimeouts:\n"},
		{name: "anchor under an unknown key", yaml: "x-common: &c {kind: tikv, http_port: 20180}\n", want: []string{`unknown key "x-common"`}},
		{name: "merge key", yaml: "nodes:\n  - &n {id: 5, kind: tikv, host: h, http_port: 1}\n  - {<<: *n, id: 6}\n"},
		{name: "numbers into strings", yaml: "listen: 9030\nprofile_users: [1, root]\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "heapproxy.yaml")
			if err := os.WriteFile(f, []byte(c.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := defaultFileConfig()
			err := loadConfig(f, &cfg)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %q", c.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "config "+f+": ") {
				t.Errorf("error does not name the file: %s", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(msg, w) {
					t.Errorf("error has %q:\n%s", w, msg)
				}
			}
		})
	}
}

// The binary: a bad configuration exits 1 with the YAML message alone.
func TestConfigErrorFromBinary(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "heapproxy.yaml")
	if err := os.WriteFile(f, []byte("listen: 127.0.0.1:0\nupstream:\nlisten_addr: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", f}, "heapproxy: config " + f + `: unknown key "listen_addr" at line 3, did you mean "listen"? (known: listen, upstream, `},
		{[]string{"--config", filepath.Join(dir, "missing.yaml")}, "heapproxy: config: open " + filepath.Join(dir, "missing.yaml") + ": no such file or directory\n"},
	} {
		stdout, stderr, code := runBinary(t, c.args...)
		if code != 1 || stdout != "" || !strings.HasPrefix(stderr, c.want) {
			t.Errorf("heapproxy %s: exit %d, stderr:\n%s\nwant exit 1 and %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
		if strings.Contains(stderr, "usage:") {
			t.Errorf("a configuration error printed the usage:\n%s", stderr)
		}
	}
}
