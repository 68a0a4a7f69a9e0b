// The poller's read-ahead: while draining a batch, the poller reads each
// ready fd that has a parked reader, so that JavaScript gets the bytes with
// the batch instead of crossing into C++ again for a read(2) per socket.
//
// JavaScript owns both memories and hands them over once (and again when it
// grows the table):
// - `wants`, indexed by fd: how many bytes the fd's first parked reader wants
//   (0: none, or it reads for itself). JavaScript keeps it up to date as
//   readers park and leave; C++ only reads it, during a drain.
// - `area`: where the reads of one batch land, one after the other. A batch's
//   bytes are valid until the next drain; JavaScript copies each socket's
//   bytes into its reader's buffer while it handles the batch.
//
// Invariants: a read never writes past the area, never reads more than the fd's
// `wants` entry, and happens only for an event whose registration is live (the
// caller filters stale generations first), so bytes are read only for a socket
// whose reader is parked right now.
#ifndef BOBBIN_NATIVE_READ_AHEAD_H_
#define BOBBIN_NATIVE_READ_AHEAD_H_

#include <cstddef>
#include <cstdint>

namespace bobbin {

// What an event's read slot says when no read was done (no reader wanted
// bytes, the event had no read bits, or the area was full).
constexpr int32_t kNotRead = INT32_MIN;

class ReadAhead {
 public:
  // Installs JavaScript's memories (area may be null: no read-ahead).
  void Install(uint8_t* area, size_t area_len, const int32_t* wants, size_t wants_len);
  // A new batch: the area is empty again.
  void Begin() { used_ = 0; }
  // For a live event of `fd` with readable bits: reads up to what its reader
  // wants (and what the area has left) into the area. Sets *result to the
  // bytes read, -errno, or kNotRead; *at to where they start in the area.
  void Read(int fd, int32_t* result, int32_t* at);

 private:
  uint8_t* area_ = nullptr;
  size_t area_len_ = 0;
  const int32_t* wants_ = nullptr;
  size_t wants_len_ = 0;
  size_t used_ = 0;
};

}  // namespace bobbin

#endif  // BOBBIN_NATIVE_READ_AHEAD_H_
