package server

import (
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// intercept answers the statements heapproxy owns. It reports whether the
// statement was handled.
func (s *session) intercept(query []byte) (bool, error) {
	return false, nil
}

// answerEmbedded answers a command when there is no upstream.
func (s *session) answerEmbedded(cmd command) error {
	switch cmd.code() {
	case mysql.COM_PING, mysql.COM_RESET_CONNECTION:
		return s.sendOK()
	case mysql.COM_STMT_CLOSE, mysql.COM_STMT_SEND_LONG_DATA:
		return nil
	case mysql.COM_INIT_DB:
		if e := s.localUseDB(string(cmd.data[1:])); e != nil {
			return s.sendError(e)
		}
		return s.sendOK()
	}
	return s.sendError(noUpstream())
}

func noUpstream() *mysql.MyError {
	return mysql.NewError(mysql.ER_NOT_SUPPORTED_YET,
		"heapproxy runs on its embedded default without an upstream database, so this statement has nowhere to go; "+
			"start heapproxy with --upstream HOST:PORT (or upstream: in the config file) to forward it")
}

// localUseDB accepts the schemas heapproxy serves itself.
func (s *session) localUseDB(db string) *mysql.MyError {
	switch db {
	case "information_schema":
		s.db = db
		return nil
	}
	return mysql.NewError(mysql.ER_BAD_DB_ERROR, fmt.Sprintf("Unknown database '%s'", db))
}
