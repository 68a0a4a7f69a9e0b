/*
 * Echo load generator for bench/src/echo.js: CONNS connections to HOST:PORT,
 * each sending one MSG-byte message and waiting for all of it to come back
 * before sending the next (non-pipelined), on one epoll loop. Every byte
 * echoed is checked. Compiled at bench time (cc -O2); no binary is committed.
 *
 *   echo-client HOST PORT CONNS MSG WARMUP_S SECONDS
 *
 * Prints "START" (flushed) when the warm-up ends, then after SECONDS more
 * "END <round trips> <elapsed seconds>". Exits non-zero on any error or
 * mismatch.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  int fd;
  size_t got;          /* bytes of the current reply received */
  uint32_t seq;        /* message number, written into each message */
  unsigned char out[4096];
  unsigned char in[4096];
} conn_t;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what) {
  perror(what);
  exit(2);
}

static void fill(conn_t *c, int id, size_t msg) {
  for (size_t i = 0; i < msg; i++) c->out[i] = (unsigned char)(id * 31 + c->seq * 7 + i);
}

static void send_msg(conn_t *c, size_t msg) {
  size_t off = 0;
  while (off < msg) {
    ssize_t n = write(c->fd, c->out + off, msg - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) continue; /* 64-byte messages never fill a socket buffer */
      die("write");
    }
    off += (size_t)n;
  }
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s HOST PORT CONNS MSG WARMUP_S SECONDS\n", argv[0]);
    return 2;
  }
  const char *host = argv[1];
  int port = atoi(argv[2]);
  int nconns = atoi(argv[3]);
  size_t msg = (size_t)atoi(argv[4]);
  double warmup = atof(argv[5]);
  double seconds = atof(argv[6]);
  if (nconns < 1 || msg < 1 || msg > 4096) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }

  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) die("inet_pton");

  int ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1");
  conn_t *conns = calloc((size_t)nconns, sizeof(conn_t));
  if (!conns) die("calloc");
  for (int i = 0; i < nconns; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket");
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    conns[i].fd = fd;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
  }
  for (int i = 0; i < nconns; i++) {
    fill(&conns[i], i, msg);
    send_msg(&conns[i], msg);
  }

  struct epoll_event events[256];
  double start = now();
  double measure_from = start + warmup;
  double end = measure_from + seconds;
  int measuring = 0;
  unsigned long long count = 0;
  double t0 = 0;
  for (;;) {
    int n = epoll_wait(ep, events, 256, 100);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int e = 0; e < n; e++) {
      int id = (int)events[e].data.u32;
      conn_t *c = &conns[id];
      for (;;) {
        ssize_t r = read(c->fd, c->in + c->got, msg - c->got);
        if (r < 0) {
          if (errno == EAGAIN) break;
          if (errno == EINTR) continue;
          die("read");
        }
        if (r == 0) {
          fprintf(stderr, "connection %d closed by the server\n", id);
          return 3;
        }
        c->got += (size_t)r;
        if (c->got < msg) continue;
        if (memcmp(c->in, c->out, msg) != 0) {
          fprintf(stderr, "connection %d: echoed bytes differ\n", id);
          return 4;
        }
        c->got = 0;
        c->seq++;
        if (measuring) count++;
        fill(c, id, msg);
        send_msg(c, msg);
        break;
      }
    }
    double t = now();
    if (!measuring && t >= measure_from) {
      measuring = 1;
      t0 = t;
      printf("START\n");
      fflush(stdout);
    }
    if (measuring && t >= end) {
      printf("END %llu %.6f\n", count, t - t0);
      fflush(stdout);
      break;
    }
  }
  for (int i = 0; i < nconns; i++) close(conns[i].fd);
  return 0;
}
