/* SPDX-License-Identifier: Apache-2.0 */
/* debuginfod.c - debuginfo fetched by build-id from a debuginfod server
 * (a local static HTTP server serving /buildid/HEX/debuginfo), and
 * BSYM_NO_DEBUGINFOD keeping libsym off the network. */
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>

#include "helpers.h"

static char root[64], cache[64];
static pid_t server = -1;

static void copy_file(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	cr_assert_eq(system(cmd), 0);
}

static int start_server(const struct fx_bid *b, const char *debugfile)
{
	snprintf(root, sizeof(root), "/tmp/bsym-dfd-XXXXXX");
	snprintf(cache, sizeof(cache), "/tmp/bsym-dfc-XXXXXX");
	cr_assert(mkdtemp(root) && mkdtemp(cache));
	char hex[129] = "";
	for (size_t i = 0; i < b->n; i++)
		sprintf(hex + 2 * i, "%02x", b->b[i]);
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/buildid/%s", root, hex);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	strcat(dir, "/debuginfo");
	copy_file(debugfile, dir);

	int p[2];
	cr_assert_eq(pipe(p), 0);
	server = fork();
	cr_assert(server >= 0);
	if (server == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execlp("python3", "python3", "-c",
		       "import http.server, socketserver, os, sys\n"
		       "os.chdir(sys.argv[1])\n"
		       "class Q(http.server.SimpleHTTPRequestHandler):\n"
		       "    def log_message(self, *a): pass\n"
		       "s = socketserver.TCPServer(('127.0.0.1', 0), Q)\n"
		       "print(s.server_address[1], flush=True)\n"
		       "s.serve_forever()\n",
		       root, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	char buf[32] = "";
	size_t got = 0;
	while (got < sizeof(buf) - 1 && !strchr(buf, '\n')) {
		ssize_t n = read(p[0], buf + got, sizeof(buf) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(p[0]);
	return strchr(buf, '\n') ? atoi(buf) : -1;
}

static void stop_server(void)
{
	if (server > 0) {
		kill(server, SIGTERM);
		waitpid(server, NULL, 0);
		server = -1;
	}
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", root, cache);
	if (system(cmd) != 0)
		cr_log_warn("cleanup failed");
}

static void logfn(void *arg, enum bsym_log_level l, const char *msg)
{
	if (l == BSYM_LOG_WARN)
		fprintf(stderr, "bsym: %s\n", msg);
}

static struct bsym_result const *lookup(unsigned flags, const struct fx_bid *b, const char *bin)
{
	static struct bsym_ctx *ctx;
	if (ctx)
		bsym_destroy(ctx);
	struct bsym_opts o = { .sz = sizeof(o), .flags = flags | BSYM_NO_SYSTEM_DEBUG, .log = logfn };
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	struct bsym_object_desc d = { .sz = sizeof(d), .build_id = b->b, .build_id_len = b->n };
	uint32_t id;
	cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
	uint64_t a = fx_sym(bin, "helper_static", NULL);
	const struct bsym_result *r;
	cr_assert_eq(bsym_symbolize_offset(ctx, id, fx_vaddr_to_off(bin, a + 2), &r), 0);
	return r;
}

Test(debuginfod, fetch_by_build_id_and_opt_out, .fini = stop_server)
{
	if (system("python3 -c 'import http.server' >/dev/null 2>&1") != 0)
		cr_skip_test("python3 not available for the test server");
	void *so = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!so)
		cr_skip_test("libdebuginfod.so.1 not installed (package libdebuginfod1)");
	dlclose(so);
	const char *bin = fx("prog-gcc");
	struct fx_bid b = fx_build_id(bin);
	int port = start_server(&b, fx("dl/prog.debug"));
	cr_assert_gt(port, 0);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_TIMEOUT", "20", 1);

	const struct bsym_result *r = lookup(BSYM_NO_DEBUGINFOD, &b, bin);
	cr_assert_eq(r->reason, BSYM_R_NO_DEBUGINFO);

	r = lookup(0, &b, bin);
	cr_assert_eq(r->reason, BSYM_OK);
	cr_assert_str_eq(r->frames[r->nr_frames - 1].name, "helper_static");
	cr_assert_not_null(r->frames[0].file);
	lookup(BSYM_NO_DEBUGINFOD, &b, bin); /* frees the previous context */

	/* a "vmlinux" by build-id from the server (a user binary stands in) */
	struct bsym_opts o = { .sz = sizeof(o), .flags = BSYM_NO_SYSTEM_DEBUG, .log = logfn };
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	struct bsym_kernel_desc kd = { .sz = sizeof(kd), .build_id = b.b, .build_id_len = b.n };
	uint32_t k;
	cr_assert_eq(bsym_kernel_register(ctx, &kd, &k), 0);
	cr_assert_eq(bsym_symbolize_kernel(ctx, k, fx_sym(bin, "helper_static", NULL) + 2, &r), 0);
	cr_assert_eq(r->reason, BSYM_OK);
	cr_assert_str_eq(r->frames[r->nr_frames - 1].name, "helper_static");
	cr_assert_eq(r->frames[0].kind, BSYM_FRAME_KERNEL);
	bsym_destroy(ctx);
}

static void count_warn(void *arg, enum bsym_log_level l, const char *msg)
{
	if (l == BSYM_LOG_WARN && strstr(msg, "debuginfod"))
		(*(int *)arg)++;
}

Test(debuginfod, unreachable_server_is_given_up_once)
{
	void *so = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!so)
		cr_skip_test("libdebuginfod.so.1 not installed (package libdebuginfod1)");
	dlclose(so);
	snprintf(cache, sizeof(cache), "/tmp/bsym-dfc-XXXXXX");
	cr_assert(mkdtemp(cache));
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1); /* nothing listens on port 1 */
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	int warned = 0;
	struct bsym_opts o = { .sz = sizeof(o), .flags = BSYM_NO_SYSTEM_DEBUG, .log = count_warn,
			       .log_arg = &warned };
	struct bsym_ctx *ctx;
	cr_assert_eq(bsym_create(&ctx, &o), 0);
	for (int i = 0; i < 5; i++) {
		uint8_t bid[20];
		memset(bid, 0x10 + i, sizeof(bid));
		struct bsym_object_desc d = { .sz = sizeof(d), .build_id = bid, .build_id_len = 20 };
		uint32_t id;
		cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
		const struct bsym_result *r;
		cr_assert_eq(bsym_symbolize_offset(ctx, id, 0x1000, &r), 0);
		cr_assert_eq(r->reason, BSYM_R_NO_DEBUGINFO);
	}
	cr_assert_eq(warned, 1, "%d warnings", warned);
	bsym_destroy(ctx);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache);
	cr_assert_eq(system(cmd), 0);
}

