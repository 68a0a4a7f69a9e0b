// Arena memory for Node, and the JavaScript class NativeArenaPool.
//
// Two kinds of memory (see arena.h):
// - MmapMemory: each arena is an anonymous private mapping, shown to
//   JavaScript as an external ArrayBuffer. Offline = madvise(MADV_DONTNEED)
//   (MADV_FREE on the BSDs): the mapping and its address stay, the pages go
//   back to the OS and fault back in as zeros. The mapping is unmapped only by
//   the ArrayBuffer's finalizer, i.e. once neither the pool nor any view of the
//   arena is reachable, so no JavaScript view can ever dangle.
// - JsMemory, for runtimes that forbid external buffers
//   (napi_no_external_buffers_allowed): each arena is an ordinary ArrayBuffer
//   made by the runtime. Offline = the pool lets go of it (JavaScript drops its
//   views too, told by release()); the runtime frees it when unreachable.
//
// Both register every online arena in the env's address registry
// (AddonData::arenas) so that native writes check the slot they land in.
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <random>
#include <string>

#include "addon_data.h"
#include "common.h"

namespace bobbin {

namespace {

size_t PageRound(size_t n) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

uint64_t RandomKey() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

void FinalizeMapping(napi_env /*env*/, void* data, void* hint) {
  munmap(data, reinterpret_cast<size_t>(hint));
}

class NodeMemory : public ArenaMemory {
 public:
  NodeMemory(napi_env env, AddonData* data) : env_(env), data_(data) {}
  void set_pool(ArenaPool* pool) { pool_ = pool; }

  // The ArrayBuffer holding an online arena (null when it has none, or when
  // N-API failed: its error is then pending).
  napi_value Buffer(const Arena* a) const {
    napi_value v = nullptr;
    if (a->memory_data == nullptr) return nullptr;
    napi_status s = napi_get_reference_value(env_, static_cast<napi_ref>(a->memory_data), &v);
    if (s != napi_ok) ThrowFailed(env_, s, "napi_get_reference_value");
    return v;
  }

  // Lets go of every arena: called when the pool is closed or collected.
  void Forget(std::vector<Arena*> arenas) {
    for (Arena* a : arenas) {
      Unregister(a);
      if (a->memory_data != nullptr) {
        napi_delete_reference(env_, static_cast<napi_ref>(a->memory_data));
        a->memory_data = nullptr;
      }
    }
  }

