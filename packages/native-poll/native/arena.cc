// The arena allocator (see arena.h for the design and invariants).
#include "arena.h"

#include <cstring>

#include "check.h"

namespace bobbin {

namespace {

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

inline int LowestSet(uint64_t x) { return __builtin_ctzll(x); }

// Slots start 16-byte aligned (64 when they are at least 1 KiB, for memcpy and
// cache lines); the canary sits right after the slot's bytes.
size_t StrideFor(size_t slot_size) {
  size_t align = slot_size >= 1024 ? 64 : 16;
  return RoundUp(RoundUp(slot_size, 8) + kCanaryBytes, align);
}

}  // namespace

ArenaPool::ArenaPool(size_t slot_size, uint32_t max_arenas, ArenaMemory* memory, uint64_t key)
    : slot_size_(slot_size),
      canary_offset_(RoundUp(slot_size, 8)),
      stride_(StrideFor(slot_size)),
      arena_bytes_(StrideFor(slot_size) * kSlotsPerArena),
      max_arenas_(max_arenas),
      memory_(memory),
      key_(key | 1) {}

uint64_t ArenaPool::CanaryFor(const uint8_t* slot) const {
  // Unique per slot and unpredictable across runs: the key is random and the
  // address is randomised by ASLR. The multiply spreads the address bits.
  uint64_t x = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(slot)) * 0x9e3779b97f4a7c15ull;
  return (x ^ (x >> 29)) ^ key_;
}

void ArenaPool::WriteCanary(uint8_t* slot) const {
  uint64_t c = CanaryFor(slot);
  memcpy(slot + canary_offset_, &c, sizeof c);
}

bool ArenaPool::CanaryIntact(const uint8_t* slot) const {
  uint64_t c;
  memcpy(&c, slot + canary_offset_, sizeof c);
  return c == CanaryFor(slot);
}

bool ArenaPool::full() const {
  if (!nonfull_.empty() || !offline_.empty()) return false;
  return max_arenas_ != 0 && arenas_.size() >= max_arenas_;
}

void ArenaPool::PushNonfull(Arena* a) {
  BOBBIN_CHECK(a != nullptr && a->index < arenas_.size() && a->online && a->free != 0);
  if (a->nonfull_pos >= 0) return;
  a->nonfull_pos = static_cast<int32_t>(nonfull_.size());
  nonfull_.push_back(a->index);
}

void ArenaPool::DropNonfull(Arena* a) {
  BOBBIN_CHECK(a != nullptr && a->index < arenas_.size());
  if (a->nonfull_pos < 0) return;
  uint32_t last = nonfull_.back();
  nonfull_[a->nonfull_pos] = last;
  arenas_[last].nonfull_pos = a->nonfull_pos;
  nonfull_.pop_back();
  a->nonfull_pos = -1;
}

void ArenaPool::TakeOffline(Arena* a) {
  BOBBIN_CHECK(a != nullptr && a->index < arenas_.size() && a->online && a->free == kAllFree);
  DropNonfull(a);
  memory_->GiveBack(a, arena_bytes_);
  if (!memory_->KeepsMemory()) a->base = nullptr;
  a->online = false;
  online_--;
  offline_.push_back(a->index);
}

