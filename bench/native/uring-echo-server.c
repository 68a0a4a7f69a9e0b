/*
 * The second floor of the echo benchmark (bench/src/native-echo.js): a small
 * C echo server on io_uring, with raw system calls (no liburing). One ring
 * (DEFER_TASKRUN + SINGLE_ISSUER where the kernel has them, else
 * COOP_TASKRUN), a multishot accept on the listener, a multishot recv per
 * connection into a ring of provided buffers, and each received buffer sent
 * back as it is (no copy in user space); the buffer returns to the ring when
 * its send completes. Every turn of the loop submits what the last batch of
 * completions queued and waits for the next one in the same system call.
 * Compiled at bench time (cc -O2) into a temporary directory; no binary is
 * committed.
 *
 *   uring-echo-server
 *
 * Listens on 127.0.0.1 (a free port) and prints "PORT <n>". Speaks the
 * protocol of bench/src/echo-server.js on stdin: "cpu" prints
 * "CPU <user µs> <system µs>" (getrusage), "quit" exits. Exits with 3 when
 * io_uring cannot be set up here (the benchmark then leaves this row out).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "echo-server.h"

enum { RING_ENTRIES = 1024, BUFFERS = 1024, BUFFER_SIZE = 4096, GROUP = 0 };
/* user_data: the kind in the top byte, then the buffer id, then the fd. */
enum { ACCEPT = 1, RECV = 2, SEND = 3, INPUT = 4 };
#define DATA(kind, bid, fd) (((uint64_t)(kind) << 56) | ((uint64_t)(bid) << 32) | (uint32_t)(fd))

static struct {
  int fd;
  unsigned *sq_tail, *sq_mask, *cq_head, *cq_tail, *cq_mask;
  struct io_uring_sqe *sqes;
  struct io_uring_cqe *cqes;
  unsigned pending; /* SQEs written and not yet submitted */
} ring;

static struct {
  struct io_uring_buf_ring *ring;
  unsigned char *memory;
  unsigned short tail;
} bufs;

static int setup(unsigned flags) {
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  p.flags = flags | IORING_SETUP_CQSIZE;
  p.cq_entries = RING_ENTRIES * 4;
  int fd = (int)syscall(__NR_io_uring_setup, RING_ENTRIES, &p);
  if (fd < 0) return -1;
  size_t sq_bytes = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  size_t cq_bytes = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  size_t bytes = sq_bytes > cq_bytes ? sq_bytes : cq_bytes; /* IORING_FEAT_SINGLE_MMAP (5.4+) */
  unsigned char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
  if (m == MAP_FAILED) die("mmap ring");
  ring.sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                   IORING_OFF_SQES);
  if (ring.sqes == MAP_FAILED) die("mmap sqes");
  ring.fd = fd;
  ring.sq_tail = (unsigned *)(m + p.sq_off.tail);
  ring.sq_mask = (unsigned *)(m + p.sq_off.ring_mask);
  unsigned *array = (unsigned *)(m + p.sq_off.array);
  for (unsigned i = 0; i < p.sq_entries; i++) array[i] = i; /* SQE i sits at index i, always */
  ring.cq_head = (unsigned *)(m + p.cq_off.head);
  ring.cq_tail = (unsigned *)(m + p.cq_off.tail);
  ring.cq_mask = (unsigned *)(m + p.cq_off.ring_mask);
  ring.cqes = (struct io_uring_cqe *)(m + p.cq_off.cqes);
  return 0;
}

