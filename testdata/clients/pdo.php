<?php
// PHP PDO_MySQL (Debian php-cli php-mysql) through heapproxy, for
// server/drivers_test.go. Connection parts come from the environment
// (HP_HOST, HP_PORT, HP_USER, HP_PASSWORD, HP_DATABASE), the statements
// from the arguments, each a JSON object {"name", "sql", "args"} (args given
// to execute()). Prints one JSON document: the
// tables (SHOW TABLES), each table's columns as getColumnMeta reports them,
// every statement's columns and values (each value tagged with its PHP
// type) with emulated prepares (PDO's default) and with server-side
// prepared statements, and whether beginTransaction/commit work.

function tag($v): array {
    if ($v === null) return ['null', ''];
    if (is_int($v)) return ['int', (string)$v];
    if (is_float($v)) return ['float', var_export($v, true)];
    if (is_string($v)) return ['string', $v];
    return ['other:' . gettype($v), var_export($v, true)];
}

function result(PDOStatement $st): array {
    $cols = [];
    for ($i = 0; $i < $st->columnCount(); $i++) {
        $m = $st->getColumnMeta($i);
        $cols[] = ['name' => $m['name'], 'type' => $m['native_type'] ?? '', 'charset' => null];
    }
    $rows = [];
    while (($r = $st->fetch(PDO::FETCH_NUM)) !== false) {
        $rows[] = array_map('tag', $r);
    }
    return ['columns' => $cols, 'rows' => $rows];
}

function failure(Throwable $e): array {
    return ['error' => ($e instanceof PDOException ? ($e->errorInfo[1] ?? '') . ' ' . ($e->errorInfo[0] ?? '') . ' ' : '') . $e->getMessage()];
}

$db = getenv('HP_DATABASE');
$pdo = new PDO(
    sprintf('mysql:host=%s;port=%d;dbname=%s', getenv('HP_HOST'), (int)getenv('HP_PORT'), $db),
    getenv('HP_USER'), getenv('HP_PASSWORD'),
    [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]
);
// What Grafana does on connect: the session works in UTC, as taken_at does.
$pdo->exec("SET time_zone = '+00:00'");
$out = ['driver' => 'pdo', 'tables' => [], 'columns' => [], 'results' => new stdClass()];

foreach ($pdo->query('SHOW TABLES')->fetchAll(PDO::FETCH_COLUMN) as $t) {
    $out['tables'][] = [$t, ''];
    $st = $pdo->query('SELECT * FROM `' . str_replace('`', '``', $t) . '` LIMIT 0');
    for ($i = 0; $i < $st->columnCount(); $i++) {
        $m = $st->getColumnMeta($i);
        $out['columns'][] = [$t, $m['name'], $m['native_type'] ?? '', null];
    }
}

foreach (array_slice($argv, 1) as $arg) {
    $s = json_decode($arg, true, 16, JSON_THROW_ON_ERROR);
    [$name, $sql, $params] = [$s['name'], $s['sql'], $s['args'] ?? []];
    foreach ([true => $name, false => $name . '@prepared'] as $emulate => $key) {
        try {
            $pdo->setAttribute(PDO::ATTR_EMULATE_PREPARES, (bool)$emulate);
            $st = $pdo->prepare($sql);
            $st->execute($params);
            $out['results']->$key = result($st);
        } catch (Throwable $e) {
            $out['results']->$key = failure($e);
        }
    }
}
$pdo->setAttribute(PDO::ATTR_EMULATE_PREPARES, true);

// PDO reads the server's in-transaction status flag: commit() after
// beginTransaction() and a query says "There is no active transaction" when
// the flag is not set.
try {
    $pdo->beginTransaction();
    $pdo->query('SELECT COUNT(*) FROM snapshots')->fetchAll();
    $in = $pdo->inTransaction();
    $pdo->commit();
    $out['transaction'] = $in ? 'ok' : 'inTransaction() false before commit()';
} catch (Throwable $e) {
    $out['transaction'] = $e->getMessage();
}

echo json_encode($out, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE | JSON_THROW_ON_ERROR), "\n";
