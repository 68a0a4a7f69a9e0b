// Raw non-blocking socket system calls for JavaScript.
//
// Every function returns a result ≥ 0 or a negative errno, never throws for an
// operating-system failure (common.h). Sockets are created non-blocking and
// close-on-exec. EINTR is retried, except for close (see Poller::CloseFd).
//
// Writes into memory (read, readv, recvfrom) first ask CheckNativeWrite
// whether the destination is an arena slot, and if so whether that slot is
// allocated, the range inside it and its canary intact: an overflow already
// done by someone else is reported naming the slot before the kernel writes
// more into it.
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <vector>

#include "addon_data.h"
#include "common.h"
#include "raw_io.h"
#include "sockaddr.h"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

namespace bobbin {

namespace {

#if defined(__linux__)
constexpr int kSendFlags = MSG_NOSIGNAL;
#else
constexpr int kSendFlags = 0;
#endif

inline Napi::Value Result(Napi::Env env, ssize_t r) {
  return Napi::Number::New(env, static_cast<double>(r < 0 ? -errno : r));
}

inline Napi::Value Int(Napi::Env env, int v) { return Napi::Number::New(env, v); }

// Arguments i and i + 1: an offset (≥ 0) and a length (≥ 0, or -1: to the end of the buffer).
bool ArgOffLen(const Napi::CallbackInfo& info, size_t i, const char* fn, int32_t* off, int32_t* len) {
  return ArgInt(info, i, fn, "offset", 0, INT32_MAX, off) && ArgInt(info, i + 1, fn, "length", -1, INT32_MAX, len);
}

#if !defined(__linux__)
int SetNonBlockCloexec(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return -errno;
  int fdfl = fcntl(fd, F_GETFD);
  if (fdfl < 0 || fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC) < 0) return -errno;
  return 0;
}

// A new fd made non-blocking and close-on-exec (and, for a socket, never
// raising SIGPIPE where the platform has SO_NOSIGPIPE): `fd`, or -errno with
// the fd closed.
int Prepared(int fd, bool socket) {
  int rc = SetNonBlockCloexec(fd);
#ifdef SO_NOSIGPIPE
  int one = 1;
  if (rc == 0 && socket && setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one) < 0) rc = -errno;
#endif
  if (rc < 0) {
    close(fd);
    return rc;
  }
  return fd;
}

// Both fds of a pair Prepared(), or -errno with both closed.
int PreparedPair(int fds[2], bool sockets) {
  int rc = Prepared(fds[0], sockets);
  if (rc < 0) {
    close(fds[1]);
    return rc;
  }
  rc = Prepared(fds[1], sockets);
  if (rc < 0) {
    close(fds[0]);
    return rc;
  }
  return 0;
}
#endif

int Family(int32_t f) {
  switch (f) {
    case 4: return AF_INET;
    case 6: return AF_INET6;
    case 1: return AF_UNIX;
    default: return -1;
  }
}

int SockType(int32_t t) {
  switch (t) {
    case 1: return SOCK_STREAM;
    case 2: return SOCK_DGRAM;
    default: return -1;
  }
}

