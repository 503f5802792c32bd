package web

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// NodeHealth is one node's liveness as the registry last checked it.
type NodeHealth struct {
	ID            int64
	Kind          string
	Alive         bool
	LastHeartbeat time.Time // zero: never answered
	Checked       bool      // false: not checked yet
}

// WatchNodes exports the nodes' liveness, read from list at each scrape:
// heapproxy_node_up{node,kind} (1 alive, 0 not; absent before the first
// check) and heapproxy_node_last_heartbeat_timestamp_seconds{node,kind}.
func (m *Metrics) WatchNodes(list func() []NodeHealth) {
	m.reg.MustRegister(nodeCollector{list: list})
}

var (
	nodeUpDesc = prometheus.NewDesc("heapproxy_node_up",
		"Whether the node answered its last liveness check (HTTP below 500).", []string{"node", "kind"}, nil)
	nodeHeartbeatDesc = prometheus.NewDesc("heapproxy_node_last_heartbeat_timestamp_seconds",
		"When the node last passed a liveness check, in Unix seconds.", []string{"node", "kind"}, nil)
)

type nodeCollector struct{ list func() []NodeHealth }

func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- nodeUpDesc
	ch <- nodeHeartbeatDesc
}

func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	for _, n := range c.list() {
		id, kind := strconv.FormatInt(n.ID, 10), labelString(n.Kind)
		if n.Checked {
			up := 0.0
			if n.Alive {
				up = 1
			}
			ch <- prometheus.MustNewConstMetric(nodeUpDesc, prometheus.GaugeValue, up, id, kind)
		}
		if !n.LastHeartbeat.IsZero() {
			ch <- prometheus.MustNewConstMetric(nodeHeartbeatDesc, prometheus.GaugeValue,
				float64(n.LastHeartbeat.UnixNano())/1e9, id, kind)
		}
	}
}
