// Memory the addon keeps pointers into and shows to JavaScript: the poller's
// batch, read-ahead area and table, and send queue; the ring's control block.
//
// The addon makes and owns it; JavaScript only gets a view. Where the
// runtime allows external ArrayBuffers, the memory is the addon's own
// allocation, shown through an external ArrayBuffer and freed only when
// both the addon and every ArrayBuffer showing it have let go: transferring
// or detaching the ArrayBuffer takes the view away from JavaScript, never the
// memory from under the addon's pointer. Where the runtime forbids external
// buffers (napi_no_external_buffers_allowed), the ArrayBuffer is an ordinary
// one that the addon makes and holds; a transfer moves its memory to another
// owner who may free it, so Usable() must be asked before each use and says
// whether it is still attached.
#ifndef BOBBIN_NATIVE_SHARED_AREA_H_
#define BOBBIN_NATIVE_SHARED_AREA_H_

#include <napi.h>

#include <cstddef>
#include <cstdint>

#include "no_copy.h"

namespace bobbin {

class SharedArea : NoCopy {
 public:
  SharedArea() = default;
  ~SharedArea() { Reset(); }

  // (Re)makes the area: `bytes` zeroed bytes (16-byte aligned), and the
  // ArrayBuffer that shows them in `*buffer`. The previous area is let go.
  // On failure: false, with a JavaScript error pending.
  bool Make(napi_env env, size_t bytes, napi_value* buffer);
  // Lets the area go (the ArrayBuffers showing it keep their memory).
  void Reset();

  uint8_t* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  // Whether native code may use the memory now: always for the addon's own
  // memory; for a runtime-owned ArrayBuffer, while it is not detached.
  bool Usable() const;

 private:
  struct alignas(16) Block;
  static void Release(Block* block);
  static void Finalize(napi_env env, void* data, void* hint);

  Block* block_ = nullptr;
  napi_env env_ = nullptr;
  napi_ref fallback_ = nullptr;  // the runtime-owned ArrayBuffer, when there is no block
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace bobbin

#endif  // BOBBIN_NATIVE_SHARED_AREA_H_
