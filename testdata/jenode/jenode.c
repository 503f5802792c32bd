/*
 * jenode: a small, real jemalloc node for heapproxy's tests.
 *
 * It allocates through Debian's libjemalloc along known call stacks and
 * serves, over plain HTTP/1.0 on --port N, the heap-profiling endpoints of
 * every jemalloc-based product heapproxy talks to, with those products'
 * paths, methods and answers (see backends/README.md for the sources):
 *
 *   StarRocks BE  GET  /pprof/heap            raw heap_v2 dump (mallctl prof.dump)
 *                 GET|HEAD|POST /pprof/symbol gperftools remote symbolizer
 *   Doris BE      GET  /jeheap/active/true|false
 *                 GET  /jeheap/dump           DOT made by jeprof on the node
 *                                             (2.1.8+/3.0.4+); with
 *                                             --doris-legacy the 1.2.2-2.1.7
 *                                             answer: the dump stays on disk
 *                 GET|POST /pprof/symbol      as above
 *   GreptimeDB    POST /debug/prof/mem        raw dump (output=text)
 *                 GET  /debug/prof/mem/status {"active": bool}
 *                 POST /debug/prof/mem/activate, /debug/prof/mem/deactivate
 *   TiKV          GET  /debug/pprof/heap      raw dump
 *                 GET  /status                empty 200
 *                 GET  /debug/pprof/heap_activate|heap_deactivate -> 410
 *                 GET|POST /debug/pprof/symbol
 *   Databend      GET  /debug/mem/pprof/profile raw dump
 *
 * Release personalities (--product P --version V; without them jenode serves
 * the routes above, the newest of each product):
 *   --product tikv --version 6.5|7.4|7.5|8.1   TiKV's status server of that
 *       release (src/server/status_server/mod.rs and profile.rs at the tags):
 *       6.5 (5.3-7.3): no /debug/pprof/heap (404 "path not found");
 *       heap_activate starts "periodic dumps" (a heap-XXXXXX directory in
 *       --dump-dir, holding the profiling mutex); 7.4: /debug/pprof/heap
 *       ?seconds=N (default 10) activates prof, allocates (the node's
 *       workload), waits the window, deactivates and dumps; "Already in
 *       Profiling" while heap_activate runs; 7.5: memory.enable-heap-profiling
 *       (GET/POST /config, default on: prof active from the start),
 *       heap_activate 500 "Already in Heap Profiling" while on,
 *       heap_deactivate 200 leaving prof.active on but dumps refused ("heap
 *       profiling is not activated"); 8.1: /config toggles prof.active,
 *       heap_activate/deactivate 410, immediate dumps. /engine_type from
 *       7.1, /debug/pprof/symbol from 7.5. --heap-profiling off starts 7.5+
 *       with memory.enable-heap-profiling = false (tikv.toml).
 *   --product greptimedb --version 0.9|0.15   0.9: only GET|POST /v1/prof/mem
 *       (query ignored); 0.15: POST /debug/prof/mem with ?output=proto (a
 *       gzipped pprof protobuf symbolized on the node, as pprof_util's
 *       to_pprof makes) and no activate/deactivate/status (v0.16+). The
 *       default GreptimeDB routes are v0.16+'s, output=proto included.
 *   --product databend --version release   an official databend-query build:
 *       no /debug/mem/pprof/profile (it needs the memory-profiling cargo
 *       feature, src/query/service/src/servers/admin/admin_service.rs).
 *
 * Test helpers (not part of any product):
 *   GET /alloc   allocate along the known stacks once more
 *   GET /stats   request counts per path, one "path count" line each
 *   --auth U:P   Doris with enable_all_http_auth: /jeheap/ and /pprof/ want
 *                HTTP basic auth: none -> 401 (WWW-Authenticate: Basic
 *                realm="Restricted"), wrong user or password -> 403
 *
 * Build: cc -O1 -g -rdynamic -o jenode jenode.c -ljemalloc
 *   (-rdynamic exports the jenode_* functions so dladdr can name them for
 *   /pprof/symbol, which is how a BE without debug info on the client
 *   side gets its stacks named.)
 * Run:   MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:10 ./jenode --port 8040
 *
 * Single-threaded on purpose: one request at a time, like the products'
 * profiling handlers, which all hold a global mutex while dumping.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <jemalloc/jemalloc.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum {
	MAX_HEADER = 16 * 1024,   /* request line + headers */
	MAX_BODY = 1024 * 1024,   /* /pprof/symbol POST bodies */
	MAX_FILE = 256 << 20,     /* a dump we are willing to send */
	MAX_PATHS = 64,
};

enum product { PRODUCT_ALL, PRODUCT_TIKV, PRODUCT_GREPTIMEDB, PRODUCT_DATABEND };

struct opts {
	int port;
	enum product product;
	int version; /* major*100+minor, 0 for the default routes */
	bool heap_profiling_cfg; /* TiKV 7.5+ memory.enable-heap-profiling at start */
	const char *auth; /* "Basic <base64(user:pass)>" when --auth is given */
	bool doris_legacy;
	int slow_dump_ms;
	const char *dump_dir;
	const char *jeprof;
};

struct counter {
	char path[64];
	long n;
};

struct node {
	struct opts o;
	struct counter counts[MAX_PATHS];
	int ncounts;
	char exe[4096];
	unsigned dumps;
	/* TiKV status server state (profile.rs): */
	bool tikv_cfg_heap;  /* config memory.enable-heap-profiling (7.5+) */
	int tikv_heap;       /* HEAP_PROFILE_ACTIVE / PROFILE_ACTIVE: TIKV_* */
	char tikv_dir[4096]; /* the periodic dumps' directory */
};

enum { TIKV_OFF, TIKV_BY_CONFIG, TIKV_PERIODIC };

/* ---- allocations along known stacks ------------------------------------ */

/* Kept reachable so the allocations stay live in the heap profile. */
struct keep {
	void **items;
	size_t n, cap;
};

static struct keep kept;

void jenode_keep(void *p) {
	if (kept.n == kept.cap) {
		size_t cap = kept.cap ? kept.cap * 2 : 256;
		void **items = realloc(kept.items, cap * sizeof(void *));
		if (items == NULL) {
			abort();
		}
		kept.items = items;
		kept.cap = cap;
	}
	kept.items[kept.n++] = p;
}