// socket(family: 4 | 6 | 1, type: 1 stream | 2 dgram) → fd
Napi::Value Socket(const Napi::CallbackInfo& info) {
  int32_t family, type;
  if (!ArgInt(info, 0, "socket", "family", 0, INT32_MAX, &family) || !ArgInt(info, 1, "socket", "type", 0, INT32_MAX, &type)) {
    return Napi::Value();
  }
  int af = Family(family), st = SockType(type);
  if (af < 0 || st < 0) return Int(info.Env(), -EINVAL);
#if defined(__linux__)
  int fd = socket(af, st | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Int(info.Env(), -errno);
#else
  int fd = socket(af, st, 0);
  if (fd < 0) return Int(info.Env(), -errno);
  fd = Prepared(fd, true);
#endif
  return Int(info.Env(), fd);
}

// bind(fd, host | path, port | -1)
Napi::Value Bind(const Napi::CallbackInfo& info) {
  int32_t fd, port;
  if (!ArgFd(info, 0, "bind", &fd) || !ArgInt(info, 2, "bind", "port", -1, 65535, &port)) return Napi::Value();
  struct sockaddr_storage ss;
  socklen_t len;
  int rc = ParseAddress(info.Env(), info[1], port, &ss, &len);
  if (rc == kAddressThrew) return Napi::Value();
  if (rc < 0) return Int(info.Env(), rc);
  if (bind(fd, reinterpret_cast<struct sockaddr*>(&ss), len) < 0) return Int(info.Env(), -errno);
  return Int(info.Env(), 0);
}

Napi::Value Listen(const Napi::CallbackInfo& info) {
  int32_t fd, backlog;
  if (!ArgFd(info, 0, "listen", &fd) || !ArgInt(info, 1, "listen", "backlog", 0, INT32_MAX, &backlog)) return Napi::Value();
  return Int(info.Env(), listen(fd, backlog) < 0 ? -errno : 0);
}

// accept(fd, out?) → a new non-blocking, close-on-exec fd; the peer's address
// on `out` when given
Napi::Value Accept(const Napi::CallbackInfo& info) {
  int32_t fd;
  if (!ArgFd(info, 0, "accept", &fd)) return Napi::Value();
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  int c;
#if defined(__linux__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
  do c = accept4(fd, reinterpret_cast<struct sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  while (c < 0 && errno == EINTR);
  if (c < 0) return Int(info.Env(), -errno);
#else
  do c = accept(fd, reinterpret_cast<struct sockaddr*>(&ss), &len);
  while (c < 0 && errno == EINTR);
  if (c < 0) return Int(info.Env(), -errno);
  c = Prepared(c, true);
  if (c < 0) return Int(info.Env(), c);
#endif
  if (info.Length() > 1 && info[1].IsObject()) {
    napi_status s = SetAddress(info.Env(), info[1], &ss, len);
    if (s != napi_ok) {
      close(c);  // the connection is dropped rather than handed over without its address
      ThrowFailed(info.Env(), s, "napi_set_named_property");
      return Napi::Value();
    }
  }
  return Int(info.Env(), c);
}

// connect(fd, host | path, port | -1) → 0, or -EINPROGRESS (wait for writable,
// then socketError)
Napi::Value Connect(const Napi::CallbackInfo& info) {
  int32_t fd, port;
  if (!ArgFd(info, 0, "connect", &fd) || !ArgInt(info, 2, "connect", "port", -1, 65535, &port)) return Napi::Value();
  struct sockaddr_storage ss;
  socklen_t len;
  int rc = ParseAddress(info.Env(), info[1], port, &ss, &len);
  if (rc == kAddressThrew) return Napi::Value();
  if (rc < 0) return Int(info.Env(), rc);
  // EINTR: the connection goes on asynchronously, as with EINPROGRESS.
  if (connect(fd, reinterpret_cast<struct sockaddr*>(&ss), len) < 0) {
    return Int(info.Env(), errno == EINTR ? -EINPROGRESS : -errno);
  }
  return Int(info.Env(), 0);
}

// socketError(fd) → 0 or -(SO_ERROR)
Napi::Value SocketError(const Napi::CallbackInfo& info) {
  int32_t fd;
  if (!ArgFd(info, 0, "socketError", &fd)) return Napi::Value();
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return Int(info.Env(), -errno);
  return Int(info.Env(), -err);
}

// read(fd, buf, off, len) → bytes read (0: end of stream)
Napi::Value Read(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t fd, off, len;
  uint8_t* data;
  size_t size;
  if (!ArgFd(info, 0, "read", &fd) || !ArgBytes(info, 1, "read", &data, &size) || !ArgOffLen(info, 2, "read", &off, &len) ||
      !CheckRange(env, "read", size, off, &len) ||
      !CheckNativeWrite(env, data + off, static_cast<size_t>(len), "read")) {
    return Napi::Value();
  }
  ssize_t n;
  do n = SysRead(fd, data + off, static_cast<size_t>(len));
  while (n < 0 && errno == EINTR);
  return Result(env, n);
}

// write(fd, buf, off, len) → bytes written (maybe fewer than len)
Napi::Value Write(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t fd, off, len;
  uint8_t* data;
  size_t size;
  if (!ArgFd(info, 0, "write", &fd) || !ArgBytes(info, 1, "write", &data, &size) || !ArgOffLen(info, 2, "write", &off, &len) ||
      !CheckRange(env, "write", size, off, &len)) {
    return Napi::Value();
  }
  ssize_t n;
  // send() with MSG_NOSIGNAL: a peer that went away is EPIPE, never SIGPIPE,
  // even in an embedder that does not ignore the signal as Node does. Not a
  // socket (a pipe): plain write().
  do n = SysSend(fd, data + off, static_cast<size_t>(len), kSendFlags);
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == ENOTSOCK) {
    do n = write(fd, data + off, static_cast<size_t>(len));
    while (n < 0 && errno == EINTR);
  }
  return Result(env, n);
}

// Gathers an array of buffers into iovecs (at most IOV_MAX of them).
bool Iovecs(const Napi::CallbackInfo& info, const char* fn, bool destination, std::vector<struct iovec>* iov) {
  Napi::Env env = info.Env();
  if (!info[1].IsArray()) {
    Napi::TypeError::New(env, std::string(fn) + ": argument 2 must be an array of buffers").ThrowAsJavaScriptException();
    return false;
  }
  Napi::Array list = info[1].As<Napi::Array>();
  uint32_t count = list.Length();
  if (count > IOV_MAX) count = IOV_MAX;
  iov->resize(count);
  for (uint32_t i = 0; i < count; i++) {
    Napi::Value item = list.Get(i);
    if (!item.IsTypedArray()) {
      Napi::TypeError::New(env, std::string(fn) + ": every element must be a Buffer or TypedArray").ThrowAsJavaScriptException();
      return false;
    }
    Napi::TypedArray ta = item.As<Napi::TypedArray>();
    uint8_t* p = static_cast<uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
    size_t n = ta.ByteLength();
    if (destination && !CheckNativeWrite(env, p, n, fn)) return false;
    (*iov)[i].iov_base = p;
    (*iov)[i].iov_len = n;
  }
  return true;
}

// readv(fd, buffers) → bytes read into the buffers, in order
Napi::Value Readv(const Napi::CallbackInfo& info) {
  int32_t fd;
  std::vector<struct iovec> iov;
  if (!ArgFd(info, 0, "readv", &fd) || !Iovecs(info, "readv", true, &iov)) return Napi::Value();
  ssize_t n;
  do n = readv(fd, iov.data(), static_cast<int>(iov.size()));
  while (n < 0 && errno == EINTR);
  return Result(info.Env(), n);
}

// writev(fd, buffers) → bytes written from the buffers, in order
Napi::Value Writev(const Napi::CallbackInfo& info) {
  int32_t fd;
  std::vector<struct iovec> iov;
  if (!ArgFd(info, 0, "writev", &fd) || !Iovecs(info, "writev", false, &iov)) return Napi::Value();
  ssize_t n;
  do n = writev(fd, iov.data(), static_cast<int>(iov.size()));
  while (n < 0 && errno == EINTR);
  return Result(info.Env(), n);
}

// recvfrom(fd, buf, off, len, out?) → bytes; the sender's address on `out`
Napi::Value Recvfrom(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t fd, off, len;
  uint8_t* data;
  size_t size;
  if (!ArgFd(info, 0, "recvfrom", &fd) || !ArgBytes(info, 1, "recvfrom", &data, &size) || !ArgOffLen(info, 2, "recvfrom", &off, &len) ||
      !CheckRange(env, "recvfrom", size, off, &len) ||
      !CheckNativeWrite(env, data + off, static_cast<size_t>(len), "recvfrom")) {
    return Napi::Value();
  }
  struct sockaddr_storage ss;
  socklen_t slen = sizeof ss;
  ssize_t n;
  do n = recvfrom(fd, data + off, static_cast<size_t>(len), 0, reinterpret_cast<struct sockaddr*>(&ss), &slen);
  while (n < 0 && errno == EINTR);
  if (n < 0) return Int(env, -errno);
  if (info.Length() > 4 && info[4].IsObject()) {
    napi_status s = SetAddress(env, info[4], &ss, slen);
    if (s != napi_ok) {
      ThrowFailed(env, s, "napi_set_named_property");
      return Napi::Value();
    }
  }
  return Napi::Number::New(env, static_cast<double>(n));
}

// sendto(fd, buf, off, len, host | path, port | -1) → bytes sent
Napi::Value Sendto(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t fd, off, len, port;
  uint8_t* data;
  size_t size;
  if (!ArgFd(info, 0, "sendto", &fd) || !ArgBytes(info, 1, "sendto", &data, &size) || !ArgOffLen(info, 2, "sendto", &off, &len) ||
      !ArgInt(info, 5, "sendto", "port", -1, 65535, &port) || !CheckRange(env, "sendto", size, off, &len)) {
    return Napi::Value();
  }
  struct sockaddr_storage ss;
  socklen_t slen;
  int rc = ParseAddress(env, info[4], port, &ss, &slen);
  if (rc == kAddressThrew) return Napi::Value();
  if (rc < 0) return Int(env, rc);
  ssize_t n;
  do n = sendto(fd, data + off, static_cast<size_t>(len), kSendFlags, reinterpret_cast<struct sockaddr*>(&ss), slen);
  while (n < 0 && errno == EINTR);
  return Result(env, n);
}

// shutdown(fd, how: 0 read | 1 write | 2 both)
Napi::Value Shutdown(const Napi::CallbackInfo& info) {
  int32_t fd, how;
  if (!ArgFd(info, 0, "shutdown", &fd) || !ArgInt(info, 1, "shutdown", "how", 0, 2, &how)) return Napi::Value();
  int h = how == 0 ? SHUT_RD : how == 1 ? SHUT_WR : SHUT_RDWR;
  return Int(info.Env(), shutdown(fd, h) < 0 ? -errno : 0);
}

// close(fd). Not retried on EINTR: the fd is gone either way on Linux and the
// BSDs, and a retry could close an fd another thread just opened.
Napi::Value Close(const Napi::CallbackInfo& info) {
  int32_t fd;
  if (!ArgFd(info, 0, "close", &fd)) return Napi::Value();
  return Int(info.Env(), close(fd) < 0 && errno != EINTR ? -errno : 0);
}

// setsockopt(fd, level, name, value: int)
Napi::Value Setsockopt(const Napi::CallbackInfo& info) {
  int32_t fd, level, name, value;
  if (!ArgFd(info, 0, "setsockopt", &fd) || !ArgInt(info, 1, "setsockopt", "level", 0, INT32_MAX, &level) ||
      !ArgInt(info, 2, "setsockopt", "name", 0, INT32_MAX, &name) || !ArgInt(info, 3, "setsockopt", "value", INT32_MIN, INT32_MAX, &value)) {
    return Napi::Value();
  }
  int v = value;
  return Int(info.Env(), setsockopt(fd, level, name, &v, sizeof v) < 0 ? -errno : 0);
}

// getsockopt(fd, level, name) → the int value, or -errno
Napi::Value Getsockopt(const Napi::CallbackInfo& info) {
  int32_t fd, level, name;
  if (!ArgFd(info, 0, "getsockopt", &fd) || !ArgInt(info, 1, "getsockopt", "level", 0, INT32_MAX, &level) ||
      !ArgInt(info, 2, "getsockopt", "name", 0, INT32_MAX, &name)) {
    return Napi::Value();
  }
  int v = 0;
  socklen_t len = sizeof v;
  if (getsockopt(fd, level, name, &v, &len) < 0) return Int(info.Env(), -errno);
  return Int(info.Env(), v);
}

template <int (*Get)(int, struct sockaddr*, socklen_t*)>
Napi::Value SockName(const Napi::CallbackInfo& info, const char* fn) {
  int32_t fd;
  if (!ArgFd(info, 0, fn, &fd)) return Napi::Value();
  if (info.Length() < 2 || !info[1].IsObject()) {
    Napi::TypeError::New(info.Env(), std::string(fn) + "(fd, out): out must be an object").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  if (Get(fd, reinterpret_cast<struct sockaddr*>(&ss), &len) < 0) return Int(info.Env(), -errno);
  napi_status s = SetAddress(info.Env(), info[1], &ss, len);
  if (s != napi_ok) {
    ThrowFailed(info.Env(), s, "napi_set_named_property");
    return Napi::Value();
  }
  return Int(info.Env(), 0);
}

int GetSockName(int fd, struct sockaddr* sa, socklen_t* len) { return getsockname(fd, sa, len); }
int GetPeerName(int fd, struct sockaddr* sa, socklen_t* len) { return getpeername(fd, sa, len); }

Napi::Value Getsockname(const Napi::CallbackInfo& info) { return SockName<GetSockName>(info, "getsockname"); }
Napi::Value Getpeername(const Napi::CallbackInfo& info) { return SockName<GetPeerName>(info, "getpeername"); }

Napi::Value Pair(Napi::Env env, int a, int b) {
  Napi::Array arr = Napi::Array::New(env, 2);
  arr.Set(0u, Napi::Number::New(env, a));
  arr.Set(1u, Napi::Number::New(env, b));
  return arr;
}

// dup(fd) → a new fd for the same open file (flags such as O_NONBLOCK are
// shared), close-on-exec: fcntl(F_DUPFD_CLOEXEC); or -errno
Napi::Value Dup(const Napi::CallbackInfo& info) {
  int32_t fd;
  if (!ArgFd(info, 0, "dup", &fd)) return Napi::Value();
  int r;
  do {
    r = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  } while (r < 0 && errno == EINTR);
  return Int(info.Env(), r < 0 ? -errno : r);
}

// pipe() → [readFd, writeFd], both non-blocking and close-on-exec; or -errno
Napi::Value Pipe(const Napi::CallbackInfo& info) {
  int fds[2];
#if defined(__linux__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
  if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0) return Int(info.Env(), -errno);
#else
  if (pipe(fds) < 0) return Int(info.Env(), -errno);
  int rc = PreparedPair(fds, false);
  if (rc < 0) return Int(info.Env(), rc);
#endif
  return Pair(info.Env(), fds[0], fds[1]);
}

// socketpair(type: 1 stream | 2 dgram) → [a, b] (Unix domain); or -errno
Napi::Value Socketpair(const Napi::CallbackInfo& info) {
  int32_t type;
  if (!ArgInt(info, 0, "socketpair", "type", 0, INT32_MAX, &type)) return Napi::Value();
  int st = SockType(type);
  if (st < 0) return Int(info.Env(), -EINVAL);
  int fds[2];
#if defined(__linux__)
  if (socketpair(AF_UNIX, st | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) < 0) return Int(info.Env(), -errno);
#else
  if (socketpair(AF_UNIX, st, 0, fds) < 0) return Int(info.Env(), -errno);
  int rc = PreparedPair(fds, true);
  if (rc < 0) return Int(info.Env(), rc);
#endif
  return Pair(info.Env(), fds[0], fds[1]);
}

Napi::Value SetArenaErrorFactory(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsFunction()) {
    Napi::TypeError::New(info.Env(), "setArenaErrorFactory(fn) expects a function").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  GetAddonData(info.Env())->arena_error_factory = Napi::Persistent(info[0].As<Napi::Function>());
  return info.Env().Undefined();
}

}  // namespace

