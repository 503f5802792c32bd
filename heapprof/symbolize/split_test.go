package symbolize

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// elfsym, the symbolizer heapproxy dot runs, imports no network code:
// packages that do are initialized later, after the SQL engine's, and
// heapproxy dot runs before those (cmd/heapproxy/internal/jeprofcmd).
func TestElfsymImportsNoNetwork(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/heapproxy/heapproxy/heapprof/symbolize/elfsym").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "debug/elf") {
		t.Fatalf("go list -deps printed no debug/elf:\n%s", out)
	}
	for _, pkg := range []string{"net", "net/http"} {
		if slices.Contains(deps, pkg) {
			t.Errorf("elfsym imports %s", pkg)
		}
	}
}
