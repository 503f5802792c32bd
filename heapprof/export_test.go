package heapprof

import "testing"

// Test helpers shared with the external test package (heapprof_test),
// which exists so the end-to-end test can import heapprof/symbolize
// without an import cycle.

// BuiltTestProg returns the compiled test program name and the profiles it
// dumped.
func BuiltTestProg(t testing.TB, name string) (bin string, profiles []string) {
	bp := prog(t, name)
	return bp.bin, bp.profiles
}

// CompareDOTForTest is compareDOT.
func CompareDOTForTest(t *testing.T, got, want string) { t.Helper(); compareDOT(t, got, want) }

// RunForTest runs a command with a timeout and returns its stdout.
func RunForTest(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	out, err := run(jeprofCtx(t), nil, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// LineDiffForTest is lineDiff.
func LineDiffForTest(got, want string) string { return lineDiff(got, want) }
