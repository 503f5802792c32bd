package elfsym

import (
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
		return demangle.ToString(name)
	}
	if out, ok := demangleSimple(name); ok {
		return out, nil
	}
	return demangleTree(name)
}

// demangleTree is demangleCxx through the demangle package's tree, for
// every C++ name: demangleSimple's and all others.
func demangleTree(name string) (string, error) {
	a, err := demangle.ToAST(name)
	if err != nil {
		return "", err
	}
	if c := a.Copy(libibertyLists, func(demangle.AST) bool { return false }); c != nil {
		a = c
	}
	out := demangle.ASTToString(a)
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

// demangleSimple demangles C++ names of the plainest shape without the
// demangle package: a function or method named by source names (in
// namespaces and classes, whose template arguments are builtin types and
// integer or bool literals), a function template's builtin return type,
// parameters that are builtin types under pointer, reference and const, a
// const method's K, a constructor or destructor; no substitutions, no
// template parameters, no special names or operators, no clone suffixes.
// Everything else is declined (ok false) and goes to demangleTree.
// The package builds a tree, copies it twice and prints it: 2.3 µs, 2.4 KB
// and 42 allocations a name, against 0.13 µs, 120 B and 2 here
// (BenchmarkDemangle). bench/heapprof's programs ask ~7,000 names a
// profile, 99 % of them this shape, and those were 22 % of what
// heapproxy dot allocated; Debian's mariadbd exports 38 % of its 25,952
// C++ names in it, libstdc++ 1 %. TestDemangleSimple checks what it takes
// against nm --demangle, FuzzDemangleSimple against demangleTree.
func demangleSimple(name string) (string, bool) {
	if !strings.HasPrefix(name, "_Z") {
		return "", false
	}
	d := simpleName{s: name, i: 2, out: make([]byte, 0, 2*len(name))}
	if !d.encoding() || d.i != len(d.s) {
		return "", false
	}
	return string(d.out), true
}

// simpleName is demangleSimple's reader: s from i, printing into out.
type simpleName struct {
	s   string
	i   int
	out []byte
}

func (d *simpleName) peek() byte {
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

// encoding reads <name> <bare-function-type>.
func (d *simpleName) encoding() bool {
	constMethod := false
	template := false // a function template: its return type comes first
	if d.peek() == 'N' {
		d.i++
		if d.peek() == 'K' {
			constMethod = true
			d.i++
		}
		last := "" // the last source name: a constructor's or destructor's
		n := 0
		for ; d.peek() != 'E'; n++ {
			if n > 0 {
				d.out = append(d.out, "::"...)
			}
			switch c := d.peek(); {
			case c >= '1' && c <= '9':
				id, ok := d.sourceName()
				if !ok {
					return false
				}
				last = id
				d.out = append(d.out, id...)
				if d.peek() == 'I' {
					if !d.templateArgs() {
						return false
					}
					template = d.peek() == 'E'
				}
			case (c == 'C' || c == 'D') && n > 0 && d.i+2 < len(d.s) && d.s[d.i+2] == 'E':
				// C1-C3, D0-D2 end the name (CI, an inheriting
				// constructor, is the tree's).
				k := d.s[d.i+1]
				if c == 'C' && (k < '1' || k > '3') || c == 'D' && (k < '0' || k > '2') {
					return false
				}
				if c == 'D' {
					d.out = append(d.out, '~')
				}
				d.out = append(d.out, last...)
				d.i += 2
			default:
				return false
			}
			if template && d.peek() != 'E' {
				return false
			}
		}
		d.i++
		if n < 2 {
			return false
		}
	} else {
		id, ok := d.sourceName()
		if !ok {
			return false
		}
		d.out = append(d.out, id...)
		if d.peek() == 'I' {
			if !d.templateArgs() {
				return false
			}
			template = true
		}
	}
	if d.i == len(d.s) {
		return false // a variable: no parameters, no parentheses
	}
	if template {
		// libiberty prints the return type, a space, then the name.
		name := len(d.out)
		if !d.typ(true) {
			return false
		}
		out := make([]byte, 0, cap(d.out))
		out = append(out, d.out[name:]...)
		out = append(out, ' ')
		d.out = append(out, d.out[:name]...)
		if d.i == len(d.s) {
			return false
		}
	}
	d.out = append(d.out, '(')
	if d.s[d.i:] == "v" {
		d.i++
	} else {
		for first := true; d.i < len(d.s); first = false {
			if !first {
				d.out = append(d.out, ", "...)
			}
			if !d.typ(false) {
				return false
			}
		}
	}
	d.out = append(d.out, ')')
	if constMethod {
		d.out = append(d.out, " const"...)
	}
	return true
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

// typ reads a builtin type under P, R, O and K (a reference only
// outermost); void alone only where voidOK (a template argument).
func (d *simpleName) typ(voidOK bool) bool {
	start := d.i
	for strings.IndexByte("PROK", d.peek()) >= 0 {
		if c := d.peek(); (c == 'R' || c == 'O') && d.i > start {
			return false
		}
		d.i++
	}
	mods := d.s[start:d.i]
	c := d.peek()
	base := builtinType(c)
	if base == "" || c == 'z' && mods != "" || c == 'v' && mods == "" && !voidOK {
		return false
	}
	d.i++
	d.out = append(d.out, base...)
	for j := len(mods) - 1; j >= 0; j-- {
		switch mods[j] {
		case 'P':
			d.out = append(d.out, '*')
		case 'R':
			d.out = append(d.out, '&')
		case 'O':
			d.out = append(d.out, "&&"...)
		case 'K':
			d.out = append(d.out, " const"...)
		}
	}
	return true
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

// templateArgs reads I <arg>+ E, each a builtin type or an integer or
// bool literal (L <type> [n] <digits> E).
func (d *simpleName) templateArgs() bool {
	d.i++ // I
	d.out = append(d.out, '<')
	for first := true; d.peek() != 'E'; first = false {
		if d.i >= len(d.s) {
			return false
		}
		if !first {
			d.out = append(d.out, ", "...)
		}
		if d.peek() != 'L' {
			if !d.typ(true) {
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
				d.out = append(d.out, "false"...)
			case digits == "1":
				d.out = append(d.out, "true"...)
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
			d.out = append(d.out, '-')
		}
		d.out = append(d.out, digits...)
		d.out = append(d.out, suffix...)
	}
	if d.s[d.i-1] == 'I' {
		return false // I E: no arguments
	}
	d.i++
	d.out = append(d.out, '>')
	return true
}
