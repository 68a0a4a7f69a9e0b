// The io_uring ring of the uring backend (Linux), with raw system calls (no
// liburing).
//
// This part knows nothing of Node. It sets the ring up, owns its memory and
// its wake-up eventfd, submits, and tears down; the queues themselves are
// driven from JavaScript through shared memory (uring_node.cc shows every
// region to JavaScript as an external ArrayBuffer):
// - JavaScript writes SQEs straight into the SQE array and advances its own
//   copy of the SQ tail; Submit(tail) publishes that tail and enters the ring
//   once for everything written since the last call.
// - JavaScript reads CQEs straight from the CQ ring and advances its head.
// - JavaScript gives provided buffers back to the buffer ring (one group,
//   kBufferGroup) by writing an entry and storing the ring's tail.
// - JavaScript copies outgoing bytes into the staging area, whose slots are
//   what SEND requests point at: the kernel never reads JavaScript's own
//   memory, so a cancelled write cannot leave the kernel reading a buffer
//   that JavaScript has reused or freed.
//
// Invariants:
// - The SQ index array is the identity (array[i] = i), written once: SQE i is
//   always at index i, so JavaScript never touches the array.
// - The ring is entered only from the thread that made it
//   (IORING_SETUP_SINGLE_ISSUER where the kernel has it).
// - Memory outlives the ring: every region is a Mapping, released by the Ring
//   and by the ArrayBuffer that shows it, and unmapped at the last release.
//   Close() cancels every request in flight and waits (bounded) for the
//   cancellation before closing the ring, so the kernel is done with the
//   buffers and the staging area before they can be unmapped.
#ifndef BOBBIN_NATIVE_URING_H_
#define BOBBIN_NATIVE_URING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "no_copy.h"

namespace bobbin {

// A region of memory shared by the ring and JavaScript, unmapped at the last Release().
struct Mapping {
  uint8_t* base = nullptr;
  size_t bytes = 0;  // what JavaScript sees
  size_t mapped = 0;  // what was mapped (a whole number of pages)
  std::atomic<int> refs{1};

  // An anonymous private mapping of at least `bytes`, or nullptr (errno set).
  static Mapping* Anonymous(size_t bytes);
  // A mapping of the ring's fd at `offset` (IORING_OFF_*), or nullptr (errno set).
  static Mapping* OfRing(int ring_fd, size_t bytes, uint64_t offset);
  void Retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void Release();
};

// How the kernel runs completion work for us (IORING_SETUP_*_TASKRUN).
enum class TaskRun : uint8_t {
  kAuto = 0,    // kDefer where the kernel has it (6.1), else kCoop
  kDefer = 1,   // DEFER_TASKRUN + SINGLE_ISSUER: only when we enter the ring
  kCoop = 2,    // COOP_TASKRUN: at our next transition into the kernel, no interrupt
  kSignal = 3,  // neither: the kernel interrupts the thread to run it
};

struct UringConfig {
  uint32_t entries = 1024;        // SQ entries; the CQ has 4 times as many
  uint32_t buffers = 512;         // provided buffers (a power of two ≤ 32768)
  uint32_t buffer_size = 16384;   // bytes each
  uint32_t staging = 256;         // staging slots for sends
  uint32_t staging_size = 16384;  // bytes each
  TaskRun task_run = TaskRun::kAuto;
};

// Byte offsets into the ring mapping (both queues share it: IORING_FEAT_SINGLE_MMAP).
struct UringLayout {
  uint32_t sq_head, sq_tail, sq_mask, sq_entries, sq_flags;
  uint32_t cq_head, cq_tail, cq_mask, cq_entries, cqes, cq_flags;
};

constexpr uint16_t kBufferGroup = 0;
// Byte offset of the buffer ring's tail (a uint16 overlaying the first entry's `resv`).
constexpr uint32_t kBufferRingTail = 14;

class Ring : NoCopy {
 public:
  Ring() = default;
  ~Ring();

  // Sets everything up. 0, or -errno with `*step` naming what failed.
  int Open(const UringConfig& config, std::string* step);
  // Cancels what is in flight, waits for that (up to a second), closes the
  // ring and the eventfd, releases the Ring's hold on the memory. Idempotent.
  void Close();
  bool IsOpen() const { return fd_ >= 0; }

  // Publishes `tail` (JavaScript's SQ tail) and enters the ring once: submits
  // what was written since the last call and runs pending completion work
  // (IORING_ENTER_GETEVENTS), without waiting. Returns the number of SQEs
  // submitted, or -errno (EBUSY: the CQ is full, reap and call again).
  int Submit(uint32_t tail);
  // CQEs are waiting in the CQ ring.
  bool CompletionsWaiting() const;
  // CQEs are waiting, or the kernel holds completion work or overflowed CQEs for us.
  bool CompletionsPending() const;
  // SQEs up to `tail` are not submitted yet, or the kernel holds work that only entering runs.
  bool EntryNeeded(uint32_t tail) const;
  // Turns the eventfd's signals off while we reap and submit ourselves (IORING_CQ_EVENTFD_DISABLED).
  void SetNotifications(bool on);

  // The eventfd the kernel signals when completion work arrives: what Node's loop watches.
  int wake_fd() const { return wake_fd_; }
  // Resets the eventfd after Node's loop reported it readable. 0 or -errno.
  int ResetWakeup();
  // Makes the eventfd readable, so that Node's loop calls back soon. 0 or -errno.
  int Wake();

  uint32_t setup_flags() const { return setup_flags_; }
  const UringLayout& layout() const { return layout_; }
  const UringConfig& config() const { return config_; }
  Mapping* rings() const { return rings_; }
  Mapping* sqes() const { return sqes_; }
  Mapping* buffer_ring() const { return buffer_ring_; }
  Mapping* buffers() const { return buffers_; }
  Mapping* staging() const { return staging_; }

 private:
  int Setup(uint32_t flags);
  int MapRings();
  int RegisterBuffers();
  void RegisterRingFd();
  void CancelEverything();
  uint32_t Load(uint32_t offset) const;

  int fd_ = -1;
  // What io_uring_enter is given: the fd, or its registered index with IORING_ENTER_REGISTERED_RING.
  int enter_fd_ = -1;
  uint32_t enter_flags_ = 0;
  int wake_fd_ = -1;
  uint32_t setup_flags_ = 0;
  UringConfig config_;
  UringLayout layout_{};
  uint32_t sq_array_offset_ = 0;
  size_t rings_bytes_ = 0;
  Mapping* rings_ = nullptr;
  Mapping* sqes_ = nullptr;
  Mapping* buffer_ring_ = nullptr;
  Mapping* buffers_ = nullptr;
  Mapping* staging_ = nullptr;
};

// Whether the backend can work here: "" when it can, otherwise why not (no
// io_uring in the kernel, disabled by sysctl or seccomp, a kernel too old for
// multishot accept/recv or provided-buffer rings). Runs once per process; later
// calls return the first answer. `*flags` gets the setup flags a ring would use.
std::string UringProbe(uint32_t* flags);

}  // namespace bobbin

#endif  // BOBBIN_NATIVE_URING_H_
