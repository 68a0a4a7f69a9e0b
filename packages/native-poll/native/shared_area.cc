// Memory the addon owns and shows to JavaScript (see shared_area.h).
#include "shared_area.h"

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "addon_data.h"
#include "check.h"
#include "common.h"

namespace bobbin {

// The header of the addon's own memory: references from the SharedArea and
// from the external ArrayBuffer that shows it; the bytes follow.
struct alignas(16) SharedArea::Block {
  std::atomic<int> refs{2};
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(this + 1); }
};

void SharedArea::Release(Block* block) {
  int held = block->refs.fetch_sub(1, std::memory_order_acq_rel);
  BOBBIN_CHECK(held >= 1);
  if (held != 1) return;
  block->~Block();
  free(block);
}

void SharedArea::Finalize(napi_env /*env*/, void* /*data*/, void* hint) { Release(static_cast<Block*>(hint)); }

bool SharedArea::Make(napi_env env, size_t bytes, napi_value* buffer) {
  Reset();
  env_ = env;
  if (!GetAddonData(env)->external_buffers) {
    void* p = nullptr;
    napi_status s = napi_create_arraybuffer(env, bytes, &p, buffer);
    if (s != napi_ok) return ThrowFailed(env, s, "napi_create_arraybuffer");
    s = napi_create_reference(env, *buffer, 1, &fallback_);
    if (s != napi_ok) return ThrowFailed(env, s, "napi_create_reference");
    data_ = static_cast<uint8_t*>(p);
    bytes_ = bytes;
    return true;
  }
  void* mem = calloc(1, sizeof(Block) + bytes);
  if (mem == nullptr) {
    Napi::Error::New(env, "the addon could not allocate " + std::to_string(bytes) + " bytes of shared memory").ThrowAsJavaScriptException();
    return false;
  }
  Block* block = new (mem) Block();
  napi_status s = napi_create_external_arraybuffer(env, block->bytes(), bytes, Finalize, block, buffer);
  if (s != napi_ok) {
    // No ArrayBuffer holds it: the last reference is the area's.
    block->refs.store(1, std::memory_order_relaxed);
    Release(block);
    return ThrowFailed(env, s, "napi_create_external_arraybuffer");
  }
  block_ = block;
  data_ = block->bytes();
  bytes_ = bytes;
  return true;
}

void SharedArea::Reset() {
  if (block_ != nullptr) Release(block_);
  if (fallback_ != nullptr) napi_delete_reference(env_, fallback_);
  block_ = nullptr;
  fallback_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
}

bool SharedArea::Usable() const {
  if (fallback_ == nullptr) return true;  // the addon's own memory, or none
  napi_value buffer;
  bool detached = true;
  if (napi_get_reference_value(env_, fallback_, &buffer) != napi_ok || buffer == nullptr) return false;
  if (napi_is_detached_arraybuffer(env_, buffer, &detached) != napi_ok) return false;
  return !detached;
}

}  // namespace bobbin
