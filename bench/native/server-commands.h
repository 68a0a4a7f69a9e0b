/*
 * The stdin protocol of the C echo servers (epoll-echo-server.c,
 * uring-echo-server.c), as bench/src/echo-server.js speaks it: "cpu" prints
 * "CPU <user µs> <system µs>" (getrusage), "quit" ends the server.
 */
#ifndef BOBBIN_BENCH_SERVER_COMMANDS_H
#define BOBBIN_BENCH_SERVER_COMMANDS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

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
