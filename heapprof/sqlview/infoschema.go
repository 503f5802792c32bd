package sqlview

// information_schema and the SHOW statements that describe tables answer
// about the heapprof tables what MariaDB answers for the DDL SHOW CREATE
// TABLE prints (TestInformationSchemaMatchesMariaDB). go-mysql-server's
// answers are MySQL 8's, and some are its own planner's view:
//
//   - the primary key is declared non-unique to go-mysql-server (index.go),
//     so NON_UNIQUE / Non_unique answer the key as declared to clients;
//   - collations are named as MariaDB knows them (utf8mb4_bin, as in SHOW
//     CREATE TABLE) instead of MySQL 8's utf8mb4_0900_bin;
//   - TEXT-family lengths are bytes (65535), not utf8mb4 characters (16383);
//   - integer column types carry MariaDB's display widths (bigint(20));
//   - PRIVILEGES lists what the session's user may do (select).
//
// The rows are corrected where go-mysql-server makes them, before any
// filter of the statement sees them: information_schema tables through a
// wrapper of the catalog's information_schema database (its tables' row
// readers are exported), SHOW statements through the engine's exec builder.

import (
	"regexp"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/types"
	sqltypes "github.com/dolthub/vitess/go/sqltypes"
)

// gmsBinCollation is go-mysql-server's default collation: MySQL 8's binary
// utf8mb4 collation, unknown to MariaDB. utf8mb4_bin orders the same way
// (by code point) and both servers know it; it differs in ignoring
// trailing spaces (PAD SPACE), which the engine does not (README).
const (
	gmsBinCollation     = "utf8mb4_0900_bin"
	mariaDBBinCollation = "utf8mb4_bin"
)

// mariaDBCollationName names a collation as MariaDB does.
func mariaDBCollationName(v any) any {
	if s, ok := v.(string); ok && s == gmsBinCollation {
		return mariaDBBinCollation
	}
	return v
}

// textBytes are MariaDB's CHARACTER_MAXIMUM_LENGTH and
// CHARACTER_OCTET_LENGTH of the TEXT and BLOB types: their limit in bytes,
// whatever the character set (go-mysql-server divides TEXT's by 4 for
// utf8mb4).
var textBytes = map[string]int64{
	"tinytext": 255, "text": 65535, "mediumtext": 16777215, "longtext": 4294967295,
	"tinyblob": 255, "blob": 65535, "mediumblob": 16777215, "longblob": 4294967295,
}

// intType is an integer column type as go-mysql-server prints it, without
// a display width.
var intType = regexp.MustCompile(`^(tinyint|smallint|mediumint|int|bigint)( unsigned)?( zerofill)?$`)

// intWidths are MariaDB's default display widths, signed and unsigned.
var intWidths = map[string][2]string{
	"tinyint": {"4", "3"}, "smallint": {"6", "5"}, "mediumint": {"9", "8"}, "int": {"11", "10"}, "bigint": {"20", "20"},
}

// mariaDBColumnType adds MariaDB's display width to an integer type:
// bigint(20), int(10) unsigned.
func mariaDBColumnType(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	m := intType.FindStringSubmatch(s)
	if m == nil {
		return v
	}
	w := intWidths[m[1]]
	width := w[0]
	if m[2] != "" {
		width = w[1]
	}
	return m[1] + "(" + width + ")" + m[2] + m[3]
}

// withInt is n in the Go type of old, so the column's type converts it as
// it did the value it replaces.
func withInt(old any, n int64) any {
	switch old.(type) {
	case int:
		return int(n)
	case int32:
		return int32(n)
	case uint32:
		return uint32(n)
	case uint64:
		return uint64(n)
	case int8:
		return int8(n)
	}
	return n
}

// columnPrivileges is what information_schema.COLUMNS.PRIVILEGES and SHOW
// FULL COLUMNS list for a heapprof column: SELECT for a user that may read
// profiles (the grant SHOW GRANTS lists), nothing otherwise.
func columnPrivileges(ctx *sql.Context) string {
	if s := sessionOf(ctx); s != nil && s.profiles {
		return "select"
	}
	return ""
}

