package elfsym

import (
	"bytes"
	"errors"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Demangle demangles a C++ or Rust symbol name as binutils prints it
// (libiberty's cplus_demangle with DMGL_PARAMS|DMGL_ANSI, as in nm -C and
// addr2line -C; c++filt prints the same but for std::string and the other
// standard abbreviations, which it spells out) and returns a name that is
// not mangled unchanged. Unlike demangleBFD it takes no @VERSION suffix.
// For callers that demangle names they did not read from an ELF file
// (backends' /pprof/symbol answers).
func Demangle(name string) string {
	out, err := demangleCxx(name)
	if err != nil {
		return name
	}
	return out
}

// Markers the printer writes for an empty list element: emptyMark prints
// nothing, droppedMark stands for a removed tail of empty elements together
// with its ", ". Neither can occur in a demangled name.
const (
	emptyMark   = "\x00"
	droppedMark = "\x01"
)

// demangleCxx is demangle.ToString with libiberty's printing of empty
// template argument packs. libiberty prints a list (template arguments,
// a J...E pack inside them, function parameters) element by element, each
// after ", ", and takes the ", " back when everything after it printed
// nothing. So an empty pack in the middle leaves ", , "
// ("std::thread::thread<void (&)(), , void>"), empty packs at the end
// vanish with their commas ("std::_Tuple_impl<1ul, int>"), and, because
// taking ", " back does not reset the last character it remembers, a '>'
// that ends the list then gets no space before the closing '>'
// ("_Tuple_impl<1ul, std::default_delete<T>>"). The demangle package
// instead skips empty arguments wherever they are and keeps a trailing
// ", " after a pack that expanded to nothing. The lists are rewritten
// here, with markers for what libiberty prints differently, before the
// package prints the tree; so are the names of inheriting constructors.
func demangleCxx(name string) (string, error) {
	if !strings.HasPrefix(name, "_Z") || oldRustName(name) {
		// Rust names, and C names: the package's own paths.
		out, err := demangle.ToString(name, demangle.MaxLength(maxDemangledPow))
		if err == nil && len(out) >= 1<<maxDemangledPow {
			return "", errDemangledTooLong
		}
		return out, err
	}
	if out, ok := demangleSimple(name); ok {
		return out, nil
	}
	return demangleTree(name)
}

// maxDemangledPow bounds a demangled name at 64 KiB (a power of two, as
// demangle.MaxLength takes it). Substitutions can double the printed text
// every few bytes of a mangled name: one of 400 bytes
// (_Z1f1WIiiE1WIS0_S0_E... nested 40 times) would print 2^40 bytes, and
// c++filt on it does not finish. A longer name is left mangled.
const maxDemangledPow = 16

var errDemangledTooLong = errors.New("demangled name longer than 64 KiB")

// demangleTree is demangleCxx through the demangle package's tree, for
// every C++ name: demangleSimple's and all others.
func demangleTree(name string) (string, error) {
	a, err := demangle.ToAST(name)
	if err != nil {
		return "", err
	}
	// The tree shares what substitutions name again, so it stays as small
	// as the name; printing it, or copying it node by node, does not.
	// Printing stops at the bound, and what it printed is the answer
	// unless the lists are rewritten.
	out := demangle.ASTToString(a, demangle.MaxLength(maxDemangledPow))
	if len(out) >= 1<<maxDemangledPow {
		return "", errDemangledTooLong
	}
	if c := a.Copy(libibertyLists, func(demangle.AST) bool { return false }); c != nil {
		out = demangle.ASTToString(c)
	}
	if strings.Contains(out, droppedMark) {
		out = strings.ReplaceAll(out, ", "+droppedMark, "")
	}
	if strings.Contains(out, emptyMark) {
		out = strings.ReplaceAll(out, emptyMark, "")
	}
	return out, nil
}

// oldRustName is the test demangle.ToString applies before it tries a
// name as a legacy Rust symbol: _ZN...17h<16 hex digits>E, and an optional
// ".suffix".
func oldRustName(name string) bool {
	if !strings.HasPrefix(name, "_ZN") {
		return false
	}
	if i := strings.LastIndex(name, "E."); i > 0 {
		name = name[:i+1]
	}
	return strings.HasSuffix(name, "E") && len(name) > 23 && name[len(name)-20:len(name)-17] == "17h"
}

// libibertyLists is the Copy callback: it rewrites the argument lists of
// templates, argument packs and function types (children first, Copy
// works bottom-up) and the names of inheriting constructors, and returns
// nil for every other node.
func libibertyLists(a demangle.AST) demangle.AST {
	switch a := a.(type) {
	case *demangle.Template:
		args, changed := libibertyList(a.Args, true)
		if !changed {
			return nil
		}
		t := *a
		t.Args = args
		return &t
	case *demangle.ArgumentPack:
		if isEmptyArg(a) {
			return &demangle.Name{Name: emptyMark}
		}
		args, changed := libibertyList(a.Args, true)
		if !changed {
			return nil
		}
		return &demangle.ArgumentPack{Args: args}
	case *demangle.Constructor:
		// An inheriting constructor (CI1 <base>): libiberty names it after
		// the last source name it read, the base class's, where the
		// package keeps the derived class's name
		// ("__uniq_ptr_data<...>::__uniq_ptr_impl(...)").
		if a.Base == nil {
			return nil
		}
		n := baseName(a.Base)
		if n == nil {
			return nil
		}
		return &demangle.Constructor{Name: n, Base: a.Base}
	case *demangle.FunctionType:
		// No closing '>' here, so no marker for a dropped tail.
		args, changed := libibertyList(a.Args, false)
		if !changed {
			return nil
		}
		f := *a
		f.Args = args
		return &f
	}
	return nil
}

// baseName is the unqualified name of a class type without its template
// arguments, or nil. (libiberty takes the last name it read, which would
// differ for a base whose template arguments spell out new names rather
// than substitutions; such bases were not seen in libstdc++.)
func baseName(a demangle.AST) demangle.AST {
	for {
		switch t := a.(type) {
		case *demangle.Template:
			a = t.Name
		case *demangle.Qualified:
			a = t.Name
		case *demangle.Name:
			return t
		default:
			return nil
		}
	}
}

// libibertyList returns args as libiberty prints them: the elements up to
// the last one that prints something, empty ones in between as emptyMark,
// and, when a tail of empty elements was dropped and markTail is set,
// droppedMark after them.
func libibertyList(args []demangle.AST, markTail bool) ([]demangle.AST, bool) {
	last := -1
	empties := 0
	for i, a := range args {
		if isEmptyArg(a) {
			empties++
		} else {
			last = i
		}
	}
	if empties == 0 {
		return args, false
	}
	if last < 0 {
		// Nothing printed at all: no element and no comma.
		return nil, true
	}
	out := make([]demangle.AST, 0, last+2)
	for _, a := range args[:last+1] {
		if isEmptyArg(a) {
			a = &demangle.Name{Name: emptyMark}
		}
		out = append(out, a)
	}
	if last < len(args)-1 && markTail {
		out = append(out, &demangle.Name{Name: droppedMark})
	}
	return out, true
}

// isEmptyArg reports whether a prints nothing: an empty argument pack or
// expression list (a pack expanded to nothing), a pack expansion of one,
// or an element this rewriting already marked empty.
func isEmptyArg(a demangle.AST) bool {
	switch a := a.(type) {
	case *demangle.ArgumentPack:
		for _, x := range a.Args {
			if !isEmptyArg(x) {
				return false
			}
		}
		return true
	case *demangle.ExprList:
		return len(a.Exprs) == 0
	case *demangle.PackExpansion:
		return a.Pack != nil && isEmptyArg(a.Base)
	case *demangle.Name:
		return a.Name == emptyMark
	}
	return false
}

// demangleSimple demangles C++ names of the plainer shapes without the
// demangle package: a function or method named by source names (in
// namespaces and classes, whose template arguments are types and integer
// or bool literals), a function template's return type, parameters that
// are builtin or class types under pointer, reference and const,
// substitutions (S_, S<seq>_) of what the name spelled out before, a const
// method's K, a constructor or destructor. Declined (ok false), for
// demangleTree: the std abbreviations (St, Sa, Ss, ...), template
// parameters (T_), operators, special names, function and array types,
// anonymous namespaces, ABI tags, clone suffixes, and anything else.
// The package builds a tree, copies it twice and prints it: 2.4 µs, 2.4 KB
// and 42 allocations a name, against 0.18 µs, 240 B and 3 here
// (BenchmarkDemangle). It takes 99 % of the ~7,000 names a bench/heapprof
// profile asks (they were 22 % of what heapproxy dot allocated), 74 % of
// Debian's mariadbd's exported C++ names, 59 % of libLLVM-15's, 2 % of
// libstdc++'s (std abbreviations). TestDemangleSimple checks what it
// takes against nm --demangle, FuzzDemangleSimple against demangleTree.
func demangleSimple(name string) (string, bool) {
	if !strings.HasPrefix(name, "_Z") {
		return "", false
	}
	d := simpleName{s: name, i: 2, buf: make([]byte, 0, 3*len(name)), subs: make([]span, 0, 4)}
	out, ok := d.encoding()
	if !ok || d.i != len(d.s) {
		return "", false
	}
	return out, true
}

// simpleName is demangleSimple's reader of s from i. What it prints goes
// into buf, each piece (a name, a type) contiguous, and pieces are spans of
// buf. subs are the substitution candidates in the order libiberty adds
// them (cp-demangle.c: d_prefix adds each prefix of a nested name but the
// whole, d_type each type but builtin ones and substitutions, d_name an
// unscoped template's name).
type simpleName struct {
	s    string
	i    int
	buf  []byte
	subs []span
}

func (d *simpleName) peek() byte {
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

func (d *simpleName) text(p span) []byte { return d.buf[p.start:p.end] }

// place puts p's text at at, where buf ends: a substitution's text lies
// where it was first printed and is copied, a fresh piece is there
// already. Copies are how the text can outgrow the name, doubling every
// few bytes of it, so place reports false past maxSimpleText and longer
// names are left to the tree.
func (d *simpleName) place(p span, at int) bool {
	if p.start == at {
		return true
	}
	if len(d.buf)+p.end-p.start > maxSimpleText {
		return false
	}
	d.buf = append(d.buf, d.buf[p.start:p.end]...)
	return true
}

// maxSimpleText bounds what demangleSimple prints.
const maxSimpleText = 16 << 10

// Where typ reads a type: a function parameter (void only alone, which
// encoding reads itself; ... allowed), a template argument or return type
// (void allowed), or under a pointer, reference or const (void allowed).
const (
	inParams = iota
	inArgs
	inType
)

// encoding reads <name> <bare-function-type>.
func (d *simpleName) encoding() (string, bool) {
	var name span
	var ok, constMethod, template bool
	if d.peek() == 'N' {
		d.i++
		if d.peek() == 'K' {
			constMethod = true
			d.i++
		}
		name, template, ok = d.nested()
	} else {
		name, template, ok = d.unscoped()
	}
	if !ok || d.i == len(d.s) {
		return "", false // a variable has no parameters, and no parentheses
	}
	var ret span
	if template {
		// libiberty prints a function template's return type, a space,
		// then the name.
		if ret, ok = d.typ(inArgs); !ok || d.i == len(d.s) {
			return "", false
		}
	}
	// The parameters, printed after everything the types printed, each
	// copied there (place) as it is read.
	params := len(d.buf)
	if d.s[d.i:] == "v" {
		d.i++
	} else {
		for first := true; d.i < len(d.s); first = false {
			if !first {
				d.buf = append(d.buf, ", "...)
			}
			at := len(d.buf)
			if t, ok := d.typ(inParams); !ok || !d.place(t, at) {
				return "", false
			}
		}
	}
	var out strings.Builder
	out.Grow(ret.end - ret.start + 1 + name.end - name.start + 2 + len(d.buf) - params + len(" const"))
	if template {
		out.Write(d.text(ret))
		out.WriteByte(' ')
	}
	out.Write(d.text(name))
	out.WriteByte('(')
	out.Write(d.buf[params:])
	out.WriteByte(')')
	if constMethod {
		out.WriteString(" const")
	}
	return out.String(), true
}

// unscoped reads a source name and its template arguments, if any; the
// name of a template is a candidate (libiberty's d_name).
func (d *simpleName) unscoped() (name span, template, ok bool) {
	start := len(d.buf)
	id, ok := d.sourceName()
	if !ok {
		return span{}, false, false
	}
	d.buf = append(d.buf, id...)
	if d.peek() == 'I' {
		d.subs = append(d.subs, span{start, len(d.buf)})
		if !d.templateArgs() {
			return span{}, false, false
		}
		template = true
	}
	return span{start, len(d.buf)}, template, true
}

// nested reads a nested name after its N, through its E: source names,
// template arguments, a substitution first, a constructor or destructor
// last. template reports whether it ends in template arguments.
func (d *simpleName) nested() (name span, template, ok bool) {
	start := len(d.buf)
	last := "" // the last source name: a constructor's or destructor's
	n := 0
	for ; d.peek() != 'E'; n++ {
		template = false
		subst := false
		switch c := d.peek(); {
		case c >= '1' && c <= '9':
			id, ok := d.sourceName()
			if !ok {
				return span{}, false, false
			}
			last = id
			if n > 0 {
				d.buf = append(d.buf, "::"...)
			}
			d.buf = append(d.buf, id...)
		case c == 'I' && n > 0:
			if !d.templateArgs() {
				return span{}, false, false
			}
			template = true
		case c == 'S' && n == 0:
			sub, ok := d.substitution()
			if !ok || !d.place(sub, start) {
				return span{}, false, false
			}
			subst = true
		case (c == 'C' || c == 'D') && last != "" && d.i+2 < len(d.s) && d.s[d.i+2] == 'E':
			// C1-C3, D0-D2 end the name (CI, an inheriting
			// constructor, is the tree's).
			k := d.s[d.i+1]
			if c == 'C' && (k < '1' || k > '3') || c == 'D' && (k < '0' || k > '2') {
				return span{}, false, false
			}
			d.buf = append(d.buf, "::"...)
			if c == 'D' {
				d.buf = append(d.buf, '~')
			}
			d.buf = append(d.buf, last...)
			d.i += 2
		default:
			return span{}, false, false
		}
		if !subst && d.peek() != 'E' {
			d.subs = append(d.subs, span{start, len(d.buf)})
		}
	}
	d.i++
	if n < 2 {
		return span{}, false, false
	}
	return span{start, len(d.buf)}, template, true
}

// sourceName reads <length> <identifier>, an identifier of letters,
// digits and '_' that is not one of the names printed otherwise
// (_GLOBAL__N: an anonymous namespace).
func (d *simpleName) sourceName() (string, bool) {
	n := 0
	start := d.i
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		if n > len(d.s) {
			return "", false
		}
		n = n*10 + int(d.s[d.i]-'0')
		d.i++
	}
	if d.i == start || d.s[start] == '0' || n > len(d.s)-d.i {
		return "", false
	}
	id := d.s[d.i : d.i+n]
	for j := 0; j < len(id); j++ {
		c := id[j]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return "", false
		}
	}
	if strings.HasPrefix(id, "_GLOBAL_") {
		return "", false
	}
	d.i += n
	return id, true
}

