// Arena buffers, after Chip's stack allocator.
//
// A pool hands out fixed-size slots. Slots live in arenas of 64 (one bit each
// in a 64-bit word, so an arena is a first-fit bitmap allocator):
//
//   arena: | slot 0 | canary | pad | slot 1 | canary | pad | … | slot 63 | canary | pad |
//           <------- stride ------->
//
// - Allocation takes the lowest free slot (count-trailing-zeros of the free
//   mask) of the preferred arena: the arena of the last release (Chip: "the
//   arena selected for new allocation is just the arena from which the last
//   task was free'd"), so allocation is O(1) with good locality. When that
//   arena is full, any arena with a free slot is taken (a dense list, O(1)),
//   then an offline arena is revived, then a new arena is made, up to the
//   pool's cap. At the cap, Alloc fails and the caller waits (back-pressure).
// - When an arena becomes empty, the previously emptied arena, if still
//   empty, goes offline: its pages are returned to the OS. So all empty arenas
//   but the most recent one are offline ("all but the most-recently-used
//   empty arenas are soft-offlined").
// - Every slot is followed by an 8-byte canary, unique per slot (a per-pool
//   random key mixed with the slot's address). It is written when the slot is
//   handed out and checked when it is released and before native code writes
//   into the slot; a clobbered canary means something wrote past the slot's
//   end, and is reported naming the slot.
//
// Where the memory comes from is the ArenaMemory's business (arena_node.cc):
// mmap'd anonymous memory, offlined with madvise(MADV_DONTNEED) and never
// unmapped while the pool lives, or JavaScript-owned ArrayBuffers where the
// runtime forbids external buffers, offlined by letting go of the buffer.
//
// Invariants:
// - bit i of Arena::free is set ⇔ slot i is free.
// - Arena::nonfull_pos >= 0 ⇔ the arena is online and has a free slot; it is
//   then its index in ArenaPool::nonfull_.
// - An offline arena is empty (free == kAllFree) and is in ArenaPool::offline_.
// - in_use_ is the number of allocated slots over all arenas.
#ifndef BOBBIN_NATIVE_ARENA_H_
#define BOBBIN_NATIVE_ARENA_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "no_copy.h"

namespace bobbin {

constexpr int kSlotsPerArena = 64;
constexpr uint64_t kAllFree = ~0ull;
constexpr size_t kCanaryBytes = 8;
// The most arenas a pool may have: slot ids (arena * 64 + slot) stay below 2^31.
constexpr int32_t kMaxArenas = 1 << 25;

struct Arena {
  uint8_t* base = nullptr;  // null while offline in the JS-owned fallback
  uint64_t free = kAllFree;
  uint32_t index = 0;
  int32_t nonfull_pos = -1;
  bool online = false;
  void* memory_data = nullptr;  // the ArenaMemory's own bookkeeping
};

// Where arena memory comes from.
class ArenaMemory {
 public:
  virtual ~ArenaMemory() = default;
  // Memory for an arena that has none (new, or revived when !KeepsMemory()).
  virtual uint8_t* Obtain(Arena* arena, size_t bytes) = 0;
  // Returns the arena's pages to the OS. Its contents are lost.
  virtual void GiveBack(Arena* arena, size_t bytes) = 0;
  // True when an offline arena keeps its address (mmap + madvise): reviving
  // it needs no Obtain(), the pages fault back in as zeros.
  virtual bool KeepsMemory() const = 0;
};

class ArenaPool : NoCopy {
 public:
  enum Status { kOk = 0, kNotAllocated = 1, kCanaryClobbered = 2, kBadId = 3 };

  // slot_size > 0; max_arenas 0 means no cap.
  ArenaPool(size_t slot_size, uint32_t max_arenas, ArenaMemory* memory, uint64_t key);
  ~ArenaPool() = default;

  // A slot id (arena * 64 + slot), -1 when every slot is taken and the cap is
  // reached, -2 when memory could not be obtained. *new_memory is set when the
  // arena's memory is new (so views of it must be made again).
  int64_t Alloc(bool* new_memory);
  // Frees the slot. kCanaryClobbered still frees it (the damage is done and
  // reported); *offlined is the index of an arena that went offline, or -1.
  Status Release(uint32_t id, int32_t* offlined);
  // kOk, kNotAllocated, kCanaryClobbered or kBadId.
  Status Check(uint32_t id) const;

  uint8_t* SlotData(uint32_t id) const;
  const Arena* ArenaAt(uint32_t index) const { return index < arenas_.size() ? &arenas_[index] : nullptr; }
  size_t slot_size() const { return slot_size_; }
  size_t stride() const { return stride_; }
  size_t arena_bytes() const { return arena_bytes_; }
  uint32_t arena_count() const { return static_cast<uint32_t>(arenas_.size()); }
  uint32_t max_arenas() const { return max_arenas_; }
  uint32_t online_count() const { return online_; }
  uint32_t in_use() const { return in_use_; }
  bool full() const;

  // Before native code writes [p, p + len) inside arena `arena` (found by the
  // env's address registry): kOk when the range lies inside one allocated
  // slot whose canary is intact; kNotAllocated (a free slot), kCanaryClobbered
  // or kBadId (the range crosses the slot's end) otherwise. *id names the slot.
  Status CheckWrite(uint32_t arena, const uint8_t* p, size_t len, uint32_t* id) const;

  // Visits the online arenas' memory (for the env's address registry).
  template <typename F>
  void ForEachOnline(F f) const {
    for (const Arena& a : arenas_) {
      if (a.online && a.base != nullptr) f(a);
    }
  }

 private:
  uint64_t CanaryFor(const uint8_t* slot) const;
  void WriteCanary(uint8_t* slot) const;
  bool CanaryIntact(const uint8_t* slot) const;
  void PushNonfull(Arena* a);
  void DropNonfull(Arena* a);
  void TakeOffline(Arena* a);

  const size_t slot_size_;
  const size_t canary_offset_;  // slot_size rounded up to 8
  const size_t stride_;
  const size_t arena_bytes_;
  const uint32_t max_arenas_;
  ArenaMemory* const memory_;
  const uint64_t key_;

  std::vector<Arena> arenas_;
  std::vector<uint32_t> nonfull_;  // online arenas with a free slot
  std::vector<uint32_t> offline_;  // empty arenas whose memory went back to the OS
  int64_t preferred_ = -1;         // arena of the last release (or last fallback choice)
  int64_t last_empty_ = -1;        // the most recently emptied arena, kept online
  uint32_t in_use_ = 0;
  uint32_t online_ = 0;
};

}  // namespace bobbin

#endif  // BOBBIN_NATIVE_ARENA_H_
