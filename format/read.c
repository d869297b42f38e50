/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read.c - open a .bprof file (SPEC.md 3, 4): the file header, the zstd
 * frame and the reader that keeps its buffers between files.  What the
 * frame holds, the sections, is parsed by read_sections.c.
 *
 * Every byte is hostile.  The file's size is capped before it is read,
 * the content's announced size before anything is decompressed, and the
 * output grows with what the frame really produces, never with what its
 * header claims.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "internal.h"

#define ZSTD_FRAME_MAGIC 0xFD2FB528u
#define ZSTD_FHD_CHECKSUM (1u << 2)

static int zstd_error(size_t ret, uint64_t in_pos, struct bprof_error *err)
{
	ZSTD_ErrorCode ec = ZSTD_getErrorCode(ret);

	if (ec == ZSTD_error_frameParameter_windowTooLarge)
		return bprof_set_error(err, BPROF_E_LIMIT, 0,
				       "zstd frame at file offset %d: window larger than the reader allows",
				       BPROF_FILE_HEADER_LEN);
	if (ec == ZSTD_error_memory_allocation)
		return bprof_set_error(err, BPROF_E_NOMEM, 0, "zstd: %s", ZSTD_getErrorName(ret));
	return bprof_set_error(err, BPROF_E_ZSTD, 0, "zstd frame, near file offset %llu: %s",
			       (unsigned long long)in_pos + BPROF_FILE_HEADER_LEN,
			       ZSTD_getErrorName(ret));
}

struct bprof_reader {
	ZSTD_DCtx *d;
	uint8_t *file, *content;       /* kept between files */
	size_t file_cap, content_cap;
};

/* Decompress exactly one frame of exactly content_size bytes into
 * rd->content (grown as needed; the reader keeps it).  The output grows
 * with what the frame really produces, never with what it claims. */
static int decompress(struct bprof_reader *rd, const uint8_t *src, size_t len,
		      uint64_t content_size, unsigned window_log, struct bprof_error *err)
{
	ZSTD_DCtx *d = rd->d;
	ZSTD_inBuffer in = { src, len, 0 };
	uint8_t *buf = rd->content;
	size_t cap = rd->content_cap, produced = 0, ret;
	int rc = 0;

	if (len < 5)
		return bprof_set_error(err, BPROF_E_TRUNCATED, 0,
				       "zstd frame at file offset %d: %zu bytes, frame header needs more",
				       BPROF_FILE_HEADER_LEN, len);
	if (bprof_le32(src) != ZSTD_FRAME_MAGIC)
		return bprof_set_error(err, BPROF_E_ZSTD, 0,
				       "file offset %d: not a zstd frame (magic 0x%08x)",
				       BPROF_FILE_HEADER_LEN, bprof_le32(src));
	if (!(src[4] & ZSTD_FHD_CHECKSUM))
		return bprof_set_error(err, BPROF_E_ZSTD, 0,
				       "zstd frame at file offset %d has no content checksum",
				       BPROF_FILE_HEADER_LEN);
	if (content_size > SIZE_MAX - 1)
		return bprof_set_error(err, BPROF_E_LIMIT, 0, "content too large for memory");

	/* the context is kept between files: back to defaults, then our cap */
	ZSTD_DCtx_reset(d, ZSTD_reset_session_and_parameters);
	ret = ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, (int)window_log);
	if (ZSTD_isError(ret)) {
		rc = bprof_set_error(err, BPROF_E_INVAL, 0, "window log %u: %s", window_log,
				     ZSTD_getErrorName(ret));
		goto out;
	}
	/* One byte of slack detects a frame longer than announced.  The
	 * first buffer is what the header announces, up to 1 MiB or 16 times
	 * the compressed bytes, whichever is more: bounded by what the file
	 * really holds, never by its claims, and large enough that a typical
	 * recording (4-6 times smaller compressed) needs no realloc, whose
	 * copy of megabytes was a third of merging 100 recordings. */
	size_t first = len < SIZE_MAX / 16 && len * 16 > (1u << 20) ? len * 16 : 1u << 20;
	first = content_size + 1 < first ? (size_t)content_size + 1 : first;
	if (cap < first) { /* a buffer the reader already has is used as it is */
		free(buf);
		rd->content = NULL;
		rd->content_cap = 0;
		buf = malloc(first);
		if (!buf) {
			rc = bprof_set_error(err, BPROF_E_NOMEM, 0, "content buffer");
			goto out;
		}
		cap = first;
	}
	for (;;) {
		ZSTD_outBuffer o = { buf, cap, produced };

		ret = ZSTD_decompressStream(d, &o, &in);
		produced = o.pos;
		if (ZSTD_isError(ret)) {
			rc = zstd_error(ret, in.pos, err);
			goto out;
		}
		if (produced > content_size) {
			rc = bprof_set_error(err, BPROF_E_CORRUPT, 0,
					     "zstd frame holds more than the %llu bytes the header announces",
					     (unsigned long long)content_size);
			goto out;
		}
		if (ret == 0)
			break;
		if (produced == cap) {
			size_t ncap = cap * 2 > content_size + 1 ? (size_t)content_size + 1 : cap * 2;
			uint8_t *nb = realloc(buf, ncap);

			if (!nb) {
				rc = bprof_set_error(err, BPROF_E_NOMEM, 0, "content buffer");
				goto out;
			}
			buf = nb;
			cap = ncap;
		} else if (in.pos == in.size) {
			rc = bprof_set_error(err, BPROF_E_TRUNCATED, 0,
					     "zstd frame ends early at file offset %zu (content %zu of %llu bytes)",
					     len + BPROF_FILE_HEADER_LEN, produced,
					     (unsigned long long)content_size);
			goto out;
		}
	}
	if (in.pos != in.size) {
		rc = bprof_set_error(err, BPROF_E_CORRUPT, 0,
				     "trailing data after the zstd frame at file offset %zu (%zu bytes)",
				     in.pos + BPROF_FILE_HEADER_LEN, in.size - in.pos);
		goto out;
	}
	if (produced != content_size) {
		rc = bprof_set_error(err, BPROF_E_CORRUPT, 0,
				     "content is %zu bytes but the header announces %llu", produced,
				     (unsigned long long)content_size);
		goto out;
	}