__attribute__((noinline)) void *jenode_segment_alloc(size_t size) {
	char *p = malloc(size);
	if (p == NULL) {
		abort();
	}
	memset(p, 0x5a, size); /* touch it so it is real memory */
	jenode_keep(p);
	return p;
}

__attribute__((noinline)) void *jenode_tablet_schema_alloc(int columns) {
	void *last = NULL;
	for (int i = 0; i < columns; i++) {
		last = calloc(1, 96 + (size_t)(i % 7) * 16);
		if (last == NULL) {
			abort();
		}
		jenode_keep(last);
	}
	return last;
}

static unsigned leak_steps;

/* Leaks a bit more each time it is called, like a slow leak in a BE. */
__attribute__((noinline)) void *jenode_leak_step(void) {
	leak_steps++;
	size_t size = (size_t)leak_steps * 64 * 1024;
	char *p = malloc(size);
	if (p == NULL) {
		abort();
	}
	memset(p, 0x17, size);
	return p; /* dropped by the caller: leaked on purpose */
}

__attribute__((noinline)) void jenode_load_tablets(void) {
	for (int i = 0; i < 8; i++) {
		jenode_segment_alloc(256 * 1024);
	}
	for (int i = 0; i < 16; i++) {
		jenode_tablet_schema_alloc(64);
	}
}

__attribute__((noinline)) void jenode_alloc_round(void) {
	jenode_load_tablets();
	(void)jenode_leak_step();
}

/* ---- jemalloc control --------------------------------------------------- */

static int prof_get_active(bool *active) {
	size_t sz = sizeof(*active);
	return mallctl("prof.active", active, &sz, NULL, 0);
}

static int prof_set_active(bool active) {
	int rc = mallctl("prof.active", NULL, NULL, &active, sizeof(active));
	if (rc != 0) {
		return rc;
	}
	return mallctl("prof.thread_active_init", NULL, NULL, &active, sizeof(active));
}

/* Dumps the heap profile to a new file under dump_dir; returns 0 and the
 * path in out. */
static int prof_dump(struct node *n, char *out, size_t outlen) {
	n->dumps++;
	snprintf(out, outlen, "%s/jenode_heap.%ld.%d.%u.heap", n->o.dump_dir, (long)time(NULL),
	         (int)getpid(), n->dumps);
	const char *p = out;
	return mallctl("prof.dump", NULL, NULL, &p, sizeof(p));
}

/* ---- HTTP plumbing ------------------------------------------------------ */

struct req {
	char auth[512];
	char method[8];
	char path[512];
	char query[512];
	char *body;
	size_t body_len;
};

static int write_all(int fd, const void *buf, size_t len) {
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static const char *reason(int code) {
	switch (code) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 410: return "Gone";
	case 413: return "Payload Too Large";
	case 500: return "Internal Server Error";
	default: return "Unknown";
	}
}

static void reply(int fd, int code, const char *ctype, const char *body, size_t len) {
	char head[256];
	int h = snprintf(head, sizeof(head),
	                 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
	                 "Connection: close\r\n\r\n",
	                 code, reason(code), ctype, len);
	if (write_all(fd, head, (size_t)h) == 0 && len > 0) {
		(void)write_all(fd, body, len);
	}
}

static void reply_str(int fd, int code, const char *body) {
	reply(fd, code, "text/plain; charset=utf-8", body, strlen(body));
}

