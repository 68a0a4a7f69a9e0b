/*
 * The floor of the echo benchmark (bench/src/native-echo.js): a small C echo
 * server on one epoll loop, level-triggered, one read and one write per
 * readiness event (the fewest system calls a 64-byte ping-pong needs).
 * Compiled at bench time (cc -O2) into a temporary directory; no binary is
 * committed.
 *
 *   epoll-echo-server
 *
 * Listens on 127.0.0.1 (a free port) and prints "PORT <n>". Speaks the
 * protocol of bench/src/echo-server.js on stdin: "cpu" prints
 * "CPU <user µs> <system µs>" (getrusage), "quit" exits.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "echo-server.h"

int main(void) {
  int lfd = listen_loopback(SOCK_NONBLOCK);

  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) < 0) die("epoll_ctl");
  ev.data.fd = 0;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev) < 0) die("epoll_ctl stdin");

  static unsigned char buf[65536];
  struct epoll_event events[256];
  for (;;) {
    int n = epoll_wait(ep, events, 256, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int i = 0; i < n; i++) {
      int fd = events[i].data.fd;
      if (fd == 0) {
        if (!command()) return 0;
      } else if (fd == lfd) {
        for (;;) {
          int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (c < 0) break; /* EAGAIN, or a connection that went away */
          struct epoll_event cev = {.events = EPOLLIN, .data.fd = c};
          if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev) < 0) close(c);
        }
      } else {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r > 0) {
          ssize_t off = 0;
          while (off < r) {
            ssize_t w = write(fd, buf + off, (size_t)(r - off));
            if (w < 0) {
              if (errno == EINTR || errno == EAGAIN) continue; /* 64-byte replies never fill the buffer */
              break;
            }
            off += w;
          }
        } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
          epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
          close(fd);
        }
      }
    }
  }
}
