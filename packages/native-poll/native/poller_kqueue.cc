// The poller on macOS and the BSDs: kqueue.
//
// STATUS: written and compiled for BSD/macOS only; it is not built or run on
// Linux (where poller_epoll.cc is used), and the project's CI has no BSD or
// macOS machine, so this file has not been run by the test suite.
//
// Mapping (see poller.h for the contract):
// - One filter per direction: EVFILT_READ for kReadable, EVFILT_WRITE for
//   kWritable. The fd is the kevent's ident and the generation travels in
//   udata (a pointer-sized integer, so 32-bit platforms work too).
// - Edge mode is EV_CLEAR; one-shot mode is EV_DISPATCH (the filter is
//   disabled after one event and enabled again by Rearm(); EV_ONESHOT would
//   delete it); level mode has neither.
// - Disarm() disables the installed filters (EV_DISABLE) and keeps them, so
//   that Rearm() is a single EV_ENABLE.
// - EV_EOF becomes kHangup, and kError as well when the kernel gives a socket
//   error in fflags; an EV_ERROR change result becomes kError.
// - Wake-up: EVFILT_USER where it exists (macOS, FreeBSD, NetBSD ≥ 10,
//   OpenBSD ≥ 7.3) with ident kWakeIdent, else a non-blocking pipe whose read
//   end is in the set with generation 0.
// - Closing an fd drops its kevents in the kernel (unlike epoll); Remove() still
//   deletes them explicitly so that the registration table stays the truth.
#include <errno.h>
#include <fcntl.h>
#include <sys/event.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstring>

#include "poller.h"

namespace bobbin {

namespace {

constexpr uintptr_t kWakeIdent = 0x626f6262;  // "bobb": EVFILT_USER has its own ident space

// udata is void* on macOS/FreeBSD/OpenBSD and intptr_t on older NetBSD.
template <typename U>
U ToUdata(uint32_t gen) {
  return (U)(uintptr_t)gen;
}

void SetChange(struct kevent* kev, uintptr_t ident, short filter, unsigned short flags, uint32_t gen) {
  memset(kev, 0, sizeof *kev);
  kev->ident = ident;
  kev->filter = filter;
  kev->flags = flags;
  kev->udata = ToUdata<decltype(kev->udata)>(gen);
}

unsigned short ModeFlags(Mode mode) {
  switch (mode) {
    case kEdge: return EV_CLEAR;
    case kOneShot: return EV_DISPATCH;
    default: return 0;
  }
}

int SetNonBlockCloexec(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return -errno;
  int fdfl = fcntl(fd, F_GETFD);
  if (fdfl < 0 || fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC) < 0) return -errno;
  return 0;
}

}  // namespace

int Poller::OsOpen() {
  int kq = kqueue();
  if (kq < 0) return -errno;
  int fdfl = fcntl(kq, F_GETFD);
  if (fdfl >= 0) fcntl(kq, F_SETFD, fdfl | FD_CLOEXEC);
  struct kevent kev;
#ifdef EVFILT_USER
  SetChange(&kev, kWakeIdent, EVFILT_USER, EV_ADD | EV_CLEAR, 0);
  if (kevent(kq, &kev, 1, nullptr, 0, nullptr) < 0) {
    int err = errno;
    close(kq);
    return -err;
  }
  wake_fd_ = -1;
  wake_write_fd_ = -1;
#else
  int fds[2];
  if (pipe(fds) < 0) {
    int err = errno;
    close(kq);
    return -err;
  }
  int rc = SetNonBlockCloexec(fds[0]);
  if (rc == 0) rc = SetNonBlockCloexec(fds[1]);
  if (rc == 0) {
    SetChange(&kev, static_cast<uintptr_t>(fds[0]), EVFILT_READ, EV_ADD, 0);
    if (kevent(kq, &kev, 1, nullptr, 0, nullptr) < 0) rc = -errno;
  }
  if (rc < 0) {
    close(fds[0]);
    close(fds[1]);
    close(kq);
    return rc;
  }
  wake_fd_ = fds[0];
  wake_write_fd_ = fds[1];
#endif
  (void)SetNonBlockCloexec;
  backend_fd_ = kq;
  os_events_.assign(static_cast<size_t>(capacity_) * sizeof(struct kevent) / sizeof(uint64_t) + 1, 0);
  return 0;
}

void Poller::OsClose() {
  if (wake_fd_ >= 0) close(wake_fd_);
  if (wake_write_fd_ >= 0 && wake_write_fd_ != wake_fd_) close(wake_write_fd_);
  close(backend_fd_);
}