/* Reads a whole file (bounded by MAX_FILE) into a malloc'd buffer. */
static char *read_file(const char *path, size_t *len) {
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		return NULL;
	}
	size_t cap = 64 * 1024, n = 0;
	char *buf = malloc(cap);
	while (buf != NULL) {
		if (n == cap) {
			if (cap >= MAX_FILE) {
				free(buf);
				buf = NULL;
				break;
			}
			cap *= 2;
			char *nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		if (r == 0) {
			break;
		}
		n += r;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* Reads one request: the head up to MAX_HEADER, the body up to MAX_BODY.
 * Returns an HTTP status to send on failure, 0 on success. */
static int read_request(int fd, struct req *r, char *buf, size_t cap, size_t *used) {
	size_t n = 0;
	char *end = NULL;
	while (end == NULL) {
		if (n == cap - 1) {
			return 413;
		}
		ssize_t got = read(fd, buf + n, cap - 1 - n);
		if (got < 0 && errno == EINTR) {
			continue;
		}
		if (got <= 0) {
			return -1;
		}
		n += (size_t)got;
		buf[n] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	*used = n;
	char target[1024];
	if (sscanf(buf, "%7s %1023s", r->method, target) != 2) {
		return 400;
	}
	char *q = strchr(target, '?');
	if (q != NULL) {
		*q = '\0';
		snprintf(r->query, sizeof(r->query), "%s", q + 1);
	}
	if (strlen(target) >= sizeof(r->path)) {
		return 400;
	}
	snprintf(r->path, sizeof(r->path), "%.511s", target);

	size_t clen = 0;
	for (char *line = strstr(buf, "\r\n"); line != NULL && line < end;
	     line = strstr(line + 2, "\r\n")) {
		if (strncasecmp(line + 2, "Authorization:", 14) == 0) {
			const char *v = line + 2 + 14;
			while (*v == ' ') {
				v++;
			}
			const char *e = strstr(v, "\r\n");
			size_t len = e != NULL ? (size_t)(e - v) : strlen(v);
			if (len < sizeof(r->auth)) {
				memcpy(r->auth, v, len);
				r->auth[len] = '\0';
			}
		}
		if (strncasecmp(line + 2, "Content-Length:", 15) == 0) {
			char *e;
			unsigned long long v = strtoull(line + 2 + 15, &e, 10);
			if (v > MAX_BODY) {
				return 413;
			}
			clen = (size_t)v;
		}
	}
	size_t have = n - (size_t)(end + 4 - buf);
	if (have > clen) {
		have = clen;
	}
	r->body = malloc(clen + 1);
	if (r->body == NULL) {
		return 500;
	}
	memcpy(r->body, end + 4, have);
	while (have < clen) {
		ssize_t got = read(fd, r->body + have, clen - have);
		if (got < 0 && errno == EINTR) {
			continue;
		}
		if (got <= 0) {
			return 400;
		}
		have += (size_t)got;
	}
	r->body[clen] = '\0';
	r->body_len = clen;
	return 0;
}

static void count(struct node *n, const char *path) {
	for (int i = 0; i < n->ncounts; i++) {
		if (strcmp(n->counts[i].path, path) == 0) {
			n->counts[i].n++;
			return;
		}
	}
	if (n->ncounts < MAX_PATHS) {
		snprintf(n->counts[n->ncounts].path, sizeof(n->counts[0].path), "%.63s", path);
		n->counts[n->ncounts].n = 1;
		n->ncounts++;
	}
}

/* ---- handlers ----------------------------------------------------------- */

static void sleep_ms(int ms) {
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

/* Dumps and sends the raw heap_v2 profile (StarRocks, TiKV, Databend,
 * GreptimeDB all answer with the file jemalloc wrote). When prof.dump fails
 * (jemalloc started without prof:true) StarRocks' HeapAction sends an empty
 * 200 (its error string is shadowed); the others answer 500. */
static void handle_raw_dump(struct node *n, int fd, bool empty_on_failure) {
	if (n->o.slow_dump_ms > 0) {
		sleep_ms(n->o.slow_dump_ms);
	}
	char path[4096];
	if (prof_dump(n, path, sizeof(path)) != 0) {
		if (empty_on_failure) {
			reply(fd, 200, "text/plain", "", 0);
		} else {
			reply_str(fd, 500, "dump jemalloc prof file failed\n");
		}
		return;
	}
	size_t len = 0;
	char *data = read_file(path, &len);
	unlink(path);
	if (data == NULL) {
		reply_str(fd, 500, "read jemalloc prof file failed\n");
		return;
	}
	reply(fd, 200, "text/plain", data, len);
	free(data);
}

/* gperftools remote symbolizer: GET -> num_symbols, POST 0xa+0xb -> lines.
 * StarRocks/Doris (SymbolAction) write "0xa<TAB>name" and skip addresses
 * they cannot name; TiKV (status_server get_symbol) writes "0xa name" and
 * "0xa ??" for those. */
static void handle_symbol(int fd, struct req *r, bool tikv) {
	if (strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0) {
		reply_str(fd, 200, "num_symbols: 1\n");
		return;
	}
	if (strcmp(r->method, "POST") != 0) {
		reply_str(fd, 405, "method not allowed\n");
		return;
	}
	size_t cap = 4096, len = 0;
	char *out = malloc(cap);
	if (out == NULL) {
		reply_str(fd, 500, "out of memory\n");
		return;
	}
	char *tok = r->body;
	while (tok != NULL && *tok != '\0') {
		char *plus = strchr(tok, '+');
		if (plus != NULL) {
			*plus = '\0';
		}
		char *e;
		uintptr_t addr = (uintptr_t)strtoull(tok, &e, 16);
		Dl_info info;
		const char *name = NULL;
		if (e != tok && dladdr((void *)addr, &info) != 0 && info.dli_sname != NULL) {
			name = info.dli_sname;
		}
		if (name == NULL && tikv && e != tok && addr != 0) {
			name = "??";
		}
		if (name != NULL) {
			size_t need = strlen(tok) + strlen(name) + 3;
			while (len + need >= cap) {
				cap *= 2;
				char *no = realloc(out, cap);
				if (no == NULL) {
					free(out);
					reply_str(fd, 500, "out of memory\n");
					return;
				}
				out = no;
			}
			len += (size_t)snprintf(out + len, cap - len, tikv ? "%s %s\n" : "%s\t%s\n", tok, name);
		}
		tok = plus != NULL ? plus + 1 : NULL;
	}
	reply(fd, 200, "text/plain", out, len);
	free(out);
}

/* Runs jeprof --dot on a fresh dump, stdout and stderr mixed like Doris'
 * AgentUtils::exec_cmd. No shell: a fixed argv through posix_spawn. */
static void handle_doris_dot(struct node *n, int fd) {
	char path[4096];
	if (prof_dump(n, path, sizeof(path)) != 0) {
		reply_str(fd, 500, "dump heap profile to dot failed, see be.INFO\n");
		return;
	}
	int pipefd[2];
	if (pipe(pipefd) != 0) {
		unlink(path);
		reply_str(fd, 500, "dump heap profile to dot failed, see be.INFO\n");
		return;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	char *argv[] = {(char *)n->o.jeprof, "--dot", n->exe, path, NULL};
	/* jeprof's children must not profile themselves into our dump dir. */
	char *envp[] = {"PATH=/usr/bin:/bin", "MALLOC_CONF=", NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, n->o.jeprof, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (rc != 0) {
		close(pipefd[0]);
		unlink(path);
		reply_str(fd, 500, "dump heap profile to dot failed, see be.INFO\n");
		return;
	}
	size_t cap = 64 * 1024, len = 0;
	char *out = malloc(cap);
	for (;;) {
		if (out == NULL) {
			break;
		}
		if (len + 1 >= cap) {
			if (cap >= MAX_FILE) {
				break;
			}
			cap *= 2;
			char *no = realloc(out, cap);
			if (no == NULL) {
				free(out);
				out = NULL;
				break;
			}
			out = no;
		}
		ssize_t r = read(pipefd[0], out + len, cap - 1 - len);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r <= 0) {
			break;
		}
		len += (size_t)r;
	}
	close(pipefd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}
	unlink(path);
	if (out == NULL || len == 0) {
		free(out);
		reply_str(fd, 500, "dump heap profile to dot failed, see be.INFO\n");
		return;
	}
	static const char trailer[] =
	    "\n-------------------------------------------------------\n"
	    "addr2line: addr2line is /usr/bin/addr2line\n\n"
	    "Copy the text after `digraph` in the above output to http://www.webgraphviz.com to "
	    "generate a dot graph.\n";
	if (len + sizeof(trailer) >= cap) {
		char *no = realloc(out, len + sizeof(trailer) + 1);
		if (no == NULL) {
			free(out);
			reply_str(fd, 500, "out of memory\n");
			return;
		}
		out = no;
	}
	memcpy(out + len, trailer, sizeof(trailer) - 1);
	len += sizeof(trailer) - 1;
	reply(fd, 200, "application/json", out, len);
	free(out);
}

static const char doris_notice[] =
    "Jemalloc heap profiler is not enabled, refer to the following method to enable it.\n"
    "`curl http://be_host:be_webport/jeheap/active/true` to start heap profiler, note that "
    "`JEMALLOC_CONF` in `be/conf/be.conf` must contain `prof:true`.\n";

static void handle_doris_dump(struct node *n, int fd) {
	bool active = false;
	if (prof_get_active(&active) != 0 || !active) {
		reply_str(fd, 500, doris_notice);
		return;
	}
	if (!n->o.doris_legacy) {
		handle_doris_dot(n, fd);
		return;
	}
	char path[4096], msg[4200];
	if (prof_dump(n, path, sizeof(path)) != 0) {
		reply_str(fd, 200, "Jemalloc heap dump failed, je_mallctl return: 14\n");
		return;
	}
	snprintf(msg, sizeof(msg), "Jemalloc heap dump success, dump file path: %s\n", path);
	reply_str(fd, 200, msg);
}

/* ---- release personalities ---------------------------------------------- */

/* Finds key=value in a query string; copies the value (not URL-decoded:
 * the values jenode reads are plain). */
static bool query_get(const char *q, const char *key, char *out, size_t outlen) {
	size_t kl = strlen(key);
	for (const char *p = q; p != NULL && *p != '\0';) {
		const char *amp = strchr(p, '&');
		size_t len = amp != NULL ? (size_t)(amp - p) : strlen(p);
		if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
			snprintf(out, outlen, "%.*s", (int)(len - kl - 1), p + kl + 1);
			return true;
		}
		p = amp != NULL ? amp + 1 : NULL;
	}
	return false;
}

/* Dumps the heap profile and reads it back; NULL when prof.dump fails. */
static char *dump_to_buf(struct node *n, size_t *len) {
	char path[4096];
	if (prof_dump(n, path, sizeof(path)) != 0) {
		return NULL;
	}
	char *data = read_file(path, len);
	unlink(path);
	return data;
}

static void send_dump(struct node *n, int fd) {
	size_t len = 0;
	char *data = dump_to_buf(n, &len);
	if (data == NULL) {
		reply_str(fd, 500, "dump_prof: dump jemalloc prof file failed");
		return;
	}
	reply(fd, 200, "application/octet-stream", data, len);
	free(data);
}

/* TiKV's status server, per release (see the header). Returns false when
 * the path is not one of TiKV's, for the common router. */
static bool route_tikv(struct node *n, int fd, struct req *r) {
	const char *p = r->path;
	int v = n->o.version;
	bool get = strcmp(r->method, "GET") == 0;
	bool post = strcmp(r->method, "POST") == 0;
	static const char not_found[] = "path not found";

	if (strcmp(p, "/debug/pprof/heap") == 0 && get) {
		if (v < 704) { /* commented out in v5.3.0..v7.3.0 */
			reply_str(fd, 404, not_found);
		} else if (v == 704) {
			int seconds = 10;
			char val[32];
			if (query_get(r->query, "seconds", val, sizeof(val))) {
				char *e;
				long s = strtol(val, &e, 10);
				if (e == val || *e != '\0' || s < 0) {
					reply_str(fd, 400, "request should have seconds argument");
					return true;
				}
				seconds = (int)s;
			}
			if (n->tikv_heap == TIKV_PERIODIC) { /* PROFILE_MUTEX held */
				reply_str(fd, 500, "Already in Profiling");
				return true;
			}
			/* start_one_heap_profile: activate, wait, deactivate, dump. */
			prof_set_active(true);
			jenode_alloc_round(); /* the node's workload during the window */
			sleep_ms(seconds * 1000);
			prof_set_active(false);
			send_dump(n, fd);
		} else if (v == 705 && n->tikv_heap == TIKV_OFF) {
			reply_str(fd, 500, "heap profiling is not activated");
		} else {
			send_dump(n, fd);
		}
		return true;
	}
	if ((strcmp(p, "/debug/pprof/heap_activate") == 0 || strcmp(p, "/debug/pprof/heap_deactivate") == 0) && get) {
		bool on = strcmp(p, "/debug/pprof/heap_activate") == 0;
		if (v >= 706) {
			reply_str(fd, 410, "Deprecated, use config `memory.enable_heap_profiling` to toggle");
			return true;
		}
		if (on) {
			if (n->tikv_heap != TIKV_OFF) {
				reply_str(fd, 500, v >= 705 ? "Ok(Err(\"Already in Heap Profiling\"))" : "Ok(Err(\"Already in Profiling\"))");
				return true;
			}
			snprintf(n->tikv_dir, sizeof(n->tikv_dir), "%s/heap-XXXXXX", n->o.dump_dir);
			if (mkdtemp(n->tikv_dir) == NULL || prof_set_active(true) != 0) {
				reply_str(fd, 500, "Ok(Err(\"create temp directory\"))");
				return true;
			}
			n->tikv_heap = TIKV_PERIODIC;
			reply_str(fd, 200, "activate heap profile success");
			return true;
		}
		if (n->tikv_heap == TIKV_OFF) {
			reply_str(fd, 200, "no heap profile is running");
			return true;
		}
		/* The periodic profile's on_end deactivates prof; on 7.5 the
		 * config's activation is only forgotten: prof.active stays on. */
		if (n->tikv_heap == TIKV_PERIODIC) {
			prof_set_active(false);
		}
		n->tikv_heap = TIKV_OFF;
		reply_str(fd, 200, "deactivate heap profile success");
		return true;
	}
	if (strcmp(p, "/engine_type") == 0 && get) {
		reply_str(fd, v >= 701 ? 200 : 404, v >= 701 ? "raft-kv" : not_found);
		return true;
	}
	if (strcmp(p, "/debug/pprof/symbol") == 0 && v < 705) {
		reply_str(fd, 404, not_found);
		return true;
	}
	if (strcmp(p, "/config") == 0 && get) {
		char out[512];
		int len = snprintf(out, sizeof(out),
		                   "{\"log-level\":\"info\",\"server\":{\"status-addr\":\"127.0.0.1:%d\"},"
		                   "\"storage\":{\"engine\":\"raft-kv\"}",
		                   n->o.port);
		if (v >= 705) {
			len += snprintf(out + len, sizeof(out) - (size_t)len,
			                ",\"memory\":{\"enable-heap-profiling\":%s,\"profiling-sample-per-bytes\":\"512KiB\"}",
			                n->tikv_cfg_heap ? "true" : "false");
		}
		len += snprintf(out + len, sizeof(out) - (size_t)len, "}");
		reply(fd, 200, "application/json", out, (size_t)len);
		return true;
	}
	if (strcmp(p, "/config") == 0 && post) {
		/* decode_json: a flat object of "module.field": value; only the
		 * heap profiling switch is understood here. */
		const char *b = r->body;
		while (*b == ' ' || *b == '\n' || *b == '\r' || *b == '\t') {
			b++;
		}
		if (*b != '{') {
			reply_str(fd, 500, "failed to decode, error: \"wrong format\"");
			return true;
		}
		const char *k = strstr(b, "\"memory.enable-heap-profiling\"");
		if (k == NULL) {
			k = strstr(b, "\"memory.enable_heap_profiling\"");
		}
		if (k == NULL || v < 705) {
			reply_str(fd, 500, k == NULL ? "failed to update, error: \"unexpect fields\"" : "failed to update, error: \"unexpect fields: memory\"");
			return true;
		}
		const char *c = strchr(k + 30, ':');
		if (c == NULL) {
			reply_str(fd, 500, "failed to decode, error: \"wrong format\"");
			return true;
		}
		c++;
		while (*c == ' ' || *c == '"') {
			c++;
		}
		bool want;
		if (strncmp(c, "true", 4) == 0) {
			want = true;
		} else if (strncmp(c, "false", 5) == 0) {
			want = false;
		} else {
			reply_str(fd, 500, "failed to update, error: \"failed to parse\"");
			return true;
		}
		/* ConfigController::update dispatches only a change. */
		if (want != n->tikv_cfg_heap) {
			if (v == 705) { /* MemoryConfigManager::dispatch at v7.5.0 */
				if (want && n->tikv_heap == TIKV_OFF) {
					prof_set_active(true);
					n->tikv_heap = TIKV_BY_CONFIG;
				} else if (!want) {
					prof_set_active(false);
					n->tikv_heap = TIKV_OFF;
				}
			} else {
				prof_set_active(want);
			}
			n->tikv_cfg_heap = want;
		}
		reply(fd, 200, "text/plain", "", 0);
		return true;
	}
	return false;
}

/* ---- pprof protobuf (GreptimeDB's ?output=proto) ------------------------ */

struct buf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void buf_put(struct buf *b, const void *data, size_t len) {
	if (b->oom) {
		return;
	}
	if (b->n + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + len) {
			cap *= 2;
		}
		char *np = realloc(b->p, cap);
		if (np == NULL) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, data, len);
	b->n += len;
}

static void buf_varint(struct buf *b, uint64_t v) {
	unsigned char tmp[10];
	size_t i = 0;
	do {
		tmp[i] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v != 0) {
			tmp[i] |= 0x80;
		}
		i++;
	} while (v != 0);
	buf_put(b, tmp, i);
}

static void pb_uint(struct buf *b, int field, uint64_t v) {
	buf_varint(b, (uint64_t)field << 3);
	buf_varint(b, v);
}

static void pb_bytes(struct buf *b, int field, const void *data, size_t len) {
	buf_varint(b, (uint64_t)field << 3 | 2);
	buf_varint(b, len);
	buf_put(b, data, len);
}

struct table {
	char **names;
	uintptr_t *addrs;
	uint64_t *ids; /* for addrs: the location's function id (0: none) */
	size_t n, cap;
};

/* Interns s (a string table) or addr (the locations); returns its index. */
static size_t table_add(struct table *t, const char *s, uintptr_t addr) {
	for (size_t i = 0; i < t->n; i++) {
		if (s != NULL ? strcmp(t->names[i], s) == 0 : t->addrs[i] == addr) {
			return i;
		}
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **names = realloc(t->names, cap * sizeof(*names));
		if (names != NULL) {
			t->names = names;
		}
		uintptr_t *addrs = realloc(t->addrs, cap * sizeof(*addrs));
		if (addrs != NULL) {
			t->addrs = addrs;
		}
		uint64_t *ids = realloc(t->ids, cap * sizeof(*ids));
		if (ids != NULL) {
			t->ids = ids;
		}
		if (names == NULL || addrs == NULL || ids == NULL) {
			abort();
		}
		t->cap = cap;
	}
	t->names[t->n] = s != NULL ? strdup(s) : NULL;
	t->addrs[t->n] = addr;
	t->ids[t->n] = 0;
	return t->n++;
}

static void table_free(struct table *t) {
	for (size_t i = 0; i < t->n; i++) {
		free(t->names[i]);
	}
	free(t->names);
	free(t->addrs);
	free(t->ids);
}

/* exp(x) without libm (jenode links only jemalloc): (1+x/2^20)^(2^20). */
static double exp_approx(double x) {
	double y = 1.0 + x / 1048576.0;
	for (int i = 0; i < 20; i++) {
		y *= y;
	}
	return y;
}

static uint32_t crc32_of(const unsigned char *p, size_t n) {
	uint32_t table[256];
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++) {
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		}
		table[i] = c;
	}
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	}
	return crc ^ 0xffffffffu;
}

