package profiling

import (
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/backends"
)

// A bug that panics while working on one node's profile becomes that node's
// error, not the end of the process.
func TestPanicBecomesError(t *testing.T) {
	s := &Service{log: zap.NewNop(), metrics: noMetrics{}}
	err := func() (err error) {
		defer s.RecoverAsError(backends.Node{ID: 7}, &err)
		var frames []string
		_ = frames[len(frames)] // an index out of range, the kind of bug this guards against
		return nil
	}()
	if err == nil || !strings.Contains(err.Error(), "node 7: heapproxy failed on its profile") {
		t.Fatalf("err = %v", err)
	}
}
