package server

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"
	"golang.org/x/text/encoding/charmap"

	"github.com/heapproxy/heapproxy/heapprof/sqlview"
	"github.com/heapproxy/heapproxy/internal/mysqlwire"
	"github.com/heapproxy/heapproxy/parser"
)

// The connection character set on the embedded default (issue 14). MySQL
// reads a statement in character_set_client, sends result values and
// metadata in character_set_results and labels text columns with that
// character set's collation id; the heapprof SQL engine works in UTF-8
// only. So the session converts: statements and string parameters from
// character_set_client to UTF-8 before the engine; text values, column
// names and error messages from UTF-8 to character_set_results after it (a
// character the target cannot hold becomes '?', without a warning, as
// MariaDB does). The session holds the four variables (set by the
// handshake, COM_CHANGE_USER, SET NAMES, SET CHARACTER SET and SET
// character_set_* / collation_connection) and answers reads of them; the
// engine is told the client's and connection's character sets when it
// implements them (they type literals: LENGTH('größe') is 5 in latin1),
// while its character_set_results stays utf8mb4 so that its values arrive
// in UTF-8. With an upstream none of this applies: bytes pass unchanged.

// charsetKind is how a character set is converted.
type charsetKind uint8

const (
	kindUTF8MB4 charsetKind = iota // UTF-8 itself
	kindUTF8MB3                    // UTF-8 without 4-byte sequences
	kindASCII
	kindBinary     // bytes, never converted
	kindSingleByte // a 256-entry table
)

// charset is one of MySQL's character sets the embedded default converts.
type charset struct {
	name   string
	kind   charsetKind
	maxLen uint32 // bytes per character at most (MySQL's mbmaxlen)
	def    *collation
	// inEngine tells a character set the heapprof SQL engine
	// (go-mysql-server) implements: it may type literals with it (it
	// panics on the others).
	inEngine bool
	// decode and encode are a single-byte set's tables: the character of
	// each byte ('?' where MySQL has none), and the byte of each character.
	decode *[256]rune
	encode map[rune]byte
}

// collation is a MySQL collation of a supported character set: its id is
// what handshakes carry and column definitions are labelled with.
type collation struct {
	id   uint16
	name string
	cs   *charset
}

// charsetTables holds every supported character set and collation. It is
// built once and only read afterwards.
type charsetTables struct {
	byName     map[string]*charset
	collByName map[string]*collation
	collByID   map[uint16]*collation
}

// The ids and names are MariaDB 10.11's (information_schema.COLLATIONS),
// plus MySQL 8's utf8mb4_0900_ai_ci (255), which MySQL 8 clients send.
// Single-byte sets are the x/text tables that decode every byte as
// MariaDB does (charset_test.go compares all 256 bytes and the way back);
// koi8u, cp866, cp1256, greek and hebrew differ there and are left out.
// The tables are read-only once built.
var supportedCharsets = buildCharsetTables()