/* gzip with stored deflate blocks: a real gzip stream, no zlib needed. */
static void gzip_stored(struct buf *out, const unsigned char *p, size_t n) {
	static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
	buf_put(out, head, sizeof(head));
	size_t off = 0;
	do {
		size_t len = n - off > 65535 ? 65535 : n - off;
		unsigned char h[5] = {off + len == n ? 1 : 0, (unsigned char)(len & 0xff), (unsigned char)(len >> 8),
		                      (unsigned char)(~len & 0xff), (unsigned char)((~len >> 8) & 0xff)};
		buf_put(out, h, sizeof(h));
		buf_put(out, p + off, len);
		off += len;
	} while (off < n);
	uint32_t crc = crc32_of(p, n), size = (uint32_t)n;
	unsigned char tail[8] = {crc & 0xff, (crc >> 8) & 0xff, (crc >> 16) & 0xff, crc >> 24,
	                         size & 0xff, (size >> 8) & 0xff, (size >> 16) & 0xff, size >> 24};
	buf_put(out, tail, sizeof(tail));
}

/* Turns a heap_v2 dump into a gzipped pprof protobuf symbolized on the node
 * (dladdr), as GreptimeDB's dump_pprof does with pprof_util: one sample
 * type inuse_space/bytes, period type space/bytes, each stack's bytes scaled
 * for jemalloc's sampling. */
