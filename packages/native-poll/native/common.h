// Helpers shared by the addon's N-API bindings.
//
// Conventions of the whole addon:
// - Hot-path functions never throw for an operating-system failure: they return
//   a negative errno (-EAGAIN, -ECONNRESET, …) that the TypeScript layer turns
//   into a Node-style error (`code`, negative `errno`, `syscall`). Throwing and
//   catching costs far more than returning a number.
// - Misuse (a wrong argument type, an unknown fd in the poller, a bad slot id)
//   throws a TypeError/RangeError at once: those are bugs, not conditions.
// - Every binding runs on the thread of the N-API environment that created the
//   object; only Poller::Interrupt() may be called from another thread.
#ifndef BOBBIN_NATIVE_COMMON_H_
#define BOBBIN_NATIVE_COMMON_H_

#include <napi.h>

#include <cstdint>

namespace bobbin {

// A Node-style system error: message "<syscall> <CODE>", properties `code`
// ("EAGAIN"), `errno` (negative, as in Node) and `syscall`.
Napi::Error ErrnoError(Napi::Env env, int err, const char* syscall);

// A failed N-API call: throws an Error naming `call` and N-API's reason
// (unless a JavaScript exception is already pending, which then stands), and
// returns false. `code` is "ERR_BOBBIN_NAPI".
bool ThrowFailed(napi_env env, napi_status status, const char* call);

// Argument readers: they throw, naming the function and the argument, and
// return false (the caller returns at once) for a value that is not one the
// binding can use: a TypeError for a wrong type, a RangeError for a number
// that is NaN, not an integer, or outside [min, max]. Nothing is rounded or
// wrapped: NaN never becomes fd 0.
bool ArgInt(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name, int32_t min, int32_t max, int32_t* out);
// A file descriptor: an integer from 0 to INT32_MAX.
bool ArgFd(const Napi::CallbackInfo& info, size_t i, const char* fn, int32_t* out);
// An integer property `name` of `object` in [min, max], `fallback` when it is undefined.
bool IntField(Napi::Env env, Napi::Object object, const char* fn, const char* name, uint32_t min, uint32_t max, uint32_t fallback,
              uint32_t* out);
// A Buffer/TypedArray/DataView/ArrayBuffer argument: its bytes and length.
bool ArgBytes(const Napi::CallbackInfo& info, size_t i, const char* fn, uint8_t** data, size_t* len);
// Whether `v` is a typed array of exactly `type` (for memories shared with
// JavaScript, whose element size the binding relies on).
bool IsTypedArrayOf(Napi::Value v, napi_typedarray_type type);
// `off` and `len` within a buffer of `size` bytes (len < 0 means "to the end").
bool CheckRange(Napi::Env env, const char* fn, size_t size, int32_t off, int32_t* len);

}  // namespace bobbin

#endif  // BOBBIN_NATIVE_COMMON_H_