/* Submits what is pending and waits for at least `wait` completions. */
static void enter(unsigned wait) {
  __atomic_store_n(ring.sq_tail, *ring.sq_tail + ring.pending, __ATOMIC_RELEASE);
  unsigned n = ring.pending;
  ring.pending = 0;
  while (syscall(__NR_io_uring_enter, ring.fd, n, wait, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
    if (errno != EINTR) die("io_uring_enter");
    n = 0;
  }
}

static struct io_uring_sqe *sqe(void) {
  if (ring.pending == RING_ENTRIES) enter(0);
  struct io_uring_sqe *s = &ring.sqes[(*ring.sq_tail + ring.pending++) & *ring.sq_mask];
  memset(s, 0, sizeof *s);
  return s;
}

static void give_buffer(unsigned short bid) {
  struct io_uring_buf *b = &bufs.ring->bufs[bufs.tail & (BUFFERS - 1)];
  b->addr = (uint64_t)(uintptr_t)(bufs.memory + (size_t)bid * BUFFER_SIZE);
  b->len = BUFFER_SIZE;
  b->bid = bid;
  __atomic_store_n(&bufs.ring->tail, ++bufs.tail, __ATOMIC_RELEASE);
}

static void setup_buffers(void) {
  bufs.ring = mmap(NULL, BUFFERS * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  bufs.memory = mmap(NULL, (size_t)BUFFERS * BUFFER_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (bufs.ring == MAP_FAILED || bufs.memory == MAP_FAILED) die("mmap buffers");
  struct io_uring_buf_reg reg;
  memset(&reg, 0, sizeof reg);
  reg.ring_addr = (uint64_t)(uintptr_t)bufs.ring;
  reg.ring_entries = BUFFERS;
  reg.bgid = GROUP;
  if (syscall(__NR_io_uring_register, ring.fd, IORING_REGISTER_PBUF_RING, &reg, 1) < 0) die("IORING_REGISTER_PBUF_RING");
  for (unsigned i = 0; i < BUFFERS; i++) give_buffer((unsigned short)i);
}

static void accept_many(int lfd) {
  struct io_uring_sqe *s = sqe();
  s->opcode = IORING_OP_ACCEPT;
  s->fd = lfd;
  s->ioprio = IORING_ACCEPT_MULTISHOT;
  s->accept_flags = SOCK_CLOEXEC;
  s->user_data = DATA(ACCEPT, 0, lfd);
}

static void recv_many(int fd) {
  struct io_uring_sqe *s = sqe();
  s->opcode = IORING_OP_RECV;
  s->fd = fd;
  s->ioprio = IORING_RECV_MULTISHOT;
  s->flags = IOSQE_BUFFER_SELECT;
  s->buf_group = GROUP;
  s->user_data = DATA(RECV, 0, fd);
}

static void send_buffer(int fd, unsigned short bid, unsigned len) {
  struct io_uring_sqe *s = sqe();
  s->opcode = IORING_OP_SEND;
  s->fd = fd;
  s->addr = (uint64_t)(uintptr_t)(bufs.memory + (size_t)bid * BUFFER_SIZE);
  s->len = len;
  s->msg_flags = MSG_NOSIGNAL | MSG_WAITALL;
  s->user_data = DATA(SEND, bid, fd);
}

static void watch_input(void) {
  struct io_uring_sqe *s = sqe();
  s->opcode = IORING_OP_POLL_ADD;
  s->fd = 0;
  s->poll32_events = POLLIN;
  s->user_data = DATA(INPUT, 0, 0);
}

int main(void) {
  if (setup(IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN) < 0 &&
      setup(IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN) < 0) {
    perror("io_uring_setup");
    return 3;
  }
  setup_buffers();

  int lfd = listen_loopback(0);

  accept_many(lfd);
  watch_input();
  for (;;) {
    enter(1);
    unsigned head = *ring.cq_head;
    unsigned tail = __atomic_load_n(ring.cq_tail, __ATOMIC_ACQUIRE);
    for (; head != tail; head++) {
      const struct io_uring_cqe *c = &ring.cqes[head & *ring.cq_mask];
      int kind = (int)(c->user_data >> 56);
      int fd = (int)(uint32_t)c->user_data;
      int res = c->res;
      int more = (c->flags & IORING_CQE_F_MORE) != 0;
      if (kind == ACCEPT) {
        if (res >= 0) recv_many(res);
        if (!more) accept_many(fd); /* an error (EMFILE…) ends the multishot: arm it again */
      } else if (kind == RECV) {
        if (res > 0) send_buffer(fd, (unsigned short)(c->flags >> IORING_CQE_BUFFER_SHIFT), (unsigned)res);
        else if (c->flags & IORING_CQE_F_BUFFER) give_buffer((unsigned short)(c->flags >> IORING_CQE_BUFFER_SHIFT));
        if (!more) {
          if (res > 0 || res == -ENOBUFS) recv_many(fd);
          else close(fd); /* end of stream or an error; a send still in flight holds its own reference */
        }
      } else if (kind == SEND) {
        give_buffer((unsigned short)(c->user_data >> 32));
      } else if (kind == INPUT) {
        if (!command()) return 0;
        watch_input();
      }
    }
    __atomic_store_n(ring.cq_head, head, __ATOMIC_RELEASE);
  }
}
