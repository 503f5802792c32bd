package parser

import (
	"reflect"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"SELECT 1", []string{"SELECT 1"}},
		{"SELECT 1;", []string{"SELECT 1"}},
		{"SELECT 1; SELECT 2", []string{"SELECT 1", " SELECT 2"}},
		{"SELECT 'a;b'; SELECT \"c;\\\";d\"", []string{"SELECT 'a;b'", " SELECT \"c;\\\";d\""}},
		{"SELECT `x;y` FROM t; DO 1", []string{"SELECT `x;y` FROM t", " DO 1"}},
		{"SELECT 1 -- one; two\n; SELECT 2 # three; four", []string{"SELECT 1 -- one; two\n", " SELECT 2 # three; four"}},
		{"SELECT /* ; */ 1;;  ; /* only a comment; */ ;SELECT 2", []string{"SELECT /* ; */ 1", "SELECT 2"}},
		{"SELECT 'it''s;'; SELECT 2", []string{"SELECT 'it''s;'", " SELECT 2"}},
		{"SELECT 'unterminated; SELECT 2", []string{"SELECT 'unterminated; SELECT 2"}},
		{"  ;  ", nil},
	} {
		if got := Split(tc.sql); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Split(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}