void DefineSyscalls(Napi::Env env, Napi::Object exports) {
  Napi::Object s = Napi::Object::New(env);
  s.Set("socket", Napi::Function::New<Socket>(env, "socket"));
  s.Set("bind", Napi::Function::New<Bind>(env, "bind"));
  s.Set("listen", Napi::Function::New<Listen>(env, "listen"));
  s.Set("accept", Napi::Function::New<Accept>(env, "accept"));
  s.Set("connect", Napi::Function::New<Connect>(env, "connect"));
  s.Set("socketError", Napi::Function::New<SocketError>(env, "socketError"));
  s.Set("read", Napi::Function::New<Read>(env, "read"));
  s.Set("write", Napi::Function::New<Write>(env, "write"));
  s.Set("readv", Napi::Function::New<Readv>(env, "readv"));
  s.Set("writev", Napi::Function::New<Writev>(env, "writev"));
  s.Set("recvfrom", Napi::Function::New<Recvfrom>(env, "recvfrom"));
  s.Set("sendto", Napi::Function::New<Sendto>(env, "sendto"));
  s.Set("shutdown", Napi::Function::New<Shutdown>(env, "shutdown"));
  s.Set("close", Napi::Function::New<Close>(env, "close"));
  s.Set("dup", Napi::Function::New<Dup>(env, "dup"));
  s.Set("setsockopt", Napi::Function::New<Setsockopt>(env, "setsockopt"));
  s.Set("getsockopt", Napi::Function::New<Getsockopt>(env, "getsockopt"));
  s.Set("getsockname", Napi::Function::New<Getsockname>(env, "getsockname"));
  s.Set("getpeername", Napi::Function::New<Getpeername>(env, "getpeername"));
  s.Set("pipe", Napi::Function::New<Pipe>(env, "pipe"));
  s.Set("socketpair", Napi::Function::New<Socketpair>(env, "socketpair"));
  exports.Set("syscalls", s);
  exports.Set("setArenaErrorFactory", Napi::Function::New<SetArenaErrorFactory>(env, "setArenaErrorFactory"));

  Napi::Object c = Napi::Object::New(env);
  c.Set("SOL_SOCKET", Napi::Number::New(env, SOL_SOCKET));
  c.Set("SO_REUSEADDR", Napi::Number::New(env, SO_REUSEADDR));
#ifdef SO_REUSEPORT
  c.Set("SO_REUSEPORT", Napi::Number::New(env, SO_REUSEPORT));
#endif
  c.Set("SO_KEEPALIVE", Napi::Number::New(env, SO_KEEPALIVE));
  c.Set("SO_BROADCAST", Napi::Number::New(env, SO_BROADCAST));
  c.Set("SO_RCVBUF", Napi::Number::New(env, SO_RCVBUF));
  c.Set("SO_SNDBUF", Napi::Number::New(env, SO_SNDBUF));
  c.Set("SO_ERROR", Napi::Number::New(env, SO_ERROR));
  c.Set("SO_TYPE", Napi::Number::New(env, SO_TYPE));
  c.Set("IPPROTO_TCP", Napi::Number::New(env, IPPROTO_TCP));
  c.Set("TCP_NODELAY", Napi::Number::New(env, TCP_NODELAY));
  c.Set("IPPROTO_IPV6", Napi::Number::New(env, IPPROTO_IPV6));
  c.Set("IPV6_V6ONLY", Napi::Number::New(env, IPV6_V6ONLY));
  exports.Set("sockopts", c);
}

}  // namespace bobbin
