#!/usr/bin/python3
# ODBC through heapproxy, for server/drivers_test.go: pyodbc (Debian
# python3-pyodbc) on unixODBC with MariaDB Connector/ODBC (Debian
# odbc-mariadb, the driver registered as "MariaDB Unicode"), what Excel,
# Power BI, Tableau and LibreOffice reach MySQL-protocol servers through.
# Connection parts come from the environment (HP_HOST, HP_PORT, HP_USER,
# HP_PASSWORD, HP_DATABASE), the statements from the arguments, each a JSON
# object {"name", "sql", "args"}. Prints one JSON document: the tables as
# SQLTables lists them, their columns as SQLColumns lists them, every
# catalog function's rows (SQLColumns, SQLStatistics, SQLPrimaryKeys,
# SQLForeignKeys, SQLSpecialColumns, SQLGetTypeInfo), and every statement's
# values, tagged with the Python type the driver made of each, run with the
# driver's client-side statements (NO_SSPS=1) and with server-side prepared
# statements (the driver's default).
import datetime
import decimal
import json
import os
import sys

import pyodbc


def connect(ssps):
    parts = {
        "DRIVER": "{MariaDB Unicode}",
        "SERVER": os.environ["HP_HOST"],
        "PORT": os.environ["HP_PORT"],
        "UID": os.environ["HP_USER"],
        "PWD": os.environ.get("HP_PASSWORD", ""),
        "DATABASE": os.environ["HP_DATABASE"],
        "NO_SSPS": "0" if ssps else "1",
    }
    conn = pyodbc.connect(";".join("%s=%s" % kv for kv in parts.items()), autocommit=True, timeout=30)
    conn.timeout = 60
    return conn


def tag(v):
    if v is None:
        return ["null", ""]
    if isinstance(v, bool):
        return ["int", str(int(v))]
    if isinstance(v, int):
        return ["int", str(v)]
    if isinstance(v, float):
        return ["float", repr(v)]
    if isinstance(v, decimal.Decimal):
        return ["decimal", str(v)]
    if isinstance(v, datetime.datetime):
        return ["date", v.strftime("%Y-%m-%d %H:%M:%S.%f")]
    if isinstance(v, (bytes, bytearray)):
        return ["bytes", bytes(v).decode("utf-8", "replace")]
    return ["string", str(v)]


def result(cur):
    cols = [{"name": d[0], "type": "", "charset": None} for d in cur.description]
    return {"columns": cols, "rows": [[tag(v) for v in row] for row in cur.fetchall()]}


def catalog(rows):
    return [[tag(v) for v in row] for row in rows]


def main():
    db = os.environ["HP_DATABASE"]
    out = {"driver": "odbc", "tables": [], "columns": [], "results": {}, "catalog": {}}
    conn = connect(ssps=False)
    cur = conn.cursor()
    # What Grafana's and most BI tools' first statement does: UTC.
    cur.execute("SET time_zone = '+00:00'")
    tables = [tuple(r) for r in cur.tables(catalog=db, tableType="TABLE,VIEW")]
    for t in tables:
        out["tables"].append([t[2], t[3] or ""])
    for t in tables:
        rows = [tuple(r) for r in cur.columns(catalog=db, table=t[2])]
        out["catalog"]["SQLColumns " + t[2]] = catalog(rows)
        for c in rows:
            out["columns"].append([c[2], c[3], c[5], None])
        out["catalog"]["SQLStatistics " + t[2]] = catalog(cur.statistics(t[2], catalog=db))
        out["catalog"]["SQLPrimaryKeys " + t[2]] = catalog(cur.primaryKeys(t[2], catalog=db))
        out["catalog"]["SQLForeignKeys " + t[2]] = catalog(cur.foreignKeys(foreignTable=t[2], foreignCatalog=db))
        out["catalog"]["SQLSpecialColumns " + t[2]] = catalog(cur.rowIdColumns(t[2], catalog=db))
    out["catalog"]["SQLGetTypeInfo"] = catalog(cur.getTypeInfo())
    conns = {"": conn, "@prepared": connect(ssps=True)}
    conns["@prepared"].cursor().execute("SET time_zone = '+00:00'")
    for arg in sys.argv[1:]:
        s = json.loads(arg)
        for suffix, c in conns.items():
            try:
                cur = c.cursor()
                cur.execute(s["sql"], *(s.get("args") or []))
                out["results"][s["name"] + suffix] = result(cur)
            except pyodbc.Error as e:
                out["results"][s["name"] + suffix] = {"error": " ".join(str(a) for a in e.args)}
    print(json.dumps(out, sort_keys=True))


main()
