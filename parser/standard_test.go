package parser

import (
	"reflect"
	"strings"
	"testing"
)

func TestLocalSelect(t *testing.T) {
	sysvar := func(col, name string, scope Scope) Field {
		return Field{Column: col, Expr: Expr{Kind: ExprSysVar, Name: name, Scope: scope}}
	}
	fn := func(col, name string) Field { return Field{Column: col, Expr: Expr{Kind: ExprFunc, Name: name}} }
	lit := func(col string, kind LiteralKind, v string) Field {
		return Field{Column: col, Expr: Expr{Kind: ExprLiteral, Lit: kind, Value: v}}
	}
	tests := []struct {
		sql   string
		want  []Field
		limit int64 // -1: none
	}{
		{"SELECT @@version_comment LIMIT 1", []Field{sysvar("@@version_comment", "version_comment", ScopeDefault)}, 1},
		{"SELECT DATABASE()", []Field{fn("DATABASE()", "database")}, -1},
		{"select database()", []Field{fn("database()", "database")}, -1},
		{"SELECT @@max_allowed_packet,@@system_time_zone,@@time_zone,@@auto_increment_increment", []Field{
			sysvar("@@max_allowed_packet", "max_allowed_packet", ScopeDefault),
			sysvar("@@system_time_zone", "system_time_zone", ScopeDefault),
			sysvar("@@time_zone", "time_zone", ScopeDefault),
			sysvar("@@auto_increment_increment", "auto_increment_increment", ScopeDefault)}, -1},
		{"SELECT VERSION()", []Field{fn("VERSION()", "version")}, -1},
		{"SELECT 1", []Field{lit("1", LitInt, "1")}, -1},
		{"SELECT USER()", []Field{fn("USER()", "user")}, -1},
		{"SELECT CONNECTION_ID()", []Field{fn("CONNECTION_ID()", "connection_id")}, -1},
		{"SELECT @@session.auto_increment_increment AS auto_increment_increment, @@GLOBAL.Max_Connections",
			[]Field{sysvar("auto_increment_increment", "auto_increment_increment", ScopeSession),
				sysvar("@@GLOBAL.Max_Connections", "max_connections", ScopeGlobal)}, -1},
		{"SELECT @@local.time_zone tz", []Field{sysvar("tz", "time_zone", ScopeSession)}, -1},
		{"SELECT 'abc', \"d\"\"e\", 'x' AS y, NULL, -2, 1.50, -1e3, 18446744073709551615", []Field{
			lit("abc", LitString, "abc"), lit(`d"e`, LitString, `d"e`), lit("y", LitString, "x"), lit("NULL", LitNull, ""),
			lit("-2", LitInt, "-2"), lit("1.50", LitDecimal, "1.50"), lit("-1e3", LitFloat, "-1000"),
			lit("18446744073709551615", LitInt, "18446744073709551615")}, -1},
		{"SELECT current_user, NOW()  LIMIT 0;", []Field{fn("current_user", "current_user"), fn("NOW()", "now")}, 0},
		{"/* mysql-connector-j */ SELECT  @@session.transaction_read_only", []Field{sysvar("@@session.transaction_read_only", "transaction_read_only", ScopeSession)}, -1},
	}
	for _, tt := range tests {
		st, err := Classify(tt.sql)
		if err != nil || st.Kind != LocalSelect {
			t.Errorf("Classify(%q) = %+v, %v; want LocalSelect", tt.sql, st, err)
			continue
		}
		got := st.Select.Fields
		for i := range got {
			if got[i].Expr.Text == "" {
				t.Errorf("Classify(%q) field %d has no Text", tt.sql, i)
			}
			got[i].Expr.Text = ""
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Classify(%q) fields\n got %+v\nwant %+v", tt.sql, got, tt.want)
		}
		if st.Select.HasLimit != (tt.limit >= 0) || tt.limit >= 0 && st.Select.Limit != uint64(tt.limit) {
			t.Errorf("Classify(%q) limit = %v %d, want %d", tt.sql, st.Select.HasLimit, st.Select.Limit, tt.limit)
		}
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		sql  string
		want []Assignment
	}{
		{"SET NAMES utf8mb4", []Assignment{{Name: "names", Value: Expr{Kind: ExprLiteral, Lit: LitString, Value: "utf8mb4"}}}},
		{"SET NAMES 'utf8mb4' COLLATE 'utf8mb4_general_ci'", []Assignment{{Name: "names", Collate: "utf8mb4_general_ci",
			Value: Expr{Kind: ExprLiteral, Lit: LitString, Value: "utf8mb4"}}}},
		{"SET CHARACTER SET utf8", []Assignment{{Name: "character set", Value: Expr{Kind: ExprLiteral, Lit: LitString, Value: "utf8"}}}},
		{"set autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')", []Assignment{
			{Name: "autocommit", Value: Expr{Kind: ExprLiteral, Lit: LitInt, Value: "1"}},
			{Name: "sql_mode", Value: Expr{Kind: ExprOther}}}},
		{"SET @@GLOBAL.max_connections = 10, @x = 'a', SESSION net_write_timeout = @@net_read_timeout", []Assignment{
			{Name: "max_connections", Scope: ScopeGlobal, Value: Expr{Kind: ExprLiteral, Lit: LitInt, Value: "10"}},
			{Name: "x", User: true, Value: Expr{Kind: ExprLiteral, Lit: LitString, Value: "a"}},
			{Name: "net_write_timeout", Value: Expr{Kind: ExprSysVar, Name: "net_read_timeout"}}}},
	}
	for _, tt := range tests {
		st, err := Classify(tt.sql)
		if err != nil || st.Kind != Set {
			t.Errorf("Classify(%q) = %+v, %v; want Set", tt.sql, st, err)
			continue
		}
		got := st.Set
		for i := range got {
			got[i].Value.Text = ""
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Classify(%q)\n got %+v\nwant %+v", tt.sql, got, tt.want)
		}
	}
}