// schemaKeys are the heapprof tables' keys as clients see them, read once
// from their indexes (index.go): the key flags of their columns in result
// sets (flags.go), and their unique indexes, which go-mysql-server is not
// told (information_schema, SHOW INDEX).
type schemaKeys struct {
	cols    keyFlags
	uniques map[string]map[string]bool // by table and index name
}

func newSchemaKeys(tables map[string]sql.Table) schemaKeys {
	keys := schemaKeys{cols: keyFlags{}, uniques: map[string]map[string]bool{}}
	for name, t := range tables {
		it, ok := t.(*indexedTable)
		if !ok {
			continue
		}
		keys.cols[name] = map[string]uint16{}
		for _, x := range it.indexes {
			f := flagMultipleKey | flagPartKey
			if x.col.PrimaryKey {
				f = flagPriKey | flagPartKey
			}
			keys.cols[name][x.col.Name] = f
			if x.unique {
				if keys.uniques[name] == nil {
					keys.uniques[name] = map[string]bool{}
				}
				keys.uniques[name][x.ID()] = true
			}
		}
	}
	return keys
}

// unique tells whether index of db.table is a unique key.
func (k schemaKeys) unique(db, table, index any) bool {
	d, _ := db.(string)
	t, _ := table.(string)
	x, _ := index.(string)
	return strings.EqualFold(d, SchemaName) && k.uniques[strings.ToLower(t)][x]
}

// rowFix corrects one row in place.
type rowFix func(ctx *sql.Context, row sql.Row)

// fixIter applies a rowFix to every row.
type fixIter struct {
	sql.RowIter
	fix rowFix
}

func (it *fixIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err != nil {
		return nil, err
	}
	row = slices.Clone(row) // the reader's rows may be shared
	it.fix(ctx, row)
	return row, nil
}

// columnIndex finds the columns of sch by name; -1 for a missing one.
func columnIndex(sch sql.Schema, names ...string) []int {
	out := make([]int, len(names))
	for i, n := range names {
		out[i] = sch.IndexOfColName(n)
	}
	return out
}

// set replaces row[i] with f of it, when the column exists.
func set(row sql.Row, i int, f func(any) any) {
	if i >= 0 && i < len(row) {
		row[i] = f(row[i])
	}
}

// infoSchemaDB is go-mysql-server's information_schema database with
// MariaDB's answers about the heapprof tables (see the file comment).
type infoSchemaDB struct {
	sql.Database
	keys schemaKeys
}

func (d *infoSchemaDB) GetTableInsensitive(ctx *sql.Context, name string) (sql.Table, bool, error) {
	t, ok, err := d.Database.GetTableInsensitive(ctx, name)
	if err != nil || !ok {
		return t, ok, err
	}
	fix := d.fixFor(strings.ToLower(name), t.Schema())
	sch := mariaDBSchema(strings.ToLower(name), t.Schema())
	if fix == nil && sch == nil {
		return t, ok, nil
	}
	if ct, isColumns := t.(*information_schema.ColumnsTable); isColumns {
		// The analyzer resolves COLUMNS' defaults through this type: keep
		// it, and wrap its exported row reader (the table is new on every
		// call).
		read := ct.RowIter
		ct.RowIter = func(ctx *sql.Context, cat sql.Catalog, all sql.Schema) (sql.RowIter, error) {
			iter, err := read(ctx, cat, all)
			if err != nil {
				return nil, err
			}
			return &fixIter{RowIter: iter, fix: fix}, nil
		}
		return ct, true, nil
	}
	return &fixedTable{Table: t, fix: fix, schema: sch}, true, nil
}

