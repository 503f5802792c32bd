package sqlview

import "go.uber.org/zap"

// Default limits of Options; a zero field takes its default.
const (
	// DefaultMaxStatementMemory bounds what one statement may hold.
	DefaultMaxStatementMemory int64 = 256 << 20
	// DefaultMaxTotalMemory bounds what all running statements hold
	// together.
	DefaultMaxTotalMemory int64 = 512 << 20
	// DefaultMaxValueBytes is the largest string one function call may
	// build, MySQL's max_allowed_packet default.
	DefaultMaxValueBytes int64 = 64 << 20
)

// Options tune an Engine. The zero value is safe: every zero field takes
// its default.
type Options struct {
	// MaxStatementMemory is the estimated bytes of rows one statement may
	// hold at once in its buffering operators: ORDER BY (sort), ORDER BY
	// ... LIMIT (top-N: at most LIMIT rows), window functions, GROUP BY
	// groups, DISTINCT, cached subquery results and the rows a recursive
	// CTE produces. A statement that goes beyond fails with ERROR 1038
	// (HY001), naming the limit. Default DefaultMaxStatementMemory (256 MiB).
	MaxStatementMemory int64
	// MaxTotalMemory bounds the same estimate summed over all statements
	// running in the engine; the statement that goes beyond fails with
	// ERROR 1041 (HY000). Default DefaultMaxTotalMemory (512 MiB).
	MaxTotalMemory int64
	// MaxValueBytes is the largest string REPEAT, SPACE, LPAD, RPAD and
	// REPLACE may build; beyond it they answer NULL with warning 1301, as
	// MySQL does beyond max_allowed_packet. Default DefaultMaxValueBytes
	// (64 MiB).
	MaxValueBytes int64
	// Logger receives refused statements (file access, global state) at
	// warn level. Default: no logging.
	Logger *zap.Logger
}

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
	if o.MaxStatementMemory <= 0 {
		o.MaxStatementMemory = DefaultMaxStatementMemory
	}
	if o.MaxTotalMemory <= 0 {
		o.MaxTotalMemory = DefaultMaxTotalMemory
	}
	if o.MaxValueBytes <= 0 {
		o.MaxValueBytes = DefaultMaxValueBytes
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return o
}
