package mariadbtest

import (
	"database/sql"
	"sync"
	"testing"
)

// Test packages run in parallel, each starting its own server: servers
// bootstrapping at once must not disturb each other (in a shared tmpdir
// they deleted each other's temporary tables about once in eight rounds of
// four), and each answers on its socket and, when asked, on TCP.
func TestConcurrentStarts(t *testing.T) {
	for round := range 3 {
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := Start(Options{TCP: i%2 == 0})
				if err != nil {
					t.Errorf("round %d, server %d: %.400v", round, i, err)
					return
				}
				defer s.Stop()
				db, err := sql.Open("mysql", s.DSN("root", "", ""))
				if err != nil {
					t.Error(err)
					return
				}
				defer db.Close()
				var one int
				if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
					t.Errorf("round %d, server %d: SELECT 1: %d, %v", round, i, one, err)
				}
				if (s.Addr != "") != (i%2 == 0) {
					t.Errorf("server %d: Addr %q", i, s.Addr)
				}
			}()
		}
		wg.Wait()
	}
}
