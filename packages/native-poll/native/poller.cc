// The platform-neutral half of the poller: registration table, generation
// tokens and the filtering of drained events (see poller.h for the invariants).
#include "poller.h"

#include <errno.h>
#include <unistd.h>

#include "check.h"

namespace bobbin {

Poller::~Poller() { Close(); }

int Poller::Open(int batch_capacity) {
  if (backend_fd_ >= 0) return -EBUSY;
  if (batch_capacity < 1) batch_capacity = 1;
  capacity_ = batch_capacity;
  raw_.assign(static_cast<size_t>(batch_capacity) * kRawInts, 0);
  return OsOpen();
}

void Poller::Close() {
  if (backend_fd_ < 0) return;
  OsClose();
  backend_fd_ = -1;
  wake_fd_ = -1;
  wake_write_fd_ = -1;
  // The registered fds are the caller's; only forget them.
  table_.clear();
  registered_ = 0;
}

Registration* Poller::Slot(int fd) {
  BOBBIN_CHECK(fd >= 0);
  if (static_cast<size_t>(fd) >= table_.size()) {
    size_t size = table_.size() < 64 ? 64 : table_.size();
    while (size <= static_cast<size_t>(fd)) size *= 2;
    table_.resize(size);
  }
  return &table_[fd];
}

uint32_t Poller::NextGen() {
  uint32_t gen = next_gen_;
  next_gen_ = gen >= kMaxGen ? 1 : gen + 1;
  return gen;
}

int64_t Poller::Add(int fd, uint32_t interest, Mode mode) {
  BOBBIN_CHECK(fd >= 0 && interest != 0 && (interest & ~(kReadable | kWritable)) == 0 && mode <= kOneShot);
  if (backend_fd_ < 0) return -EBADF;
  if (fd == wake_fd_ || fd == wake_write_fd_ || fd == backend_fd_) return -EINVAL;  // the poller's own fds
  Registration* r = Slot(fd);
  if (r->gen != 0) return -EEXIST;
  uint32_t gen = NextGen();
  int rc = OsSet(fd, gen, interest, mode, /*add=*/true, 0);
  if (rc < 0) return rc;
  r->gen = gen;
  r->interest = interest;
  r->mode = mode;
  r->armed = true;
  registered_++;
  return gen;
}

int Poller::Modify(int fd, uint32_t interest) {
  BOBBIN_CHECK(fd >= 0 && interest != 0 && (interest & ~(kReadable | kWritable)) == 0);
  Registration* r = const_cast<Registration*>(Find(fd));
  if (r == nullptr) return -ENOENT;
  int rc = OsSet(fd, r->gen, interest, static_cast<Mode>(r->mode), /*add=*/false, r->interest);
  if (rc < 0) return rc;
  r->interest = interest;
  r->armed = true;
  return 0;
}

int Poller::Rearm(int fd) {
  BOBBIN_CHECK(fd >= 0);
  Registration* r = const_cast<Registration*>(Find(fd));
  if (r == nullptr) return -ENOENT;
  // An armed edge/level registration needs no system call. A one-shot one may
  // have been disarmed by the kernel without our knowing yet (its event is
  // still queued), so it is always re-armed: the queued event, if any, is
  // delivered once more, which the seed notes accept ("double notification")
  // and which non-blocking I/O makes harmless.
  if (r->armed && r->mode != kOneShot) return 0;
  int rc = OsSet(fd, r->gen, r->interest, static_cast<Mode>(r->mode), /*add=*/false, r->interest);
  if (rc < 0) return rc;
  r->armed = true;
  return 0;
}

int Poller::Disarm(int fd) {
  BOBBIN_CHECK(fd >= 0);
  Registration* r = const_cast<Registration*>(Find(fd));
  if (r == nullptr) return -ENOENT;
  if (!r->armed) return 0;
  int rc = OsSet(fd, r->gen, 0, static_cast<Mode>(r->mode), /*add=*/false, r->interest);
  if (rc < 0) return rc;
  r->armed = false;
  return 0;
}

int Poller::Remove(int fd) {
  BOBBIN_CHECK(fd >= 0);
  Registration* r = const_cast<Registration*>(Find(fd));
  if (r == nullptr) return -ENOENT;
  BOBBIN_CHECK(registered_ > 0);
  int rc = OsRemove(fd, r->interest);
  // Forget the registration even if the kernel call failed (EBADF: the fd
  // was closed behind our back, and the kernel already dropped it; ENOENT:
  // the same): a stale entry would block a later Add() of the same number.
  r->gen = 0;
  r->armed = false;
  r->interest = 0;
  registered_--;
  return rc == -EBADF || rc == -ENOENT ? 0 : rc;
}

int Poller::CloseFd(int fd) {
  BOBBIN_CHECK(fd >= 0);
  int removed = Find(fd) != nullptr ? Remove(fd) : 0;
  // POSIX leaves the fd state unspecified after EINTR; on Linux and the BSDs
  // it is closed, so retrying would close someone else's fd.
  if (close(fd) < 0 && errno != EINTR) return -errno;
  return removed;  // closed, but the set refused to let go of it first: the caller hears why
}

int Poller::Interrupt() {
  if (backend_fd_ < 0) return -EBADF;
  return OsWake();
}

int Poller::Drain(int timeout_ms, int32_t* out, int max_events, bool* woken) {
  BOBBIN_CHECK(out != nullptr && woken != nullptr && max_events >= 1 && timeout_ms >= -1);
  *woken = false;
  if (backend_fd_ < 0) return -EBADF;
  if (max_events > capacity_) max_events = capacity_;
  int n = OsWait(timeout_ms, max_events, woken);
  if (n <= 0) return n;
  int kept = 0;
  const int32_t* raw = raw_.data();
  for (int i = 0; i < n; i++, raw += kRawInts) {
    int fd = raw[0];
    uint32_t gen = static_cast<uint32_t>(raw[1]);
    if (fd < 0 || static_cast<size_t>(fd) >= table_.size()) continue;
    uint32_t bits = static_cast<uint32_t>(raw[2]);
    int32_t* o = out + kept * kEventInts;
    // kqueue reports read and write readiness of one fd as two events: merge
    // them when they are adjacent so that JS sees one event per fd (the first
    // one already passed the checks below).
    if (kept > 0 && o[-kEventInts] == fd && o[-kEventInts + 1] == raw[1]) {
      o[-kEventInts + 2] |= static_cast<int32_t>(bits);
      continue;
    }
    Registration& r = table_[fd];
    // A stale generation: an earlier registration of this fd number.
    if (r.gen != gen || !r.armed) continue;
    if (r.mode == kOneShot) r.armed = false;  // the kernel disarmed it too
    o[0] = fd;
    o[1] = raw[1];
    o[2] = static_cast<int32_t>(bits);
    kept++;
  }
  BOBBIN_CHECK(kept <= max_events);
  // Reads only once the events are merged and filtered: one read per live fd.
  read_ahead_.Begin();
  for (int32_t* o = out; o < out + kept * kEventInts; o += kEventInts) {
    if ((o[2] & (kReadable | kHangup | kError)) != 0) {
      read_ahead_.Read(o[0], &o[3], &o[4]);
    } else {
      o[3] = kNotRead;
      o[4] = 0;
    }
  }
  return kept;
}

}  // namespace bobbin