static bool heap_v2_to_pprof(const char *dump, struct buf *gz) {
	struct table strs = {0}, locs = {0};
	struct buf prof = {0}, sample = {0}, packed = {0};
	table_add(&strs, "", 0);
	double period = strncmp(dump, "heap_v2/", 8) == 0 ? strtod(dump + 8, NULL) : 0;
	if (period <= 0) {
		return false;
	}
	/* sample_type, period_type */
	struct buf vt = {0};
	pb_uint(&vt, 1, table_add(&strs, "inuse_space", 0));
	pb_uint(&vt, 2, table_add(&strs, "bytes", 0));
	pb_bytes(&prof, 1, vt.p, vt.n);
	vt.n = 0;
	pb_uint(&vt, 1, table_add(&strs, "space", 0));
	pb_uint(&vt, 2, table_add(&strs, "bytes", 0));
	pb_bytes(&prof, 11, vt.p, vt.n);
	free(vt.p);

	uint64_t stack[256];
	size_t depth = 0;
	bool have_stack = false;
	for (const char *line = dump; line != NULL && *line != '\0';) {
		const char *nl = strchr(line, '\n');
		if (strncmp(line, "MAPPED_LIBRARIES:", 17) == 0) {
			break;
		}
		if (line[0] == '@' && line[1] == ' ') {
			depth = 0;
			const char *q = line + 2;
			while (depth < 256 && (nl == NULL || q < nl)) {
				char *e;
				unsigned long long a = strtoull(q, &e, 16);
				if (e == q) {
					break;
				}
				stack[depth++] = table_add(&locs, NULL, (uintptr_t)a) + 1;
				q = e;
			}
			have_stack = true;
		} else if (have_stack && strncmp(line, "  t*: ", 6) == 0) {
			unsigned long long objs = 0, bytes = 0;
			sscanf(line + 6, "%llu: %llu", &objs, &bytes);
			double v = (double)bytes;
			if (objs > 0 && bytes > 0) {
				double avg = (double)bytes / (double)objs;
				v = v / (1.0 - exp_approx(-avg / period));
			}
			sample.n = packed.n = 0;
			for (size_t i = 0; i < depth; i++) {
				buf_varint(&packed, stack[i]);
			}
			pb_bytes(&sample, 1, packed.p, packed.n);
			packed.n = 0;
			buf_varint(&packed, (uint64_t)(v + 0.5));
			pb_bytes(&sample, 2, packed.p, packed.n);
			pb_bytes(&prof, 2, sample.p, sample.n);
			have_stack = false;
		}
		line = nl != NULL ? nl + 1 : NULL;
	}
	/* locations and functions, named by dladdr */
	struct table funcs = {0};
	struct buf loc = {0}, ln = {0};
	for (size_t i = 0; i < locs.n; i++) {
		loc.n = ln.n = 0;
		pb_uint(&loc, 1, i + 1);
		pb_uint(&loc, 3, locs.addrs[i]);
		Dl_info info;
		if (dladdr((void *)locs.addrs[i], &info) != 0 && info.dli_sname != NULL) {
			size_t f = table_add(&funcs, info.dli_sname, 0);
			pb_uint(&ln, 1, f + 1);
			pb_bytes(&loc, 4, ln.p, ln.n);
		}
		pb_bytes(&prof, 4, loc.p, loc.n);
	}
	for (size_t i = 0; i < funcs.n; i++) {
		loc.n = 0;
		pb_uint(&loc, 1, i + 1);
		uint64_t name = table_add(&strs, funcs.names[i], 0);
		pb_uint(&loc, 2, name);
		pb_uint(&loc, 3, name);
		pb_bytes(&prof, 5, loc.p, loc.n);
	}
	for (size_t i = 0; i < strs.n; i++) {
		pb_bytes(&prof, 6, strs.names[i], strlen(strs.names[i]));
	}
	pb_uint(&prof, 12, (uint64_t)period);
	bool ok = !prof.oom && !sample.oom && !packed.oom && !loc.oom && !ln.oom;
	if (ok) {
		gzip_stored(gz, (const unsigned char *)prof.p, prof.n);
		ok = !gz->oom;
	}
	free(loc.p);
	free(ln.p);
	free(prof.p);
	free(sample.p);
	free(packed.p);
	table_free(&funcs);
	table_free(&strs);
	table_free(&locs);
	return ok;
}

