// The poller on Linux: epoll, with an eventfd as the wake-up channel.
//
// Events carry (generation << 32 | fd) in epoll_event.data.u64; the wake-up
// eventfd carries generation 0. Edge mode is EPOLLET, one-shot mode is
// EPOLLONESHOT without EPOLLET (level-triggered one-shot: re-arming reports an
// fd that is still ready, so no edge is lost between the event and Rearm()).
// A disarmed fd keeps its place in the set with no interest bits and
// EPOLLONESHOT: the kernel always adds EPOLLERR|EPOLLHUP, and the one-shot flag
// stops a hung-up, disarmed fd from reporting on every wait.
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>

#include "poller.h"

namespace bobbin {

namespace {

uint32_t ToEpoll(uint32_t interest, Mode mode) {
  if (interest == 0) return EPOLLONESHOT;
  uint32_t ev = 0;
  if (interest & kReadable) ev |= EPOLLIN | EPOLLRDHUP;
  if (interest & kWritable) ev |= EPOLLOUT;
  if (mode == kEdge) ev |= EPOLLET;
  else if (mode == kOneShot) ev |= EPOLLONESHOT;
  return ev;
}

uint32_t FromEpoll(uint32_t ev) {
  uint32_t bits = 0;
  if (ev & (EPOLLIN | EPOLLPRI)) bits |= kReadable;
  if (ev & EPOLLOUT) bits |= kWritable;
  if (ev & (EPOLLHUP | EPOLLRDHUP)) bits |= kHangup;
  if (ev & EPOLLERR) bits |= kError;
  return bits;
}

}  // namespace

int Poller::OsOpen() {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return -errno;
  int wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake < 0) {
    int err = errno;
    close(ep);
    return -err;
  }
  struct epoll_event e;
  memset(&e, 0, sizeof e);
  e.events = EPOLLIN;  // level-triggered: drained (read) when seen
  e.data.u64 = static_cast<uint32_t>(wake);  // generation 0
  if (epoll_ctl(ep, EPOLL_CTL_ADD, wake, &e) < 0) {
    int err = errno;
    close(wake);
    close(ep);
    return -err;
  }
  backend_fd_ = ep;
  wake_fd_ = wake;
  wake_write_fd_ = wake;
  os_events_.assign(static_cast<size_t>(capacity_) * sizeof(struct epoll_event) / sizeof(uint64_t) + 1, 0);
  return 0;
}

void Poller::OsClose() {
  close(wake_fd_);
  close(backend_fd_);
}

int Poller::OsSet(int fd, uint32_t gen, uint32_t interest, Mode mode, bool add, uint32_t /*installed*/) {
  struct epoll_event e;
  memset(&e, 0, sizeof e);
  e.events = ToEpoll(interest, mode);
  e.data.u64 = (static_cast<uint64_t>(gen) << 32) | static_cast<uint32_t>(fd);
  if (epoll_ctl(backend_fd_, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &e) < 0) return -errno;
  return 0;
}

int Poller::OsRemove(int fd, uint32_t /*interest*/) {
  struct epoll_event e;  // non-null for kernels before 2.6.9
  memset(&e, 0, sizeof e);
  if (epoll_ctl(backend_fd_, EPOLL_CTL_DEL, fd, &e) < 0) return -errno;
  return 0;
}

int Poller::OsWake() {
  uint64_t one = 1;
  // EAGAIN means the counter is already huge: a wake-up is pending anyway.
  if (write(wake_write_fd_, &one, sizeof one) < 0 && errno != EAGAIN) return -errno;
  return 0;
}

int Poller::OsWait(int timeout_ms, int max, bool* woken) {
  struct epoll_event* evs = reinterpret_cast<struct epoll_event*>(os_events_.data());
  int n;
  do {
    n = epoll_wait(backend_fd_, evs, max, timeout_ms);
  } while (n < 0 && errno == EINTR && timeout_ms == 0);
  if (n < 0) return errno == EINTR ? 0 : -errno;
  int32_t* raw = raw_.data();
  int count = 0;
  for (int i = 0; i < n; i++) {
    uint64_t token = evs[i].data.u64;
    int32_t fd = static_cast<int32_t>(token & 0xffffffffu);
    uint32_t gen = static_cast<uint32_t>(token >> 32);
    if (gen == 0) {
      if (fd == wake_fd_) {
        uint64_t value;
        // Reset the counter; EAGAIN means another drain already did.
        if (read(wake_fd_, &value, sizeof value) < 0 && errno != EAGAIN) return -errno;
        *woken = true;
      }
      continue;
    }
    raw[0] = fd;
    raw[1] = static_cast<int32_t>(gen);
    raw[2] = static_cast<int32_t>(FromEpoll(evs[i].events));
    raw += kRawInts;
    count++;
  }
  return count;
}

}  // namespace bobbin
