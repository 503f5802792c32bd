package mysqlwire

import (
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Column describes one column of a result heapproxy writes itself.
type Column struct {
	Name     string
	Table    string
	Schema   string
	Type     byte
	Charset  uint16
	Length   uint32
	Flags    uint16
	Decimals uint8
}

// Collation ids heapproxy announces for the results it writes itself.
const (
	UTF8MB4GeneralCI = 45
	BinaryCollation  = 63
)

func TextColumn(name string) Column {
	return Column{Name: name, Type: mysql.MYSQL_TYPE_VAR_STRING, Charset: UTF8MB4GeneralCI, Length: 1024}
}

func IntColumn(name string) Column {
	return Column{Name: name, Type: mysql.MYSQL_TYPE_LONGLONG, Charset: BinaryCollation, Length: 21,
		Flags: mysql.BINARY_FLAG | mysql.NUM_FLAG}
}

func (c Column) Dump() []byte {
	f := mysql.Field{
		Schema: []byte(c.Schema), Table: []byte(c.Table), OrgTable: []byte(c.Table),
		Name: []byte(c.Name), OrgName: []byte(c.Name),
		Charset: c.Charset, ColumnLength: c.Length, Type: c.Type, Flag: c.Flags, Decimal: c.Decimals,
	}
	return f.Dump()
}

// ResultWriter streams one text-protocol result set: rows go to the
// connection's write buffer as they come, so a large answer (a DOT graph, a
// snapshot list) is never held whole.
type ResultWriter struct {
	c      *Conn
	status uint16
	// Warnings is the warning count the closing EOF announces.
	Warnings uint16
	Row      []byte // reused by the binary protocol's rows too
	cells    [][]byte
}

// StartResult writes the column count, definitions and their EOF, with
// the session's status flags.
func StartResult(c *Conn, status uint16, cols ...Column) (*ResultWriter, error) {
	if err := c.WritePacket(mysql.PutLengthEncodedInt(uint64(len(cols)))); err != nil {
		return nil, err
	}
	for _, col := range cols {
		if err := c.WritePacket(col.Dump()); err != nil {
			return nil, err
		}
	}
	if err := c.WritePacket(EOFPacket(status, 0)); err != nil {
		return nil, err
	}
	return &ResultWriter{c: c, status: status}, nil
}

// Value is one cell; nil is SQL NULL.
type Value = *string

// Str is a cell holding s.
func Str(s string) Value { return &s }

// IntValue is a cell holding n.
func IntValue(n int64) Value { return Str(strconv.FormatInt(n, 10)) }

// WriteRow writes one row of cells.
func (w *ResultWriter) WriteRow(vals ...Value) error {
	w.cells = w.cells[:0]
	for _, v := range vals {
		if v == nil {
			w.cells = append(w.cells, nil)
			continue
		}
		w.cells = append(w.cells, []byte(*v))
	}
	return w.WriteRaw(w.cells)
}

// WriteRaw writes one row of text-protocol cells; nil is SQL NULL.
func (w *ResultWriter) WriteRaw(cells [][]byte) error {
	w.Row = w.Row[:0]
	for _, c := range cells {
		if c == nil {
			w.Row = append(w.Row, 0xFB)
			continue
		}
		w.Row = mysql.AppendLengthEncodedInteger(w.Row, uint64(len(c)))
		w.Row = append(w.Row, c...)
	}
	return w.c.WritePacket(w.Row)
}

// SetStatus changes the server status flags the closing EOF carries: a
// statement can open a transaction while its rows are read.
func (w *ResultWriter) SetStatus(status uint16) { w.status = status }

// Finish closes the result set and flushes it.
func (w *ResultWriter) Finish() error {
	if err := w.c.WritePacket(EOFPacket(w.status, w.Warnings)); err != nil {
		return err
	}
	return w.c.Flush()
}
