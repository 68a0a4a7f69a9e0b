// The poller's read-ahead (see read_ahead.h).
#include "read_ahead.h"

#include <errno.h>

#include "check.h"
#include "raw_io.h"

namespace bobbin {

void ReadAhead::Install(uint8_t* area, size_t area_len, const int32_t* wants, size_t wants_len) {
  BOBBIN_CHECK((area != nullptr || area_len == 0) && (wants != nullptr || wants_len == 0));
  area_ = area;
  area_len_ = area == nullptr ? 0 : area_len;
  wants_ = area == nullptr ? nullptr : wants;
  wants_len_ = area == nullptr ? 0 : wants_len;
  used_ = 0;
}

void ReadAhead::Read(int fd, int32_t* result, int32_t* at) {
  BOBBIN_CHECK(fd >= 0 && result != nullptr && at != nullptr && used_ <= area_len_);
  *result = kNotRead;
  *at = 0;
  if (area_ == nullptr || static_cast<size_t>(fd) >= wants_len_) return;
  int32_t want = wants_[fd];
  size_t room = area_len_ - used_;
  if (want <= 0 || room == 0) return;
  size_t len = static_cast<size_t>(want) < room ? static_cast<size_t>(want) : room;
  ssize_t n;
  do n = SysRead(fd, area_ + used_, len);
  while (n < 0 && errno == EINTR);
  BOBBIN_CHECK(n <= static_cast<ssize_t>(len));
  *at = static_cast<int32_t>(used_);
  if (n < 0) {
    *result = -errno;
    return;
  }
  *result = static_cast<int32_t>(n);
  used_ += static_cast<size_t>(n);
}

}  // namespace bobbin
