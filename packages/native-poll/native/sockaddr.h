// Socket addresses between JavaScript and the kernel.
//
// JavaScript gives an address as (host, port) with a numeric IPv4 or IPv6 host
// (names are resolved in JavaScript first; an IPv6 host may carry a %scope),
// or as (path, -1) for a Unix socket (a leading NUL byte makes a Linux
// abstract socket). Addresses come back as Bobbin writes them: { host, port }
// or { path }.
#ifndef BOBBIN_NATIVE_SOCKADDR_H_
#define BOBBIN_NATIVE_SOCKADDR_H_

#include <napi.h>
#include <sys/socket.h>

namespace bobbin {

// What ParseAddress returns when it threw (a JavaScript error is pending).
constexpr int kAddressThrew = -0x7fffffff;

// Reads `host` (a string) and `port` into *ss. 0, or -EINVAL (not a
// numeric address / bad port), -ENAMETOOLONG (Unix path too long); or
// kAddressThrew, with a TypeError pending when `host` is not a string.
int ParseAddress(napi_env env, napi_value host, int32_t port, struct sockaddr_storage* ss, socklen_t* len);

// Sets host and port (or path) on `out`. napi_ok, or the status of the
// N-API call that failed (the caller throws it).
napi_status SetAddress(napi_env env, napi_value out, const struct sockaddr_storage* ss, socklen_t len);

}  // namespace bobbin

#endif  // BOBBIN_NATIVE_SOCKADDR_H_