/* POST /debug/prof/mem (v0.10+) or /v1/prof/mem (v0.9): ?output= is read
 * from v0.15 on (serde: unknown variants are axum's 400); older releases
 * have no Query extractor and always send the raw dump. */
static void handle_greptime_dump(struct node *n, int fd, struct req *r) {
	char out[32] = "text";
	bool reads_output = n->o.product != PRODUCT_GREPTIMEDB || n->o.version >= 15;
	if (reads_output && query_get(r->query, "output", out, sizeof(out)) && strcmp(out, "text") != 0 &&
	    strcmp(out, "proto") != 0) {
		char msg[256];
		snprintf(msg, sizeof(msg),
		         "Failed to deserialize query string: output: unknown variant `%s`, expected one of `proto`, "
		         "`text`, `flamegraph`",
		         out);
		reply_str(fd, 400, msg);
		return;
	}
	if (!reads_output || strcmp(out, "proto") != 0) {
		handle_raw_dump(n, fd, false);
		return;
	}
	size_t len = 0;
	char *data = dump_to_buf(n, &len);
	if (data == NULL) {
		reply_str(fd, 500, "dump jemalloc prof file failed\n");
		return;
	}
	struct buf gz = {0};
	bool ok = heap_v2_to_pprof(data, &gz);
	free(data);
	if (!ok) {
		free(gz.p);
		reply_str(fd, 500, "Failed to parse jemalloc heap profile\n");
		return;
	}
	reply(fd, 200, "application/octet-stream", gz.p, gz.n);
	free(gz.p);
}

