package parser

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Method is a HeapProf method a script may call.
type Method int

// The supported methods, in the order the error hint lists them. A method is
// added by a constant here and a row in methodSpecs.
const (
	MethodEnableProf Method = iota + 1
	MethodDisableProf
	MethodHasEnable
	MethodSnapshot
	MethodToDotFormat
	MethodDumpDotSnapshot
	// heapproxy's extensions (not in StarRocks): snapshot history, diffs
	// and periodic capture, in the same statement form.
	MethodListSnapshots
	MethodDiffDotSnapshot
	MethodScheduleSnapshots
	MethodUnscheduleSnapshots
)

// ArgKind is the kind of one argument of a HeapProf call.
type ArgKind int

const (
	// ArgString is a Wren string literal; Arg.Str holds its decoded value.
	ArgString ArgKind = 1 << iota
	// ArgSnapshotCall is the nested call HeapProf.getInstance().snapshot():
	// the argument is the file the snapshot produces.
	ArgSnapshotCall
)

// Arg is one argument of a HeapProf call.
type Arg struct {
	Kind ArgKind
	Str  string // for ArgString
}

// Call is a parsed script: System.print(HeapProf.getInstance().<Method>(<Args>)).
type Call struct {
	Method Method
	Args   []Arg
}

// methodSpec describes a method: its Wren name and, per parameter, the
// argument kinds it accepts (a bit set of ArgKind).
type methodSpec struct {
	name   string
	params []ArgKind
	// returnsFile marks methods whose result names a profile file, so a
	// call of them may be the argument of a method taking a file.
	returnsFile bool
	// paramDoc describes the parameters for the hint, e.g. "<file> | HeapProf.getInstance().snapshot()".
	paramDoc string
}

var methodSpecs = [...]methodSpec{
	MethodEnableProf:      {name: "enable_prof"},
	MethodDisableProf:     {name: "disable_prof"},
	MethodHasEnable:       {name: "has_enable"},
	MethodSnapshot:        {name: "snapshot", returnsFile: true},
	MethodToDotFormat:     {name: "to_dot_format", params: []ArgKind{ArgString | ArgSnapshotCall}, paramDoc: `"<file>" | HeapProf.getInstance().snapshot()`},
	MethodDumpDotSnapshot: {name: "dump_dot_snapshot"},
	MethodListSnapshots:   {name: "list_snapshots"},
	MethodDiffDotSnapshot: {name: "diff_dot_snapshot", params: []ArgKind{ArgString}, paramDoc: `"<base snapshot>"`},
	MethodScheduleSnapshots: {name: "schedule_snapshots", params: []ArgKind{ArgString},
		paramDoc: `"<interval, e.g. 30s or 5m>"`},
	MethodUnscheduleSnapshots: {name: "unschedule_snapshots"},
}

func (m Method) valid() bool { return m > 0 && int(m) < len(methodSpecs) }

// String returns the method's Wren name, e.g. "dump_dot_snapshot".
func (m Method) String() string {
	if !m.valid() {
		return "Method(" + strconv.Itoa(int(m)) + ")"
	}
	return methodSpecs[m].name
}

// Methods returns the supported methods in documentation order.
func Methods() []Method {
	ms := make([]Method, 0, len(methodSpecs)-1)
	for m := Method(1); m.valid(); m++ {
		ms = append(ms, m)
	}
	return ms
}

// methodsHint lists the supported calls for error messages.
func methodsHint() string {
	var b strings.Builder
	b.WriteString("the script must be System.print(HeapProf.getInstance().<method>(...)); supported methods: ")
	for i, m := range Methods() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m.String())
		b.WriteByte('(')
		b.WriteString(methodSpecs[m].paramDoc)
		b.WriteByte(')')
	}
	return b.String()
}

func lookupMethod(name string) (Method, bool) {
	for m := Method(1); m.valid(); m++ {
		if methodSpecs[m].name == name {
			return m, true
		}
	}
	return 0, false
}

