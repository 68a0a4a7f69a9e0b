// Sends queued by JavaScript and submitted together: the tasks of a slice
// stage their writes (bytes copied into a staging area, one entry per write)
// and the next call into the addon — the poller's drain, or a flush — sends
// them all, so that a batch of echoes costs one crossing, not one per send.
//
// JavaScript owns both memories and hands them over once:
// - `staging`: the bytes of the queued sends;
// - `queue`: queue[0] is the number of entries, then 4 int32s per entry:
//   fd, offset and length in `staging`, and the result, written here: bytes
//   sent, -errno, or kNotSent.
//
// Invariants: entries are sent in order, and once a send to an fd is short or
// fails, that fd's later entries of the same submission are not sent
// (kNotSent): JavaScript sends what is left, in order, when the fd is writable
// again. An entry that does not lie inside `staging` is refused (-EINVAL),
// never read out of bounds. Submit() leaves queue[0] for JavaScript to read
// the results by, and JavaScript empties the queue.
#ifndef BOBBIN_NATIVE_SEND_QUEUE_H_
#define BOBBIN_NATIVE_SEND_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bobbin {

// An entry's result when an earlier entry of its fd in the same submission
// was short or failed.
constexpr int32_t kNotSent = INT32_MIN;
constexpr int kSendInts = 4;

class SendQueue {
 public:
  void Install(const uint8_t* staging, size_t staging_len, int32_t* queue, size_t queue_len);
  // Sends every queued entry; returns how many there were.
  int Submit();

 private:
  bool Blocked(int fd) const;

  const uint8_t* staging_ = nullptr;
  size_t staging_len_ = 0;
  int32_t* queue_ = nullptr;
  size_t capacity_ = 0;  // entries
  std::vector<int> blocked_;  // fds whose send was short or failed in this submission
};

}  // namespace bobbin

#endif  // BOBBIN_NATIVE_SEND_QUEUE_H_