static bool method_is(struct req *r, const char *m) { return strcmp(r->method, m) == 0; }

static void route(struct node *n, int fd, struct req *r) {
	const char *p = r->path;
	bool get = method_is(r, "GET");
	bool post = method_is(r, "POST");

	/* Doris' HttpHandlerWithAuth::on_header with enable_all_http_auth=true
	 * (be/src/http/http_handler_with_auth.cpp): no parsable basic auth ->
	 * 401, a WWW-Authenticate header and no body; credentials the FE's
	 * checkAuth refuses -> 403. */
	if (n->o.auth != NULL && (strncmp(p, "/jeheap/", 8) == 0 || strncmp(p, "/pprof/", 7) == 0) &&
	    strcmp(r->auth, n->o.auth) != 0) {
		static const char unauthorized[] = "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"Restricted\"\r\n"
		                                   "Content-Length: 0\r\nConnection: close\r\n\r\n";
		static const char forbidden[] = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
		if (strncmp(r->auth, "Basic ", 6) == 0 && r->auth[6] != '\0') {
			(void)write_all(fd, forbidden, sizeof(forbidden) - 1);
		} else {
			(void)write_all(fd, unauthorized, sizeof(unauthorized) - 1);
		}
		return;
	}

	if (n->o.product == PRODUCT_TIKV && route_tikv(n, fd, r)) {
		return;
	}
	if (n->o.product == PRODUCT_GREPTIMEDB) {
		/* v0.9 and older: /v1/prof/mem only (GET or POST); v0.10-v0.15:
		 * /debug/prof/mem without activate/deactivate/status (v0.16+).
		 * axum answers an unknown route 404 with an empty body. */
		bool v1 = strcmp(p, "/v1/prof/mem") == 0;
		if (n->o.version < 10 && v1 && (get || post)) {
			handle_greptime_dump(n, fd, r);
			return;
		}
		if (v1 || (strncmp(p, "/debug/prof/mem", 15) == 0 &&
		           (n->o.version < 10 || strcmp(p, "/debug/prof/mem") != 0))) {
			reply(fd, 404, "text/plain", "", 0);
			return;
		}
	}
	if (n->o.product == PRODUCT_DATABEND && strcmp(p, "/debug/mem/pprof/profile") == 0) {
		/* An official release build: the route is compiled only with the
		 * memory-profiling cargo feature. */
		reply(fd, 404, "text/plain", "", 0);
		return;
	}
	if (strcmp(p, "/alloc") == 0) {
		jenode_alloc_round();
		reply_str(fd, 200, "ok\n");
	} else if (strcmp(p, "/stats") == 0) {
		char out[MAX_PATHS * 96];
		size_t len = 0;
		for (int i = 0; i < n->ncounts; i++) {
			len += (size_t)snprintf(out + len, sizeof(out) - len, "%s %ld\n", n->counts[i].path,
			                        n->counts[i].n);
		}
		reply(fd, 200, "text/plain", out, len);
	} else if (strcmp(p, "/status") == 0 && get) {
		/* TiKV's status server: an empty 200. */
		reply_str(fd, 200, "");
	} else if (strcmp(p, "/pprof/symbol") == 0 || strcmp(p, "/debug/pprof/symbol") == 0) {
		handle_symbol(fd, r, strcmp(p, "/debug/pprof/symbol") == 0);
	} else if ((strcmp(p, "/pprof/heap") == 0 || strcmp(p, "/debug/pprof/heap") == 0 ||
	            strcmp(p, "/debug/mem/pprof/profile") == 0) &&
	           get) {
		handle_raw_dump(n, fd, strcmp(p, "/pprof/heap") == 0);
	} else if (strcmp(p, "/debug/pprof/heap_activate") == 0 ||
	           strcmp(p, "/debug/pprof/heap_deactivate") == 0) {
		/* current TiKV status_server */
		reply_str(fd, 410, "Deprecated, use config `memory.enable_heap_profiling` to toggle");
	} else if (strcmp(p, "/jeheap/active/true") == 0 && get) {
		if (prof_set_active(true) != 0) {
			reply_str(fd, 500, "jemalloc heap profiler start failed\n");
			return;
		}
		reply_str(fd, 200, "Jemalloc heap profiler started\n");
	} else if (strcmp(p, "/jeheap/active/false") == 0 && get) {
		if (prof_set_active(false) != 0) {
			reply_str(fd, 500, "jemalloc heap profiler stop failed\n");
			return;
		}
		reply_str(fd, 200, "heap profiler stoped\n");
	} else if (strcmp(p, "/jeheap/dump") == 0 && get) {
		handle_doris_dump(n, fd);
	} else if (strcmp(p, "/debug/prof/mem") == 0 && post) {
		handle_greptime_dump(n, fd, r);
	} else if (strcmp(p, "/debug/prof/mem/status") == 0 && get) {
		bool active = false;
		if (prof_get_active(&active) != 0) {
			reply_str(fd, 500, "Failed to dump profiling data: prof.active\n");
			return;
		}
		reply_str(fd, 200, active ? "{\"active\": true}" : "{\"active\": false}");
	} else if (strcmp(p, "/debug/prof/mem/activate") == 0 && post) {
		if (prof_set_active(true) != 0) {
			reply_str(fd, 500, "Failed to dump profiling data: prof.active\n");
			return;
		}
		reply_str(fd, 200, "Heap profiling activated");
	} else if (strcmp(p, "/debug/prof/mem/deactivate") == 0 && post) {
		if (prof_set_active(false) != 0) {
			reply_str(fd, 500, "Failed to dump profiling data: prof.active\n");
			return;
		}
		reply_str(fd, 200, "Heap profiling deactivated");
	} else if (strncmp(p, "/debug/prof/mem", 15) == 0 || strncmp(p, "/jeheap/", 8) == 0 ||
	           strcmp(p, "/pprof/heap") == 0 || strcmp(p, "/debug/pprof/heap") == 0 ||
	           strcmp(p, "/debug/mem/pprof/profile") == 0) {
		reply_str(fd, 405, "method not allowed\n");
	} else {
		reply_str(fd, 404, "not found\n");
	}
}

