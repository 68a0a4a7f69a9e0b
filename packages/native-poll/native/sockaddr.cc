// Socket address parsing and formatting (see sockaddr.h).
#include "sockaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common.h"

namespace bobbin {

int ParseAddress(napi_env env, napi_value host, int32_t port, struct sockaddr_storage* ss, socklen_t* len) {
  char buf[256];
  size_t n = 0;
  napi_valuetype type = napi_undefined;
  if (napi_typeof(env, host, &type) != napi_ok || type != napi_string) {
    napi_throw_type_error(env, nullptr, "the address's host (or Unix path) must be a string");
    return kAddressThrew;
  }
  napi_status s = napi_get_value_string_utf8(env, host, buf, sizeof buf, &n);
  if (s != napi_ok) {
    ThrowFailed(env, s, "napi_get_value_string_utf8");
    return kAddressThrew;
  }
  memset(ss, 0, sizeof *ss);
  if (port == -1) {
    struct sockaddr_un* un = reinterpret_cast<struct sockaddr_un*>(ss);
    // napi truncates silently: a path that filled the buffer may be longer.
    if (n >= sizeof un->sun_path || n >= sizeof buf - 1) return -ENAMETOOLONG;
    if (n == 0) return -EINVAL;
    un->sun_family = AF_UNIX;
    memcpy(un->sun_path, buf, n);  // may start with NUL: a Linux abstract socket
    if (buf[0] == '\0') {
      *len = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + n);
    } else {
      un->sun_path[n] = '\0';
      *len = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + n + 1);
    }
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
    un->sun_len = static_cast<uint8_t>(*len);
#endif
    return 0;
  }
  if (port < 0 || port > 65535 || n >= sizeof buf - 1) return -EINVAL;
  struct sockaddr_in* in4 = reinterpret_cast<struct sockaddr_in*>(ss);
  if (inet_pton(AF_INET, buf, &in4->sin_addr) == 1) {
    in4->sin_family = AF_INET;
    in4->sin_port = htons(static_cast<uint16_t>(port));
    *len = sizeof *in4;
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
    in4->sin_len = sizeof *in4;
#endif
    return 0;
  }
  struct sockaddr_in6* in6 = reinterpret_cast<struct sockaddr_in6*>(ss);
  char* scope = strchr(buf, '%');
  if (scope != nullptr) *scope++ = '\0';
  if (inet_pton(AF_INET6, buf, &in6->sin6_addr) != 1) return -EINVAL;
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(static_cast<uint16_t>(port));
  if (scope != nullptr && *scope != '\0') {
    unsigned idx = if_nametoindex(scope);
    if (idx == 0) {
      char* end = nullptr;
      unsigned long v = strtoul(scope, &end, 10);
      if (end == scope || *end != '\0') return -EINVAL;
      idx = static_cast<unsigned>(v);
    }
    in6->sin6_scope_id = idx;
  }
  *len = sizeof *in6;
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
  in6->sin6_len = sizeof *in6;
#endif
  return 0;
}

static napi_status SetString(napi_env env, napi_value out, const char* key, const char* value, size_t n) {
  napi_value v;
  napi_status s = napi_create_string_utf8(env, value, n, &v);
  return s != napi_ok ? s : napi_set_named_property(env, out, key, v);
}

static napi_status SetInt(napi_env env, napi_value out, const char* key, int32_t value) {
  napi_value v;
  napi_status s = napi_create_int32(env, value, &v);
  return s != napi_ok ? s : napi_set_named_property(env, out, key, v);
}

napi_status SetAddress(napi_env env, napi_value out, const struct sockaddr_storage* ss, socklen_t len) {
  char text[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
  switch (ss->ss_family) {
    case AF_INET: {
      const struct sockaddr_in* in4 = reinterpret_cast<const struct sockaddr_in*>(ss);
      inet_ntop(AF_INET, &in4->sin_addr, text, sizeof text);
      napi_status s = SetString(env, out, "host", text, NAPI_AUTO_LENGTH);
      return s != napi_ok ? s : SetInt(env, out, "port", ntohs(in4->sin_port));
    }
    case AF_INET6: {
      const struct sockaddr_in6* in6 = reinterpret_cast<const struct sockaddr_in6*>(ss);
      inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
      if (in6->sin6_scope_id != 0) {
        size_t used = strlen(text);
        text[used++] = '%';
        if (if_indextoname(in6->sin6_scope_id, text + used) == nullptr) {
          snprintf(text + used, sizeof text - used, "%u", in6->sin6_scope_id);
        }
      }
      napi_status s = SetString(env, out, "host", text, NAPI_AUTO_LENGTH);
      return s != napi_ok ? s : SetInt(env, out, "port", ntohs(in6->sin6_port));
    }
    case AF_UNIX: {
      const struct sockaddr_un* un = reinterpret_cast<const struct sockaddr_un*>(ss);
      size_t off = offsetof(struct sockaddr_un, sun_path);
      size_t n = len > off ? len - off : 0;
      if (n > 0 && un->sun_path[0] != '\0') n = strnlen(un->sun_path, n);  // drop the trailing NUL
      return SetString(env, out, "path", un->sun_path, n);
    }
    default:
      return napi_ok;
  }
}

}  // namespace bobbin