// Script renders c as the canonical script text; ParseScript(c.Script()) gives c back.
func (c Call) Script() string {
	var b strings.Builder
	b.WriteString("System.print(")
	writeCall(&b, c.Method, c.Args)
	b.WriteString(")")
	return b.String()
}

func writeCall(b *strings.Builder, m Method, args []Arg) {
	b.WriteString("HeapProf.getInstance().")
	b.WriteString(m.String())
	b.WriteByte('(')
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		switch a.Kind {
		case ArgSnapshotCall:
			writeCall(b, MethodSnapshot, nil)
		default:
			b.WriteString(quoteWren(a.Str))
		}
	}
	b.WriteByte(')')
}

// quoteWren renders s as a Wren string literal.
func quoteWren(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '%':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ParseScript parses a HeapProf script of the form
// System.print(HeapProf.getInstance().<method>(<args>)). The script is never
// evaluated: only this exact shape is accepted. Errors are *Error with Pos
// relative to the script.
func ParseScript(script string) (Call, error) {
	p := scriptParser{lex: wrenLexer{src: script}}
	call, err := p.parse()
	if err != nil {
		err.Hint = methodsHint()
		return Call{}, err
	}
	return call, nil
}

func notHeapProf(e *Error) *Error {
	e.NotHeapProf = true
	return e
}

type scriptParser struct {
	lex wrenLexer
}

func (p *scriptParser) parse() (Call, *Error) {
	t, err := p.lex.next()
	if err != nil {
		return Call{}, err
	}
	if t.kind != wrenName || t.text != "System" {
		return Call{}, notHeapProf(errorf(t.pos, "script: expected System.print(...), got %s", quoteFound(t.text)))
	}
	if err := p.expectDot(); err != nil {
		return Call{}, err
	}
	if err := p.expectName("print", "script: expected System.print(...)"); err != nil {
		return Call{}, notHeapProf(err)
	}
	if err := p.expectPunct('(', "script: expected ( after System.print"); err != nil {
		return Call{}, err
	}
	t, err = p.lex.next()
	if err != nil {
		return Call{}, err
	}
	if t.kind != wrenName || t.text != "HeapProf" {
		return Call{}, notHeapProf(errorf(t.pos, "script: expected HeapProf.getInstance() inside System.print(...), got %s (only the HeapProf class is supported)", quoteFound(t.text)))
	}
	call, err := p.heapProfCall(false)
	if err != nil {
		return Call{}, err
	}
	if err := p.expectPunct(')', "script: expected ) closing System.print("); err != nil {
		return Call{}, err
	}
	t, err = p.lex.next()
	if err != nil {
		return Call{}, err
	}
	if t.kind != wrenEOF {
		return Call{}, errorf(t.pos, "script: expected end of script after System.print(...), got %s", quoteFound(t.text))
	}
	return call, nil
}

// heapProfCall parses .getInstance().<method>(<args>) after the name HeapProf;
// nested is set for a call that is itself an argument.
func (p *scriptParser) heapProfCall(nested bool) (Call, *Error) {
	if err := p.expectDot(); err != nil {
		return Call{}, err
	}
	if err := p.expectName("getInstance", "script: expected HeapProf.getInstance()"); err != nil {
		return Call{}, err
	}
	if err := p.expectPunct('(', "script: expected ( after HeapProf.getInstance"); err != nil {
		return Call{}, err
	}
	if err := p.expectPunct(')', "script: getInstance takes no arguments: expected )"); err != nil {
		return Call{}, err
	}
	if err := p.expectDot(); err != nil {
		return Call{}, err
	}
	t, err := p.lex.next()
	if err != nil {
		return Call{}, err
	}
	if t.kind != wrenName {
		return Call{}, errorf(t.pos, "script: expected a HeapProf method name after HeapProf.getInstance()., got %s", quoteFound(t.text))
	}
	m, ok := lookupMethod(t.text)
	if !ok {
		return Call{}, errorf(t.pos, "script: unknown HeapProf method %q", t.text)
	}
	namePos := t.pos
	if err := p.expectPunct('(', "script: expected ( after method "+m.String()); err != nil {
		return Call{}, err
	}
	var args []Arg
	t, err = p.lex.next()
	if err != nil {
		return Call{}, err
	}
	for !(t.kind == wrenPunct && t.text == ")") {
		if len(args) > 0 {
			if t.kind != wrenPunct || t.text != "," {
				return Call{}, errorf(t.pos, "script: expected , or ) in the arguments of %s, got %s", m, quoteFound(t.text))
			}
			if t, err = p.lex.next(); err != nil {
				return Call{}, err
			}
		}
		arg, aerr := p.arg(t, nested)
		if aerr != nil {
			return Call{}, aerr
		}
		args = append(args, arg)
		if t, err = p.lex.next(); err != nil {
			return Call{}, err
		}
	}
	spec := methodSpecs[m]
	if len(args) != len(spec.params) {
		return Call{}, errorf(namePos, "script: %s takes %d argument(s), got %d", m, len(spec.params), len(args))
	}
	for i, a := range args {
		if spec.params[i]&a.Kind == 0 {
			return Call{}, errorf(namePos, "script: argument %d of %s must be %s", i+1, m, spec.paramDoc)
		}
	}
	return Call{Method: m, Args: args}, nil
}

// arg parses one argument starting with token t; nested is set inside an
// argument call, where calls cannot nest further (nothing needs it, and it
// bounds the recursion).
func (p *scriptParser) arg(t wrenToken, nested bool) (Arg, *Error) {
	switch {
	case t.kind == wrenString:
		return Arg{Kind: ArgString, Str: t.text}, nil
	case t.kind == wrenName && t.text == "HeapProf":
		if nested {
			return Arg{}, errorf(t.pos, "script: HeapProf calls nest only one level deep")
		}
		pos := t.pos
		inner, err := p.heapProfCall(true)
		if err != nil {
			return Arg{}, err
		}
		if !methodSpecs[inner.Method].returnsFile {
			return Arg{}, errorf(pos, "script: HeapProf.getInstance().%s() does not give a profile file; only snapshot() can be an argument", inner.Method)
		}
		return Arg{Kind: ArgSnapshotCall}, nil
	}
	return Arg{}, errorf(t.pos, "script: expected a string literal or HeapProf.getInstance().snapshot() as argument, got %s", quoteFound(t.text))
}

func (p *scriptParser) expectDot() *Error {
	return p.expectPunct('.', "script: expected .")
}

func (p *scriptParser) expectPunct(c byte, what string) *Error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	if t.kind != wrenPunct || t.text[0] != c {
		return errorf(t.pos, "%s, got %s", what, quoteFound(t.text))
	}
	return nil
}