// nullColumnTypes are the types MariaDB 10.11 gives the information_schema
// columns go-mysql-server declares as MySQL 8 does, BINARY(0): always
// NULL, but typed as text on MariaDB (sql_show.cc), and a client reads a
// column's type whatever its values (JDBC's getColumnType, PyMySQL's
// bytes for binary).
var nullColumnTypes = map[string]map[string]sql.Type{
	information_schema.SchemataTableName:   {"SQL_PATH": infoVarchar(512)},
	information_schema.RoutinesTableName:   {"EXTERNAL_NAME": infoVarchar(64), "SQL_PATH": infoVarchar(64)},
	information_schema.StatisticsTableName: {"PACKED": infoVarchar(10)},
	information_schema.TriggersTableName: {
		"ACTION_CONDITION":           types.MustCreateString(sqltypes.Text, types.LongTextBlobMax, sql.Collation_Information_Schema_Default),
		"ACTION_REFERENCE_OLD_TABLE": infoVarchar(64), "ACTION_REFERENCE_NEW_TABLE": infoVarchar(64),
	},
}

func infoVarchar(n int64) sql.Type {
	return types.MustCreateString(sqltypes.VarChar, n, sql.Collation_Information_Schema_Default)
}

// mariaDBSchema is sch with nullColumnTypes' types, nil when table name
// has none.
func mariaDBSchema(name string, sch sql.Schema) sql.Schema {
	fixes := nullColumnTypes[name]
	if fixes == nil {
		return nil
	}
	out := sch.Copy()
	for _, c := range out {
		if t, ok := fixes[strings.ToUpper(c.Name)]; ok {
			c.Type = t
		}
	}
	return out
}

// fixFor is the correction of the rows of information_schema table name,
// nil for a table left as it is.
func (d *infoSchemaDB) fixFor(name string, sch sql.Schema) rowFix {
	switch name {
	case information_schema.SchemataTableName:
		c := columnIndex(sch, "DEFAULT_COLLATION_NAME")
		return func(_ *sql.Context, row sql.Row) { set(row, c[0], mariaDBCollationName) }
	case information_schema.TablesTableName:
		c := columnIndex(sch, "TABLE_COLLATION")
		return func(_ *sql.Context, row sql.Row) { set(row, c[0], mariaDBCollationName) }
	case information_schema.ColumnsTableName:
		const (
			schema = iota
			dataType
			maxLen
			octetLen
			collation
			columnType
			privileges
			generation
		)
		c := columnIndex(sch, "TABLE_SCHEMA", "DATA_TYPE", "CHARACTER_MAXIMUM_LENGTH", "CHARACTER_OCTET_LENGTH",
			"COLLATION_NAME", "COLUMN_TYPE", "PRIVILEGES", "GENERATION_EXPRESSION")
		return func(ctx *sql.Context, row sql.Row) {
			if c[dataType] >= 0 {
				if dt, ok := row[c[dataType]].(string); ok {
					if n, ok := textBytes[strings.ToLower(dt)]; ok {
						set(row, c[maxLen], func(v any) any { return withInt(v, n) })
						set(row, c[octetLen], func(v any) any { return withInt(v, n) })
					}
				}
			}
			set(row, c[collation], mariaDBCollationName)
			set(row, c[columnType], mariaDBColumnType)
			// MariaDB answers NULL for a column that is not generated.
			set(row, c[generation], func(v any) any {
				if v == "" {
					return nil
				}
				return v
			})
			if c[schema] >= 0 && strings.EqualFold(toString(row[c[schema]]), SchemaName) {
				set(row, c[privileges], func(any) any { return columnPrivileges(ctx) })
			}
		}
	case information_schema.StatisticsTableName:
		c := columnIndex(sch, "TABLE_SCHEMA", "TABLE_NAME", "INDEX_NAME", "NON_UNIQUE")
		if slices.Contains(c, -1) {
			return nil
		}
		return func(_ *sql.Context, row sql.Row) {
			if d.keys.unique(row[c[0]], row[c[1]], row[c[2]]) {
				row[c[3]] = withInt(row[c[3]], 0)
			}
		}
	}
	return nil
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}

// fixedTable is an information_schema table whose rows are corrected.
type fixedTable struct {
	sql.Table
	fix    rowFix     // nil: rows as they are
	schema sql.Schema // nil: the table's
}

func (t *fixedTable) Schema() sql.Schema {
	if t.schema != nil {
		return t.schema
	}
	return t.Table.Schema()
}

var (
	_ sql.CatalogTable = (*fixedTable)(nil)
	_ sql.Databaseable = (*fixedTable)(nil)
)