static void serve_one(struct node *n, int fd) {
	/* A client that stalls must not hold the node forever. */
	struct timeval tv = {10, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));

	char *buf = malloc(MAX_HEADER + 1);
	struct req r;
	memset(&r, 0, sizeof(r));
	size_t used = 0;
	int rc = buf == NULL ? 500 : read_request(fd, &r, buf, MAX_HEADER + 1, &used);
	if (rc == 0) {
		count(n, r.path);
		route(n, fd, &r);
	} else if (rc > 0) {
		reply_str(fd, rc, reason(rc));
	}
	free(r.body);
	free(buf);
}

/* Encodes "user:pass" for the Authorization header jenode expects. */
static char *basic_auth(const char *userpass) {
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(userpass);
	char *out = malloc(6 + 4 * ((n + 2) / 3) + 1);
	if (out == NULL) {
		abort();
	}
	char *o = out + sprintf(out, "Basic ");
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)userpass[i] << 16;
		if (i + 1 < n) v |= (unsigned char)userpass[i + 1] << 8;
		if (i + 2 < n) v |= (unsigned char)userpass[i + 2];
		*o++ = tbl[(v >> 18) & 63];
		*o++ = tbl[(v >> 12) & 63];
		*o++ = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
		*o++ = i + 2 < n ? tbl[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

static void usage(void) {
	fprintf(stderr, "usage: jenode --port N [--dump-dir DIR] [--jeprof PATH] [--doris-legacy] "
	                "[--slow-dump-ms MS] [--auth USER:PASSWORD]\n"
	                "              [--product tikv --version 6.5|7.4|7.5|8.1 [--heap-profiling on|off]]\n"
	                "              [--product greptimedb --version 0.9|0.15] [--product databend --version release]\n");
	exit(2);
}

int main(int argc, char **argv) {
	struct node *n = calloc(1, sizeof(*n));
	if (n == NULL) {
		return 1;
	}
	n->o.port = -1;
	n->o.dump_dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	n->o.jeprof = "/usr/bin/jeprof";
	n->o.heap_profiling_cfg = true;
	const char *version = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
			n->o.port = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--dump-dir") == 0 && i + 1 < argc) {
			n->o.dump_dir = argv[++i];
		} else if (strcmp(argv[i], "--jeprof") == 0 && i + 1 < argc) {
			n->o.jeprof = argv[++i];
		} else if (strcmp(argv[i], "--slow-dump-ms") == 0 && i + 1 < argc) {
			n->o.slow_dump_ms = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--auth") == 0 && i + 1 < argc) {
			n->o.auth = basic_auth(argv[++i]);
		} else if (strcmp(argv[i], "--product") == 0 && i + 1 < argc) {
			i++;
			if (strcmp(argv[i], "tikv") == 0) {
				n->o.product = PRODUCT_TIKV;
			} else if (strcmp(argv[i], "greptimedb") == 0) {
				n->o.product = PRODUCT_GREPTIMEDB;
			} else if (strcmp(argv[i], "databend") == 0) {
				n->o.product = PRODUCT_DATABEND;
			} else {
				usage();
			}
		} else if (strcmp(argv[i], "--version") == 0 && i + 1 < argc) {
			version = argv[++i];
		} else if (strcmp(argv[i], "--heap-profiling") == 0 && i + 1 < argc) {
			i++;
			if (strcmp(argv[i], "on") != 0 && strcmp(argv[i], "off") != 0) {
				usage();
			}
			n->o.heap_profiling_cfg = strcmp(argv[i], "on") == 0;
		} else if (strcmp(argv[i], "--doris-legacy") == 0) {
			n->o.doris_legacy = true;
		} else {
			usage();
		}
	}
	if (n->o.port < 0 || n->o.port > 65535) {
		usage();
	}
	/* A personality needs one of its product's releases. */
	static const char *const tikv_versions[] = {"6.5", "7.4", "7.5", "8.1", NULL};
	static const char *const greptime_versions[] = {"0.9", "0.15", NULL};
	static const char *const databend_versions[] = {"release", NULL};
	const char *const *known = n->o.product == PRODUCT_TIKV         ? tikv_versions
	                           : n->o.product == PRODUCT_GREPTIMEDB ? greptime_versions
	                           : n->o.product == PRODUCT_DATABEND   ? databend_versions
	                                                                : NULL;
	if ((known == NULL) != (version == NULL)) {
		usage();
	}
	for (; known != NULL && *known != NULL && strcmp(*known, version) != 0; known++) {
	}
	if (known != NULL) {
		if (*known == NULL) {
			usage();
		}
		int major = 0, minor = 0;
		sscanf(version, "%d.%d", &major, &minor);
		n->o.version = major * 100 + minor;
	}
	ssize_t el = readlink("/proc/self/exe", n->exe, sizeof(n->exe) - 1);
	if (el <= 0) {
		perror("readlink /proc/self/exe");
		return 1;
	}
	n->exe[el] = '\0';
	signal(SIGPIPE, SIG_IGN);

	int ls = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in addr;
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons((uint16_t)n->o.port);
	if (bind(ls, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(ls, 64) != 0) {
		perror("bind/listen");
		return 1;
	}
	socklen_t alen = sizeof(addr);
	getsockname(ls, (struct sockaddr *)&addr, &alen);
	n->o.port = ntohs(addr.sin_port);

	/* TiKV 7.5+: MemoryConfig::init activates prof when
	 * memory.enable-heap-profiling is on (the default). */
	if (n->o.product == PRODUCT_TIKV && n->o.version >= 705) {
		n->tikv_cfg_heap = n->o.heap_profiling_cfg;
		if (n->tikv_cfg_heap) {
			prof_set_active(true);
			n->tikv_heap = TIKV_BY_CONFIG;
		}
	}

	/* Some allocations before serving, like a BE loading its tablets. */
	jenode_alloc_round();

	/* The test harness waits for this line to learn the port. */
	printf("jenode listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
	fflush(stdout);

	for (;;) {
		int fd = accept(ls, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR) {
				continue;
			}
			perror("accept");
			return 1;
		}
		serve_one(n, fd);
		close(fd);
	}
}
