package server

import (
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// column describes one column of a result heapproxy writes itself.
type column struct {
	name     string
	table    string
	schema   string
	typ      byte
	charset  uint16
	length   uint32
	flags    uint16
	decimals uint8
}

// Collation ids heapproxy announces for the results it writes itself.
const (
	utf8mb4GeneralCI = 45
	binaryCollation  = 63
)

func textColumn(name string) column {
	return column{name: name, typ: mysql.MYSQL_TYPE_VAR_STRING, charset: utf8mb4GeneralCI, length: 1024}
}

func intColumn(name string) column {
	return column{name: name, typ: mysql.MYSQL_TYPE_LONGLONG, charset: binaryCollation, length: 21,
		flags: mysql.BINARY_FLAG | mysql.NUM_FLAG}
}

func (c column) dump() []byte {
	f := mysql.Field{
		Schema: []byte(c.schema), Table: []byte(c.table), OrgTable: []byte(c.table),
		Name: []byte(c.name), OrgName: []byte(c.name),
		Charset: c.charset, ColumnLength: c.length, Type: c.typ, Flag: c.flags, Decimal: c.decimals,
	}
	return f.Dump()
}

// resultWriter streams one text-protocol result set to the client: rows go
// to the connection's write buffer as they come, so a large answer (a DOT
// graph, a snapshot list) is never held whole.
type resultWriter struct {
	s     *session
	row   []byte
	cells [][]byte
}

// startResult writes the column count, definitions and their EOF.
func (s *session) startResult(cols ...column) (*resultWriter, error) {
	if err := s.client.writePacket(mysql.PutLengthEncodedInt(uint64(len(cols)))); err != nil {
		return nil, err
	}
	for _, c := range cols {
		if err := s.client.writePacket(c.dump()); err != nil {
			return nil, err
		}
	}
	if err := s.client.writePacket(eofPacket(s.status, 0)); err != nil {
		return nil, err
	}
	return &resultWriter{s: s}, nil
}

// value is one cell; nil is SQL NULL.
type value = *string

func str(s string) value { return &s }

func intValue(n int64) value { return str(strconv.FormatInt(n, 10)) }

// writeRow writes one row of cells.
func (w *resultWriter) writeRow(vals ...value) error {
	w.cells = w.cells[:0]
	for _, v := range vals {
		if v == nil {
			w.cells = append(w.cells, nil)
			continue
		}
		w.cells = append(w.cells, []byte(*v))
	}
	return w.writeRaw(w.cells)
}

// writeRaw writes one row of text-protocol cells; nil is SQL NULL.
func (w *resultWriter) writeRaw(cells [][]byte) error {
	w.row = w.row[:0]
	for _, c := range cells {
		if c == nil {
			w.row = append(w.row, 0xFB)
			continue
		}
		w.row = mysql.AppendLengthEncodedInteger(w.row, uint64(len(c)))
		w.row = append(w.row, c...)
	}
	return w.s.client.writePacket(w.row)
}

// finish closes the result set and flushes it.
func (w *resultWriter) finish() error {
	if err := w.s.client.writePacket(eofPacket(w.s.status, 0)); err != nil {
		return err
	}
	return w.s.client.flush()
}

// writeResult writes a whole small result set.
func (s *session) writeResult(cols []column, rows [][]value) error {
	w, err := s.startResult(cols...)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := w.writeRow(r...); err != nil {
			return err
		}
	}
	return w.finish()
}