// substitution reads S_ (the first candidate) or S<seq>_ (candidate
// seq+1, seq in base 36: digits, then capital letters).
func (d *simpleName) substitution() (span, bool) {
	d.i++ // S
	idx := 0
	if d.peek() != '_' {
		seq, start := 0, d.i
		for ; d.i < len(d.s) && d.s[d.i] != '_'; d.i++ {
			c := d.s[d.i]
			switch {
			case c >= '0' && c <= '9':
				seq = seq*36 + int(c-'0')
			case c >= 'A' && c <= 'Z':
				seq = seq*36 + int(c-'A') + 10
			default:
				return span{}, false // St, Sa, Ss, ...: the tree's
			}
			if seq > len(d.subs) {
				return span{}, false
			}
		}
		if d.i == start {
			return span{}, false
		}
		idx = seq + 1
	}
	if d.peek() != '_' || idx >= len(d.subs) {
		return span{}, false
	}
	d.i++
	return d.subs[idx], true
}

// builtinType is the one-letter <builtin-type> c as libiberty prints it,
// or "".
func builtinType(c byte) string {
	switch c {
	case 'v':
		return "void"
	case 'w':
		return "wchar_t"
	case 'b':
		return "bool"
	case 'c':
		return "char"
	case 'a':
		return "signed char"
	case 'h':
		return "unsigned char"
	case 's':
		return "short"
	case 't':
		return "unsigned short"
	case 'i':
		return "int"
	case 'j':
		return "unsigned int"
	case 'l':
		return "long"
	case 'm':
		return "unsigned long"
	case 'x':
		return "long long"
	case 'y':
		return "unsigned long long"
	case 'n':
		return "__int128"
	case 'o':
		return "unsigned __int128"
	case 'f':
		return "float"
	case 'd':
		return "double"
	case 'e':
		return "long double"
	case 'g':
		return "__float128"
	case 'z':
		return "..."
	}
	return ""
}

