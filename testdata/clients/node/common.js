'use strict';
// Shared by mysql2.js and mysql.js: the driver probe protocol of
// server/drivers_test.go. Connection parts come from the environment
// (HP_HOST, HP_PORT, HP_USER, HP_PASSWORD, HP_DATABASE), the statements
// from the arguments, each a JSON object {"name", "sql", "args"} (args bound
// to the ? markers, by the driver). One JSON document goes to stdout:
// the tables and columns as information_schema lists them, and every
// statement's columns (type code, character set) and values, each value
// tagged with the JavaScript type the driver handed over.

function connOptions() {
  return {
    host: process.env.HP_HOST,
    port: Number(process.env.HP_PORT),
    user: process.env.HP_USER,
    password: process.env.HP_PASSWORD,
    database: process.env.HP_DATABASE,
    // DATETIME columns hold UTC; read them as UTC Dates.
    timezone: 'Z',
  };
}


const pad = (n, w) => String(n).padStart(w, '0');

// value tags a value with what the driver made of it: a string must be a
// JavaScript string, not a Buffer.
function value(v) {
  if (v === null || v === undefined) return ['null', ''];
  if (typeof v === 'string') return ['string', v];
  if (Buffer.isBuffer(v)) return ['bytes', v.toString('utf8')];
  if (typeof v === 'number' || typeof v === 'bigint') return ['number', String(v)];
  if (v instanceof Date) {
    return ['date', `${pad(v.getUTCFullYear(), 4)}-${pad(v.getUTCMonth() + 1, 2)}-${pad(v.getUTCDate(), 2)} ` +
      `${pad(v.getUTCHours(), 2)}:${pad(v.getUTCMinutes(), 2)}:${pad(v.getUTCSeconds(), 2)}.${pad(v.getUTCMilliseconds(), 3)}`];
  }
  return ['other:' + (v.constructor ? v.constructor.name : typeof v), String(v)];
}

// result turns rows (objects keyed by column name) and field packets into
// the protocol's columns and tagged rows.
function result(rows, fields, typeOf, charsetOf) {
  return {
    columns: fields.map((f) => ({ name: f.name, type: String(typeOf(f)), charset: charsetOf(f) })),
    rows: rows.map((r) => fields.map((f) => value(r[f.name]))),
  };
}

function errorOf(e) {
  return { error: `${e.errno || ''} ${e.sqlState || ''} ${e.message}` };
}

const tablesSQL = 'SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME';
const columnsSQL = 'SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS ' +
  'WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION';

// run drives a connection through the probe. conn has query(sql, params)
// and, where the driver has server-side prepared statements, execute(sql,
// params), both resolving to {rows, fields}; and end().
async function run(driver, conn, typeOf, charsetOf) {
  const out = { driver, tables: [], columns: [], results: {} };
  const db = process.env.HP_DATABASE;
  // What Grafana does on connect: the session works in UTC, as taken_at does.
  await conn.query("SET time_zone = '+00:00'", []);
  // The tool's way to list tables and columns: information_schema, with the
  // schema bound as a parameter (mysql2 prepares it on the server).
  const list = conn.execute || conn.query;
  const t = await list(tablesSQL, [db]);
  out.tables = t.rows.map((r) => [value(r.TABLE_NAME)[1], value(r.TABLE_TYPE)[1]]);
  out.results['information_schema.TABLES'] = result(t.rows, t.fields, typeOf, charsetOf);
  const c = await list(columnsSQL, [db]);
  out.columns = c.rows.map((r) => [value(r.TABLE_NAME)[1], value(r.COLUMN_NAME)[1], value(r.DATA_TYPE)[1], null]);
  out.results['information_schema.COLUMNS'] = result(c.rows, c.fields, typeOf, charsetOf);
  for (const { name, sql, args = [] } of process.argv.slice(2).map((a) => JSON.parse(a))) {
    try {
      const r = await conn.query(sql, args);
      out.results[name] = result(r.rows, r.fields, typeOf, charsetOf);
    } catch (e) {
      out.results[name] = errorOf(e);
    }
    if (conn.execute) {
      try {
        const r = await conn.execute(sql, args);
        out.results[name + '@prepared'] = result(r.rows, r.fields, typeOf, charsetOf);
      } catch (e) {
        out.results[name + '@prepared'] = errorOf(e);
      }
    }
  }
  await conn.end();
  process.stdout.write(JSON.stringify(out) + '\n');
}

module.exports = { connOptions, run };