func (p *scriptParser) expectName(name, what string) *Error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	if t.kind != wrenName || t.text != name {
		return errorf(t.pos, "%s, got %s", what, quoteFound(t.text))
	}
	return nil
}

type wrenKind int

const (
	wrenEOF wrenKind = iota
	wrenName
	wrenString // text is the decoded value
	wrenPunct
)

type wrenToken struct {
	kind wrenKind
	text string
	pos  int
}

// wrenLexer reads the few Wren tokens a HeapProf script is made of: names,
// punctuation, string literals; whitespace and // and /* */ comments between them.
type wrenLexer struct {
	src string
	pos int
}

func (l *wrenLexer) next() (wrenToken, *Error) {
	if err := l.skip(); err != nil {
		return wrenToken{}, err
	}
	start := l.pos
	if start >= len(l.src) {
		return wrenToken{kind: wrenEOF, pos: start}, nil
	}
	c := l.src[start]
	switch {
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		for l.pos < len(l.src) && (isWordByte(l.src[l.pos]) && l.src[l.pos] < 0x80 && l.src[l.pos] != '$') {
			l.pos++
		}
		return wrenToken{kind: wrenName, text: l.src[start:l.pos], pos: start}, nil
	case c == '"':
		return l.str()
	default:
		_, size := utf8.DecodeRuneInString(l.src[start:])
		l.pos += size
		return wrenToken{kind: wrenPunct, text: l.src[start:l.pos], pos: start}, nil
	}
}

