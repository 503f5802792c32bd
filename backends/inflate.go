package backends

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// maxGzipLayers is how many gzip layers inside one another inflate opens. A
// Go service sends one; more is refused, not unwrapped without end.
const maxGzipLayers = 2

// errInflateLimit marks data that inflates past the limit.
var errInflateLimit = errors.New("inflates past max_dump_bytes")

// isGzip reports whether data starts with gzip's magic number.
func isGzip(data []byte) bool {
	return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b
}

// inflate un-gzips data, layer by layer while the result is gzip again (at
// most maxGzipLayers), never holding more than limit inflated bytes: each
// layer is read through a limit of limit+1 bytes, so a gzip bomb costs at
// most that much memory and the time to inflate limit bytes, whatever it
// would inflate to. Data that is not gzip is returned as is. A layer over
// the limit is ErrTooLarge (and errInflateLimit).
func inflate(data []byte, limit int64) ([]byte, error) {
	for layer := 1; isGzip(data); layer++ {
		if layer > maxGzipLayers {
			return nil, fmt.Errorf("gzip nested %d layers deep (at most %d are opened)", layer, maxGzipLayers)
		}
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("gzip layer %d: %w", layer, err)
		}
		var buf bytes.Buffer
		// Grow once to what the compressed size suggests, within the
		// limit, instead of doubling from nothing.
		buf.Grow(int(min(limit+1, int64(len(data))*4, 64<<20)) + bytes.MinRead)
		n, err := buf.ReadFrom(io.LimitReader(zr, limit+1))
		if err != nil {
			return nil, fmt.Errorf("gzip layer %d: %w", layer, err)
		}
		if n > limit {
			return nil, fmt.Errorf("gzip layer %d %w (%d bytes): %w", layer, errInflateLimit, limit, ErrTooLarge)
		}
		data = buf.Bytes()
	}
	return data, nil
}
