/* wire.c: a handle sent from C in the wire form of Go's interop.SendHandle
 * (vkflow_memory_handle_encode and _decode): one Manager exports, the
 * handle's bytes and its fd (SCM_RIGHTS) cross a Unix socket, the other
 * Manager imports; the buffer-length, magic and flag checks; and the raw
 * struct, which is not the wire form, is refused. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "consumer.h"

/* Sends len bytes and one fd in one message. */
static int send_with_fd(int sock, const void *buf, size_t len, int fd)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	memset(ctl, 0, sizeof ctl);
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	return sendmsg(sock, &msg, 0) == (ssize_t)len ? 0 : -1;
}

/* Receives a message into buf (cap bytes) and its fd (-1: none); returns
 * the bytes received or -1. */
static ssize_t recv_with_fd(int sock, void *buf, size_t cap, int *fd)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = buf, .iov_len = cap};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
	ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	*fd = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); n >= 0 && c != NULL; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(c), sizeof *fd);
	return n;
}

/* The last error message contains want. */
static void says(const char *want, const char *what)
{
	char msg[512] = "";
	vkflow_last_error(msg, sizeof msg);
	CHECK(strstr(msg, want) != NULL, "%s: the error does not say \"%s\": %s", what, want, msg);
}

void wire_case(void)
{
	enum { N = 256 };
	_Static_assert(VKFLOW_MEMORY_HANDLE_WIRE_SIZE == 72, "wire size");
	vkflow_manager a = 0, b = 0;
	vkflow_tensor x = 0, y = 0;
	int sv[2] = {-1, -1};
	static float data[N], got[N];
	for (int i = 0; i < N; i++)
		data[i] = (float)i - 17.5f;
	int64_t shape[1] = {N};
	if (!ok(vkflow_manager_new(-1, VKFLOW_VALIDATION, &a), "vkflow_manager_new") ||
	    !ok(vkflow_manager_new(-1, VKFLOW_VALIDATION, &b), "vkflow_manager_new") ||
	    !ok(vkflow_tensor_new(a, "float32", 1, shape, data, sizeof data, VKFLOW_MEMORY_EXPORTABLE, &x),
		"vkflow_tensor_new exportable"))
		goto done;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		CHECK(0, "socketpair: %s", strerror(errno));
		goto done;
	}

	/* Export, encode, send the bytes with the fd; receive, decode, import. */
	vkflow_memory_handle h;
	if (!ok(vkflow_tensor_export_memory(x, &h), "vkflow_tensor_export_memory"))
		goto done;
	unsigned char wire[VKFLOW_MEMORY_HANDLE_WIRE_SIZE + 8];
	size_t written = 0;
	if (ok(vkflow_memory_handle_encode(&h, wire, sizeof wire, &written), "vkflow_memory_handle_encode")) {
		CHECK(written == VKFLOW_MEMORY_HANDLE_WIRE_SIZE, "encode wrote %zu bytes", written);
		CHECK(memcmp(wire, "vkflowH1", 8) == 0, "the wire form starts with the magic");
		CHECK(send_with_fd(sv[0], wire, written, h.fd) == 0, "sendmsg: %s", strerror(errno));
	}
	close(h.fd); /* the receiver has its own fd now */
	unsigned char in[128];
	int fd = -1;
	ssize_t n = recv_with_fd(sv[1], in, sizeof in, &fd);
	CHECK(n == VKFLOW_MEMORY_HANDLE_WIRE_SIZE && fd >= 0, "received %zd bytes, fd %d", n, fd);
	vkflow_memory_handle g;
	memset(&g, 0x55, sizeof g);
	if (n > 0 && ok(vkflow_memory_handle_decode(in, (size_t)n, &g), "vkflow_memory_handle_decode")) {
		CHECK(g.fd == -1, "decode sets fd to -1, not %d", (int)g.fd);
		CHECK(g.reserved == 0, "decode zeroes reserved");
		CHECK(g.size == h.size && g.offset == h.offset && g.bytes == h.bytes &&
			  g.memory_type == h.memory_type && g.dedicated == h.dedicated &&
			  memcmp(g.device_uuid, h.device_uuid, 16) == 0 &&
			  memcmp(g.driver_uuid, h.driver_uuid, 16) == 0,
		      "decoded fields differ from the exported ones");
		g.fd = fd;
		fd = -1; /* the import consumes it */
		if (ok(vkflow_tensor_import_memory(b, &g, "float32", 1, shape, &y), "vkflow_tensor_import_memory") &&
		    ok(vkflow_tensor_read(y, got, sizeof got), "vkflow_tensor_read"))
			CHECK(memcmp(got, data, sizeof data) == 0, "imported bytes differ from the exported ones");
	}
	if (fd >= 0)
		close(fd);

	/* Encode: a buffer one byte short, NULLs and a bad dedicated are
	 * VKFLOW_ERR_INVALID, and nothing is written. written may be NULL. */
	unsigned char buf[VKFLOW_MEMORY_HANDLE_WIRE_SIZE];
	memset(buf, 0xAB, sizeof buf);
	written = 99;
	int rc = vkflow_memory_handle_encode(&h, buf, sizeof buf - 1, &written);
	CHECK(rc == VKFLOW_ERR_INVALID, "encode into 71 bytes returned %d", rc);
	says("71", "encode into 71 bytes");
	CHECK(buf[0] == 0xAB && written == 99, "a refused encode wrote nothing");
	CHECK(vkflow_memory_handle_encode(NULL, buf, sizeof buf, NULL) == VKFLOW_ERR_INVALID, "encode of NULL");
	CHECK(vkflow_memory_handle_encode(&h, NULL, sizeof buf, NULL) == VKFLOW_ERR_INVALID, "encode into NULL");
	vkflow_memory_handle bad = h;
	bad.dedicated = 2;
	CHECK(vkflow_memory_handle_encode(&bad, buf, sizeof buf, NULL) == VKFLOW_ERR_INVALID, "encode dedicated 2");
	CHECK(buf[0] == 0xAB, "a refused encode wrote nothing");
	CHECK(ok(vkflow_memory_handle_encode(&h, buf, sizeof buf, NULL), "encode with written NULL"), "encode");

	/* Decode: wrong lengths, magic and flags are VKFLOW_ERR_INVALID and
	 * leave *out unchanged. */
	struct {
		const char *name;
		size_t len;
		int at;          /* byte to change, -1: none */
		unsigned char v; /* its new value */
		const char *says;
	} cases[] = {
		{"71 bytes", VKFLOW_MEMORY_HANDLE_WIRE_SIZE - 1, -1, 0, "71 bytes"},
		{"73 bytes", VKFLOW_MEMORY_HANDLE_WIRE_SIZE + 1, -1, 0, "73 bytes"},
		{"empty", 0, -1, 0, "0 bytes"},
		{"magic", VKFLOW_MEMORY_HANDLE_WIRE_SIZE, 0, 'X', "not a vkflow memory handle"},
		{"flags", VKFLOW_MEMORY_HANDLE_WIRE_SIZE, 36, 2, "flags"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned char w[VKFLOW_MEMORY_HANDLE_WIRE_SIZE + 1];
		memcpy(w, buf, sizeof buf);
		w[VKFLOW_MEMORY_HANDLE_WIRE_SIZE] = 0;
		if (cases[i].at >= 0)
			w[cases[i].at] = cases[i].v;
		memset(&g, 0x55, sizeof g);
		rc = vkflow_memory_handle_decode(w, cases[i].len, &g);
		CHECK(rc == VKFLOW_ERR_INVALID, "decode %s returned %d", cases[i].name, rc);
		says(cases[i].says, cases[i].name);
		CHECK(g.size == 0x5555555555555555ULL && g.fd == 0x55555555, "decode %s changed *out", cases[i].name);
	}
	CHECK(vkflow_memory_handle_decode(NULL, VKFLOW_MEMORY_HANDLE_WIRE_SIZE, &g) == VKFLOW_ERR_INVALID,
	      "decode of NULL");
	CHECK(vkflow_memory_handle_decode(buf, sizeof buf, NULL) == VKFLOW_ERR_INVALID, "decode into NULL");

	/* The struct itself is not the wire form (what docs/INTEROP.md once
	 * said): a receiver refuses its bytes. */
	_Static_assert(sizeof h == VKFLOW_MEMORY_HANDLE_WIRE_SIZE, "same size, other layout");
	rc = vkflow_memory_handle_decode(&h, sizeof h, &g);
	CHECK(rc == VKFLOW_ERR_INVALID, "decode of the raw struct returned %d", rc);
	says("not a vkflow memory handle (72 bytes)", "the raw struct");
done:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	vkflow_tensor_close(y);
	vkflow_tensor_close(x);
	vkflow_manager_close(b);
	vkflow_manager_close(a);
}
