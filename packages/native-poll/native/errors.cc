// Node-style errors and argument checking for the bindings (see common.h).
#include <uv.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "common.h"

namespace bobbin {

Napi::Error ErrnoError(Napi::Env env, int err, const char* syscall) {
  if (err < 0) err = -err;
  char code[64];
  // uv_err_name_r, not uv_err_name: the latter leaks for unknown codes.
  // On Unix, libuv's error codes are the negated errno values.
  uv_err_name_r(-err, code, sizeof code);
  std::string message = std::string(syscall) + " " + code;
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  error.Set("errno", Napi::Number::New(env, -err));
  error.Set("syscall", Napi::String::New(env, syscall));
  return error;
}

bool ThrowFailed(napi_env env, napi_status status, const char* call) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (pending) return false;
  const napi_extended_error_info* info = nullptr;
  napi_get_last_error_info(env, &info);
  std::string message = std::string(call) + " failed: " +
                        (info != nullptr && info->error_message != nullptr ? info->error_message : "unknown N-API error") +
                        " (napi_status " + std::to_string(static_cast<int>(status)) + ")";
  napi_value msg, code, error;
  if (napi_create_string_utf8(env, message.c_str(), NAPI_AUTO_LENGTH, &msg) == napi_ok &&
      napi_create_string_utf8(env, "ERR_BOBBIN_NAPI", NAPI_AUTO_LENGTH, &code) == napi_ok &&
      napi_create_error(env, code, msg, &error) == napi_ok) {
    napi_throw(env, error);
  } else {
    napi_throw_error(env, "ERR_BOBBIN_NAPI", message.c_str());
  }
  return false;
}

namespace {

// `v` as an integer in [min, max], or a thrown error naming `what` ("fn: argument 2 (port)").
bool IntegerIn(napi_env env, napi_value v, const std::string& what, double min, double max, double* out) {
  napi_valuetype type = napi_undefined;
  napi_status s = napi_typeof(env, v, &type);
  if (s != napi_ok) return ThrowFailed(env, s, "napi_typeof");
  if (type != napi_number) {
    std::string msg = what + " must be a number";
    napi_throw_type_error(env, nullptr, msg.c_str());
    return false;
  }
  double d = 0;
  if (napi_get_value_double(env, v, &d) != napi_ok || !std::isfinite(d) || std::floor(d) != d || d < min || d > max) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s must be an integer from %.0f to %.0f, got %g", what.c_str(), min, max, d);
    napi_throw_range_error(env, nullptr, msg);
    return false;
  }
  *out = d;
  return true;
}

std::string Argument(const char* fn, size_t i, const char* name) {
  return std::string(fn) + ": argument " + std::to_string(i + 1) + " (" + name + ")";
}

}  // namespace

bool ArgInt(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name, int32_t min, int32_t max, int32_t* out) {
  double d;
  if (!IntegerIn(info.Env(), info[i], Argument(fn, i, name), min, max, &d)) return false;
  *out = static_cast<int32_t>(d);
  return true;
}

bool ArgFd(const Napi::CallbackInfo& info, size_t i, const char* fn, int32_t* out) {
  return ArgInt(info, i, fn, "fd", 0, INT32_MAX, out);
}

bool IntField(Napi::Env env, Napi::Object object, const char* fn, const char* name, uint32_t min, uint32_t max, uint32_t fallback,
              uint32_t* out) {
  Napi::Value v = object.Get(name);
  if (env.IsExceptionPending()) return false;
  if (v.IsUndefined()) {
    *out = fallback;
    return true;
  }
  double d;
  if (!IntegerIn(env, v, std::string(fn) + ": " + name, min, max, &d)) return false;
  *out = static_cast<uint32_t>(d);
  return true;
}

bool ArgBytes(const Napi::CallbackInfo& info, size_t i, const char* fn, uint8_t** data, size_t* len) {
  napi_env env = info.Env();
  napi_value v = info[i];
  bool is = false;
  void* p = nullptr;
  napi_typedarray_type type;
  size_t length = 0, offset = 0;
  napi_value ab;
  // The common case (a Buffer) in one call: napi_get_typedarray_info fails
  // with napi_invalid_arg for anything that is not a typed array.
  if (napi_get_typedarray_info(env, v, &type, &length, &p, &ab, &offset) == napi_ok) {
    size_t elem = 1;
    switch (type) {
      case napi_int16_array: case napi_uint16_array: elem = 2; break;
      case napi_int32_array: case napi_uint32_array: case napi_float32_array: elem = 4; break;
      case napi_float64_array: case napi_bigint64_array: case napi_biguint64_array: elem = 8; break;
      default: elem = 1;
    }
    *data = static_cast<uint8_t*>(p);
    *len = length * elem;
    return true;
  }
  if (napi_is_dataview(env, v, &is) == napi_ok && is) {
    napi_status s = napi_get_dataview_info(env, v, &length, &p, &ab, &offset);
    if (s != napi_ok) return ThrowFailed(env, s, "napi_get_dataview_info");
    *data = static_cast<uint8_t*>(p);
    *len = length;
    return true;
  }
  if (napi_is_arraybuffer(env, v, &is) == napi_ok && is) {
    napi_status s = napi_get_arraybuffer_info(env, v, &p, &length);
    if (s != napi_ok) return ThrowFailed(env, s, "napi_get_arraybuffer_info");
    *data = static_cast<uint8_t*>(p);
    *len = length;
    return true;
  }
  char msg[160];
  snprintf(msg, sizeof msg, "%s: argument %zu must be a Buffer, TypedArray, DataView or ArrayBuffer", fn, i + 1);
  Napi::TypeError::New(env, msg).ThrowAsJavaScriptException();
  return false;
}

bool IsTypedArrayOf(Napi::Value v, napi_typedarray_type type) {
  return v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == type;
}

bool CheckRange(Napi::Env env, const char* fn, size_t size, int32_t off, int32_t* len) {
  if (off < 0 || static_cast<size_t>(off) > size) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: offset %d is outside the buffer (%zu bytes)", fn, off, size);
    Napi::RangeError::New(env, msg).ThrowAsJavaScriptException();
    return false;
  }
  if (*len < 0) *len = static_cast<int32_t>(size - static_cast<size_t>(off));
  if (static_cast<size_t>(off) + static_cast<size_t>(*len) > size) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: offset %d + length %d is past the end of the buffer (%zu bytes)", fn, off, *len, size);
    Napi::RangeError::New(env, msg).ThrowAsJavaScriptException();
    return false;
  }
  return true;
}

}  // namespace bobbin
