package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/heapproxy/heapproxy/backends"
)

// FEDiscoverer lists the nodes of a StarRocks or Doris FE with SHOW
// BACKENDS and SHOW COMPUTE NODES, logging in with a dedicated account
// (heapproxy stores no client's password, so discovery needs its own).
type FEDiscoverer struct {
	Addr     string
	User     string
	Password string
	// Kind is what the FE's nodes are (starrocks or doris).
	Kind    backends.Kind
	Timeout time.Duration

	mu      sync.Mutex
	compute map[int64]bool
}

// Discover implements backends.Discoverer.
func (d *FEDiscoverer) Discover(ctx context.Context) ([]backends.Node, error) {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := client.ConnectWithContext(ctx, d.Addr, d.User, d.Password, "", timeout, func(c *client.Conn) error {
		c.ReadTimeout, c.WriteTimeout = timeout, timeout
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("discover nodes at %s: %w", d.Addr, err)
	}
	defer conn.Close()
	nodes, err := d.show(conn, "SHOW BACKENDS")
	if err != nil {
		return nil, err
	}
	compute := map[int64]bool{}
	// Doris and older StarRocks have no compute nodes: an error here is normal.
	if cns, err := d.show(conn, "SHOW COMPUTE NODES"); err == nil {
		for _, n := range cns {
			compute[n.ID] = true
		}
		nodes = append(nodes, cns...)
	}
	d.mu.Lock()
	d.compute = compute
	d.mu.Unlock()
	return nodes, nil
}

func (d *FEDiscoverer) show(conn *client.Conn, stmt string) ([]backends.Node, error) {
	r, err := conn.Execute(stmt)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", stmt, d.Addr, err)
	}
	defer r.Close()
	cols := make([]string, len(r.Fields))
	for i, f := range r.Fields {
		cols[i] = string(f.Name)
	}
	rows := make([][]string, r.RowNumber())
	for i := range rows {
		rows[i] = make([]string, len(cols))
		for j := range cols {
			rows[i][j], _ = r.GetString(i, j)
		}
	}
	return backends.NodesFromShowBackends(d.Kind, cols, rows)
}

// IsCompute tells whether the last discovery found id among the compute nodes.
func (d *FEDiscoverer) IsCompute(id int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.compute[id]
}
