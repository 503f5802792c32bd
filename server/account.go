package server

import (
	"fmt"
	"slices"
	"strings"
)

// Account is who a session is logged in as, for profile_users.
type Account struct {
	User, Host string
	// Domain: Host is a domain name, StarRocks' and Doris' 'user'@['domain'].
	Domain bool
	// Known is false until the account was learned; such a session may
	// not profile.
	Known bool
}

// String is the account as MySQL writes it ('user'@'host').
func (a Account) String() string {
	switch {
	case !a.Known:
		return "(unknown account)"
	case a.Host == "":
		return fmt.Sprintf("'%s'", a.User)
	case a.Domain:
		return fmt.Sprintf("'%s'@['%s']", a.User, a.Host)
	}
	return fmt.Sprintf("'%s'@'%s'", a.User, a.Host)
}

// parseAccount reads an account as an upstream's CURRENT_USER() writes it.
// MySQL and MariaDB write user@host unquoted; a user name may hold '@', a
// host never does. StarRocks and Doris FEs write 'user'@'host', or
// 'user'@['domain'] for a domain account (UserIdentity.toString, evaluated
// for CURRENT_USER() by StarRocks' analyzer and Doris' planners). The quoted
// form is taken only when both parts are quoted, so a MySQL account would
// need quotes in its user and its host names to be read as another.
func parseAccount(s string) (Account, error) {
	if a, ok := parseQuotedAccount(s); ok {
		return a, nil
	}
	i := strings.LastIndexByte(s, '@')
	if i < 0 {
		return Account{}, fmt.Errorf("CURRENT_USER() %q is not user@host", s)
	}
	return Account{User: s[:i], Host: s[i+1:], Known: true}, nil
}

func parseQuotedAccount(s string) (Account, bool) {
	if len(s) < 2 || s[0] != '\'' {
		return Account{}, false
	}
	var a Account
	if i := strings.LastIndex(s, "'@['"); i > 0 && strings.HasSuffix(s, "']") && len(s) >= i+6 {
		a = Account{User: s[1:i], Host: s[i+4 : len(s)-2], Domain: true, Known: true}
	} else if i := strings.LastIndex(s, "'@'"); i > 0 && strings.HasSuffix(s, "'") && len(s) >= i+4 {
		a = Account{User: s[1:i], Host: s[i+3 : len(s)-1], Known: true}
	} else {
		return Account{}, false
	}
	// Doris 1.2 and 2.0 name every user but root and admin
	// default_cluster:user (ClusterNamespace; dropped by apache/doris#27718).
	a.User = strings.TrimPrefix(a.User, "default_cluster:")
	return a, true
}

// MayProfile tells whether an account may run the profiling statements
// and read profile data. An entry of ProfileUsers names a user ("ops",
// any host) or a user at one host as the upstream writes it in
// CURRENT_USER(): "ops@10.0.0.%" (MySQL, MariaDB) or "'ops'@'10.0.0.%'"
// (StarRocks, Doris; also "'ops'@['domain']"), either form for either
// upstream. The account is the one that was authenticated: heapproxy's own
// user under auth: local and on the embedded default, else the upstream's
// answer to CURRENT_USER(), never just the name the client typed (an
// anonymous account accepts any name).
func (c *Config) MayProfile(a Account) bool {
	if !a.Known {
		return false
	}
	return slices.ContainsFunc(c.ProfileUsers, func(entry string) bool {
		if entry == a.User {
			return true
		}
		if !strings.Contains(entry, "@") {
			return false
		}
		e, err := parseAccount(entry)
		return err == nil && e.User == a.User && e.Host == a.Host && e.Domain == a.Domain
	})
}

// checkProfileUsers refuses an entry that starts as a quoted account but is
// not one, which would otherwise never match anyone.
func checkProfileUsers(entries []string) error {
	for i, e := range entries {
		if strings.HasPrefix(e, "'") {
			if _, ok := parseQuotedAccount(e); !ok {
				return fmt.Errorf("profile_users[%d] %q: write a quoted account as 'user'@'host' or 'user'@['domain'], or the user's name alone", i, e)
			}
		}
	}
	return nil
}