 protected:
  void Register(Arena* a, size_t bytes) {
    data_->arenas[reinterpret_cast<uintptr_t>(a->base)] = ArenaRange{bytes, pool_, a->index};
    g_arena_count.fetch_add(1, std::memory_order_relaxed);
  }
  void Unregister(Arena* a) {
    if (a->base != nullptr && data_->arenas.erase(reinterpret_cast<uintptr_t>(a->base)) != 0) {
      g_arena_count.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  napi_env env_;
  AddonData* data_;
  ArenaPool* pool_ = nullptr;
};

class MmapMemory final : public NodeMemory {
 public:
  using NodeMemory::NodeMemory;

  uint8_t* Obtain(Arena* a, size_t bytes) override {
    size_t mapped = PageRound(bytes);
    void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
    if (p == MAP_FAILED) {
      ErrnoError(env_, errno, "mmap").ThrowAsJavaScriptException();
      return nullptr;
    }
    napi_value ab;
    napi_status s = napi_create_external_arraybuffer(env_, p, bytes, FinalizeMapping, reinterpret_cast<void*>(mapped), &ab);
    if (s != napi_ok) {
      munmap(p, mapped);
      ThrowFailed(env_, s, "napi_create_external_arraybuffer");
      return nullptr;
    }
    napi_ref ref;
    if ((s = napi_create_reference(env_, ab, 1, &ref)) != napi_ok) {
      ThrowFailed(env_, s, "napi_create_reference");  // the ArrayBuffer, unreferenced, unmaps it when collected
      return nullptr;
    }
    a->memory_data = ref;
    a->base = static_cast<uint8_t*>(p);
    Register(a, bytes);
    return a->base;
  }

  void GiveBack(Arena* a, size_t bytes) override {
#if defined(__linux__)
    madvise(a->base, PageRound(bytes), MADV_DONTNEED);
#elif defined(MADV_FREE)
    madvise(a->base, PageRound(bytes), MADV_FREE);
#else
    posix_madvise(a->base, PageRound(bytes), POSIX_MADV_DONTNEED);
#endif
    // Stays registered: a write into a slot of an offline arena is a write
    // into a free slot, which CheckNativeWrite refuses.
  }

  bool KeepsMemory() const override { return true; }
};

class JsMemory final : public NodeMemory {
 public:
  using NodeMemory::NodeMemory;

  uint8_t* Obtain(Arena* a, size_t bytes) override {
    void* p = nullptr;
    napi_value ab;
    napi_status s = napi_create_arraybuffer(env_, bytes, &p, &ab);
    if (s == napi_ok && p == nullptr) s = napi_generic_failure;
    if (s != napi_ok) {
      ThrowFailed(env_, s, "napi_create_arraybuffer");
      return nullptr;
    }
    napi_ref ref;
    if ((s = napi_create_reference(env_, ab, 1, &ref)) != napi_ok) {
      ThrowFailed(env_, s, "napi_create_reference");
      return nullptr;
    }
    a->memory_data = ref;
    a->base = static_cast<uint8_t*>(p);
    Register(a, bytes);
    return a->base;
  }

  void GiveBack(Arena* a, size_t /*bytes*/) override {
    Unregister(a);
    napi_delete_reference(env_, static_cast<napi_ref>(a->memory_data));
    a->memory_data = nullptr;
  }

  bool KeepsMemory() const override { return false; }
};

class ArenaPoolWrap : public Napi::ObjectWrap<ArenaPoolWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "NativeArenaPool",
                       {
                           InstanceMethod<&ArenaPoolWrap::Alloc>("alloc"),
                           InstanceMethod<&ArenaPoolWrap::Release>("release"),
                           InstanceMethod<&ArenaPoolWrap::Check>("check"),
                           InstanceMethod<&ArenaPoolWrap::ArenaBuffer>("arenaBuffer"),
                           InstanceMethod<&ArenaPoolWrap::Stats>("stats"),
                           InstanceMethod<&ArenaPoolWrap::Resident>("residentBytes"),
                           InstanceMethod<&ArenaPoolWrap::Close>("close"),
                       });
  }

  // new NativeArenaPool(slotSize, maxArenas, memory: 0 auto | 1 mmap | 2 js)
  explicit ArenaPoolWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ArenaPoolWrap>(info) {
    Napi::Env env = info.Env();
    int32_t slot_size, max_arenas, mode;
    if (!ArgInt(info, 0, "NativeArenaPool", "slotSize", 1, 1 << 26, &slot_size) ||
        !ArgInt(info, 1, "NativeArenaPool", "maxArenas", 0, kMaxArenas, &max_arenas) ||
        !ArgInt(info, 2, "NativeArenaPool", "memory", 0, 2, &mode)) {
      return;
    }
    AddonData* data = GetAddonData(env);
    bool mmap_ok = data->external_buffers;
    if (mode == 1 && !mmap_ok) {
      Napi::Error::New(env, "NativeArenaPool: this runtime does not allow external buffers, so arenas cannot be mmap memory; use memory: \"auto\" or \"js\"")
          .ThrowAsJavaScriptException();
      return;
    }
    bool use_mmap = mode == 1 || (mode == 0 && mmap_ok);
    if (use_mmap) memory_ = new MmapMemory(env, data);
    else memory_ = new JsMemory(env, data);
    pool_ = new ArenaPool(slot_size, max_arenas, memory_, RandomKey());
    memory_->set_pool(pool_);
    mmap_ = use_mmap;
  }

  ~ArenaPoolWrap() override { Free(); }

