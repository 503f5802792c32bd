package server

import (
	"testing"
)

func TestParseAccount(t *testing.T) {
	cases := []struct {
		in   string
		want Account
	}{
		// MySQL and MariaDB (sql/item_strfunc.cc: user@host, unquoted).
		{"root@localhost", Account{User: "root", Host: "localhost", Known: true}},
		{"ops@10.0.0.%", Account{User: "ops", Host: "10.0.0.%", Known: true}},
		{"@localhost", Account{User: "", Host: "localhost", Known: true}}, // anonymous
		{"a@b@%", Account{User: "a@b", Host: "%", Known: true}},
		// StarRocks and Doris FEs (UserIdentity.toString).
		{"'root'@'%'", Account{User: "root", Host: "%", Known: true}},
		{"'ops'@'10.0.0.%'", Account{User: "ops", Host: "10.0.0.%", Known: true}},
		{"'o@p'@'%'", Account{User: "o@p", Host: "%", Known: true}},
		{"'ops'@['fe.example.com']", Account{User: "ops", Host: "fe.example.com", Domain: true, Known: true}},
		{"'default_cluster:ops'@'%'", Account{User: "ops", Host: "%", Known: true}}, // Doris 1.2, 2.0
		// Quoted only in part: a MySQL user whose name has quotes.
		{"'root'@%", Account{User: "'root'", Host: "%", Known: true}},
		{"root@'%'", Account{User: "root", Host: "'%'", Known: true}},
	}
	for _, c := range cases {
		got, err := parseAccount(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseAccount(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "root", "'root'"} {
		if a, err := parseAccount(bad); err == nil {
			t.Errorf("parseAccount(%q) = %+v, want an error", bad, a)
		}
	}
}

// profile_users entries match the authenticated account in either form,
// whichever upstream wrote it.
func TestMayProfileEntryForms(t *testing.T) {
	mysqlOps, _ := parseAccount("ops@10.0.0.%")
	feOps, _ := parseAccount("'ops'@'10.0.0.%'")
	feDomain, _ := parseAccount("'ops'@['fe.example.com']")
	cases := []struct {
		entry string
		a     Account
		want  bool
	}{
		{"ops", mysqlOps, true},
		{"ops", feOps, true},
		{"ops", feDomain, true},
		{"ops@10.0.0.%", feOps, true},
		{"'ops'@'10.0.0.%'", mysqlOps, true},
		{"'ops'@'10.0.0.%'", feOps, true},
		{"ops@10.0.0.%", feDomain, false},
		{"'ops'@['fe.example.com']", feDomain, true},
		{"ops@fe.example.com", feDomain, false}, // an IP pattern is not the domain
		{"ops@%", feOps, false},
		{"'root'", feOps, false},
		{"ops", Account{User: "ops"}, false}, // not learned
	}
	for _, c := range cases {
		cfg := Config{ProfileUsers: []string{c.entry}}
		if got := cfg.MayProfile(c.a); got != c.want {
			t.Errorf("entry %q, account %s: MayProfile %v, want %v", c.entry, c.a, got, c.want)
		}
	}
}

func TestProfileUsersQuotedEntryChecked(t *testing.T) {
	for _, entry := range []string{"'ops", "'ops'", "'ops'@10.0.0.1", "'ops'@['x'"} {
		cfg := DefaultConfig()
		cfg.ProfileUsers = []string{"root", entry}
		if err := cfg.Validate(); err == nil {
			t.Errorf("profile_users %q accepted", entry)
		}
	}
	cfg := DefaultConfig()
	cfg.ProfileUsers = []string{"ops", "ops@10.%", "'ops'@'10.%'", "'ops'@['fe.example.com']"}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}

// In front of a StarRocks or Doris FE, whose CURRENT_USER() is
// 'user'@'host', the account is learned and profile_users by name matches
// it (until 2026-11-25 the quotes stayed in the name, and no one in front
// of an FE could profile).
func TestProfileUsersInFrontOfStarRocksFE(t *testing.T) {
	for _, c := range []struct {
		currentUser string
		entries     []string
		wantErr     bool
	}{
		{"'monitor'@'%'", []string{"monitor"}, false},
		{"'monitor'@'%'", []string{"'monitor'@'%'"}, false},
		{"'monitor'@'10.0.0.%'", []string{"monitor@10.0.0.%"}, false},
		{"'monitor'@'%'", []string{"monitor@10.0.0.%"}, true},
		{"'monitor'@['fe.example.com']", []string{"'monitor'@['fe.example.com']"}, false},
	} {
		fe := &fakeFE{currentUser: c.currentUser}
		srv := startProxy(t, Config{Upstream: fe.serve(t), ProfileUsers: c.entries})
		db := openSchema(t, srv.Addr().String(), "monitor", "pw", "", "")
		_, err := queryLines(t, db, adminSQL("FRONTEND", "has_enable()"))
		if c.wantErr {
			wantMySQLError(t, err, 1227, "42000", "account "+c.currentUser+" (logged in as 'monitor') may not run ADMIN EXECUTE HeapProf")
		} else if err != nil {
			t.Errorf("CURRENT_USER() %s, profile_users %q: %v", c.currentUser, c.entries, err)
		}
	}
}
