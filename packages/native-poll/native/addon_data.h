// Per-environment state of the addon (one per Node thread that loads it).
#ifndef BOBBIN_NATIVE_ADDON_DATA_H_
#define BOBBIN_NATIVE_ADDON_DATA_H_

#include <napi.h>

#include <atomic>
#include <cstdint>
#include <map>

#include "arena.h"

namespace bobbin {

struct ArenaRange {
  size_t bytes;
  ArenaPool* pool;
  uint32_t arena;
};

struct AddonData {
  // Every online arena of every pool of this thread, by base address, so that
  // a native write into any buffer can tell whether it is an arena slot and
  // check that slot's canary first (syscalls.cc). Arenas do not overlap.
  std::map<uintptr_t, ArenaRange> arenas;
  // Makes the error thrown for a bad slot: (kind, id, arena, slot, slotSize,
  // operation) => Error. Set from JavaScript by setArenaErrorFactory().
  Napi::FunctionReference arena_error_factory;
  // Whether this runtime accepts external ArrayBuffers (napi_create_external_
  // arraybuffer does not fail with napi_no_external_buffers_allowed).
  bool external_buffers = true;
};

AddonData* GetAddonData(Napi::Env env);

// How many arenas all threads' registries hold together, so that the hot
// path of every read skips the registry (and its N-API call) while no pool
// has memory. Relaxed: each thread only needs to see its own updates.
extern std::atomic<size_t> g_arena_count;

// Before native code writes [p, p + len): when it is arena memory, the range
// must be inside one allocated slot with an intact canary. Returns true when
// the write may go ahead; otherwise throws an error naming the slot.
bool CheckNativeWrite(Napi::Env env, const uint8_t* p, size_t len, const char* operation);

// Throws the error for a slot that failed a check (status from ArenaPool).
void ThrowArenaError(Napi::Env env, ArenaPool::Status status, uint32_t id, size_t slot_size, const char* operation);

Napi::Function DefinePoller(Napi::Env env);
Napi::Function DefineArenaPool(Napi::Env env);
void DefineSyscalls(Napi::Env env, Napi::Object exports);
#if defined(__linux__)
void DefineUring(Napi::Env env, Napi::Object exports);
#endif

}  // namespace bobbin

#endif  // BOBBIN_NATIVE_ADDON_DATA_H_