// AssignCatalog passes the catalog on: the table's reader reads it.
func (t *fixedTable) AssignCatalog(cat sql.Catalog) sql.Table {
	if ct, ok := t.Table.(sql.CatalogTable); ok {
		return &fixedTable{Table: ct.AssignCatalog(cat), fix: t.fix, schema: t.schema}
	}
	return t
}

func (t *fixedTable) Database() string { return sql.InformationSchemaDatabaseName }

func (t *fixedTable) PartitionRows(ctx *sql.Context, p sql.Partition) (sql.RowIter, error) {
	iter, err := t.Table.PartitionRows(ctx, p)
	if err != nil || t.fix == nil {
		return iter, err
	}
	return &fixIter{RowIter: iter, fix: t.fix}, nil
}

// showIter builds the SHOW statements that describe tables with MariaDB's
// answers (nil for other nodes): SHOW INDEX/KEYS, SHOW [FULL] COLUMNS and
// DESCRIBE, SHOW TABLE STATUS, SHOW CREATE DATABASE. Their filters (LIKE,
// WHERE) are nodes above, so they see the corrected rows.
func showIter(ctx *sql.Context, n sql.Node, row sql.Row, keys schemaKeys) (sql.RowIter, error) {
	var fix rowFix
	switch n := n.(type) {
	case *plan.ShowIndexes:
		db := ""
		if rt, ok := n.Child.(*plan.ResolvedTable); ok && rt.Database() != nil {
			db = rt.Database().Name()
		}
		c := columnIndex(n.Schema(), "Table", "Non_unique", "Key_name", "Collation")
		fix = func(_ *sql.Context, row sql.Row) {
			if c[0] >= 0 && c[1] >= 0 && c[2] >= 0 && keys.unique(db, row[c[0]], row[c[2]]) {
				row[c[1]] = withInt(row[c[1]], 0)
			}
			// B-tree keys are ascending, as information_schema.STATISTICS
			// says too.
			set(row, c[3], func(v any) any {
				if v == nil {
					return "A"
				}
				return v
			})
		}
	case *plan.ShowColumns:
		heapprof := false
		if rt, ok := n.Child.(*plan.ResolvedTable); ok && rt.Database() != nil {
			heapprof = strings.EqualFold(rt.Database().Name(), SchemaName)
		}
		c := columnIndex(n.Schema(), "Type", "Collation", "Privileges")
		fix = func(ctx *sql.Context, row sql.Row) {
			set(row, c[0], mariaDBColumnType)
			set(row, c[1], mariaDBCollationName)
			if heapprof {
				set(row, c[2], func(any) any { return columnPrivileges(ctx) })
			}
		}
	case *plan.ShowTableStatus:
		db := n.Database()
		c := columnIndex(n.Schema(), "Name", "Row_format", "Collation", "Create_options", "Comments")
		fix = func(ctx *sql.Context, row sql.Row) {
			// information_schema.TABLES says Dynamic (InnoDB's default
			// format); go-mysql-server's SHOW TABLE STATUS said Fixed.
			set(row, c[1], func(any) any { return "Dynamic" })
			set(row, c[2], mariaDBCollationName)
			set(row, c[3], func(v any) any {
				if v == nil {
					return ""
				}
				return v
			})
			if c[0] >= 0 && c[4] >= 0 && db != nil {
				if t, ok, err := db.GetTableInsensitive(ctx, toString(row[c[0]])); err == nil && ok {
					if ct, ok := t.(sql.CommentedTable); ok {
						row[c[4]] = ct.Comment()
					}
				}
			}
		}
	case *plan.ShowCreateDatabase:
		fix = func(_ *sql.Context, row sql.Row) {
			if len(row) == 2 {
				if ddl, ok := row[1].(string); ok {
					row[1] = strings.ReplaceAll(ddl, gmsBinCollation, mariaDBBinCollation)
				}
			}
		}
	default:
		return nil, nil
	}
	iter, err := rowexec.DefaultBuilder.Build(ctx, n, row)
	if err != nil {
		return nil, err
	}
	return &fixIter{RowIter: iter, fix: fix}, nil
}
