<?php
// PHP mysqli (Debian php-cli php-mysql, mysqlnd) through heapproxy, for
// server/drivers_test.go. Connection parts come from the environment
// (HP_HOST, HP_PORT, HP_USER, HP_PASSWORD, HP_DATABASE), the statements
// from the arguments, each a JSON object {"name", "sql", "args"} (args
// escaped into the text for query(), given to execute() when prepared).
// Prints one JSON document: the
// tables (SHOW TABLES), each table's columns as fetch_fields reports them
// (type code, character set number), and every statement's columns and
// values (each tagged with its PHP type) through query() and through a
// prepared statement's get_result().

function tag($v): array {
    if ($v === null) return ['null', ''];
    if (is_int($v)) return ['int', (string)$v];
    if (is_float($v)) return ['float', var_export($v, true)];
    if (is_string($v)) return ['string', $v];
    return ['other:' . gettype($v), var_export($v, true)];
}

function result(mysqli_result $r): array {
    $cols = [];
    foreach ($r->fetch_fields() as $f) {
        $cols[] = ['name' => $f->name, 'type' => (string)$f->type, 'charset' => $f->charsetnr];
    }
    $rows = [];
    while (($row = $r->fetch_row()) !== null) {
        $rows[] = array_map('tag', $row);
    }
    return ['columns' => $cols, 'rows' => $rows];
}

// inline puts the arguments into the statement's ? markers as a PHP
// program without prepared statements does: real_escape_string, quotes.
function inline(mysqli $m, string $sql, array $params): string {
    $at = 0;
    foreach ($params as $p) {
        $lit = is_int($p) ? (string)$p : "'" . $m->real_escape_string((string)$p) . "'";
        $i = strpos($sql, '?', $at);
        if ($i === false) break;
        $sql = substr_replace($sql, $lit, $i, 1);
        $at = $i + strlen($lit);
    }
    return $sql;
}

mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
$m = new mysqli(getenv('HP_HOST'), getenv('HP_USER'), getenv('HP_PASSWORD'), getenv('HP_DATABASE'), (int)getenv('HP_PORT'));
// What Grafana does on connect: the session works in UTC, as taken_at does.
$m->query("SET time_zone = '+00:00'");
$out = ['driver' => 'mysqli', 'tables' => [], 'columns' => [], 'results' => new stdClass()];

foreach ($m->query('SHOW TABLES')->fetch_all() as [$t]) {
    $out['tables'][] = [$t, ''];
    $r = $m->query('SELECT * FROM `' . str_replace('`', '``', $t) . '` LIMIT 0');
    foreach ($r->fetch_fields() as $f) {
        $out['columns'][] = [$t, $f->name, (string)$f->type, $f->charsetnr];
    }
    $r->free();
}

foreach (array_slice($argv, 1) as $arg) {
    $s = json_decode($arg, true, 16, JSON_THROW_ON_ERROR);
    [$name, $sql, $params] = [$s['name'], $s['sql'], $s['args'] ?? []];
    try {
        $out['results']->$name = result($m->query(inline($m, $sql, $params)));
    } catch (Throwable $e) {
        $out['results']->$name = ['error' => $e->getCode() . ' ' . ($e instanceof mysqli_sql_exception ? $e->getSqlState() . ' ' : '') . $e->getMessage()];
    }
    $key = $name . '@prepared';
    try {
        $st = $m->prepare($sql);
        $st->execute($params ?: null);
        $out['results']->$key = result($st->get_result());
        $st->close();
    } catch (Throwable $e) {
        $out['results']->$key = ['error' => $e->getCode() . ' ' . ($e instanceof mysqli_sql_exception ? $e->getSqlState() . ' ' : '') . $e->getMessage()];
    }
}
$m->close();

echo json_encode($out, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE | JSON_THROW_ON_ERROR), "\n";
