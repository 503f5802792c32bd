#!/usr/bin/env bash
# Proxy benchmark (issue 2): sysbench against MariaDB directly, through
# HAProxy in TCP mode (a proxy that does not read the protocol) and through
# heapproxy, in one run on this machine, and a markdown table of QPS, p95
# latency, the ratios heapproxy/HAProxy and heapproxy/direct, and each proxy's
# CPU seconds per 10,000 queries. See README.md next to this script.
set -euo pipefail

DURATION=${DURATION:-5}                                 # seconds per sysbench run
THREADS=${THREADS:-"1 4 8"}                             # sysbench --threads values
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only select1"} # select1: bench/proxy/select1.lua, a pool's ping
TARGETS=${TARGETS:-"direct haproxy heapproxy"}          # any subset, in this order per run
TABLE_SIZE=${TABLE_SIZE:-100000}                        # rows per sysbench table
TABLES=${TABLES:-1}
WARMUP=${WARMUP:-5}                                     # seconds of direct load before measuring
PERFSTAT=${PERFSTAT:-0}                                 # 1: perf stat per query on each proxy (system calls, context switches)
ROUNDS=${ROUNDS:-7}                                     # rounds per cell; the table shows medians (one round is a coin toss: README)
HEAPPROXY_BIN=${HEAPPROXY_BIN:-}                        # prebuilt binary; default: go build ./cmd/heapproxy
OUT=${OUT:-}                                            # also write the markdown table to this file
KEEP=${KEEP:-0}                                         # 1: keep the temp dir (logs, sysbench outputs)
PROFILE=${PROFILE:-0}                                   # 1: perf-profile heapproxy during its runs
SYSBENCH_OPTS=${SYSBENCH_OPTS:-}                        # more options for the measured runs, e.g. --histogram=on (with KEEP=1)
HALT_POLL_NS=${HALT_POLL_NS:-}                          # haltpoll VMs: guest_halt_poll_ns for the run, restored on exit (README)

repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/heapproxy-bench.XXXXXX)
pids=()
haltpoll=/sys/module/haltpoll/parameters/guest_halt_poll_ns
halt_poll_saved=

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

