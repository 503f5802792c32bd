#!/usr/bin/perl
# Perl DBI with DBD::MariaDB (Debian libdbi-perl libdbd-mariadb-perl) through
# heapproxy, for server/drivers_test.go. Connection parts come from the
# environment (HP_HOST, HP_PORT, HP_USER, HP_PASSWORD, HP_DATABASE), the
# statements from the arguments, each a JSON object {"name", "sql", "args"}
# (args given to execute()). Prints one JSON document:
# the tables as table_info lists them, their columns as column_info lists
# them, and every statement's columns (mariadb_type) and values, each tagged
# with what Perl holds (a number, a character string, or undecoded bytes),
# with client-side and with server-side prepared statements.
use strict;
use warnings;
use B ();
use DBI;
use JSON::PP;

# tag says what DBD::MariaDB handed over: numbers as numbers, text as
# decoded character strings (bytes with the high bit set and no UTF-8 flag
# are undecoded bytes; pure ASCII looks the same either way).
sub tag {
    my ($v) = @_;
    return [ 'null', '' ] unless defined $v;
    my $flags = B::svref_2object(\$v)->FLAGS;
    if (!($flags & B::SVf_POK)) {
        return [ 'int', "$v" ] if $flags & B::SVf_IOK;
        return [ 'float', sprintf('%.17g', $v) ] if $flags & B::SVf_NOK;
    }
    return [ 'bytes', $v ] if !utf8::is_utf8($v) && $v =~ /[\x80-\xff]/;
    return [ 'string', $v ];
}

sub result {
    my ($sth) = @_;
    my @cols;
    for my $i (0 .. $sth->{NUM_OF_FIELDS} - 1) {
        push @cols, { name => $sth->{NAME}[$i], type => "$sth->{mariadb_type}[$i]", charset => undef };
    }
    my @rows = map { [ map { tag($_) } @$_ ] } @{ $sth->fetchall_arrayref };
    return { columns => \@cols, rows => \@rows };
}

my $db  = $ENV{HP_DATABASE};
my $dbh = DBI->connect("DBI:MariaDB:database=$db;host=$ENV{HP_HOST};port=$ENV{HP_PORT}",
    $ENV{HP_USER}, $ENV{HP_PASSWORD}, { RaiseError => 1, PrintError => 0, AutoCommit => 1 })
  or die "connect: $DBI::errstr\n";
# What Grafana does on connect: the session works in UTC, as taken_at does.
$dbh->do(q{SET time_zone = '+00:00'});

my %out = (driver => 'dbi', tables => [], columns => [], results => {});
my $ti = $dbh->table_info(undef, $db, '%', undef);
while (my $t = $ti->fetchrow_hashref) {
    push @{ $out{tables} }, [ $t->{TABLE_NAME}, $t->{TABLE_TYPE} // '' ];
}
for my $t (map { $_->[0] } @{ $out{tables} }) {
    my $ci = $dbh->column_info(undef, $db, $t, '%');
    while (my $c = $ci->fetchrow_hashref) {
        push @{ $out{columns} }, [ $c->{TABLE_NAME}, $c->{COLUMN_NAME}, $c->{TYPE_NAME}, undef ];
    }
}

# JSON::PP's decode takes the UTF-8 bytes and gives character strings, what
# DBD::MariaDB takes.
for my $arg (@ARGV) {
    my $s = JSON::PP->new->utf8->decode($arg);
    my ($name, $sql, $params) = ($s->{name}, $s->{sql}, $s->{args} // []);
    for my $server (0, 1) {
        my $key = $server ? "$name\@prepared" : $name;
        $out{results}{$key} = eval {
            my $sth = $dbh->prepare($sql, { mariadb_server_prepare => $server });
            $sth->execute(@$params);
            result($sth);
        } || { error => ($DBI::err // '') . ' ' . ($DBI::state // '') . ' ' . ($DBI::errstr // $@) };
    }
}
$dbh->disconnect;

print JSON::PP->new->utf8->canonical->encode(\%out), "\n";