// typ reads a type where ctx says (inParams, inArgs, inType): builtin, a
// class named by a source name (with template arguments) or a nested name,
// a substitution, or one of these under P, R, O and K (a reference only
// outermost), adding the candidates libiberty's d_type adds. What it
// prints ends buf, but for a substitution's text, which is where it was
// first printed.
func (d *simpleName) typ(ctx int) (span, bool) {
	c := d.peek()
	start := len(d.buf)
	switch {
	case c == 'K' || c == 'P' || c == 'R' || c == 'O':
		d.i++
		if next := d.peek(); next == 'R' || next == 'O' || c == 'K' && next == 'K' {
			return span{}, false
		}
		inner, ok := d.typ(inType)
		if !ok || c == 'K' && bytes.HasSuffix(d.text(inner), []byte(" const")) {
			// (A const of a substituted const type: the tree merges them.)
			return span{}, false
		}
		if !d.place(inner, start) {
			return span{}, false
		}
		switch c {
		case 'K':
			d.buf = append(d.buf, " const"...)
		case 'P':
			d.buf = append(d.buf, '*')
		case 'R':
			d.buf = append(d.buf, '&')
		case 'O':
			d.buf = append(d.buf, "&&"...)
		}
	case c >= '1' && c <= '9':
		if _, _, ok := d.unscoped(); !ok {
			return span{}, false
		}
	case c == 'N':
		d.i++
		if _, _, ok := d.nested(); !ok {
			return span{}, false
		}
	case c == 'S':
		sub, ok := d.substitution()
		if !ok || d.peek() == 'I' {
			return span{}, false
		}
		return sub, true // not a candidate again
	default:
		base := builtinType(c)
		if base == "" || c == 'v' && ctx == inParams || c == 'z' && ctx != inParams {
			return span{}, false
		}
		d.i++
		d.buf = append(d.buf, base...)
		return span{start, len(d.buf)}, true // builtin types are not candidates
	}
	t := span{start, len(d.buf)}
	d.subs = append(d.subs, t)
	return t, true
}

