package web

import (
	"cmp"
	"math"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// The list page's chart: one panel per node, its in-use bytes over time,
// drawn as SVG on the server. Every point links to its snapshot's graph and
// every line between two points to their diff, so the chart works without
// scripts (the list page's Content-Security-Policy allows none).

// Chart panel geometry, in SVG user units (CSS pixels at the default size).
const (
	chartWidth     = 900
	chartHeight    = 170
	chartLeft      = 70 // room for the y labels
	chartRight     = 20
	chartTop       = 12
	chartBottom    = 26 // room for the x labels
	chartMaxXTicks = 7
	chartYTarget   = 4 // about this many y gridlines
)

// seriesColor tells the nodes' panels apart (dark enough on white).
func seriesColor(i int) string {
	colors := [...]string{"#1f6fd1", "#d1491f", "#2e9a4b", "#8b3fc4", "#b8860b", "#c2185b", "#00838f", "#5d4037"}
	return colors[i%len(colors)]
}

// chart is one node's panel.
type chart struct {
	NodeID   int64
	NodeKind string
	NodeAddr string
	Color    string
	Width    int
	Height   int
	Caption  string // time range shown
	Line     string // the polyline's points, "x,y x,y ..."
	Points   []chartPoint
	Segments []chartSegment
	YTicks   []chartTick
	XTicks   []chartTick
	// PlotX, PlotY, PlotW, PlotH frame the plot area.
	PlotX, PlotY, PlotW, PlotH int
	PlotRight, PlotBottom      int
	TickBottom                 int // the x ticks' lower end
}

// chartPoint is one snapshot.
type chartPoint struct {
	ID        string
	X, Y      string
	Href      string // the snapshot's graph; "" without a profile
	Title     string // the tooltip: node, time, bytes
	NoProfile bool
}

// chartSegment joins two consecutive snapshots with profiles and links
// their diff.
type chartSegment struct {
	X1, Y1, X2, Y2 string
	Href           string
	Title          string
}

// chartTick is a gridline (y) or time mark (x) and its label.
type chartTick struct {
	Pos    string // y of a horizontal gridline, x of a time mark
	Label  string
	Anchor string // text-anchor of an x label
}

// buildCharts makes one panel per node of the entries, by node id.
func buildCharts(entries []snapshot.Snapshot) []chart {
	byNode := map[int64][]snapshot.Snapshot{}
	for _, e := range entries {
		byNode[e.NodeID] = append(byNode[e.NodeID], e)
	}
	nodes := make([]int64, 0, len(byNode))
	for n := range byNode {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	charts := make([]chart, 0, len(nodes))
	for i, n := range nodes {
		charts = append(charts, buildChart(byNode[n], seriesColor(i)))
	}
	return charts
}

// buildChart lays out one node's snapshots (at least one).
func buildChart(es []snapshot.Snapshot, color string) chart {
	es = slices.Clone(es)
	slices.SortStableFunc(es, func(a, b snapshot.Snapshot) int {
		if c := a.TakenAt.Compare(b.TakenAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	last := es[len(es)-1]
	c := chart{
		NodeID: last.NodeID, NodeKind: last.NodeKind, NodeAddr: last.NodeAddr, Color: color,
		Width: chartWidth, Height: chartHeight,
		PlotX: chartLeft, PlotY: chartTop,
		PlotW: chartWidth - chartLeft - chartRight, PlotH: chartHeight - chartTop - chartBottom,
	}
	c.PlotRight, c.PlotBottom = c.PlotX+c.PlotW, c.PlotY+c.PlotH
	c.TickBottom = c.PlotBottom + 4

	// Time axis: the node's first to last snapshot; a single instant is
	// drawn in the middle.
	t0, t1 := es[0].TakenAt, last.TakenAt
	span := t1.Sub(t0)
	if span <= 0 {
		t0, t1 = t0.Add(-time.Minute), t1.Add(time.Minute)
		span = t1.Sub(t0)
	}
	xOf := func(t time.Time) float64 {
		return float64(c.PlotX) + float64(c.PlotW)*float64(t.Sub(t0))/float64(span)
	}
	layout := tickLayout(span)
	step := timeStep(span)
	for t := t0.Truncate(step); !t.After(t1); t = t.Add(step) {
		if t.Before(t0) {
			continue
		}
		x := xOf(t)
		anchor := "middle"
		if x > float64(c.PlotRight)-30 {
			anchor = "end"
		}
		c.XTicks = append(c.XTicks, chartTick{Pos: coord(x), Label: t.UTC().Format(layout), Anchor: anchor})
	}
	c.Caption = es[0].TakenAt.UTC().Format("2006-01-02 15:04:05") + " to " + last.TakenAt.UTC().Format("2006-01-02 15:04:05 MST")

	// Bytes axis: from zero, so that growth looks as large as it is.
	var maxBytes int64
	for _, e := range es {
		maxBytes = max(maxBytes, e.TotalBytes)
	}
	top, yStep, unit, unitName := byteTicks(maxBytes)
	yOf := func(b int64) float64 {
		return float64(c.PlotBottom) - float64(c.PlotH)*float64(b)/top
	}
	for v := 0.0; v <= top*(1+1e-9); v += yStep {
		c.YTicks = append(c.YTicks, chartTick{
			Pos:   coord(float64(c.PlotBottom) - float64(c.PlotH)*v/top),
			Label: strconv.FormatFloat(v/unit, 'f', -1, 64) + " " + unitName,
		})
	}

	var line []byte
	prev := -1 // the last point with a profile
	for i, e := range es {
		x, y := xOf(e.TakenAt), yOf(e.TotalBytes)
		if i > 0 {
			line = append(line, ' ')
		}
		line = append(line, coord(x)+","+coord(y)...)
		p := chartPoint{ID: e.ID, X: coord(x), Y: coord(y), NoProfile: graphOnly(&e),
			Title: "node " + strconv.FormatInt(e.NodeID, 10) + ", " + e.TakenAt.UTC().Format("2006-01-02 15:04:05 MST") +
				": " + mebibytes(e.TotalBytes) + " MB in use"}
		if p.NoProfile {
			p.Title += " (no profile: the node sent a rendered graph)"
			c.Points = append(c.Points, p)
			continue
		}
		p.Href = "/snapshots/" + url.PathEscape(e.ID) + "/graph"
		p.Title += ". Click: its graph"
		c.Points = append(c.Points, p)
		if prev >= 0 {
			b := es[prev]
			c.Segments = append(c.Segments, chartSegment{
				X1: coord(xOf(b.TakenAt)), Y1: coord(yOf(b.TotalBytes)), X2: p.X, Y2: p.Y,
				Href: "/diff/" + url.PathEscape(b.ID) + "/" + url.PathEscape(e.ID) + "/graph",
				Title: "Click: the diff of " + e.TakenAt.UTC().Format("2006-01-02 15:04:05") + " against " +
					b.TakenAt.UTC().Format("2006-01-02 15:04:05 MST") + " (" + signedMebibytes(e.TotalBytes-b.TotalBytes) + " MB)",
			})
		}
		prev = i
	}
	c.Line = string(line)
	return c
}

// tickLayout is the time format of x labels for a time span.
func tickLayout(span time.Duration) string {
	switch {
	case span >= 48*time.Hour:
		return "01-02 15:04"
	case span >= 10*time.Minute:
		return "15:04"
	default:
		return "15:04:05"
	}
}

// timeStep is the round interval between x labels: the shortest that
// gives at most chartMaxXTicks of them over span.
func timeStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{
		10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute,
		15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
		24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour, 28 * 24 * time.Hour,
	} {
		if span/s <= chartMaxXTicks {
			return s
		}
	}
	return span / chartMaxXTicks
}

// byteTicks picks the y axis for values up to maxBytes: its top, the
// step between gridlines (both in bytes) and the unit of the labels.
func byteTicks(maxBytes int64) (top, step, unit float64, unitName string) {
	unit, unitName = 1, "B"
	for _, u := range []struct {
		size float64
		name string
	}{{1 << 10, "KB"}, {1 << 20, "MB"}, {1 << 30, "GB"}, {1 << 40, "TB"}} {
		if float64(maxBytes) >= u.size {
			unit, unitName = u.size, u.name
		}
	}
	v := float64(maxBytes) / unit
	if v <= 0 {
		v = 1
	}
	s := niceStep(v / chartYTarget)
	if unit == 1 {
		s = max(s, 1) // no fractions of a byte
	}
	top = math.Ceil(v/s-1e-9) * s
	return top * unit, s * unit, unit, unitName
}

// niceStep rounds x up to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// coord formats an SVG coordinate.
func coord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// mebibytes formats bytes as MB (MiB, as the list's column), one decimal.
func mebibytes(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) }

func signedMebibytes(b int64) string {
	if b >= 0 {
		return "+" + mebibytes(b)
	}
	return mebibytes(b)
}
