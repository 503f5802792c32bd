package web

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Node liveness is read at each scrape; an unchecked node has no up gauge.
func TestNodeLivenessMetrics(t *testing.T) {
	m := NewMetrics(DefaultDumpBuckets())
	beat := time.Unix(1700000000, 500000000)
	nodes := []NodeHealth{
		{ID: 10001, Kind: "starrocks", Alive: true, LastHeartbeat: beat, Checked: true},
		{ID: 10002, Kind: "doris", Alive: false, Checked: true},
		{ID: 10003, Kind: "tikv"},
	}
	m.WatchNodes(func() []NodeHealth { return nodes })
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`heapproxy_node_up{kind="starrocks",node="10001"} 1`,
		`heapproxy_node_up{kind="doris",node="10002"} 0`,
		`heapproxy_node_last_heartbeat_timestamp_seconds{kind="starrocks",node="10001"} 1.7000000005e+09`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(body), `node="10003"`) {
		t.Errorf("an unchecked node is exported:\n%s", body)
	}
}
