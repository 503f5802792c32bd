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
