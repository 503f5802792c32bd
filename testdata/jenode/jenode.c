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

struct opts {
	int port;
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
};

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
		if (r->query[0] != '\0' && strcmp(r->query, "output=text") != 0) {
			reply_str(fd, 400, "jenode serves output=text only\n");
			return;
		}
		handle_raw_dump(n, fd, false);
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
	                "[--slow-dump-ms MS] [--auth USER:PASSWORD]\n");
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
		} else if (strcmp(argv[i], "--doris-legacy") == 0) {
			n->o.doris_legacy = true;
		} else {
			usage();
		}
	}
	if (n->o.port < 0 || n->o.port > 65535) {
		usage();
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
