package main

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// explainYAML turns yaml.v3's error for data decoded into a value of type
// t (Go's words: "field listen_addr not found in type main.fileConfig",
// "cannot unmarshal !!str `thirty` into time.Duration") into the file's
// words: the key, its line, and what it wants in YAML terms. It walks the
// document against t's yaml tags; when the walk finds nothing (a syntax
// error, a check of yaml.v3's own) it returns err unchanged.
func explainYAML(data []byte, t reflect.Type, err error) error {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return err
	}
	var errs []string
	checkYAML(doc.Content[0], t, "", &errs)
	switch len(errs) {
	case 0:
		return err
	case 1:
		return errors.New(errs[0])
	}
	return fmt.Errorf("%d problems:\n  %s", len(errs), strings.Join(errs, "\n  "))
}

var (
	durationType        = reflect.TypeFor[time.Duration]()
	yamlUnmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkYAML checks node n against type t; path names n ("timeouts.connect",
// "nodes[0]"; empty at the top).
func checkYAML(n *yaml.Node, t reflect.Type, path string, errs *[]string) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // the zero value, for any type
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(yamlUnmarshalerType) || pt.Implements(textUnmarshalerType) {
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			*errs = append(*errs, fmt.Sprintf("%s at line %d: %v", where(path), n.Line, err))
		}
		return
	}
	want := func() {
		*errs = append(*errs, fmt.Sprintf("%s at line %d: want %s, got %s%s", where(path), n.Line, yamlKind(t), got(n), hint(n, t)))
	}
	if t == durationType {
		if n.Kind != yaml.ScalarNode || n.Decode(new(time.Duration)) != nil {
			want()
		}
		return
	}
	switch t.Kind() {
	case reflect.Interface:
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			want()
			return
		}
		fields, anyKey := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" && k.Tag == "!!merge" {
				checkMerge(v, t, path, errs)
				continue
			}
			ft, ok := fieldType(fields, k.Value)
			if !ok {
				if !anyKey {
					*errs = append(*errs, unknownKey(k, path, fields))
				}
				continue
			}
			checkYAML(v, ft, join(path, k.Value), errs)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			want()
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			checkYAML(k, t.Key(), join(path, k.Value)+" (the key)", errs)
			checkYAML(v, t.Elem(), join(path, k.Value), errs)
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			want()
			return
		}
		for i, item := range n.Content {
			checkYAML(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), errs)
		}
	default:
		if n.Kind != yaml.ScalarNode || n.Decode(reflect.New(t).Interface()) != nil {
			want()
		}
	}
}

// checkMerge checks a YAML merge key's value ("<<: *defaults"): a mapping
// or a list of mappings, each checked against t.
func checkMerge(v *yaml.Node, t reflect.Type, path string, errs *[]string) {
	for v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind == yaml.SequenceNode {
		for _, m := range v.Content {
			checkYAML(m, t, path, errs)
		}
		return
	}
	checkYAML(v, t, path, errs)
}

type yamlField struct {
	name string
	t    reflect.Type
}

// yamlFields lists the keys yaml.v3 decodes into struct t, in the order of
// its fields, with the fields of inline structs in their place; anyKey
// reports an inline map, which takes every other key.
func yamlFields(t reflect.Type) (fields []yamlField, anyKey bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.PkgPath != "" && !f.Anonymous {
			continue // unexported
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch ft.Kind() {
			case reflect.Struct:
				sub, subAny := yamlFields(ft)
				fields, anyKey = append(fields, sub...), anyKey || subAny
			case reflect.Map:
				anyKey = true
			}
			continue
		}
		if f.PkgPath != "" {
			continue // an unexported embedded struct that is not inline
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields = append(fields, yamlField{name, f.Type})
	}
	return fields, anyKey
}

func fieldType(fields []yamlField, key string) (reflect.Type, bool) {
	for _, f := range fields {
		if f.name == key {
			return f.t, true
		}
	}
	return nil, false
}

// unknownKey says which key is unknown, where, and what the mapping knows.
func unknownKey(k *yaml.Node, path string, fields []yamlField) string {
	var known []string
	var near string
	for _, f := range fields {
		known = append(known, f.name)
		if near == "" && (editDistance(f.name, k.Value) <= 2 || (len(f.name) >= 4 && strings.HasPrefix(k.Value, f.name+"_"))) {
			near = f.name
		}
	}
	in := ""
	if path != "" {
		in = " in " + path
	}
	mean := ""
	if near != "" {
		mean = fmt.Sprintf(", did you mean %q?", near)
	}
	return fmt.Sprintf("unknown key %q%s at line %d%s (known: %s)", k.Value, in, k.Line, mean, strings.Join(known, ", "))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func where(path string) string {
	if path == "" {
		return "the file"
	}
	return path
}

// yamlKind says what a value of type t looks like in YAML.
func yamlKind(t reflect.Type) string {
	if t == durationType {
		return `a duration like "30s" or "1m30s"`
	}
	switch t.Kind() {
	case reflect.Pointer:
		return yamlKind(t.Elem())
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list of " + yamlKindPlural(t.Elem())
	case reflect.Map, reflect.Struct:
		return "a mapping (key: value, or {key: value, ...})"
	}
	return "a " + t.String()
}

func yamlKindPlural(t reflect.Type) string {
	if t == durationType {
		return `durations like "30s"`
	}
	switch t.Kind() {
	case reflect.Pointer:
		return yamlKindPlural(t.Elem())
	case reflect.String:
		return "strings"
	case reflect.Bool:
		return "true or false values"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "whole numbers"
	case reflect.Float32, reflect.Float64:
		return "numbers"
	case reflect.Slice, reflect.Array:
		return "lists"
	case reflect.Map, reflect.Struct:
		return "mappings"
	}
	return t.String() + " values"
}

// got says what the file has at n.
func got(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.Tag == "!!str" {
		return strconv.Quote(n.Value)
	}
	return n.Value
}

// hint adds what is easily missed: a duration's unit, a list's brackets.
func hint(n *yaml.Node, t reflect.Type) string {
	if n.Kind != yaml.ScalarNode {
		return ""
	}
	if t == durationType {
		if _, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return " (a number: add a unit, s, m or h)"
		}
	}
	if k := t.Kind(); k == reflect.Slice || k == reflect.Array {
		return fmt.Sprintf(" (a list is [%s] or one \"- item\" per line)", n.Value)
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
