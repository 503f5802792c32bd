package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/heapproxy/heapproxy/backends"
)

// FEDiscoverer lists the nodes of a StarRocks or Doris FE with SHOW
// BACKENDS and SHOW COMPUTE NODES, logging in with a dedicated account
// (heapproxy stores no client's password, so discovery needs its own).
//
// Every row is checked before it becomes a node (backends.ParseShowBackends:
// the host an IP address or DNS name, the ports in range, no link-local or
// metadata address unless AllowLinkLocal). A bad row is left out and
// reported in Discover's error (a *backends.RowError naming the row) while
// the good rows are returned, so one broken row does not stop discovery.
type FEDiscoverer struct {
	Addr     string
	User     string
	Password string
	// Kind is what the FE's nodes are (starrocks or doris).
	Kind    backends.Kind
	Timeout time.Duration
	// AllowLinkLocal accepts nodes at link-local and cloud metadata
	// addresses (YAML discovery.allow_link_local; set
	// backends.Options.AllowLinkLocal from the same key).
	AllowLinkLocal bool
	// HTTPUser and HTTPPassword are given to every discovered node, for BEs
	// that want HTTP basic auth (Doris enable_all_http_auth). YAML:
	// discovery.http_user, discovery.http_password(_file).
	HTTPUser     string
	HTTPPassword backends.Secret
	// TLS is upstream_tls (Config.UpstreamClientTLS), nil when it is off:
	// the discovery account logs in as every upstream connection does.
	TLS *tls.Config

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
		if d.TLS != nil {
			c.SetTLSConfig(d.TLS)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("discover nodes at %s: %w", d.Addr, err)
	}
	defer conn.Close()
	nodes, rowErrs, err := d.show(conn, "SHOW BACKENDS")
	if err != nil {
		return nil, err
	}
	compute := map[int64]bool{}
	// Doris and older StarRocks have no compute nodes: a failing statement
	// here is normal; bad rows are not.
	if cns, cnErrs, err := d.show(conn, "SHOW COMPUTE NODES"); err == nil {
		for _, n := range cns {
			compute[n.ID] = true
		}
		nodes = append(nodes, cns...)
		rowErrs = errors.Join(rowErrs, cnErrs)
	}
	for i := range nodes {
		nodes[i].HTTPUser, nodes[i].HTTPPassword = d.HTTPUser, d.HTTPPassword
	}
	d.mu.Lock()
	d.compute = compute
	d.mu.Unlock()
	return nodes, rowErrs
}

// show runs one statement and reads its rows into nodes. rowErrs holds the
// rows left out (each a *backends.RowError, prefixed with the statement);
// err is a failure of the statement as a whole.
func (d *FEDiscoverer) show(conn *client.Conn, stmt string) (nodes []backends.Node, rowErrs, err error) {
	r, err := conn.Execute(stmt)
	if err != nil {
		return nil, nil, fmt.Errorf("%s at %s: %w", stmt, d.Addr, err)
	}
	defer r.Close()
	cols := make([]string, len(r.Fields))
	for i, f := range r.Fields {
		cols[i] = strings.Clone(string(f.Name))
	}
	// GetString's strings share the result's pooled buffer, which the
	// next statement reuses (SHOW COMPUTE NODES rewrote the hosts of SHOW
	// BACKENDS' nodes): copy every cell.
	rows := make([][]string, r.RowNumber())
	for i := range rows {
		rows[i] = make([]string, len(cols))
		for j := range cols {
			v, _ := r.GetString(i, j)
			rows[i][j] = strings.Clone(v)
		}
	}
	nodes, err = backends.ParseShowBackends(d.Kind, cols, rows, d.AllowLinkLocal)
	if err != nil && !errors.As(err, new(*backends.RowError)) {
		return nil, nil, fmt.Errorf("%s at %s: %w", stmt, d.Addr, err)
	}
	if err != nil {
		err = fmt.Errorf("%s at %s: %w", stmt, d.Addr, err)
	}
	return nodes, err, nil
}

// IsCompute tells whether the last discovery found id among the compute nodes.
func (d *FEDiscoverer) IsCompute(id int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.compute[id]
}
