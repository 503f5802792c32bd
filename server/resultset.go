package server

import "github.com/heapproxy/heapproxy/internal/mysqlwire"

// startResult starts a text-protocol result set to the client.
func (s *session) startResult(cols ...mysqlwire.Column) (*mysqlwire.ResultWriter, error) {
	return mysqlwire.StartResult(s.client, s.status, cols...)
}

// writeResult writes a whole small result set, in the client's
// character_set_results on the embedded default (charset.go).
func (s *session) writeResult(cols []mysqlwire.Column, rows [][]mysqlwire.Value) error {
	cols = append([]mysqlwire.Column(nil), cols...)
	convert := s.charsets.resultColumns(cols)
	w, err := s.startResult(cols...)
	if err != nil {
		return err
	}
	for _, r := range rows {
		for i, v := range r {
			if i < len(convert) && convert[i] && v != nil {
				r[i] = mysqlwire.Str(s.charsets.encodeString(*v))
			}
		}
		if err := w.WriteRow(r...); err != nil {
			return err
		}
	}
	return w.Finish()
}
