// The poller: one private readiness set (epoll on Linux, kqueue on BSD/macOS).
//
// This part knows nothing of Node: it owns the OS set, the registration table
// and the generation tokens, and drains ready events into a flat int32 array.
// poller_node.cc puts it into Node's loop (one uv_poll_t on the set's fd) and
// exposes it to JavaScript.
//
// Invariants:
// - table_[fd].gen != 0 exactly while `fd` is registered. Every registration
//   takes a fresh generation (never 0, at most kMaxGen so that it stays a small
//   integer in JavaScript), and the kernel carries (gen << 32 | fd) back with
//   each event. An event whose generation is not the fd's current one belongs to
//   an earlier registration of the same fd number (removed, or closed and the
//   number reused) and is dropped. The JavaScript side repeats the check for
//   each event of a batch, so that an fd removed while that batch is being
//   handled loses its remaining events too.
// - A registration that is not armed reports nothing: events for it that were
//   already queued in the kernel are dropped here. One-shot registrations are
//   disarmed by the delivery of an event (by the kernel and in the table alike)
//   until Rearm().
// - The wake-up channel (an eventfd, or EVFILT_USER/a pipe on BSD) is in the set
//   with generation 0, which no registration ever has. Interrupt() is the only
//   method that may be called from any thread.
// - Remove() takes the fd out of the kernel set before the caller closes it:
//   epoll keeps reporting a closed fd whose open file description survives in a
//   dup(), so "closing is enough" is not true.
#ifndef BOBBIN_NATIVE_POLLER_H_
#define BOBBIN_NATIVE_POLLER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "no_copy.h"
#include "read_ahead.h"

namespace bobbin {

// Interest and event bits, the same on every platform (also exported to JS).
enum : uint32_t {
  kReadable = 1,  // EPOLLIN / EVFILT_READ
  kWritable = 2,  // EPOLLOUT / EVFILT_WRITE
  kHangup = 4,    // EPOLLHUP | EPOLLRDHUP / EV_EOF
  kError = 8,     // EPOLLERR / EV_ERROR or EV_EOF with an error
};

enum Mode : uint8_t {
  kEdge = 0,     // EPOLLET / EV_CLEAR: one event per readiness change
  kLevel = 1,    // plain: reported while ready
  kOneShot = 2,  // EPOLLONESHOT / EV_DISPATCH (level-triggered): one event, then disarmed until Rearm()
};

// The kernel's events, before filtering, take three int32s: fd, generation, bits.
constexpr int kRawInts = 3;
// Each event of the output array takes five: fd, generation, bits, and the
// read-ahead's result and offset in its area (read_ahead.h).
constexpr int kEventInts = 5;
constexpr uint32_t kMaxGen = 0x7fffffff;

struct Registration {
  uint32_t gen = 0;       // 0: not registered
  uint32_t interest = 0;  // kReadable | kWritable
  uint8_t mode = kEdge;
  bool armed = false;
};

class Poller : NoCopy {
 public:
  Poller() = default;
  ~Poller();

  // Creates the set and its wake-up channel. 0 or -errno.
  int Open(int batch_capacity);
  // Closes the set and the wake-up channel (not the registered fds).
  void Close();
  bool IsOpen() const { return backend_fd_ >= 0; }
  // The fd that becomes readable when an event is queued: what Node's loop watches.
  int backend_fd() const { return backend_fd_; }

  // Registers `fd`. Returns its generation (> 0), -EEXIST when it is already
  // registered, or -errno from the kernel.
  int64_t Add(int fd, uint32_t interest, Mode mode);
  // Changes the interest; a disarmed registration is armed again. 0 or -errno.
  int Modify(int fd, uint32_t interest);
  // Arms again a registration disarmed by Disarm() or by a one-shot event.
  int Rearm(int fd);
  // Stops events for `fd` until Rearm()/Modify(); it stays registered.
  int Disarm(int fd);
  // Unregisters `fd` (it is not closed). 0, -ENOENT when not registered, or -errno.
  int Remove(int fd);
  // Remove() if registered, then close(fd). 0, -errno of close, or (the fd
  // closed all the same) -errno of the kernel's refusal to remove it.
  int CloseFd(int fd);
  // Makes the set readable so that a pending wait returns. Thread-safe.
  int Interrupt();

  // Waits up to `timeout_ms` (0: do not wait, -1: forever) and writes at most
  // `max_events` live events as (fd, gen, bits, read, at) into `out`, reading
  // ahead for the readable ones whose reader waits (read_ahead.h). Returns the
  // number of events, or -errno. `*woken` tells whether Interrupt() was seen.
  int Drain(int timeout_ms, int32_t* out, int max_events, bool* woken);

  const Registration* Find(int fd) const {
    return fd >= 0 && static_cast<size_t>(fd) < table_.size() && table_[fd].gen != 0 ? &table_[fd] : nullptr;
  }
  uint32_t registered() const { return registered_; }
  ReadAhead& read_ahead() { return read_ahead_; }

 private:
  // ---- implemented once per platform (poller_epoll.cc, poller_kqueue.cc) ----
  int OsOpen();
  void OsClose();
  // Install (add = true) or change the kernel registration of fd to `interest`
  // in `mode`, carrying `gen`. With interest 0 the fd stays in the set but
  // reports nothing (disarmed). `installed` is the interest the kernel holds
  // for fd now (kqueue has one filter per direction and must delete those no
  // longer wanted; a disarmed registration keeps its filters, disabled).
  int OsSet(int fd, uint32_t gen, uint32_t interest, Mode mode, bool add, uint32_t installed);
  int OsRemove(int fd, uint32_t interest);
  int OsWake();
  // Raw wait: fills raw_ with up to `max` (fd, gen, bits) triples, handles the
  // wake-up channel itself. Returns the count or -errno.
  int OsWait(int timeout_ms, int max, bool* woken);

  Registration* Slot(int fd);
  uint32_t NextGen();

  int backend_fd_ = -1;
  int wake_fd_ = -1;        // eventfd (Linux) or the read end of a pipe
  int wake_write_fd_ = -1;  // the write end of the pipe, or = wake_fd_
  uint32_t next_gen_ = 1;
  uint32_t registered_ = 0;
  std::vector<Registration> table_;   // indexed by fd
  std::vector<uint64_t> os_events_;   // kernel event buffer (epoll_event / kevent storage)
  std::vector<int32_t> raw_;          // (fd, gen, bits) before filtering
  int capacity_ = 0;
  ReadAhead read_ahead_;
};

}  // namespace bobbin

#endif  // BOBBIN_NATIVE_POLLER_H_