func TestShowAndUse(t *testing.T) {
	tests := []struct {
		sql  string
		kind Kind
		show *Show
		db   string
	}{
		{"SHOW WARNINGS", ShowWarnings, &Show{}, ""},
		{"SHOW ERRORS", ShowWarnings, &Show{Errors: true}, ""},
		{"SHOW DATABASES", ShowDatabases, &Show{}, ""},
		{"SHOW DATABASES LIKE 'inf%'", ShowDatabases, &Show{HasLike: true, Like: "inf%"}, ""},
		{"SHOW VARIABLES LIKE 'lower_case_table_names'", ShowVariables, &Show{HasLike: true, Like: "lower_case_table_names"}, ""},
		{"SHOW GLOBAL VARIABLES LIKE 'x\\_y'", ShowVariables, &Show{Global: true, HasLike: true, Like: `x\_y`}, ""},
		{"SHOW SESSION VARIABLES", ShowVariables, &Show{}, ""},
		{"USE `my db`", Use, nil, "my db"},
		{"use test;", Use, nil, "test"},
	}
	for _, tt := range tests {
		st, err := Classify(tt.sql)
		if err != nil || st.Kind != tt.kind || !reflect.DeepEqual(st.Show, tt.show) || st.DB != tt.db {
			t.Errorf("Classify(%q) = %+v (show %+v), %v; want %v %+v %q", tt.sql, st, st.Show, err, tt.kind, tt.show, tt.db)
		}
	}
}

// TestClassifier checks that the pooled Classifier agrees with Classify, also
// when used from several goroutines (run with -race to check the pool).
func TestClassifier(t *testing.T) {
	c := NewClassifier()
	sqls := []string{"SELECT @@version_comment LIMIT 1", "SET NAMES utf8", "SHOW WARNINGS", "USE x", "SELECT 1 FROM t",
		"SELECT " + strings.Repeat("9", 100) + ".5"} // a parser that panicked is not put back
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- true }()
			for i := 0; i < 50; i++ {
				for _, sql := range sqls {
					got, err1 := c.Classify(sql)
					want, err2 := Classify(sql)
					if err1 != nil || err2 != nil || !reflect.DeepEqual(got, want) {
						t.Errorf("Classifier.Classify(%q) = %+v, %v; Classify = %+v, %v", sql, got, err1, want, err2)
						return
					}
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}
