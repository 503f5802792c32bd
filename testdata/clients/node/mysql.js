'use strict';
// The npm mysql driver (pinned in package-lock.json) through heapproxy. It
// has no server-side prepared statements: query() with ? placeholders
// escapes the values on the client. See common.js for the protocol.
const mysql = require('mysql');
const { connOptions, run } = require('./common');

const c = mysql.createConnection(connOptions());
const query = (sql, params) => new Promise((resolve, reject) => {
  c.query(sql, params, (err, rows, fields) => {
    if (err) reject(err);
    else resolve({ rows: Array.isArray(rows) ? rows : [], fields: fields || [] });
  });
});
const end = () => new Promise((resolve, reject) => c.end((err) => (err ? reject(err) : resolve())));
run('mysql', { query, end }, (f) => f.type, (f) => f.charsetNr).catch((e) => {
  process.stderr.write(`mysql: ${e.stack || e}\n`);
  process.exit(1);
});