func (l *wrenLexer) skip() *Error {
	for l.pos < len(l.src) {
		switch c := l.src[l.pos]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			l.pos++
		case strings.HasPrefix(l.src[l.pos:], "//"):
			end := strings.IndexByte(l.src[l.pos:], '\n')
			if end < 0 {
				l.pos = len(l.src)
			} else {
				l.pos += end + 1
			}
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			// Wren block comments nest.
			start := l.pos
			depth := 0
			for {
				if l.pos >= len(l.src) {
					return errorf(start, "script: unterminated /* comment")
				}
				switch {
				case strings.HasPrefix(l.src[l.pos:], "/*"):
					depth++
					l.pos += 2
				case strings.HasPrefix(l.src[l.pos:], "*/"):
					depth--
					l.pos += 2
				default:
					l.pos++
				}
				if depth == 0 {
					break
				}
			}
		default:
			return nil
		}
	}
	return nil
}

// str reads a Wren string literal with its escapes; interpolation %(...)
// is refused because it would be evaluated.
func (l *wrenLexer) str() (wrenToken, *Error) {
	start := l.pos
	if strings.HasPrefix(l.src[start:], `"""`) {
		return wrenToken{}, errorf(start, `script: raw strings (""") are not supported`)
	}
	l.pos++
	var b strings.Builder
	for {
		if l.pos >= len(l.src) {
			return wrenToken{}, errorf(start, "script: unterminated string literal")
		}
		c := l.src[l.pos]
		switch c {
		case '"':
			l.pos++
			return wrenToken{kind: wrenString, text: b.String(), pos: start}, nil
		case '%':
			return wrenToken{}, errorf(l.pos, `script: string interpolation %%(...) is not supported (write \%% for a percent sign)`)
		case '\\':
			if err := l.escape(&b); err != nil {
				return wrenToken{}, err
			}
		default:
			b.WriteByte(c)
			l.pos++
		}
	}
}

// escape decodes the escape at l.pos (a backslash) into b.
func (l *wrenLexer) escape(b *strings.Builder) *Error {
	start := l.pos
	if l.pos+1 >= len(l.src) {
		return errorf(start, "script: unterminated string literal")
	}
	c := l.src[l.pos+1]
	l.pos += 2
	if d, ok := wrenSimpleEscape(c); ok {
		b.WriteByte(d)
		return nil
	}
	var digits int
	switch c {
	case 'x':
		digits = 2
	case 'u':
		digits = 4
	case 'U':
		digits = 8
	default:
		return errorf(start, "script: invalid escape \\%c in string literal", c)
	}
	if l.pos+digits > len(l.src) {
		return errorf(start, "script: incomplete \\%c escape in string literal", c)
	}
	v, err := strconv.ParseUint(l.src[l.pos:l.pos+digits], 16, 32)
	if err != nil {
		return errorf(start, "script: invalid \\%c escape in string literal: want %d hex digits", c, digits)
	}
	l.pos += digits
	if c == 'x' {
		b.WriteByte(byte(v))
		return nil
	}
	if v > utf8.MaxRune || !utf8.ValidRune(rune(v)) {
		return errorf(start, "script: \\%c escape is not a valid code point", c)
	}
	b.WriteRune(rune(v))
	return nil
}

func wrenSimpleEscape(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '%':
		return c, true
	case '0':
		return 0, true
	case 'a':
		return 7, true
	case 'b':
		return 8, true
	case 'e':
		return 27, true
	case 'f':
		return 12, true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'v':
		return 11, true
	}
	return 0, false
}
