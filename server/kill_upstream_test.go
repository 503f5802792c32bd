package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"

	"github.com/heapproxy/heapproxy/backends"
)

// hangingNode is a node that accepts and never answers; hangUp (run also
// when the test ends) closes what it accepted.
func hangingNode(t *testing.T) (port int, hangUp func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var once sync.Once
	hangUp = func() { once.Do(func() { close(done) }) }
	t.Cleanup(func() {
		ln.Close()
		hangUp()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				<-done // held open, never answered
				c.Close()
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, hangUp
}

// In front of an upstream, KILL goes to the upstream, which decides who may
// kill what; when it agrees, the statement heapproxy answers itself for
// that connection (here a dump waiting on a node that never answers) stops
// as on the embedded default. Until 2026-11-25 only the upstream's
// (idle) connection was killed and the dump went on for the node timeout:
// the CLI's Ctrl-C did nothing.
func TestKillStopsADumpInFrontOfUpstream(t *testing.T) {
	rootExec(t, "CREATE USER IF NOT EXISTS nokill@'%' IDENTIFIED BY 'pw'; CREATE USER IF NOT EXISTS nokill@localhost IDENTIFIED BY 'pw'")
	port, _ := hangingNode(t)
	reg := backends.NewRegistry(backends.Options{Timeout: 60 * time.Second})
	reg.Add(backends.SelfNode(1), backends.Node{ID: 10009, Kind: backends.Go, Host: "127.0.0.1", HTTPPort: port})
	srv := startProxyDeps(t, Config{Upstream: env.addr, ProfileUsers: []string{"app"}}, Deps{Registry: reg, SelfID: 1, Snapshots: testStore(t)})
	h, p := hostPort(srv)
	db := openSchema(t, srv.Addr().String(), "app", "secret", "", "")
	for _, c := range []struct {
		name string
		kill func(id int) error
		// wantKilled: the dump ends with 1317 (or the connection, for
		// KILL CONNECTION); else it is still running a second later.
		wantKilled, wantConnGone bool
	}{
		{"KILL QUERY by its user", func(id int) error {
			_, err := db.Exec(fmt.Sprintf("KILL QUERY %d", id))
			return err
		}, true, false},
		{"the CLI's KILL QUERY", func(id int) error {
			out, err := cli(t, h, p, "app", "secret", "-e", fmt.Sprintf("KILL QUERY %d", id))
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		}, true, false},
		{"COM_PROCESS_KILL (PyMySQL's kill)", func(id int) error {
			pymysql(t, h, p, "app", "secret", "None", fmt.Sprintf("conn.kill(%d)", id))
			return nil
		}, true, true},
		{"KILL CONNECTION", func(id int) error {
			_, err := db.Exec(fmt.Sprintf("KILL CONNECTION %d", id))
			return err
		}, true, true},
		{"KILL QUERY the upstream refuses", func(id int) error {
			nk := openSchema(t, srv.Addr().String(), "nokill", "pw", "", "")
			_, err := nk.Exec(fmt.Sprintf("KILL QUERY %d", id))
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1095 {
				return fmt.Errorf("got %v, want the upstream's ERROR 1095", err)
			}
			return nil
		}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			victim, id := connWithID(t, db)
			defer victim.Close()
			result := make(chan error, 1)
			go func() { result <- drain(victim.QueryContext(ctx, adminSQL("10009", "dump_dot_snapshot()"))) }()
			time.Sleep(500 * time.Millisecond)
			if err := c.kill(id); err != nil {
				t.Fatalf("kill: %v", err)
			}
			if !c.wantKilled {
				select {
				case err := <-result:
					t.Fatalf("the dump ended after a refused KILL: %v", err)
				case <-time.After(time.Second):
				}
				// Its own user may still stop it.
				if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
					t.Fatal(err)
				}
				select {
				case <-result:
				case <-time.After(20 * time.Second):
					t.Fatal("the dump went on after its own user's KILL QUERY")
				}
				return
			}
			select {
			case err := <-result:
				var me *mysql.MySQLError
				if c.wantConnGone {
					if err == nil {
						t.Errorf("killed connection: the dump answered")
					}
				} else if !errors.As(err, &me) || me.Number != gomysql.ER_QUERY_INTERRUPTED {
					t.Errorf("killed dump: %v, want ERROR 1317", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the dump went on")
			}
			var one int
			err := victim.QueryRowContext(ctx, "SELECT 1").Scan(&one)
			if c.wantConnGone == (err == nil) {
				t.Errorf("the session after %s: %v", c.name, err)
			}
		})
	}
}

func drain(rows *sql.Rows, err error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	if err := rows.Err(); err != nil && !strings.Contains(err.Error(), "no rows") {
		return err
	}
	return nil
}

// connWithID is one connection of db and its CONNECTION_ID(), the id KILL
// names.
func connWithID(t *testing.T, db *sql.DB) (*sql.Conn, int) {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var id int
	if err := c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c, id
}