// literalSuffix is what libiberty prints after an integer literal of
// type c (L c <digits> E); ok false for other types.
func literalSuffix(c byte) (suffix string, ok bool) {
	switch c {
	case 'i':
		return "", true
	case 'l':
		return "l", true
	case 'j':
		return "u", true
	case 'm':
		return "ul", true
	case 'x':
		return "ll", true
	case 'y':
		return "ull", true
	}
	return "", false
}

// templateArgs reads I <arg>+ E, each a type or an integer or bool
// literal (L <type> [n] <digits> E), and prints them at the end of buf as
// libiberty does: a space between two closing '>'.
func (d *simpleName) templateArgs() bool {
	d.i++ // I
	d.buf = append(d.buf, '<')
	for first := true; d.peek() != 'E'; first = false {
		if d.i >= len(d.s) {
			return false
		}
		if !first {
			d.buf = append(d.buf, ", "...)
		}
		if d.peek() != 'L' {
			at := len(d.buf)
			if t, ok := d.typ(inArgs); !ok || !d.place(t, at) {
				return false
			}
			continue
		}
		d.i++
		t := d.peek()
		if t == 0 {
			return false
		}
		d.i++
		neg := d.peek() == 'n'
		if neg {
			d.i++
		}
		start := d.i
		for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
			d.i++
		}
		digits := d.s[start:d.i]
		if digits == "" || d.peek() != 'E' {
			return false
		}
		d.i++
		if t == 'b' {
			switch {
			case neg:
				return false
			case digits == "0":
				d.buf = append(d.buf, "false"...)
			case digits == "1":
				d.buf = append(d.buf, "true"...)
			default:
				return false
			}
			continue
		}
		suffix, ok := literalSuffix(t)
		if !ok {
			return false
		}
		if neg {
			d.buf = append(d.buf, '-')
		}
		d.buf = append(d.buf, digits...)
		d.buf = append(d.buf, suffix...)
	}
	if d.s[d.i-1] == 'I' {
		return false // I E: no arguments
	}
	d.i++
	if d.buf[len(d.buf)-1] == '>' {
		d.buf = append(d.buf, ' ')
	}
	d.buf = append(d.buf, '>')
	return true
}
