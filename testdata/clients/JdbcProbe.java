import java.sql.*;

/**
 * A real JDBC client for heapproxy's tests (MariaDB Connector/J from
 * Debian's libmariadb-java). Usage:
 *   java -cp mariadb-java-client.jar JdbcProbe.java URL USER PASSWORD STMT...
 * Each STMT is SQL, or "tables:CATALOG" / "columns:CATALOG:TABLE" for
 * DatabaseMetaData, or "prepared:SQL:ARG" for a PreparedStatement with one
 * string argument. Rows print tab-separated, one per line; an error prints
 * "ERROR <code> <sqlstate> <message>" and the probe goes on.
 */
public class JdbcProbe {
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2])) {
            for (int i = 3; i < args.length; i++) {
                String s = args[i];
                try {
                    if (s.startsWith("tables:")) {
                        print(c.getMetaData().getTables(s.substring(7), null, "%", null), "TABLE_NAME");
                    } else if (s.startsWith("columns:")) {
                        String[] p = s.split(":", 3);
                        print(c.getMetaData().getColumns(p[1], null, p[2], "%"), "COLUMN_NAME", "TYPE_NAME");
                    } else if (s.startsWith("prepared:")) {
                        int k = s.lastIndexOf(':');
                        try (PreparedStatement ps = c.prepareStatement(s.substring(9, k))) {
                            ps.setString(1, s.substring(k + 1));
                            print(ps.executeQuery());
                        }
                    } else {
                        try (Statement st = c.createStatement()) {
                            if (st.execute(s)) {
                                print(st.getResultSet());
                            } else {
                                System.out.println("OK " + st.getUpdateCount());
                            }
                        }
                    }
                } catch (SQLException e) {
                    System.out.println("ERROR " + e.getErrorCode() + " " + e.getSQLState() + " " + e.getMessage());
                }
            }
        }
    }

    static void print(ResultSet rs, String... cols) throws SQLException {
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
            StringBuilder b = new StringBuilder();
            if (cols.length > 0) {
                for (String col : cols) {
                    if (b.length() > 0) b.append('\t');
                    b.append(rs.getString(col));
                }
            } else {
                for (int i = 1; i <= n; i++) {
                    if (i > 1) b.append('\t');
                    b.append(rs.getString(i));
                }
            }
            System.out.println(b);
        }
        rs.close();
    }
}