int Poller::OsSet(int fd, uint32_t gen, uint32_t interest, Mode mode, bool add, uint32_t installed) {
  struct kevent changes[2];
  int n = 0;
  const uintptr_t ident = static_cast<uintptr_t>(fd);
  const short filters[2] = {EVFILT_READ, EVFILT_WRITE};
  const uint32_t bits[2] = {kReadable, kWritable};
  for (int i = 0; i < 2; i++) {
    if (interest == 0) {
      // Disarm: keep the filters, disabled.
      if (installed & bits[i]) SetChange(&changes[n++], ident, filters[i], EV_DISABLE, gen);
    } else if (interest & bits[i]) {
      SetChange(&changes[n++], ident, filters[i], EV_ADD | EV_ENABLE | ModeFlags(mode), gen);
    } else if (!add && (installed & bits[i])) {
      SetChange(&changes[n++], ident, filters[i], EV_DELETE, gen);
    }
  }
  if (n == 0) return 0;
  if (kevent(backend_fd_, changes, n, nullptr, 0, nullptr) < 0) return -errno;
  return 0;
}

int Poller::OsRemove(int fd, uint32_t interest) {
  struct kevent changes[2];
  int n = 0;
  const uintptr_t ident = static_cast<uintptr_t>(fd);
  if (interest & kReadable) SetChange(&changes[n++], ident, EVFILT_READ, EV_DELETE, 0);
  if (interest & kWritable) SetChange(&changes[n++], ident, EVFILT_WRITE, EV_DELETE, 0);
  if (n == 0) return 0;
  if (kevent(backend_fd_, changes, n, nullptr, 0, nullptr) < 0) return -errno;
  return 0;
}

int Poller::OsWake() {
#ifdef EVFILT_USER
  struct kevent kev;
  SetChange(&kev, kWakeIdent, EVFILT_USER, 0, 0);
  kev.fflags = NOTE_TRIGGER;
  if (kevent(backend_fd_, &kev, 1, nullptr, 0, nullptr) < 0) return -errno;
  return 0;
#else
  char byte = 1;
  // EAGAIN: the pipe is full, so a wake-up is pending anyway.
  if (write(wake_write_fd_, &byte, 1) < 0 && errno != EAGAIN) return -errno;
  return 0;
#endif
}

int Poller::OsWait(int timeout_ms, int max, bool* woken) {
  struct kevent* evs = reinterpret_cast<struct kevent*>(os_events_.data());
  struct timespec ts;
  struct timespec* tsp = nullptr;
  if (timeout_ms >= 0) {
    ts.tv_sec = timeout_ms / 1000;
    ts.tv_nsec = static_cast<long>(timeout_ms % 1000) * 1000000L;
    tsp = &ts;
  }
  int n;
  do {
    n = kevent(backend_fd_, nullptr, 0, evs, max, tsp);
  } while (n < 0 && errno == EINTR && timeout_ms == 0);
  if (n < 0) return errno == EINTR ? 0 : -errno;
  int32_t* raw = raw_.data();
  int count = 0;
  for (int i = 0; i < n; i++) {
    const struct kevent& ev = evs[i];
#ifdef EVFILT_USER
    if (ev.filter == EVFILT_USER) {
      *woken = true;
      continue;
    }
#endif
    uint32_t gen = static_cast<uint32_t>((uintptr_t)ev.udata);
    int32_t fd = static_cast<int32_t>(ev.ident);
    if (gen == 0) {
      if (fd == wake_fd_) {
        char buf[64];
        ssize_t r;
        while ((r = read(wake_fd_, buf, sizeof buf)) > 0) {
        }
        if (r < 0 && errno != EAGAIN) return -errno;  // not 0 events: the caller hears that waiting failed
        *woken = true;
      }
      continue;
    }
    uint32_t bits = 0;
    if (ev.flags & EV_ERROR) {
      bits = kError;
    } else {
      if (ev.filter == EVFILT_READ) bits |= kReadable;
      if (ev.filter == EVFILT_WRITE) bits |= kWritable;
      if (ev.flags & EV_EOF) {
        bits |= kHangup;
        if (ev.fflags != 0) bits |= kError;
      }
    }
    raw[0] = fd;
    raw[1] = static_cast<int32_t>(gen);
    raw[2] = static_cast<int32_t>(bits);
    raw += kRawInts;
    count++;
  }
  return count;
}

}  // namespace bobbin