func buildCharsetTables() *charsetTables {
	t := &charsetTables{byName: map[string]*charset{}, collByName: map[string]*collation{}, collByID: map[uint16]*collation{}}
	add := func(cs *charset, def uint16, colls map[uint16]string) {
		t.byName[cs.name] = cs
		for id, name := range colls {
			c := &collation{id: id, name: name, cs: cs}
			t.collByName[name] = c
			t.collByID[id] = c
		}
		cs.def = t.collByID[def]
	}
	utf8mb4 := map[uint16]string{45: "utf8mb4_general_ci", 46: "utf8mb4_bin", 255: "utf8mb4_0900_ai_ci"}
	utf8mb3 := map[uint16]string{33: "utf8mb3_general_ci", 83: "utf8mb3_bin", 223: "utf8mb3_general_mysql500_ci"}
	// The language collations, in id order from 192 (utf8mb3) and 224
	// (utf8mb4).
	for i, suffix := range []string{"unicode_ci", "icelandic_ci", "latvian_ci", "romanian_ci", "slovenian_ci",
		"polish_ci", "estonian_ci", "spanish_ci", "swedish_ci", "turkish_ci", "czech_ci", "danish_ci", "lithuanian_ci",
		"slovak_ci", "spanish2_ci", "roman_ci", "persian_ci", "esperanto_ci", "hungarian_ci", "sinhala_ci", "german2_ci",
		"croatian_mysql561_ci", "unicode_520_ci", "vietnamese_ci"} {
		utf8mb3[uint16(192+i)] = "utf8mb3_" + suffix
		utf8mb4[uint16(224+i)] = "utf8mb4_" + suffix
	}
	add(&charset{name: "utf8mb4", kind: kindUTF8MB4, maxLen: 4, inEngine: true}, 45, utf8mb4)
	add(&charset{name: "utf8mb3", kind: kindUTF8MB3, maxLen: 3, inEngine: true}, 33, utf8mb3)
	add(&charset{name: "ascii", kind: kindASCII, maxLen: 1, inEngine: true}, 11, map[uint16]string{11: "ascii_general_ci", 65: "ascii_bin"})
	add(&charset{name: "binary", kind: kindBinary, maxLen: 1, inEngine: true}, 63, map[uint16]string{63: "binary"})
	for _, sb := range []struct {
		name string
		cm   *charmap.Charmap
		// c1 maps bytes 0x80-0x9F the table leaves out to the C1
		// controls, as MySQL's latin1 (cp1252 but for that) and ISO 8859
		// sets do; MySQL's Windows code pages read them as '?'.
		c1    bool
		def   uint16
		colls map[uint16]string
	}{
		{"latin1", charmap.Windows1252, true, 8, map[uint16]string{5: "latin1_german1_ci", 8: "latin1_swedish_ci",
			15: "latin1_danish_ci", 31: "latin1_german2_ci", 47: "latin1_bin", 48: "latin1_general_ci",
			49: "latin1_general_cs", 94: "latin1_spanish_ci"}},
		{"latin2", charmap.ISO8859_2, true, 9, map[uint16]string{2: "latin2_czech_cs", 9: "latin2_general_ci",
			21: "latin2_hungarian_ci", 27: "latin2_croatian_ci", 77: "latin2_bin"}},
		{"latin5", charmap.ISO8859_9, true, 30, map[uint16]string{30: "latin5_turkish_ci", 78: "latin5_bin"}},
		{"latin7", charmap.ISO8859_13, true, 41, map[uint16]string{20: "latin7_estonian_cs", 41: "latin7_general_ci",
			42: "latin7_general_cs", 79: "latin7_bin"}},
		{"cp1250", charmap.Windows1250, false, 26, map[uint16]string{26: "cp1250_general_ci", 34: "cp1250_czech_cs",
			44: "cp1250_croatian_ci", 66: "cp1250_bin", 99: "cp1250_polish_ci"}},
		{"cp1251", charmap.Windows1251, false, 51, map[uint16]string{14: "cp1251_bulgarian_ci", 23: "cp1251_ukrainian_ci",
			50: "cp1251_bin", 51: "cp1251_general_ci", 52: "cp1251_general_cs"}},
		{"cp1257", charmap.Windows1257, false, 59, map[uint16]string{29: "cp1257_lithuanian_ci", 58: "cp1257_bin", 59: "cp1257_general_ci"}},
		{"cp850", charmap.CodePage850, false, 4, map[uint16]string{4: "cp850_general_ci", 80: "cp850_bin"}},
		{"cp852", charmap.CodePage852, false, 40, map[uint16]string{40: "cp852_general_ci", 81: "cp852_bin"}},
		{"koi8r", charmap.KOI8R, false, 7, map[uint16]string{7: "koi8r_general_ci", 74: "koi8r_bin"}},
		{"macroman", charmap.Macintosh, false, 39, map[uint16]string{39: "macroman_general_ci", 53: "macroman_bin"}},
	} {
		cs := &charset{name: sb.name, kind: kindSingleByte, maxLen: 1, decode: new([256]rune), encode: map[rune]byte{},
			inEngine: sb.name == "latin1" || sb.name == "latin7" || sb.name == "cp1257"}
		for b := range 256 {
			r := sb.cm.DecodeByte(byte(b))
			switch {
			case r == utf8.RuneError && sb.c1 && b >= 0x80 && b < 0xA0:
				r = rune(b)
			case r == utf8.RuneError:
				r = '?'
			}
			cs.decode[b] = r
			if _, dup := cs.encode[r]; !dup && (r != '?' || b == '?') {
				cs.encode[r] = byte(b)
			}
		}
		add(cs, sb.def, sb.colls)
	}
	return t
}

