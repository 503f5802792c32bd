// Package mysqlwire is the MySQL client/server protocol as heapproxy speaks
// it: packet framing over a buffered connection (Conn), the handshake and
// COM_CHANGE_USER packets, OK/ERR/EOF packets, length-encoded integers,
// column definitions and result-set writing, the binary protocol's values,
// and ResponseParser, the one grammar of a query's response that both
// relays follow. It knows nothing of sessions, routing or profiles.
//
// Where a change goes: a new packet or codec is here; what heapproxy does
// with a command is in server; how bytes move between two sockets is in
// the relay.
package mysqlwire
