// Sends queued by JavaScript and submitted together (see send_queue.h).
#include "send_queue.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "check.h"
#include "raw_io.h"

namespace bobbin {

namespace {

#if defined(__linux__)
constexpr int kSendFlags = MSG_NOSIGNAL;  // a peer gone is EPIPE, never SIGPIPE
#else
constexpr int kSendFlags = 0;
#endif

// One entry's send: bytes sent or -errno.
int32_t SendOne(int fd, const uint8_t* p, size_t len) {
  ssize_t n;
  do n = SysSend(fd, p, len, kSendFlags);
  while (n < 0 && errno == EINTR);
  return n < 0 ? -errno : static_cast<int32_t>(n);
}

}  // namespace

void SendQueue::Install(const uint8_t* staging, size_t staging_len, int32_t* queue, size_t queue_len) {
  BOBBIN_CHECK((staging != nullptr || staging_len == 0) && (queue != nullptr || queue_len == 0));
  staging_ = staging;
  staging_len_ = staging_len;
  queue_ = queue;
  capacity_ = queue_len < 1 ? 0 : (queue_len - 1) / kSendInts;
  if (queue_ != nullptr) queue_[0] = 0;
}

bool SendQueue::Blocked(int fd) const { return std::find(blocked_.begin(), blocked_.end(), fd) != blocked_.end(); }

int SendQueue::Submit() {
  if (queue_ == nullptr) return 0;
  int32_t count = queue_[0];
  if (count <= 0) return 0;
  if (static_cast<size_t>(count) > capacity_) count = static_cast<int32_t>(capacity_);
  blocked_.clear();
  for (int32_t* e = queue_ + 1; e < queue_ + 1 + count * kSendInts; e += kSendInts) {
    int fd = e[0];
    int64_t off = e[1], len = e[2];
    if (off < 0 || len <= 0 || static_cast<uint64_t>(off + len) > staging_len_) {
      e[3] = -EINVAL;
      continue;
    }
    if (Blocked(fd)) {
      e[3] = kNotSent;
      continue;
    }
    e[3] = SendOne(fd, staging_ + off, static_cast<size_t>(len));
    BOBBIN_CHECK(e[3] <= len);
    if (e[3] < len) blocked_.push_back(fd);
  }
  return count;
}

}  // namespace bobbin
