/*
 * What the C echo servers (epoll-echo-server.c, uring-echo-server.c) share:
 * their listener on loopback, announced as "PORT <n>", and the stdin protocol
 * bench/src/echo-server.js speaks: "cpu" prints "CPU <user µs> <system µs>"
 * (getrusage), "quit" ends the server.
 */
#ifndef BOBBIN_BENCH_ECHO_SERVER_H
#define BOBBIN_BENCH_ECHO_SERVER_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static void die(const char *what) {
  perror(what);
  exit(2);
}

/* A TCP listener on 127.0.0.1 at a free port (socket flags: SOCK_NONBLOCK…), announced on stdout. */
static int listen_loopback(int flags) {
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
  if (lfd < 0) die("socket");
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
  if (listen(lfd, 511) < 0) die("listen");
  socklen_t len = sizeof addr;
  if (getsockname(lfd, (struct sockaddr *)&addr, &len) < 0) die("getsockname");
  printf("PORT %d\n", ntohs(addr.sin_port));
  fflush(stdout);
  return lfd;
}

/* Commands on stdin; returns 0 on "quit" or end of input. */
static int command(void) {
  static char line[256];
  static size_t have = 0;
  ssize_t n = read(0, line + have, sizeof line - 1 - have);
  if (n <= 0) return n < 0 && errno == EAGAIN;
  have += (size_t)n;
  char *nl;
  while ((nl = memchr(line, '\n', have)) != NULL) {
    *nl = '\0';
    if (strcmp(line, "cpu") == 0) {
      struct rusage ru;
      getrusage(RUSAGE_SELF, &ru);
      printf("CPU %lld %lld\n", (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
             (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec);
      fflush(stdout);
    } else if (strcmp(line, "quit") == 0) {
      return 0;
    }
    size_t used = (size_t)(nl - line) + 1;
    memmove(line, nl + 1, have - used);
    have -= used;
  }
  if (have == sizeof line - 1) have = 0; /* an absurd line: drop it */
  return 1;
}

#endif