cleanup() {
	local rc=$?
	# Stop only the processes this script started, newest first.
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill "${pids[i]}" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		for _ in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
	done
	if [[ -n $halt_poll_saved ]]; then
		echo "$halt_poll_saved" >"$haltpoll" || log "could not restore $haltpoll to $halt_poll_saved"
	fi
	if [[ $KEEP == 1 || $PROFILE == 1 || $rc != 0 ]]; then
		log "logs kept in $tmp"
	else
		rm -rf "$tmp"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Tools: Debian's sysbench and haproxy, installed on demand; MariaDB from CI.
missing=()
command -v sysbench >/dev/null || missing+=(sysbench)
[[ $PROFILE == 1 ]] && ! command -v perf >/dev/null && missing+=(linux-perf)
[[ " $TARGETS " == *" haproxy"[\ @]* ]] && ! command -v haproxy >/dev/null && ! [[ -x /usr/sbin/haproxy ]] && missing+=(haproxy)
if ((${#missing[@]})); then
	log "installing ${missing[*]}"
	[[ $(id -u) == 0 ]] || die "need ${missing[*]}: run apt-get install -y ${missing[*]}"
	apt-get install -y "${missing[@]}" >"$tmp/apt.log" 2>&1 || die "apt-get install ${missing[*]} failed, see $tmp/apt.log"
fi
export PATH=$PATH:/usr/sbin
for t in mariadb-install-db mariadbd mariadb mariadb-admin sysbench; do
	command -v "$t" >/dev/null || die "$t not found (apt-get install -y mariadb-server mariadb-client sysbench)"
done

# A guest that halts when idle (cpuidle driver haltpoll, guest_halt_poll_ns 0)
# pays a VM exit on every wake-up of an idle vCPU; at 1 thread that, not the
# proxies, sets the QPS (README: session 15). HALT_POLL_NS lets a run poll first.
if [[ -n $HALT_POLL_NS ]]; then
	[[ $HALT_POLL_NS =~ ^[0-9]+$ ]] || die "HALT_POLL_NS=$HALT_POLL_NS: want nanoseconds, e.g. 200000"
	[[ -w $haltpoll ]] || die "HALT_POLL_NS needs the haltpoll cpuidle driver and root: $haltpoll is not writable"
	halt_poll_saved=$(<"$haltpoll")
	echo "$HALT_POLL_NS" >"$haltpoll"
	log "guest_halt_poll_ns $halt_poll_saved -> $HALT_POLL_NS for this run"
fi

# idle_setting prints how this machine's idle CPUs wait, for the report header.
idle_setting() {
	local drv
	drv=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo unknown)
	if [[ -r $haltpoll ]]; then
		echo "cpuidle driver $drv, guest_halt_poll_ns $(<"$haltpoll")"
	else
		echo "cpuidle driver $drv"
	fi
}

# free_port prints a TCP port on 127.0.0.1 that nothing listens on.
free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	die "no free port found"
}

# wait_sql PORT NAME PID: wait until a login as the benchmark user works on
# PORT, failing at once if process PID (the server behind PORT) has exited.
wait_sql() {
	for _ in $(seq 1 300); do
		if mariadb --no-defaults -h127.0.0.1 -P"$1" -u"$dbuser" -p"$dbpass" -e 'SELECT 1' sbtest >/dev/null 2>&1; then
			return
		fi
		if ! kill -0 "$3" 2>/dev/null; then
			tail -n 20 "$tmp/$2.log" >&2 || true
			die "$2 exited, see $tmp/$2.log"
		fi
		sleep 0.2
	done
	die "$2 on port $1 does not answer; see $tmp/$2.log"
}

# cpu_ticks PID prints utime+stime of PID in clock ticks (/proc/PID/stat fields 14 and 15).
cpu_ticks() {
	# The command name (field 2) may hold spaces: read after its closing parenthesis.
	local rest
	rest=$(sed 's/^.*) //' "/proc/$1/stat")
	awk '{print $12 + $13}' <<<"$rest"
}

clk_tck=$(getconf CLK_TCK)

# cpu_idle prints the machine's idle and total CPU time so far, in ticks
# (/proc/stat's first line: idle and iowait against every field).
cpu_idle() { awk '$1 == "cpu" {t = 0; for (i = 2; i <= NF; i++) t += $i; print $5 + $6, $9, t; exit}' /proc/stat; }
runas=()
[[ $(id -u) == 0 ]] && runas=(--user=root)

# --- MariaDB on a temp datadir and a free port --------------------------------
dbport=$(free_port)
dbuser=sbtest
dbpass=sbtest-$RANDOM$RANDOM
log "starting MariaDB on 127.0.0.1:$dbport (datadir $tmp/data)"
mariadb-install-db --no-defaults --datadir="$tmp/data" --auth-root-authentication-method=normal \
	--skip-test-db "${runas[@]}" >"$tmp/install.log" 2>&1 || die "mariadb-install-db failed, see $tmp/install.log"
mariadbd --no-defaults --datadir="$tmp/data" --socket="$tmp/mysqld.sock" --port="$dbport" \
	--bind-address=127.0.0.1 --pid-file="$tmp/mysqld.pid" --innodb-buffer-pool-size=512M \
	--max-connections=500 --skip-name-resolve --performance-schema=OFF "${runas[@]}" \
	>"$tmp/mariadbd.log" 2>&1 &
pids+=($!)
dbpid=$!
for _ in $(seq 1 300); do
	mariadb-admin --no-defaults --socket="$tmp/mysqld.sock" -uroot ping >/dev/null 2>&1 && break
	kill -0 "$dbpid" 2>/dev/null || die "mariadbd exited, see $tmp/mariadbd.log"
	sleep 0.2
done
mariadb --no-defaults --socket="$tmp/mysqld.sock" -uroot <<SQL || die "creating the sysbench user failed"
CREATE DATABASE sbtest;
CREATE USER '$dbuser'@'127.0.0.1' IDENTIFIED BY '$dbpass';
GRANT ALL ON sbtest.* TO '$dbuser'@'127.0.0.1';
SQL
wait_sql "$dbport" mariadbd "$dbpid"

sb_common=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user="$dbuser" --mysql-password="$dbpass"
	--mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE")
log "preparing $TABLES sysbench table(s) of $TABLE_SIZE rows"
sysbench oltp_read_only "${sb_common[@]}" --mysql-port="$dbport" prepare >"$tmp/prepare.log" 2>&1 ||
	die "sysbench prepare failed, see $tmp/prepare.log"

# --- HAProxy in TCP mode -------------------------------------------------------
# Targets haproxy@NAME are more HAProxy processes with the same settings: an
# A/A run (TARGETS="haproxy haproxy@twin heapproxy") shows how far two
# identical proxies' cells drift apart on this machine, the noise that any
# /HAProxy ratio carries.
declare -A port pid
port[direct]=$dbport
pid[direct]=
for tg in $TARGETS; do
	[[ $tg == haproxy || $tg == haproxy@* ]] || continue
	port[$tg]=$(free_port)
	cat >"$tmp/$tg.cfg" <<CFG
global
    maxconn 2000
defaults
    mode tcp
    timeout connect 5s
    timeout client 1h
    timeout server 1h
listen mysql
    bind 127.0.0.1:${port[$tg]}
    server mariadb 127.0.0.1:$dbport
CFG
	log "starting $tg (HAProxy) on 127.0.0.1:${port[$tg]}"
	haproxy -db -f "$tmp/$tg.cfg" >"$tmp/$tg.log" 2>&1 &
	pids+=($!)
	pid[$tg]=$!
	wait_sql "${port[$tg]}" "$tg" "${pid[$tg]}"
done

# --- heapproxy -------------------------------------------------------------------
# Targets heapproxy@NAME are more heapproxy processes for A/B runs: binary
# HEAPPROXY_BIN_NAME (default: the same as heapproxy) and environment
# HEAPPROXY_ENV_NAME (space-separated VAR=value), e.g.
#   TARGETS="haproxy heapproxy heapproxy@one" HEAPPROXY_ENV_one=GOMAXPROCS=1
for tg in $TARGETS; do
	[[ $tg == heapproxy || $tg == heapproxy@* ]] || continue
	if [[ -z $HEAPPROXY_BIN ]]; then
		HEAPPROXY_BIN=$tmp/heapproxy
		log "building heapproxy"
		(cd "$repo" && CGO_ENABLED=0 go build -o "$HEAPPROXY_BIN" ./cmd/heapproxy) >"$tmp/build.log" 2>&1 ||
			die "go build ./cmd/heapproxy failed, see $tmp/build.log (or set TARGETS=\"direct haproxy\")"
	fi
	bin=$HEAPPROXY_BIN
	env=()
	if [[ $tg == heapproxy@* ]]; then
		name=${tg#heapproxy@}
		v=HEAPPROXY_BIN_$name
		[[ -n ${!v:-} ]] && bin=${!v}
		v=HEAPPROXY_ENV_$name
		read -r -a env <<<"${!v:-}"
	fi
	bin=$(realpath "$bin")
	port[$tg]=$(free_port)
	log "starting $tg ($bin ${env[*]}) on 127.0.0.1:${port[$tg]}"
	hpflags=(--listen "127.0.0.1:${port[$tg]}" --upstream "127.0.0.1:$dbport" --log-level warn)
	# Keep the snapshot store (newer builds) out of the work tree.
	# (--help exits 2; under pipefail that would hide grep's answer.)
	{ "$bin" --help 2>&1 || true; } | grep -q -- -data-dir && hpflags+=(--data-dir "$tmp/$tg-data")
	# Run in $tmp so any other relative default path lands there too.
	(cd "$tmp" && exec env "${env[@]}" "$bin" "${hpflags[@]}") >"$tmp/$tg.log" 2>&1 &
	pids+=($!)
	pid[$tg]=$!
	wait_sql "${port[$tg]}" "$tg" "${pid[$tg]}"
done

# --- runs ------------------------------------------------------------------------
if ((WARMUP > 0)); then
	log "warming up for ${WARMUP}s"
	sysbench oltp_read_only "${sb_common[@]}" --mysql-port="$dbport" --threads=4 --time="$WARMUP" run \
		>"$tmp/warmup.log" 2>&1 || die "warm-up failed, see $tmp/warmup.log"
fi

# median prints the median of its arguments.
median() {
	printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

# median_ci reads sorted numbers, one a line, and prints a confidence
# interval for their population's median that needs no assumption about
# its shape (the sign test's): the k-th smallest to the k-th largest, k
# the largest with P(Binomial(n, 1/2) < k) <= 2.5 %, and the interval's
# exact coverage, 1 - 2 P(Binomial(n, 1/2) < k). Under 6 rounds there is
# none that wide (the min-max of 5 covers 93.8 %): it prints "-".
median_ci() {
	awk '{a[NR] = $1}
	END {
		n = NR; p = 0.5 ^ n; c = 0; k = 0
		# c: P(X <= k - 1), grown one term at a time while it stays within 2.5 %.
		while (k < n / 2 && c + p <= 0.025) { c += p; k++; p = p * (n - k + 1) / k }
		if (k == 0) { print "-"; exit }
		printf "%.2f-%.2f (%.1f %%)", a[k], a[n + 1 - k], 100 * (1 - 2 * c)
	}'
}

# workload names sysbench's script for w: one of its own, or one next to
# this script (select1).
workload() { if [[ -f $repo/bench/proxy/$1.lua ]]; then echo "$repo/bench/proxy/$1.lua"; else echo "$1"; fi; }
read -r -a targets <<<"$TARGETS"
declare -A qps p95 cpu rounds pair pairci idle pstat dbcpu steal
for w in $WORKLOADS; do
	for th in $THREADS; do
		declare -A rq=() rp=() nq=() nt=() ri=() ps=() nd=() rs=()
		for ((r = 0; r < ROUNDS; r++)); do
			# Each round starts with the next target, so none always runs first.
			for ((i = 0; i < ${#targets[@]}; i++)); do
				tg=${targets[(i + r) % ${#targets[@]}]}
				out="$tmp/$w.$th.$tg.$r.log"
				log "$w threads=$th via $tg (${DURATION}s, round $((r + 1))/$ROUNDS)"
				[[ -n ${pid[$tg]} ]] && c0=$(cpu_ticks "${pid[$tg]}")
				read -r i0 s0 t0 < <(cpu_idle)
				d0=$(cpu_ticks "$dbpid")
				perfpid=
				statpid=
				if [[ $PERFSTAT == 1 && -n ${pid[$tg]} ]]; then
					perf stat -x, -e task-clock,context-switches,cpu-migrations,raw_syscalls:sys_enter \
						-p "${pid[$tg]}" -o "$tmp/perfstat.$w.$th.$tg.$r.csv" -- sleep "$DURATION" >/dev/null 2>&1 &
					statpid=$!
				fi
				if [[ $PROFILE == 1 && $tg == heapproxy* ]]; then
					perf record -F 499 -g -p "${pid[$tg]}" -o "$tmp/perf.$w.$th.$tg.$r.data" -- sleep "$DURATION" \
						>"$tmp/perf.$w.$th.$tg.$r.log" 2>&1 &
					perfpid=$!
				fi
				# shellcheck disable=SC2086 # SYSBENCH_OPTS is a list of options
				sysbench "$(workload "$w")" "${sb_common[@]}" --mysql-port="${port[$tg]}" --threads="$th" \
					--time="$DURATION" --percentile=95 --report-interval=0 $SYSBENCH_OPTS run >"$out" 2>&1 ||
					die "sysbench $w via $tg failed, see $out"
				if [[ -n $perfpid ]]; then
					wait "$perfpid" || die "perf record failed, see $tmp/perf.$w.$th.$tg.$r.log"
					{
						perf report -i "$tmp/perf.$w.$th.$tg.$r.data" --stdio --no-children -g none --sort dso
						perf report -i "$tmp/perf.$w.$th.$tg.$r.data" --stdio --no-children -g none --percent-limit 0.5 --sort dso,symbol
						perf report -i "$tmp/perf.$w.$th.$tg.$r.data" --stdio --children -g caller --percent-limit 5 --sort symbol
					} 2>/dev/null | grep -v '^$' >"$tmp/profile.$w.$th.$tg.$r.txt" || true
					log "heapproxy profile: $tmp/profile.$w.$th.$tg.$r.txt"
				fi
				read -r i1 s1 t1 < <(cpu_idle)
				d1=$(cpu_ticks "$dbpid")
				nd[$tg]=$((${nd[$tg]:-0} + d1 - d0))
				ri[$tg]+=" $(awk -v a=$((i1 - i0)) -v b=$((t1 - t0)) 'BEGIN {printf "%.1f", (b > 0 ? 100 * a / b : 0)}')"
				rs[$tg]+=" $(awk -v a=$((s1 - s0)) -v b=$((t1 - t0)) 'BEGIN {printf "%.1f", (b > 0 ? 100 * a / b : 0)}')"
				if [[ -n $statpid ]]; then
					wait "$statpid" || die "perf stat failed on $tg"
				fi
				# "queries:   123456 (6172.80 per sec.)" and "95th percentile:   1.23"
				queries=$(awk '$1 == "queries:" {print $2}' "$out")
				q=$(awk '$1 == "queries:" {gsub(/\(/, "", $3); print $3}' "$out")
				p=$(awk '$1 == "95th" {print $3}' "$out")
				[[ -n $queries && -n $q && -n $p ]] || die "cannot read sysbench output $out"
				rq[$tg]+=" $q"
				if [[ -n $statpid ]]; then
					# Per query, over this round's queries (perf stat ran as long as sysbench).
					ps[$tg]+=$(awk -F, -v q="$queries" '$3 == "task-clock" {c = $1} $3 == "context-switches" {x = $1}
						$3 == "cpu-migrations" {m = $1} $3 == "raw_syscalls:sys_enter" {s = $1}
						END {printf " %.2f/%.2f/%.3f/%.1f", s / q, x / q, m / q, 1000 * c / q}' "$tmp/perfstat.$w.$th.$tg.$r.csv")
				fi
				rp[$tg]+=" $p"
				nq[$tg]=$((${nq[$tg]:-0} + queries))
				if [[ -n ${pid[$tg]} ]]; then
					kill -0 "${pid[$tg]}" 2>/dev/null || die "$tg died during the run, see $tmp/$tg.log"
					c1=$(cpu_ticks "${pid[$tg]}")
					nt[$tg]=$((${nt[$tg]:-0} + c1 - c0))
				fi
			done
		done
		for tg in "${targets[@]}"; do
			# shellcheck disable=SC2086 # word splitting of the per-round lists is wanted
			qps[$w.$th.$tg]=$(median ${rq[$tg]})
			# shellcheck disable=SC2086
			idle[$w.$th.$tg]=$(median ${ri[$tg]})
			steal[$w.$th.$tg]=${rs[$tg]# }
			pstat[$w.$th.$tg]=${ps[$tg]:-}
			dbcpu[$w.$th.$tg]=$(awk -v d="${nd[$tg]}" -v hz="$clk_tck" -v q="${nq[$tg]}" 'BEGIN {printf "%.3f", d / hz / q * 10000}')
			# shellcheck disable=SC2086 # one QPS per round, space-separated
			rounds[$w.$th.$tg]=$(printf '%s\n' ${rq[$tg]} | awk '{printf "%s%.1f", (NR > 1 ? " " : ""), $1 / 1000}')
			# Each round's ratio to HAProxy's QPS in the same round (the two
			# ran back to back), as min-median-max: how far one cell moves
			# from round to round.
			if [[ $tg != direct && $tg != haproxy && -n ${rq[haproxy]:-} ]]; then
				# shellcheck disable=SC2086
				ratios=$(paste <(printf '%s\n' ${rq[$tg]}) <(printf '%s\n' ${rq[haproxy]}) | awk '{print $1 / $2}' | sort -g)
				# shellcheck disable=SC2086
				pair[$w.$th.$tg]=$(printf '%.2f-%.2f-%.2f' "$(head -1 <<<"$ratios")" "$(median $ratios)" "$(tail -1 <<<"$ratios")")
				pairci[$w.$th.$tg]=$(median_ci <<<"$ratios")
			fi
			# shellcheck disable=SC2086
			p95[$w.$th.$tg]=$(median ${rp[$tg]})
			cpu[$w.$th.$tg]=-
			if [[ -n ${pid[$tg]} ]]; then
				cpu[$w.$th.$tg]=$(awk -v d="${nt[$tg]}" -v hz="$clk_tck" -v q="${nq[$tg]}" \
					'BEGIN {printf "%.3f", d / hz / q * 10000}')
			fi
		done
		unset rq rp nq nt ri ps nd rs
	done
done

# --- report ----------------------------------------------------------------------
ratio() { # ratio A B prints A/B with two decimals, or - when either is missing
	if [[ -n ${1:-} && -n ${2:-} ]]; then awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; else echo -; fi
}
report() {
	echo "Proxy benchmark, $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) CPU(s) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')):"
	echo "$(mariadbd --version | awk '{print $3}'), $(sysbench --version), $(haproxy -v 2>/dev/null | head -1 | awk '{print "HAProxy " $3}');"
	echo "${DURATION}s per run, median of $ROUNDS round(s) (target order rotated per round), $TABLES table(s) of $TABLE_SIZE rows,"
	echo "everything on 127.0.0.1 sharing the same CPUs; idle CPUs: $(idle_setting)."
	echo "CPU s/10k q is the proxy process's utime+stime per 10,000 sysbench queries."
	echo
	echo "Rounds: each round's QPS (thousands), in round order. /HAProxy by round: min-median-max of each"
	echo "round's QPS over HAProxy's in the same round. Median's CI: an interval for the median of that"
	echo "ratio, from the rounds' order statistics (the sign test's, no assumption about the rounds' spread),"
	echo "with its coverage; 7 rounds give min-max at 98.4 %, 21 the 6th to 16th at 97.3 %."
	echo
	echo "MariaDB s/10k q: the same for mariadbd (what a path costs the database)."
	echo "Idle: the machine's idle CPU during the run, median over rounds (all CPUs busy: 0). Steal: the CPU"
	echo "time the hypervisor gave other guests, by round (a busy host slows a round down whatever the target)."
	echo
	echo "| workload | threads | target | QPS | p95 ms | /HAProxy | /direct | CPU s/10k q | MariaDB s/10k q | idle % | steal % by round | rounds (kQPS) | /HAProxy by round | median's CI |"
	echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|"
	for w in $WORKLOADS; do
		for th in $THREADS; do
			for tg in $TARGETS; do
				k=$w.$th.$tg
				vh=-
				vd=-
				[[ $tg != direct && $tg != haproxy ]] && vh=$(ratio "${qps[$k]}" "${qps[$w.$th.haproxy]:-}")
				[[ $tg != direct ]] && vd=$(ratio "${qps[$k]}" "${qps[$w.$th.direct]:-}")
				printf '| %s | %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$w" "$th" "$tg" "${qps[$k]}" "${p95[$k]}" "$vh" "$vd" "${cpu[$k]}" \
					"${dbcpu[$k]}" "${idle[$k]}" "${steal[$k]}" "${rounds[$k]}" "${pair[$k]:--}" "${pairci[$k]:--}"
			done
		done
	done
}
perfstat_report() {
	echo
	echo "perf stat on each proxy process, per sysbench query, by round:"
	echo "system calls / context switches / CPU migrations / task-clock µs."
	echo
	echo "| workload | threads | target | rounds |"
	echo "|---|---:|---|---|"
	for w in $WORKLOADS; do
		for th in $THREADS; do
			for tg in $TARGETS; do
				[[ -n ${pstat[$w.$th.$tg]:-} ]] && printf '| %s | %s | %s | %s |\n' "$w" "$th" "$tg" "${pstat[$w.$th.$tg]# }"
			done
		done
	done
}
# (An if, not "[[ ... ]] && ...": as the group's last command, a false
# test would be its status and, under pipefail and set -e, the script's:
# make bench stopped here.)
{
	report
	if [[ $PERFSTAT == 1 ]]; then perfstat_report; fi
} | tee "${OUT:-/dev/null}"