int64_t ArenaPool::Alloc(bool* new_memory) {
  *new_memory = false;
  Arena* a = nullptr;
  if (preferred_ >= 0) {
    Arena* p = &arenas_[preferred_];
    if (p->online && p->free != 0) a = p;
  }
  if (a == nullptr && !nonfull_.empty()) {
    a = &arenas_[nonfull_.back()];
  }
  if (a == nullptr && !offline_.empty()) {
    Arena* o = &arenas_[offline_.back()];
    if (!memory_->KeepsMemory()) {
      o->base = memory_->Obtain(o, arena_bytes_);
      if (o->base == nullptr) return -2;
      *new_memory = true;
    }
    offline_.pop_back();
    o->online = true;
    online_++;
    PushNonfull(o);
    a = o;
  }
  if (a == nullptr) {
    if (max_arenas_ != 0 && arenas_.size() >= max_arenas_) return -1;
    if (arenas_.size() >= static_cast<size_t>(kMaxArenas)) return -2;
    // arenas_ may reallocate: re-take pointers after this point.
    arenas_.emplace_back();
    Arena* n = &arenas_.back();
    n->index = static_cast<uint32_t>(arenas_.size() - 1);
    n->base = memory_->Obtain(n, arena_bytes_);
    if (n->base == nullptr) {
      arenas_.pop_back();
      return -2;
    }
    *new_memory = true;
    n->online = true;
    online_++;
    PushNonfull(n);
    a = n;
  }
  BOBBIN_CHECK(a->online && a->base != nullptr && a->free != 0);
  preferred_ = a->index;
  if (last_empty_ == static_cast<int64_t>(a->index)) last_empty_ = -1;
  int slot = LowestSet(a->free);
  a->free &= ~(1ull << slot);
  if (a->free == 0) DropNonfull(a);
  in_use_++;
  WriteCanary(a->base + static_cast<size_t>(slot) * stride_);
  return static_cast<int64_t>(a->index) * kSlotsPerArena + slot;
}

ArenaPool::Status ArenaPool::Check(uint32_t id) const {
  uint32_t ai = id / kSlotsPerArena;
  uint32_t slot = id % kSlotsPerArena;
  if (ai >= arenas_.size()) return kBadId;
  const Arena& a = arenas_[ai];
  if (!a.online || (a.free & (1ull << slot)) != 0) return kNotAllocated;
  return CanaryIntact(a.base + slot * stride_) ? kOk : kCanaryClobbered;
}

ArenaPool::Status ArenaPool::Release(uint32_t id, int32_t* offlined) {
  *offlined = -1;
  Status status = Check(id);
  if (status == kBadId || status == kNotAllocated) return status;
  uint32_t ai = id / kSlotsPerArena;
  uint32_t slot = id % kSlotsPerArena;
  Arena* a = &arenas_[ai];
  BOBBIN_CHECK(in_use_ > 0);
  bool was_full = a->free == 0;
  a->free |= 1ull << slot;
  in_use_--;
  if (was_full) PushNonfull(a);
  preferred_ = ai;
  if (a->free == kAllFree) {
    // Keep only the most recently emptied arena online.
    if (last_empty_ >= 0 && last_empty_ != static_cast<int64_t>(ai)) {
      Arena* e = &arenas_[last_empty_];
      if (e->online && e->free == kAllFree) {
        TakeOffline(e);
        *offlined = static_cast<int32_t>(e->index);
      }
    }
    last_empty_ = ai;
  }
  return status;
}

uint8_t* ArenaPool::SlotData(uint32_t id) const {
  uint32_t ai = id / kSlotsPerArena;
  if (ai >= arenas_.size() || arenas_[ai].base == nullptr) return nullptr;
  return arenas_[ai].base + (id % kSlotsPerArena) * stride_;
}

ArenaPool::Status ArenaPool::CheckWrite(uint32_t arena, const uint8_t* p, size_t len, uint32_t* id) const {
  BOBBIN_CHECK(arena < arenas_.size() && id != nullptr);
  const Arena& a = arenas_[arena];
  BOBBIN_CHECK(a.base != nullptr && p >= a.base && p < a.base + arena_bytes_);
  size_t off = static_cast<size_t>(p - a.base);
  uint32_t slot = static_cast<uint32_t>(off / stride_);
  *id = arena * kSlotsPerArena + slot;
  size_t in_slot = off - slot * stride_;
  if (in_slot + len > slot_size_) return kBadId;
  if ((a.free & (1ull << slot)) != 0) return kNotAllocated;
  return CanaryIntact(a.base + slot * stride_) ? kOk : kCanaryClobbered;
}

}  // namespace bobbin
