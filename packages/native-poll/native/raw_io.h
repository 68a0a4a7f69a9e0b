// read(2) and send(2) as the hot paths call them (the syscalls binding and the
// poller's read-ahead): without glibc's cancellation-point bookkeeping (an
// enable/disable pair around every call in a threaded process, as much work as
// the wrapper itself), since Node never cancels its threads.
#ifndef BOBBIN_NATIVE_RAW_IO_H_
#define BOBBIN_NATIVE_RAW_IO_H_

#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

namespace bobbin {

#if defined(__linux__)
inline ssize_t SysRead(int fd, void* p, size_t n) { return syscall(SYS_read, fd, p, n); }
inline ssize_t SysSend(int fd, const void* p, size_t n, int flags) { return syscall(SYS_sendto, fd, p, n, flags, nullptr, 0); }
#else
inline ssize_t SysRead(int fd, void* p, size_t n) { return read(fd, p, n); }
inline ssize_t SysSend(int fd, const void* p, size_t n, int flags) { return send(fd, p, n, flags); }
#endif

}  // namespace bobbin

#endif  // BOBBIN_NATIVE_RAW_IO_H_
