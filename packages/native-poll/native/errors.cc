// Node-style errors and argument checking for the bindings (see common.h).
#include <uv.h>

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

bool ArgInt32(const Napi::CallbackInfo& info, size_t i, const char* fn, int32_t* out) {
  napi_value v = info[i];
  if (napi_get_value_int32(info.Env(), v, out) != napi_ok) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: argument %zu must be a number", fn, i + 1);
    Napi::TypeError::New(info.Env(), msg).ThrowAsJavaScriptException();
    return false;
  }
  return true;
}

bool ArgUint32(const Napi::CallbackInfo& info, size_t i, const char* fn, uint32_t* out) {
  napi_value v = info[i];
  if (napi_get_value_uint32(info.Env(), v, out) != napi_ok) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: argument %zu must be a non-negative number", fn, i + 1);
    Napi::TypeError::New(info.Env(), msg).ThrowAsJavaScriptException();
    return false;
  }
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
    napi_get_dataview_info(env, v, &length, &p, &ab, &offset);
    *data = static_cast<uint8_t*>(p);
    *len = length;
    return true;
  }
  if (napi_is_arraybuffer(env, v, &is) == napi_ok && is) {
    napi_get_arraybuffer_info(env, v, &p, &length);
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