out:
	rd->content = buf;
	rd->content_cap = buf ? cap : 0;
	return rc;
}

static int read_limits(const struct bprof_read_opts *opts, uint64_t *max_dec, unsigned *wlog,
		       struct bprof_error *err)
{
	*max_dec = BPROF_DEFAULT_MAX_DECOMPRESSED;
	*wlog = BPROF_DEFAULT_WINDOW_LOG;
	if (!opts)
		return 0;
	/* A zero sz means the caller forgot it: refuse rather than silently
	 * drop the limits it asked for. */
	if (opts->sz < sizeof(struct bprof_read_opts))
		return bprof_set_error(err, BPROF_E_INVAL, 0,
				       "bprof_read_opts.sz is %zu, must be sizeof(struct bprof_read_opts)",
				       opts->sz);
	if (opts->max_decompressed)
		*max_dec = opts->max_decompressed;
	if (opts->max_window_log)
		*wlog = opts->max_window_log;
	if (*wlog < 10 || *wlog > 31)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "max_window_log %u out of range 10..31",
				       *wlog);
	return 0;
}

static int read_buffer(struct bprof_reader *rd, struct bprof_recording **out, const void *buf,
		       size_t len, const struct bprof_read_opts *opts, struct bprof_error *err)
{
	const uint8_t *b = buf;
	struct bprof_recording *r = NULL;
	uint64_t max_dec, content_size;
	unsigned wlog, major, minor;
	uint32_t flags;
	uint8_t *content = NULL;
	bool strict;
	int rc;

	if (!out)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "out is NULL");
	*out = NULL;
	if (!buf && len)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "buffer is NULL");
	if ((rc = read_limits(opts, &max_dec, &wlog, err)))
		return rc;

	if (len == 0)
		return bprof_set_error(err, BPROF_E_NOT_BPROF, 0, "empty file");
	if (memcmp(b, bprof_magic, len < BPROF_MAGIC_LEN ? len : BPROF_MAGIC_LEN))
		return bprof_set_error(err, BPROF_E_NOT_BPROF, 0,
				       "file offset 0: bad magic number, not a .bprof file");
	if (len < BPROF_FILE_HEADER_LEN)
		return bprof_set_error(err, BPROF_E_TRUNCATED, 0,
				       "file header: %d bytes needed, %zu present",
				       BPROF_FILE_HEADER_LEN, len);
	major = bprof_le16(b + 8);
	minor = bprof_le16(b + 10);
	flags = bprof_le32(b + 12);
	content_size = bprof_le64(b + 16);
	if (major != BPROF_FORMAT_MAJOR)
		return bprof_set_error(err, BPROF_E_VERSION, 0,
				       "file format version %u.%u is not supported by this reader (format %d.%d)",
				       major, minor, BPROF_FORMAT_MAJOR, BPROF_FORMAT_MINOR);
	strict = minor <= BPROF_FORMAT_MINOR;
	if (strict && flags)
		return bprof_set_error(err, BPROF_E_CORRUPT, 0,
				       "file header at offset 12: flags 0x%x must be zero", flags);
	if (content_size > max_dec)
		return bprof_set_error(err, BPROF_E_LIMIT, 0,
				       "file header at offset 16: content size %llu exceeds the limit %llu",
				       (unsigned long long)content_size, (unsigned long long)max_dec);

	rc = decompress(rd, b + BPROF_FILE_HEADER_LEN, len - BPROF_FILE_HEADER_LEN, content_size,
			wlog, err);
	if (rc)
		return rc;
	content = rd->content;
	rc = bprof_recording_create(&r);
	if (rc)
		return bprof_set_error(err, rc, 0, "recording");
	rc = bprof_parse_content(r, content, content_size, strict, minor, err);
	if (!rc)
		rc = bprof_validate_impl(r, err, BPROF_E_CORRUPT, false, strict);
	if (rc) {
		bprof_recording_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int bprof_reader_create(struct bprof_reader **out)
{
	struct bprof_reader *rd = calloc(1, sizeof(*rd));

	*out = NULL;
	if (!rd || !(rd->d = ZSTD_createDCtx())) {
		free(rd);
		return BPROF_E_NOMEM;
	}
	*out = rd;
	return 0;
}

void bprof_reader_destroy(struct bprof_reader *rd)
{
	if (!rd)
		return;
	ZSTD_freeDCtx(rd->d);
	free(rd->file);
	free(rd->content);
	free(rd);
}

/* The reader of a single read (bprof_read_buffer, bprof_read_file). */
static int reader_for_one(struct bprof_reader **rd, struct bprof_recording **out,
			  struct bprof_error *err)
{
	int rc = bprof_reader_create(rd);

	if (rc) {
		if (out)
			*out = NULL;
		return bprof_set_error(err, rc, 0, "zstd context");
	}
	return 0;
}

int bprof_read_buffer(struct bprof_recording **out, const void *buf, size_t len,
		      const struct bprof_read_opts *opts, struct bprof_error *err)
{
	struct bprof_reader *rd;
	int rc = reader_for_one(&rd, out, err);

	if (rc)
		return rc;
	rc = read_buffer(rd, out, buf, len, opts, err);
	bprof_reader_destroy(rd);
	return rc;
}

static const char *file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

int bprof_reader_read_file(struct bprof_reader *rd, struct bprof_recording **out,
			   const char *path, const struct bprof_read_opts *opts,
			   struct bprof_error *err)
{
	if (!rd) {
		if (out)
			*out = NULL;
		return bprof_set_error(err, BPROF_E_INVAL, 0, "reader is NULL");
	}
	uint64_t max_dec;
	unsigned wlog;
	struct stat st;
	uint8_t *buf = NULL;
	size_t size, done = 0;
	int fd, rc;

	if (!out)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "out is NULL");
	*out = NULL;
	if (!path)
		return bprof_set_error(err, BPROF_E_INVAL, 0, "path is NULL");
	if ((rc = read_limits(opts, &max_dec, &wlog, err)))
		return rc;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return bprof_set_error(err, BPROF_E_IO, errno, "open: %s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = bprof_set_error(err, BPROF_E_IO, errno, "fstat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = bprof_set_error(err, BPROF_E_INVAL, 0, "is %s, not a regular file",
				     file_kind(st.st_mode));
		goto out;
	}
	/* zstd expands incompressible data by a few bytes per 128 KiB block. */
	if ((uint64_t)st.st_size > max_dec + max_dec / 64 + 4096 || (uint64_t)st.st_size >= SIZE_MAX) {
		rc = bprof_set_error(err, BPROF_E_LIMIT, 0,
				     "file is %lld bytes, more than a %llu-byte content can need",
				     (long long)st.st_size, (unsigned long long)max_dec);
		goto out;
	}
	size = (size_t)st.st_size;
	if (rd->file_cap < (size ? size : 1)) {
		free(rd->file);
		rd->file_cap = 0;
		if (!(rd->file = malloc(size ? size : 1))) {
			rc = bprof_set_error(err, BPROF_E_NOMEM, 0, "file buffer of %zu bytes", size);
			goto out;
		}
		rd->file_cap = size ? size : 1;
	}
	buf = rd->file;
	while (done < size) {
		ssize_t n = read(fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = bprof_set_error(err, BPROF_E_IO, errno, "read: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break; /* shrank while reading: parse what is there */
		done += (size_t)n;
	}
	rc = read_buffer(rd, out, buf, done, opts, err);
out:
	close(fd);
	return rc;
}

int bprof_read_file(struct bprof_recording **out, const char *path,
		    const struct bprof_read_opts *opts, struct bprof_error *err)
{
	struct bprof_reader *rd;
	int rc = reader_for_one(&rd, out, err);

	if (rc)
		return rc;
	rc = bprof_reader_read_file(rd, out, path, opts, err);
	bprof_reader_destroy(rd);
	return rc;
}