// lookupCharset finds a character set by name, case-insensitively; utf8
// is utf8mb3, as in MariaDB 10.11 and MySQL 8.
func lookupCharset(name string) *charset {
	name = strings.ToLower(name)
	if name == "utf8" {
		name = "utf8mb3"
	}
	return supportedCharsets.byName[name]
}

// lookupCollation finds a collation by name; utf8_* names are utf8mb3_*.
func lookupCollation(name string) *collation {
	name = strings.ToLower(name)
	if rest, ok := strings.CutPrefix(name, "utf8_"); ok {
		name = "utf8mb3_" + rest
	}
	return supportedCharsets.collByName[name]
}

// isASCII tells text every supported character set reads alike.
func isASCII[T ~string | ~[]byte](b T) bool {
	for i := 0; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// toUTF8 converts text the client sent in cs to UTF-8 (b itself when
// nothing changes). A byte cs does not define becomes '?'.
func (cs *charset) toUTF8(b []byte) []byte {
	if cs == nil || cs.kind == kindUTF8MB4 || cs.kind == kindUTF8MB3 || cs.kind == kindBinary || isASCII(b) {
		return b
	}
	out := make([]byte, 0, len(b)+len(b)/2)
	for _, c := range b {
		switch {
		case c < utf8.RuneSelf:
			out = append(out, c)
		case cs.kind == kindASCII:
			out = append(out, '?')
		default:
			out = utf8.AppendRune(out, cs.decode[c])
		}
	}
	return out
}

// fromUTF8 converts UTF-8 text to cs (s itself when nothing changes): a
// character cs cannot hold becomes '?', as MySQL sends it.
func (cs *charset) fromUTF8(s []byte) []byte {
	if cs == nil || cs.kind == kindUTF8MB4 || cs.kind == kindBinary || isASCII(s) {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			out = append(out, s[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			// Not UTF-8 (the engine sends none): pass the byte on.
			if cs.kind == kindUTF8MB3 {
				out = append(out, s[i])
			} else {
				out = append(out, '?')
			}
		case cs.kind == kindUTF8MB3:
			if n == 4 {
				out = append(out, '?')
			} else {
				out = append(out, s[i:i+n]...)
			}
		case cs.kind == kindSingleByte:
			b, ok := cs.encode[r]
			if !ok {
				b = '?'
			}
			out = append(out, b)
		default: // ascii
			out = append(out, '?')
		}
		i += n
	}
	return out
}

// connCharsets are a session's connection character sets. The zero value
// converts nothing: sessions with an upstream, whose character sets are
// the upstream's business, keep it.
type connCharsets struct {
	// client is character_set_client (a collation: the handshake's, or
	// the one SET NAMES ... COLLATE named; MariaDB keeps it so).
	client *collation
	// connection is collation_connection (and character_set_connection).
	connection *collation
	// results is character_set_results; nil is NULL (no conversion, each
	// column labelled with its own collation) or, with client nil,
	// nothing set at all.
	results *collation
}

// defaultCollation is heapproxy's character_set_server and
// collation_server (see embeddedVars).
func defaultCollation() *collation { return supportedCharsets.collByID[mysqlwire.UTF8MB4GeneralCI] }

// handshakeCharsets are the connection character sets a handshake or
// COM_CHANGE_USER asks for with a collation id. An id heapproxy cannot
// convert falls back to the server's character set, as MySQL does with an
// id it does not know.
func handshakeCharsets(id uint16) connCharsets {
	c := supportedCharsets.collByID[id]
	if c == nil {
		c = defaultCollation()
	}
	return connCharsets{client: c, connection: c, results: c}
}

// active tells a session whose character sets are heapproxy's to convert.
func (cc *connCharsets) active() bool { return cc.client != nil }

// decode converts a statement or string parameter to UTF-8.
func (cc *connCharsets) decode(b []byte) []byte {
	if cc.client == nil {
		return b
	}
	return cc.client.cs.toUTF8(b)
}

// encode converts UTF-8 text to character_set_results.
func (cc *connCharsets) encode(b []byte) []byte {
	if cc.results == nil {
		return b
	}
	return cc.results.cs.fromUTF8(b)
}

func (cc *connCharsets) encodeString(s string) string {
	if cc.results == nil || isASCII(s) {
		return s
	}
	return string(cc.encode([]byte(s)))
}

// resultColumns labels text columns (every collation but binary) with
// character_set_results' collation and their length in its bytes per
// character, and converts the names, as MySQL sends column definitions.
// It returns which columns' values to convert (nil: none). A length comes
// counted in the bytes per character of the column's own label (MySQL's
// largest length stays as it is).
func (cc *connCharsets) resultColumns(cols []mysqlwire.Column) (convert []bool) {
	if cc.results == nil {
		return nil
	}
	to := cc.results
	for i := range cols {
		c := &cols[i]
		c.Name, c.Table, c.Schema = cc.encodeString(c.Name), cc.encodeString(c.Table), cc.encodeString(c.Schema)
		if c.Charset == mysqlwire.BinaryCollation {
			continue
		}
		from := uint32(4)
		if own := supportedCharsets.collByID[c.Charset]; own != nil {
			from = own.cs.maxLen
		}
		c.Charset = to.id
		if from != to.cs.maxLen && c.Length != math.MaxUint32 {
			c.Length = c.Length / from * to.cs.maxLen
		}
		if to.cs.kind != kindUTF8MB4 && to.cs.kind != kindBinary {
			if convert == nil {
				convert = make([]bool, len(cols))
			}
			convert[i] = true
		}
	}
	return convert
}

// convertRow converts a row's text cells to character_set_results in
// place (NULL stays NULL, and an empty value empty).
func (cc *connCharsets) convertRow(row [][]byte, convert []bool) {
	for i, yes := range convert {
		if yes && i < len(row) && len(row[i]) > 0 {
			row[i] = cc.encode(row[i])
		}
	}
}

// convertError converts an error message to character_set_results, as
// MySQL sends it.
func (cc *connCharsets) convertError(e *mysql.MyError) *mysql.MyError {
	if cc.results == nil || isASCII(e.Message) {
		return e
	}
	return &mysql.MyError{Code: e.Code, State: e.State, Message: cc.encodeString(e.Message)}
}

// The variables the connection character sets are read and set through.
const (
	varCharsetClient     = "character_set_client"
	varCharsetConnection = "character_set_connection"
	varCharsetResults    = "character_set_results"
	varCollationConn     = "collation_connection"
)

// variable is the value of one of the connection's character set
// variables (nil for NULL), and whether name is one.
func (cc *connCharsets) variable(name string) (v mysqlwire.Value, ok bool) {
	if !cc.active() {
		return nil, false
	}
	switch name {
	case varCharsetClient:
		return mysqlwire.Str(cc.client.cs.name), true
	case varCharsetConnection:
		return mysqlwire.Str(cc.connection.cs.name), true
	case varCollationConn:
		return mysqlwire.Str(cc.connection.name), true
	case varCharsetResults:
		if cc.results == nil {
			return nil, true
		}
		return mysqlwire.Str(cc.results.cs.name), true
	}
	return nil, false
}

// setsCharsets tells whether an assignment changes the connection's
// character sets.
func setsCharsets(a parser.Assignment) bool {
	if a.User {
		return false
	}
	switch a.Name {
	case "names", "character set", varCharsetClient, varCharsetConnection, varCharsetResults, varCollationConn:
		return true
	}
	return false
}

// charsetValue is the evaluated right side of a character set assignment.
type charsetValue struct {
	name  string // a name, or a collation id in decimal
	null  bool
	deflt bool
}

// evalFunc evaluates an expression heapproxy cannot read by itself (a user
// variable, a function), giving its text or null.
type evalFunc func(e parser.Expr) (string, bool, *mysql.MyError)

// value reads an assignment's right side: DEFAULT, NULL, a name (quoted
// or not), a number, one of these variables, or anything else through
// eval.
func (cc *connCharsets) value(e parser.Expr, eval evalFunc) (charsetValue, *mysql.MyError) {
	switch {
	case e.Kind == parser.ExprOther && (e.Text == "" || strings.EqualFold(e.Text, "DEFAULT")):
		return charsetValue{deflt: true}, nil
	case e.Kind == parser.ExprLiteral:
		return charsetValue{name: e.Value, null: e.Lit == parser.LitNull}, nil
	case e.Kind == parser.ExprOther && len(e.Text) > 2 && e.Text[0] == '`' && e.Text[len(e.Text)-1] == '`' &&
		strings.Count(e.Text, "`") == 2:
		return charsetValue{name: e.Text[1 : len(e.Text)-1]}, nil
	case e.Kind == parser.ExprSysVar && e.Scope != parser.ScopeGlobal:
		if v, ok := cc.variable(e.Name); ok {
			if v == nil {
				return charsetValue{null: true}, nil
			}
			return charsetValue{name: *v}, nil
		}
	}
	if eval == nil {
		return charsetValue{}, mysql.NewError(mysql.ER_NOT_SUPPORTED_YET,
			fmt.Sprintf("heapproxy's embedded default cannot evaluate %s", e.Text))
	}
	s, null, err := eval(e)
	if err != nil {
		return charsetValue{}, err
	}
	return charsetValue{name: s, null: null}, nil
}

// charsetNamed is the character set a value names: a name, or the id of a
// character set's default collation, as MySQL takes them.
func charsetNamed(v charsetValue) *charset {
	if id, err := strconv.ParseUint(v.name, 10, 16); err == nil {
		if c := supportedCharsets.collByID[uint16(id)]; c != nil && c.cs.def == c {
			return c.cs
		}
		return nil
	}
	return lookupCharset(v.name)
}

// collationNamed is the collation a value names: a name or an id.
func collationNamed(v charsetValue) *collation {
	if id, err := strconv.ParseUint(v.name, 10, 16); err == nil {
		return supportedCharsets.collByID[uint16(id)]
	}
	return lookupCollation(v.name)
}

// assign applies one assignment of value v (read before any assignment
// of the statement applies, as MySQL evaluates them) as MariaDB does, or
// answers its error: 1115 for a character set heapproxy does not convert
// (MySQL's unknown one), 1273 for such a collation, 1253 for SET NAMES x
// COLLATE y of another character set, 1231 for NULL where only
// character_set_results takes it.
func (cc *connCharsets) assign(a parser.Assignment, v charsetValue) *mysql.MyError {
	varName := a.Name
	if a.Name == "names" || a.Name == "character set" {
		varName = varCharsetClient
	}
	if v.null && a.Name != varCharsetResults {
		return mysql.NewDefaultError(mysql.ER_WRONG_VALUE_FOR_VAR, varName, "NULL")
	}
	def := defaultCollation()
	switch a.Name {
	case "names":
		c := def
		if !v.deflt {
			cs := charsetNamed(v)
			if cs == nil {
				return mysql.NewDefaultError(mysql.ER_UNKNOWN_CHARACTER_SET, v.name)
			}
			c = cs.def
		}
		if a.Collate != "" {
			coll := lookupCollation(a.Collate)
			if coll == nil {
				return mysql.NewDefaultError(mysql.ER_UNKNOWN_COLLATION, a.Collate)
			}
			if coll.cs != c.cs {
				return mysql.NewDefaultError(mysql.ER_COLLATION_CHARSET_MISMATCH, a.Collate, c.cs.name)
			}
			c = coll
		}
		cc.client, cc.connection, cc.results = c, c, c
	case "character set":
		c := def
		if !v.deflt {
			cs := charsetNamed(v)
			if cs == nil {
				return mysql.NewDefaultError(mysql.ER_UNKNOWN_CHARACTER_SET, v.name)
			}
			c = cs.def
		}
		// The connection takes the database's character set, which is
		// the server's here.
		cc.client, cc.results, cc.connection = c, c, def
	case varCollationConn:
		c := def
		if !v.deflt {
			if c = collationNamed(v); c == nil {
				return mysql.NewDefaultError(mysql.ER_UNKNOWN_COLLATION, v.name)
			}
		}
		cc.connection = c
	default:
		c := def
		switch {
		case v.null:
			c = nil
		case !v.deflt:
			cs := charsetNamed(v)
			if cs == nil {
				return mysql.NewDefaultError(mysql.ER_UNKNOWN_CHARACTER_SET, v.name)
			}
			c = cs.def
		}
		switch a.Name {
		case varCharsetClient:
			cc.client = c
		case varCharsetConnection:
			cc.connection = c
		case varCharsetResults:
			cc.results = c
		}
	}
	return nil
}

// assignAll applies a statement's character set assignments to a copy of
// cc: every value is read first, then each applies in turn; on the first
// error none applies, as in MySQL.
func (cc connCharsets) assignAll(set []parser.Assignment, eval evalFunc) (connCharsets, *mysql.MyError) {
	values := make([]charsetValue, len(set))
	for i, a := range set {
		v, e := cc.value(a.Value, eval)
		if e != nil {
			return cc, e
		}
		values[i] = v
	}
	next := cc
	if !next.active() {
		next = handshakeCharsets(0)
	}
	for i, a := range set {
		if e := next.assign(a, values[i]); e != nil {
			return cc, e
		}
	}
	return next, nil
}

// setCharsetPart reads one assignment of SET NAMES / CHARACTER SET.
var setCharsetPart = regexp.MustCompile("(?is)^\\s*(?:SESSION\\s+|LOCAL\\s+)?(NAMES|CHARACTER\\s+SET|CHARSET)\\s+" +
	"(?:'([^']*)'|\"([^\"]*)\"|`([^`]*)`|([A-Za-z0-9_]+))" +
	"(?:\\s+COLLATE\\s+(?:'([^']*)'|\"([^\"]*)\"|`([^`]*)`|([A-Za-z0-9_]+)))?\\s*$")

// splitSetCharsets reads a SET statement the classifier's grammar could
// not parse (it knows only the character sets TiDB supports): its SET
// NAMES / CHARACTER SET assignments, and a SET of the others for the
// engine ("" when there are none). ok is false when it has no such
// assignment.
func splitSetCharsets(query []byte) (set []parser.Assignment, rest string, ok bool) {
	assignments, ok := setAssignments(query)
	if !ok {
		return nil, "", false
	}
	var others []string
	for _, part := range assignments {
		m := setCharsetPart.FindStringSubmatch(part)
		if m == nil {
			others = append(others, strings.TrimSpace(part))
			continue
		}
		a := parser.Assignment{Name: "names", Collate: m[6] + m[7] + m[8] + m[9]}
		if !strings.EqualFold(m[1], "names") {
			a.Name = "character set"
		}
		name := m[2] + m[3] + m[4] + m[5]
		a.Value = parser.Expr{Kind: parser.ExprLiteral, Lit: parser.LitString, Value: name, Text: name}
		if m[5] != "" && strings.EqualFold(name, "DEFAULT") {
			a.Value = parser.Expr{Kind: parser.ExprOther, Text: "DEFAULT"}
		}
		set = append(set, a)
	}
	if len(set) == 0 {
		return nil, "", false
	}
	if len(others) > 0 {
		rest = "SET " + strings.Join(others, ", ")
	}
	return set, rest, true
}

// setWithout is a SET statement's text without the assignments drop
// picks (nil when none is left). Its assignments are cut at the commas
// between them; when that does not give one piece per parsed assignment
// (a comma in a comment), the statement is kept whole.
func setWithout(query []byte, set []parser.Assignment, drop func(parser.Assignment) bool) []byte {
	parts, ok := setAssignments(query)
	if !ok || len(parts) != len(set) {
		return query
	}
	var keep []string
	for i, a := range set {
		if !drop(a) {
			keep = append(keep, strings.TrimSpace(parts[i]))
		}
	}
	if len(keep) == 0 {
		return nil
	}
	return []byte("SET " + strings.Join(keep, ", "))
}

// setAssignments cuts a SET statement's text into its assignments, at the
// commas outside quotes and parentheses; ok is false for another statement.
func setAssignments(query []byte) (parts []string, ok bool) {
	q := strings.TrimRight(strings.TrimSpace(string(query)), "; \t\r\n")
	if len(q) < 4 || !strings.EqualFold(q[:3], "SET") || !strings.ContainsAny(q[3:4], " \t\r\n") {
		return nil, false
	}
	return splitTopLevel(q[4:], ','), true
}

// splitTopLevel splits s at each sep outside quotes and parentheses.
func splitTopLevel(s string, sep byte) []string {
	var parts []string
	var quote byte
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote != '`' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == sep && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// The session's side: the engine learns the character sets it types
// literals with, and reads of the variables are answered here.

// engineCollation is what the engine is told for c: c itself when the
// engine implements its character set, else utf8mb4 (the statement
// reaches it in UTF-8 anyway; only how literals are typed differs).
func engineCollation(c *collation) *collation {
	if c.cs.inEngine {
		return c
	}
	return defaultCollation()
}

// engineCharsetsDefault tells character sets a new engine session already
// has (utf8mb4 throughout), so nothing need be sent.
func (cc *connCharsets) engineCharsetsDefault() bool {
	return !cc.active() || engineCollation(cc.client).cs.kind == kindUTF8MB4 && engineCollation(cc.connection).cs.kind == kindUTF8MB4
}

// syncEngineCharsets tells the engine character_set_client and the
// connection's character set and collation (see engineCollation). Its
// character_set_results stays utf8mb4, so that values come out in UTF-8
// for the session to convert; for a utf8mb4 connection it keeps its own
// collation, as before any SET. A collation the engine does not know is
// its character set's default there. Reads of these variables answer the
// session's values (reportCharsets).
func (s *session) syncEngineCharsets(ctx context.Context, sess *sqlview.Session) *mysql.MyError {
	client, conn := engineCollation(s.charsets.client), engineCollation(s.charsets.connection)
	set := fmt.Sprintf("SET character_set_client = '%s', character_set_connection = '%s'", client.cs.name, conn.cs.name)
	var err error
	for _, coll := range []*collation{conn, conn.cs.def} {
		stmt := set
		if coll.cs.kind != kindUTF8MB4 {
			stmt += fmt.Sprintf(", collation_connection = '%s'", coll.name)
		}
		var res *sqlview.Result
		if res, err = s.srv.deps.SQL.Query(ctx, sess, stmt+", character_set_results = 'utf8mb4'"); err == nil {
			res.Close()
			return nil
		}
	}
	return statementError(ctx, err)
}

// evalInEngine evaluates, in the engine, the right side of a character
// set assignment heapproxy cannot read itself (a user variable, a
// function).
func (s *session) evalInEngine(ctx context.Context, sess *sqlview.Session) evalFunc {
	return func(e parser.Expr) (string, bool, *mysql.MyError) {
		res, err := s.srv.deps.SQL.Query(ctx, sess, "SELECT "+e.Text)
		if err != nil {
			return "", false, statementError(ctx, err)
		}
		defer res.Close()
		row, err := res.Next()
		if err != nil || len(row) == 0 {
			return "", false, mysql.NewDefaultError(mysql.ER_WRONG_VALUE_FOR_VAR, "character_set_client", e.Text)
		}
		if row[0] == nil {
			return "", true, nil
		}
		return string(row[0]), false, nil
	}
}

// reportCharsets makes the engine answer the connection's character set
// variables as the session holds them wherever a statement reads them
// (@@x in any query, SHOW VARIABLES): the engine's own
// character_set_results stays utf8mb4 and it is told only the character
// sets it implements (syncEngineCharsets).
func (s *session) reportCharsets(sess *sqlview.Session) {
	for _, name := range []string{varCharsetClient, varCharsetConnection, varCharsetResults, varCollationConn} {
		if v, ok := s.charsets.variable(name); ok {
			if v == nil {
				sess.Report(name, nil)
			} else {
				sess.Report(name, *v)
			}
		}
	}
}
