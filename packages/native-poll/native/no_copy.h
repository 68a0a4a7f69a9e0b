// The base of a class that owns something the kernel or the process must
// release once (an epoll set, a ring, an arena's memory, a mapping): a copy
// would release it twice, so no such class can be copied or assigned.

#ifndef BOBBIN_NATIVE_NO_COPY_H_
#define BOBBIN_NATIVE_NO_COPY_H_

namespace bobbin {

class NoCopy {
 public:
  NoCopy(const NoCopy&) = delete;
  NoCopy& operator=(const NoCopy&) = delete;

 protected:
  NoCopy() = default;
  ~NoCopy() = default;
};

}  // namespace bobbin

#endif  // BOBBIN_NATIVE_NO_COPY_H_
