package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/sqlview"
	"github.com/heapproxy/heapproxy/heapprof/web"
)

// The snapshot store seen by the heapprof SQL schema and by the HTTP view;
// neither imports the store, so these adapters join them.

// SQLSource shows a snapshot store to the heapprof SQL engine.
func SQLSource(st snapshot.Store) sqlview.Source { return sqlSource{st} }

type sqlSource struct{ st snapshot.Store }

func (s sqlSource) Snapshots(ctx context.Context) ([]sqlview.SnapshotRow, error) {
	snaps, err := s.st.List(ctx, snapshot.Filter{})
	if err != nil {
		return nil, err
	}
	rows := make([]sqlview.SnapshotRow, len(snaps))
	for i, m := range snaps {
		rows[i] = sqlview.SnapshotRow{ID: m.ID, NodeID: m.NodeID, NodeKind: m.NodeKind, NodeAddr: m.NodeAddr,
			TakenAt: m.TakenAt, TotalBytes: m.TotalBytes, TotalObjects: m.TotalObjects,
			SamplePeriod: m.SamplePeriod, Format: m.Format}
	}
	return rows, nil
}

func (s sqlSource) Functions(ctx context.Context, id string) ([]sqlview.FunctionRow, error) {
	fs, err := s.st.Functions(ctx, id)
	if isNotFound(err) {
		return nil, nil // dropped by retention since the listing
	}
	if err != nil {
		return nil, err
	}
	rows := make([]sqlview.FunctionRow, len(fs))
	for i, f := range fs {
		rows[i] = sqlview.FunctionRow{SnapshotID: id, Name: f.ShortName, FlatBytes: f.FlatBytes, CumBytes: f.CumBytes,
			FlatObjects: f.FlatObjects, CumObjects: f.CumObjects, FlatPct: f.FlatPercent, CumPct: f.CumPercent}
	}
	return rows, nil
}

func (s sqlSource) Stacks(ctx context.Context, id string) ([]sqlview.StackRow, error) {
	st, err := s.st.Stacks(ctx, id)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows := make([]sqlview.StackRow, len(st))
	for i, k := range st {
		rows[i] = sqlview.StackRow{SnapshotID: id, StackID: k.StackID, Frames: k.Frames, Bytes: k.Bytes, Objects: k.Objects}
	}
	return rows, nil
}

func isNotFound(err error) bool {
	var nf *snapshot.ErrNotFound
	return errors.As(err, &nf)
}

// WebStore shows a snapshot store to the HTTP view.
func WebStore(st snapshot.Store) web.Store { return webStore{st} }

type webStore struct{ st snapshot.Store }

func (w webStore) Snapshots(ctx context.Context) ([]web.Entry, error) {
	snaps, err := w.st.List(ctx, snapshot.Filter{})
	if err != nil {
		return nil, err
	}
	out := make([]web.Entry, len(snaps))
	for i, s := range snaps {
		out[i] = web.Entry{ID: s.ID, NodeID: s.NodeID, NodeKind: s.NodeKind, NodeAddr: s.NodeAddr,
			TakenAt: s.TakenAt, TotalBytes: s.TotalBytes, NoProfile: s.Format == backends.FormatDOT.String()}
	}
	return out, nil
}

func (w webStore) Profile(ctx context.Context, id string) ([]byte, error) {
	s, err := w.st.Get(ctx, id)
	if isNotFound(err) {
		return nil, fmt.Errorf("%w: %s", web.ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	if len(s.Profile) == 0 {
		return nil, fmt.Errorf("snapshot %s holds a graph rendered on the node, not a profile", id)
	}
	return s.Profile, nil
}
