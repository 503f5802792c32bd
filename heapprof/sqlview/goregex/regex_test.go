package regex

import (
	"context"
	"strings"
	"testing"
)

// The cases are MySQL 8's documented examples of the REGEXP functions (whose
// arguments go-mysql-server passes on unchanged) and the edges around them.
func TestFunctions(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, text, pattern string
		flags               RegexFlags
		call                func(Regex) (any, error)
		want                any
	}{
		{"instr first", "dog cat dog", "dog", 0, instr(1, 1, false), 1},
		{"instr from 2", "dog cat dog", "dog", 0, instr(2, 1, false), 9},
		{"instr a{2}", "aa aaa aaaa", "a{2}", 0, instr(1, 1, false), 1},
		{"instr a{4}", "aa aaa aaaa", "a{4}", 0, instr(1, 1, false), 8},
		{"instr end of second", "dog cat dog", "dog", 0, instr(1, 2, true), 12},
		{"instr none", "dog cat dog", "cow", 0, instr(1, 1, false), 0},
		{"instr overlapping start", "aaaa", "aa", 0, instr(2, 1, false), 2},
		{"instr caret only at text start", "aXa", "^a", 0, instr(2, 1, false), 0},
		{"instr caret multiline", "x\na", "^a", RegexFlags_Multiline, instr(2, 1, false), 3},
		{"instr word boundary sees text before start", "ab b", `\bb`, 0, instr(2, 1, false), 4},
		{"instr counts characters", "ñandú x", "x", 0, instr(1, 1, false), 7},
		{"instr past 1000 characters", strings.Repeat("a", 1500) + "b", "b", 0, instr(1200, 1, false), 1501},
		{"like", "Michael!", ".*", 0, like, true},
		{"like anchored", "a", "^[a-d]", 0, like, true},
		{"like no", "new*\n*line", `new\*.\*line`, 0, like, false},
		{"like dot all", "new*\n*line", `new\*.\*line`, RegexFlags_Dot_All, like, true},
		{"like case", "CamelCase", "CAMELCASE", 0, like, false},
		{"like case insensitive", "CamelCase", "CAMELCASE", RegexFlags_Case_Insensitive, like, true},
		{"like literal", "a.c", "a.c", RegexFlags_Literal, like, true},
		{"like literal no", "abc", "a.c", RegexFlags_Literal, like, false},
		{"replace", "a b c", "b", 0, replace("X", 1, 0), "a X c"},
		{"replace third", "abc def ghi", "[a-z]+", 0, replace("X", 1, 3), "abc def X"},
		{"replace all from 5", "abc def ghi", "[a-z]+", 0, replace("X", 5, 0), "abc X X"},
		{"replace none", "abc", "x", 0, replace("X", 1, 0), "abc"},
		{"replace group", "abc", "(b)", 0, replace("[$1]", 1, 0), "a[b]c"},
		{"replace escaped dollar", "abc", "b", 0, replace(`\$1`, 1, 0), "a$1c"},
		{"replace empty matches", "abc", "", 0, replace("-", 1, 0), "-a-b-c-"},
		{"substr", "abc def ghi", "[a-z]+", 0, substr(1, 1), "abc"},
		{"substr third", "abc def ghi", "[a-z]+", 0, substr(1, 3), "ghi"},
		{"substr none", "abc def ghi", "[0-9]+", 0, substr(1, 1), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			re := CreateRegex(0)
			defer re.Close()
			if err := re.SetRegexString(ctx, tt.pattern, tt.flags); err != nil {
				t.Fatal(err)
			}
			if err := re.SetMatchString(ctx, tt.text); err != nil {
				t.Fatal(err)
			}
			got, err := tt.call(re)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("%q on %q: got %#v, want %#v", tt.pattern, tt.text, got, tt.want)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	re := CreateRegex(0)
	if _, err := re.Matches(ctx, 0, 0); !ErrRegexNotYetSet.Is(err) {
		t.Errorf("no pattern: %v", err)
	}
	err := re.SetRegexString(ctx, `(a`, 0)
	if !ErrInvalidRegex.Is(err) || !strings.Contains(err.Error(), "missing closing )") {
		t.Errorf("unbalanced pattern: %v", err)
	}
	err = re.SetRegexString(ctx, `(?=a)`, 0)
	if !ErrInvalidRegex.Is(err) || !strings.Contains(err.Error(), "(?=") {
		t.Errorf("lookahead: %v", err)
	}
	if err := re.SetRegexString(ctx, "a", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := re.Matches(ctx, 0, 0); !ErrMatchNotYetSet.Is(err) {
		t.Errorf("no text: %v", err)
	}
	if err := re.SetMatchString(ctx, "abc"); err != nil {
		t.Fatal(err)
	}
	if _, err := re.IndexOf(ctx, 5, 1, false); !ErrPosition.Is(err) || !strings.Contains(err.Error(), "position 5") {
		t.Errorf("position past the end: %v", err)
	}
	if got, err := re.IndexOf(ctx, 4, 1, false); got != 0 || err != nil {
		t.Errorf("position just past the end: %d, %v; want 0, nil", got, err)
	}
}

func instr(start, occurrence int, end bool) func(Regex) (any, error) {
	return func(re Regex) (any, error) { return re.IndexOf(context.Background(), start, occurrence, end) }
}

func like(re Regex) (any, error) { return re.Matches(context.Background(), 0, 0) }

func replace(with string, start, occurrence int) func(Regex) (any, error) {
	return func(re Regex) (any, error) { return re.Replace(context.Background(), with, start, occurrence) }
}

func substr(start, occurrence int) func(Regex) (any, error) {
	return func(re Regex) (any, error) {
		s, ok, err := re.Substring(context.Background(), start, occurrence)
		if !ok {
			return nil, err
		}
		return s, err
	}
}