 private:
  void Free() {
    if (pool_ == nullptr) return;
    std::vector<Arena*> all;
    for (uint32_t i = 0; i < pool_->arena_count(); i++) all.push_back(const_cast<Arena*>(pool_->ArenaAt(i)));
    memory_->Forget(all);
    delete pool_;
    delete memory_;
    pool_ = nullptr;
    memory_ = nullptr;
  }

  bool Live(const Napi::CallbackInfo& info) {
    if (pool_ != nullptr) return true;
    Napi::Error e = Napi::Error::New(info.Env(), "the arena pool is closed");
    e.Set("code", Napi::String::New(info.Env(), "ERR_BOBBIN_POOL_CLOSED"));
    e.ThrowAsJavaScriptException();
    return false;
  }

  // alloc() → id ≥ 0; -1 full (at the cap); -2 out of memory; -3 - id when the
  // slot's arena has new memory (JavaScript must fetch arenaBuffer again).
  Napi::Value Alloc(const Napi::CallbackInfo& info) {
    if (!Live(info)) return Napi::Value();
    bool fresh = false;
    int64_t id = pool_->Alloc(&fresh);
    if (id == -2 && info.Env().IsExceptionPending()) return Napi::Value();  // mmap or N-API failed: its error
    if (id >= 0 && fresh) id = -3 - id;
    return Napi::Number::New(info.Env(), static_cast<double>(id));
  }

  bool SlotId(const Napi::CallbackInfo& info, const char* fn, uint32_t* id) {
    int32_t v;
    if (!ArgInt(info, 0, fn, "id", 0, INT32_MAX, &v)) return false;
    *id = static_cast<uint32_t>(v);
    return true;
  }

  // release(id) → index of an arena that went offline, or -1. Throws (after
  // freeing the slot) when its canary was clobbered; throws for a slot that
  // is not allocated.
  Napi::Value Release(const Napi::CallbackInfo& info) {
    uint32_t id;
    if (!Live(info) || !SlotId(info, "pool.release", &id)) return Napi::Value();
    int32_t offlined = -1;
    ArenaPool::Status s = pool_->Release(id, &offlined);
    if (s != ArenaPool::kOk) {
      ThrowArenaError(info.Env(), s, id, pool_->slot_size(), "release");
      return Napi::Value();
    }
    return Napi::Number::New(info.Env(), offlined);
  }

  // check(id): throws like release() would, without freeing.
  Napi::Value Check(const Napi::CallbackInfo& info) {
    uint32_t id;
    if (!Live(info) || !SlotId(info, "pool.check", &id)) return Napi::Value();
    ArenaPool::Status s = pool_->Check(id);
    if (s != ArenaPool::kOk) {
      ThrowArenaError(info.Env(), s, id, pool_->slot_size(), "check");
      return Napi::Value();
    }
    return info.Env().Undefined();
  }

  Napi::Value ArenaBuffer(const Napi::CallbackInfo& info) {
    int32_t index;
    if (!Live(info) || !ArgInt(info, 0, "pool.arenaBuffer", "index", 0, INT32_MAX, &index)) return Napi::Value();
    const Arena* a = pool_->ArenaAt(index);
    napi_value v = a == nullptr ? nullptr : memory_->Buffer(a);
    if (info.Env().IsExceptionPending()) return Napi::Value();
    if (v == nullptr) return info.Env().Undefined();
    return Napi::Value(info.Env(), v);
  }

  Napi::Value Stats(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    if (pool_ == nullptr) return o;
    o.Set("slotSize", Napi::Number::New(env, static_cast<double>(pool_->slot_size())));
    o.Set("stride", Napi::Number::New(env, static_cast<double>(pool_->stride())));
    o.Set("arenaBytes", Napi::Number::New(env, static_cast<double>(pool_->arena_bytes())));
    o.Set("arenas", Napi::Number::New(env, pool_->arena_count()));
    o.Set("online", Napi::Number::New(env, pool_->online_count()));
    o.Set("inUse", Napi::Number::New(env, pool_->in_use()));
    o.Set("maxArenas", Napi::Number::New(env, pool_->max_arenas()));
    o.Set("memory", Napi::String::New(env, mmap_ ? "mmap" : "js"));
    return o;
  }