/* Add FILE to the running server's tree as /buildid/HEX/debuginfo. */
static void serve_also(const struct fx_bid *b, const char *file)
{
	char hex[129] = "", dir[PATH_MAX], cmd[3 * PATH_MAX + 64];

	for (size_t i = 0; i < b->n; i++)
		sprintf(hex + 2 * i, "%02x", b->b[i]);
	snprintf(dir, sizeof(dir), "%s/buildid/%s", root, hex);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s' '%s/debuginfo'", dir, file, dir);
	cr_assert_eq(system(cmd), 0);
}

/*
 * dwz through debuginfod: the debug file comes from the server, and so does
 * the common file its .gnu_debugaltlink names (by build-id): the inline
 * frame whose DWARF lives there is named.  Without the common file on the
 * server, nothing is invented.
 */
static bool dwz_inline_named(void)
{
	const char *bin = fx("dwz-a");
	struct fx_bid b = fx_build_id(bin);
	struct bsym_opts o = { .sz = sizeof(o), .flags = BSYM_NO_SYSTEM_DEBUG, .log = logfn };
	struct bsym_ctx *ctx;
	uint64_t sz, a = fx_sym(bin, "work", &sz);
	bool named = false, work = false;

	cr_assert_eq(bsym_create(&ctx, &o), 0);
	struct bsym_object_desc d = { .sz = sizeof(d), .build_id = b.b, .build_id_len = b.n };
	uint32_t id;
	cr_assert_eq(bsym_object_register(ctx, &d, &id), 0);
	for (uint64_t k = 0; k < sz; k++) {
		const struct bsym_result *r;

		cr_assert_eq(bsym_symbolize_offset(ctx, id, fx_vaddr_to_off(bin, a + k), &r), 0);
		for (unsigned i = 0; i < r->nr_frames; i++) {
			named |= r->frames[i].name && !strcmp(r->frames[i].name, "dwz_sq");
			work |= r->frames[i].name && !strcmp(r->frames[i].name, "work");
		}
	}
	bsym_destroy(ctx);
	cr_assert(work, "work itself is not named");
	return named;
}

Test(debuginfod, dwz_common_file_by_build_id, .fini = stop_server)
{
	if (system("python3 -c 'import http.server' >/dev/null 2>&1") != 0)
		cr_skip_test("python3 not available for the test server");
	void *so = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!so)
		cr_skip_test("libdebuginfod.so.1 not installed (package libdebuginfod1)");
	dlclose(so);
	struct fx_bid b = fx_build_id(fx("dwz-a")), c = fx_build_id(fx("dwz-common.debug"));
	int port = start_server(&b, fx("dwz-a.debug"));
	char url[64];

	cr_assert_gt(port, 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_TIMEOUT", "20", 1);
	cr_assert_not(dwz_inline_named(), "dwz_sq named without its common file");
	serve_also(&c, fx("dwz-common.debug"));
	/* a fresh cache: the client remembers the miss */
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/*", cache);
	cr_assert_eq(system(cmd), 0);
	cr_assert(dwz_inline_named(), "the common file from debuginfod did not name dwz_sq");
}
