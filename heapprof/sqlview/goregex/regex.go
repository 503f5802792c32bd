// Package regex takes the place of github.com/dolthub/go-icu-regex (see the
// replace directive in heapproxy's go.mod) under go-mysql-server's REGEXP,
// REGEXP_LIKE, REGEXP_INSTR, REGEXP_SUBSTR and REGEXP_REPLACE.
//
// The original runs ICU compiled to WebAssembly and compiles that module when
// the package initializes: ~100 ms and ~10 MB in every heapproxy process,
// including each `heapproxy dot` run, for a function BI queries over heap
// snapshots rarely call. This one is Go's regexp: RE2 syntax, which is the
// common part of ICU's, PCRE's (MariaDB) and MySQL 8's syntax except
// backreferences and lookaround, and matching in time linear in the input, so
// a pattern sent by a client cannot stall the proxy. Positions count
// characters, as MySQL's do.
package regex

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/src-d/go-errors.v1"
)

// Regex is the interface go-mysql-server uses: set a pattern, then a text,
// then ask. A Regex is used by one goroutine at a time.
type Regex interface {
	// SetRegexString compiles the pattern for the later calls.
	SetRegexString(ctx context.Context, regexStr string, flags RegexFlags) error
	// SetMatchString sets the text the later calls search.
	SetMatchString(ctx context.Context, matchStr string) error
	// IndexOf returns the 1-based character position of the start (or, with
	// endIndex, one past the end) of the occurrence-th match at or after the
	// 1-based character position start; 0 when there is none.
	IndexOf(ctx context.Context, start int, occurrence int, endIndex bool) (int, error)
	// Matches reports whether there is an occurrence-th match at or after
	// the 0-based character position start.
	Matches(ctx context.Context, start int, occurrence int) (bool, error)
	// Replace returns the text with the occurrence-th match (every match
	// when occurrence is 0) at or after the 1-based position start replaced;
	// $n in the replacement stands for group n, \c for the character c.
	Replace(ctx context.Context, replacementStr string, start int, occurrence int) (string, error)
	// Substring returns the occurrence-th match at or after the 1-based
	// position start, and whether there is one.
	Substring(ctx context.Context, start int, occurrence int) (string, bool, error)
	// Close releases the Regex.
	Close() error
}

// RegexFlags select matching modes; the values are ICU's, which is what
// go-mysql-server passes.
type RegexFlags uint32

const (
	RegexFlags_None             RegexFlags = 0
	RegexFlags_Unix_Lines       RegexFlags = 1
	RegexFlags_Case_Insensitive RegexFlags = 2
	RegexFlags_Comments         RegexFlags = 4
	RegexFlags_Multiline        RegexFlags = 8
	RegexFlags_Literal          RegexFlags = 16
	RegexFlags_Dot_All          RegexFlags = 32
)

var (
	// ErrRegexNotYetSet is returned when a call needs a pattern and none was set.
	ErrRegexNotYetSet = errors.NewKind("SetRegexString must be called before any other function")
	// ErrMatchNotYetSet is returned when a call needs a text and none was set.
	ErrMatchNotYetSet = errors.NewKind("SetMatchString must be called as there is nothing to match against")
	// ErrInvalidRegex is returned for a pattern that does not compile; the
	// message says why (RE2 syntax: no backreferences, no lookaround).
	ErrInvalidRegex = errors.NewKind("the given regular expression is invalid: %s")
	// ErrPosition is returned for a start position past the end of the text.
	ErrPosition = errors.NewKind("regular expression position %d is past the end of the %d-character string")
)

// SetRegexLeakHandler exists for go-mysql-server, which installs a handler
// for ICU regexes that were never closed. A Go regexp holds no memory
// outside the Go heap, so there is nothing to leak and the handler is unused.
func SetRegexLeakHandler(func()) {}

// CreateRegex returns an empty Regex. The buffer size was a hint for ICU's
// string buffers and has no use here.
func CreateRegex(uint32) Regex { return &goRegex{} }

type goRegex struct {
	pattern string         // the user's pattern with its flags, as a group
	re      *regexp.Regexp // pattern as compiled
	// from holds the pattern behind a prefix that skips a number of
	// characters, for searches that start past the beginning (Go's regexp
	// has no start offset that keeps ^ and \b looking at the whole text).
	from    map[int]*regexp.Regexp
	text    string
	textSet bool
}