  // residentBytes(): bytes of arena memory in RAM right now, by mincore(2) for
  // mmap arenas (what madvise gave back is not counted), or the online
  // arenas' size for JS-owned memory.
  Napi::Value Resident(const Napi::CallbackInfo& info) {
    if (!Live(info)) return Napi::Value();
    double total = 0;
    if (!mmap_) {
      total = static_cast<double>(pool_->online_count()) * static_cast<double>(pool_->arena_bytes());
      return Napi::Number::New(info.Env(), total);
    }
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t mapped = PageRound(pool_->arena_bytes());
    std::vector<unsigned char> vec(mapped / page);
    for (uint32_t i = 0; i < pool_->arena_count(); i++) {
      const Arena* a = pool_->ArenaAt(i);
      if (a->base == nullptr) continue;
#if defined(__linux__)
      int rc = mincore(a->base, mapped, vec.data());
#else
      int rc = mincore(reinterpret_cast<caddr_t>(a->base), mapped, reinterpret_cast<char*>(vec.data()));
#endif
      if (rc != 0) {
        ErrnoError(info.Env(), errno, "mincore").ThrowAsJavaScriptException();
        return Napi::Value();
      }
      for (unsigned char c : vec) {
        if (c & 1) total += static_cast<double>(page);
      }
    }
    return Napi::Number::New(info.Env(), total);
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    Free();
    return info.Env().Undefined();
  }

  ArenaPool* pool_ = nullptr;
  NodeMemory* memory_ = nullptr;
  bool mmap_ = false;
};

const char* KindOf(ArenaPool::Status status) {
  switch (status) {
    case ArenaPool::kCanaryClobbered: return "overflow";
    case ArenaPool::kNotAllocated: return "not-allocated";
    default: return "out-of-bounds";
  }
}

}  // namespace

void ThrowArenaError(Napi::Env env, ArenaPool::Status status, uint32_t id, size_t slot_size, const char* operation) {
  AddonData* data = GetAddonData(env);
  uint32_t arena = id / kSlotsPerArena, slot = id % kSlotsPerArena;
  if (!data->arena_error_factory.IsEmpty()) {
    napi_value argv[6] = {
        Napi::String::New(env, KindOf(status)), Napi::Number::New(env, id),   Napi::Number::New(env, arena),
        Napi::Number::New(env, slot),           Napi::Number::New(env, static_cast<double>(slot_size)),
        Napi::String::New(env, operation),
    };
    napi_value error;
    if (napi_call_function(env, env.Undefined(), data->arena_error_factory.Value(), 6, argv, &error) == napi_ok) {
      napi_throw(env, error);
    }
    return;  // the factory threw: that exception is pending
  }
  std::string msg = std::string("arena slot ") + std::to_string(slot) + " of arena " + std::to_string(arena) + ": " + KindOf(status) +
                    " (" + operation + ")";
  Napi::Error::New(env, msg).ThrowAsJavaScriptException();
}

std::atomic<size_t> g_arena_count{0};

bool CheckNativeWrite(Napi::Env env, const uint8_t* p, size_t len, const char* operation) {
  if (g_arena_count.load(std::memory_order_relaxed) == 0) return true;
  AddonData* data = GetAddonData(env);
  if (data->arenas.empty()) return true;
  auto it = data->arenas.upper_bound(reinterpret_cast<uintptr_t>(p));
  if (it == data->arenas.begin()) return true;
  --it;
  uintptr_t base = it->first;
  if (reinterpret_cast<uintptr_t>(p) >= base + it->second.bytes) return true;  // not arena memory
  uint32_t id = 0;
  ArenaPool::Status s = it->second.pool->CheckWrite(it->second.arena, p, len, &id);
  if (s == ArenaPool::kOk) return true;
  ThrowArenaError(env, s, id, it->second.pool->slot_size(), operation);
  return false;
}

Napi::Function DefineArenaPool(Napi::Env env) { return ArenaPoolWrap::Define(env); }

}  // namespace bobbin
