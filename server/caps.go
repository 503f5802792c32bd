package server

import "github.com/go-mysql-org/go-mysql/mysql"

// passThroughPlugin is a plugin name no server implements: naming it in a
// login or COM_CHANGE_USER makes the upstream answer with an
// AuthSwitchRequest carrying its own challenge. heapproxy uses it when it
// answers for a user itself (auth: local) and when the client answered a
// challenge other than the upstream's (upstreamPlugin).
const passThroughPlugin = "heapproxy_pass_through"

// proxyCaps are the capabilities heapproxy can relay. DEPRECATE_EOF is left
// out so every result set ends in an EOF packet the relay can find, COMPRESS
// and QUERY_ATTRIBUTES because they change the framing the proxy peeks at.
const proxyCaps = mysql.CLIENT_LONG_PASSWORD | mysql.CLIENT_FOUND_ROWS | mysql.CLIENT_LONG_FLAG |
	mysql.CLIENT_CONNECT_WITH_DB | mysql.CLIENT_ODBC | mysql.CLIENT_LOCAL_FILES |
	mysql.CLIENT_IGNORE_SPACE | mysql.CLIENT_PROTOCOL_41 | mysql.CLIENT_INTERACTIVE |
	mysql.CLIENT_IGNORE_SIGPIPE | mysql.CLIENT_TRANSACTIONS | mysql.CLIENT_SECURE_CONNECTION |
	mysql.CLIENT_MULTI_STATEMENTS | mysql.CLIENT_MULTI_RESULTS | mysql.CLIENT_PS_MULTI_RESULTS |
	mysql.CLIENT_PLUGIN_AUTH | mysql.CLIENT_CONNECT_ATTRS | mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA |
	mysql.CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS | mysql.CLIENT_SESSION_TRACK

// clientOnlyCaps are flags a client sends as it wants them, whether the
// server advertised them or not, and some servers read them so: Doris
// never advertises CLIENT_MULTI_STATEMENTS, yet since apache/doris#39308
// (August 2024, in 2.0 and 2.1 too) answers every statement of a
// multi-statement query only when the client's flag is set. heapproxy
// passes them on as the client set them, as a direct connection would.
const clientOnlyCaps = mysql.CLIENT_MULTI_STATEMENTS | mysql.CLIENT_MULTI_RESULTS | mysql.CLIENT_PS_MULTI_RESULTS
