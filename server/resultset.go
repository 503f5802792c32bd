package server

import "github.com/heapproxy/heapproxy/internal/mysqlwire"

// startResult starts a text-protocol result set to the client.
func (s *session) startResult(cols ...mysqlwire.Column) (*mysqlwire.ResultWriter, error) {
	return mysqlwire.StartResult(s.client, s.status, cols...)
}

// writeResult writes a whole small result set.
func (s *session) writeResult(cols []mysqlwire.Column, rows [][]mysqlwire.Value) error {
	w, err := s.startResult(cols...)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := w.WriteRow(r...); err != nil {
			return err
		}
	}
	return w.Finish()
}
