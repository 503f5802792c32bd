package server

import "github.com/heapproxy/heapproxy/internal/mysqlwire"

// startResult starts a text-protocol result set to the client.
func (s *session) startResult(cols ...mysqlwire.Column) (*mysqlwire.ResultWriter, error) {
	return mysqlwire.StartResult(s.client, s.status, cols...)
}

// textResult is a result set of heapproxy's own answer whose text cells go
// out in the client's character_set_results on the embedded default
// (charset.go); with an upstream, as written.
type textResult struct {
	*mysqlwire.ResultWriter
	s       *session
	convert []bool
}

// startTextResult starts a textResult with cols (labelled for the client).
func (s *session) startTextResult(cols ...mysqlwire.Column) (*textResult, error) {
	cols = append([]mysqlwire.Column(nil), cols...)
	convert := s.charsets.resultColumns(cols)
	w, err := s.startResult(cols...)
	if err != nil {
		return nil, err
	}
	return &textResult{ResultWriter: w, s: s, convert: convert}, nil
}

// WriteRow writes one row, converting its text cells.
func (t *textResult) WriteRow(vals ...mysqlwire.Value) error {
	for i, v := range vals {
		if i < len(t.convert) && t.convert[i] && v != nil {
			vals[i] = mysqlwire.Str(t.s.charsets.encodeString(*v))
		}
	}
	return t.ResultWriter.WriteRow(vals...)
}

// writeResult writes a whole small result set of heapproxy's own.
func (s *session) writeResult(cols []mysqlwire.Column, rows [][]mysqlwire.Value) error {
	w, err := s.startTextResult(cols...)
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
