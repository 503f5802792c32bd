-- select1: a connection pool's ping, a FROM-less `SELECT 1` on every event
-- (issue 16: through heapproxy it must cost what a point select costs).
-- Takes oltp_common's table options so run.sh passes the same ones.
sysbench.cmdline.options = {
  tables = {"Number of tables (unused)", 1},
  table_size = {"Rows per table (unused)", 10000},
}

function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function event()
  con:query("SELECT 1")
end

function thread_done()
  con:disconnect()
end
