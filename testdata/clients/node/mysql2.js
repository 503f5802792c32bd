'use strict';
// The Node mysql2 driver (npm mysql2, pinned in package-lock.json) through
// heapproxy: text queries with query(), the same through server-side
// prepared statements with execute(). See common.js for the protocol.
const mysql = require('mysql2/promise');
const { connOptions, run } = require('./common');

(async () => {
  const c = await mysql.createConnection(connOptions());
  const wrap = (f) => async (sql, params) => {
    const [rows, fields] = await f.call(c, sql, params);
    return { rows: Array.isArray(rows) ? rows : [], fields: fields || [] };
  };
  await run('mysql2', { query: wrap(c.query), execute: wrap(c.execute), end: () => c.end() },
    (f) => f.columnType, (f) => f.characterSet);
})().catch((e) => {
  process.stderr.write(`mysql2: ${e.stack || e}\n`);
  process.exit(1);
});