func (g *goRegex) SetRegexString(_ context.Context, pattern string, flags RegexFlags) error {
	if flags&RegexFlags_Literal != 0 {
		pattern = regexp.QuoteMeta(pattern)
	}
	var mode string
	if flags&RegexFlags_Case_Insensitive != 0 {
		mode += "i"
	}
	if flags&RegexFlags_Multiline != 0 {
		mode += "m"
	}
	if flags&RegexFlags_Dot_All != 0 {
		mode += "s"
	}
	// Unix_Lines needs nothing: RE2 knows only \n as a line end.
	if flags&RegexFlags_Comments != 0 {
		return ErrInvalidRegex.New("comment mode (x) is not supported")
	}
	grouped := "(?:" + pattern + ")"
	if mode != "" {
		grouped = "(?" + mode + ":" + pattern + ")"
	}
	re, err := regexp.Compile(grouped)
	if err != nil {
		return ErrInvalidRegex.New(strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	*g = goRegex{pattern: grouped, re: re, text: g.text, textSet: g.textSet}
	return nil
}

func (g *goRegex) SetMatchString(_ context.Context, text string) error {
	if g.re == nil {
		return ErrRegexNotYetSet.New()
	}
	g.text, g.textSet = text, true
	return nil
}

func (g *goRegex) IndexOf(_ context.Context, start int, occurrence int, endIndex bool) (int, error) {
	m, err := g.find(start-1, occurrence)
	if m == nil || err != nil {
		return 0, err
	}
	at := m[0]
	if endIndex {
		at = m[1]
	}
	return utf8.RuneCountInString(g.text[:at]) + 1, nil
}

func (g *goRegex) Matches(_ context.Context, start int, occurrence int) (bool, error) {
	m, err := g.find(start, occurrence)
	return m != nil, err
}

func (g *goRegex) Substring(_ context.Context, start int, occurrence int) (string, bool, error) {
	m, err := g.find(start-1, occurrence)
	if m == nil || err != nil {
		return "", false, err
	}
	return g.text[m[0]:m[1]], true, nil
}

func (g *goRegex) Replace(_ context.Context, replacement string, start int, occurrence int) (string, error) {
	if err := g.ready(start - 1); err != nil {
		return "", err
	}
	var out strings.Builder
	copied := 0 // bytes of text already in out
	pos := start - 1
	for n := 1; ; n++ {
		m, err := g.first(pos)
		if err != nil {
			return "", err
		}
		if m == nil {
			break
		}
		if occurrence == 0 || n == occurrence {
			out.WriteString(g.text[copied:m[0]])
			expand(&out, replacement, g.text, m)
			copied = m[1]
			if occurrence != 0 {
				break
			}
		}
		if pos = g.next(m); pos < 0 {
			break
		}
	}
	out.WriteString(g.text[copied:])
	return out.String(), nil
}

func (g *goRegex) Close() error { return nil }

// ready checks that a pattern and a text are set and that the 0-based
// character position start lies within the text (or just past it).
func (g *goRegex) ready(start int) error {
	if g.re == nil {
		return ErrRegexNotYetSet.New()
	}
	if !g.textSet {
		return ErrMatchNotYetSet.New()
	}
	if n := utf8.RuneCountInString(g.text); start < 0 || start > n {
		return ErrPosition.New(start+1, n)
	}
	return nil
}

// find returns the submatch byte offsets of the occurrence-th match (the
// first when occurrence < 2) at or after the 0-based character position
// start, or nil.
func (g *goRegex) find(start, occurrence int) ([]int, error) {
	if err := g.ready(start); err != nil {
		return nil, err
	}
	pos := start
	for n := 1; ; n++ {
		m, err := g.first(pos)
		if m == nil || err != nil || n >= occurrence {
			return m, err
		}
		if pos = g.next(m); pos < 0 {
			return nil, nil
		}
	}
}

// next is the character position the search after match m starts at, as
// ICU's findNext: the match's end, one further after an empty match; -1 past
// the end of the text.
func (g *goRegex) next(m []int) int {
	pos := utf8.RuneCountInString(g.text[:m[1]])
	if m[0] == m[1] {
		if m[1] == len(g.text) {
			return -1
		}
		pos++
	}
	return pos
}

// first returns the submatch byte offsets of the leftmost match starting at
// or after the 0-based character position pos.
func (g *goRegex) first(pos int) ([]int, error) {
	if pos == 0 {
		return g.re.FindStringSubmatchIndex(g.text), nil
	}
	re, err := g.skipping(pos)
	if err != nil {
		return nil, err
	}
	m := re.FindStringSubmatchIndex(g.text)
	if m == nil {
		return nil, nil
	}
	return m[2:], nil // group 1 is the user's pattern, its groups follow
}

// skipping compiles \A(?s:.{n})(?s:.*?)(pattern): anchored at the text's
// start, it steps over n characters and then as few as it can, so group 1 is
// the leftmost match at or after character n, with ^, $ and \b still seeing
// the whole text. RE2 caps a repeat count at 1000, hence
// the nesting; a pattern too large to compile is an error.
func (g *goRegex) skipping(n int) (*regexp.Regexp, error) {
	if re := g.from[n]; re != nil {
		return re, nil
	}
	var skip strings.Builder
	skip.WriteString(`\A(?s:`)
	if n > 1000 {
		skip.WriteString("(?:.{1000}){" + strconv.Itoa(n/1000) + "}")
	}
	skip.WriteString(".{" + strconv.Itoa(n%1000) + "}.*?)(" + g.pattern + ")")
	re, err := regexp.Compile(skip.String())
	if err != nil {
		return nil, ErrInvalidRegex.New("searching from position " + strconv.Itoa(n+1) + ": " + err.Error())
	}
	if g.from == nil {
		g.from = make(map[int]*regexp.Regexp)
	}
	g.from[n] = re
	return re, nil
}

// expand writes replacement with $n replaced by group n of match m (the
// longest run of digits that names a group) and \c by c, as ICU does.
func expand(out *strings.Builder, replacement, text string, m []int) {
	groups := len(m)/2 - 1
	for i := 0; i < len(replacement); i++ {
		c := replacement[i]
		switch {
		case c == '\\' && i+1 < len(replacement):
			i++
			out.WriteByte(replacement[i])
		case c == '$' && i+1 < len(replacement) && replacement[i+1] >= '0' && replacement[i+1] <= '9':
			group, j := 0, i+1
			for j < len(replacement) && replacement[j] >= '0' && replacement[j] <= '9' {
				g := group*10 + int(replacement[j]-'0')
				if g > groups && j > i+1 {
					break
				}
				group = g
				j++
			}
			if group <= groups && m[2*group] >= 0 {
				out.WriteString(text[m[2*group]:m[2*group+1]])
			}
			i = j - 1
		default:
			out.WriteByte(c)
		}
	}
}
