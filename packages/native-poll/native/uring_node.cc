// The ring in Node's loop, and its JavaScript class (NativeUring).
//
// The kernel signals the ring's eventfd when completion work arrives; one
// uv_poll_t watches it. When libuv reports it readable, Pump() enters the
// ring (submitting what JavaScript queued and running the completion work),
// then calls JavaScript once for the whole batch of CQEs, which it reads from
// the CQ ring itself. The tasks that batch woke run in the microtasks of that
// call and queue new requests; Pump() submits them on the way out, and calls
// JavaScript again while completions keep coming (sends done inline), a few
// rounds at most before it lets the loop turn.
//
// control (the addon's memory, shown to JavaScript as `this.control`:
// shared_area.h), two int32s:
//   [kSqTail]  JavaScript's SQ tail: what Submit() publishes
//   [kInPump]  1 while Pump() runs: JavaScript then leaves submitting to it
//
// Failures reach JavaScript: onBatch(status) is called with a negative errno
// when io_uring_enter fails in the pump (other than EBUSY, a full CQ that
// JavaScript's reaping empties) or when libuv cannot poll the eventfd.
//
// Lifetime: loop_watched.h (the ring is closed by uv_close's callback, after
// libuv stops using its eventfd). The memory regions stay mapped while an
// ArrayBuffer shows them (Mapping).
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include <string>

#include "addon_data.h"
#include "loop_watched.h"
#include "shared_area.h"
#include "uring.h"

#if __has_include(<linux/io_uring.h>)
#include <linux/io_uring.h>
#define BOBBIN_HAVE_IO_URING 1
#endif

namespace bobbin {

namespace {

constexpr int kSqTail = 0;
constexpr int kInPump = 1;
constexpr int kControlInts = 2;
// Batches for JavaScript per wake-up before Node's loop gets a turn.
constexpr int kMaxRounds = 8;

void FinalizeMapping(napi_env /*env*/, void* /*data*/, void* hint) { static_cast<Mapping*>(hint)->Release(); }

class UringWrap : public LoopWatched<UringWrap, Ring> {
 public:
  static constexpr WatchedNames kNames{"NativeUring", "ring", "ERR_BOBBIN_URING_DESTROYED"};

  static Napi::Function Define(Napi::Env env) { return DefineWatched(env, {InstanceMethod<&UringWrap::Submit>("submit")}); }

  // new NativeUring(onBatch: (status) => void, config: { entries, buffers, bufferSize, staging, stagingSize, taskRun })
  explicit UringWrap(const Napi::CallbackInfo& info) : LoopWatched<UringWrap, Ring>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsFunction() || !info[1].IsObject()) {
      Napi::TypeError::New(env, "NativeUring(onBatch: function, config: object)").ThrowAsJavaScriptException();
      return;
    }
    if (!GetAddonData(env)->external_buffers) {
      Napi::Error::New(env, "NativeUring: the ring's memory is shared with JavaScript as external ArrayBuffers, which this runtime does not allow")
          .ThrowAsJavaScriptException();
      return;
    }
    napi_value control;
    if (!control_.Make(env, kControlInts * sizeof(int32_t), &control)) return;
    Value().Set("control", Napi::Value(env, control));
    if (env.IsExceptionPending()) return;
    on_batch_ = Napi::Persistent(info[0].As<Napi::Function>());
    Napi::Object c = info[1].As<Napi::Object>();
    UringConfig config;
    uint32_t task_run = 0;
    // Sizes as the kernel takes them (io_uring_setup's entries, a provided-buffer ring's 2^15 buffers).
    if (!IntField(env, c, "NativeUring", "entries", 1, 32768, config.entries, &config.entries) ||
        !IntField(env, c, "NativeUring", "buffers", 1, 32768, config.buffers, &config.buffers) ||
        !IntField(env, c, "NativeUring", "bufferSize", 1, 1u << 24, config.buffer_size, &config.buffer_size) ||
        !IntField(env, c, "NativeUring", "staging", 1, 1u << 16, config.staging, &config.staging) ||
        !IntField(env, c, "NativeUring", "stagingSize", 1, 1u << 24, config.staging_size, &config.staging_size) ||
        !IntField(env, c, "NativeUring", "taskRun", 0, 3, 0, &task_run)) {
      return;
    }
    config.task_run = static_cast<TaskRun>(task_run);

    Ring& ring = Prepare();
    std::string step;
    int rc = ring.Open(config, &step);
    if (rc < 0) {
      Discard();
      ErrnoError(env, rc, step.c_str()).ThrowAsJavaScriptException();
      return;
    }
    if (!Expose(env)) {
      Discard();
      return;
    }
    Watch(env, ring.wake_fd(), "bobbin:uring");
  }

  // The eventfd is readable: completion work arrived.
  void OnWatchedReadable() { Pump(); }

  // libuv could not poll the eventfd: JavaScript hears it.
  void OnWatchFailed(int status) {
    Napi::HandleScope scope(Env());
    Report(status, "uv_poll");
  }

 private:
  // An external ArrayBuffer over `m`, which it keeps mapped.
  static bool Buffer(Napi::Env env, Mapping* m, napi_value* out) {
    m->Retain();
    if (napi_create_external_arraybuffer(env, m->base, m->bytes, FinalizeMapping, m, out) != napi_ok) {
      m->Release();
      return false;
    }
    return true;
  }

  // The ring's memory, layout and flags, as properties of `this`.
  bool Expose(Napi::Env env) {
    const Ring& r = h_->payload;
    Napi::Object self = Value();
    const std::pair<const char*, Mapping*> regions[] = {
        {"sqes", r.sqes()}, {"rings", r.rings()}, {"bufferRing", r.buffer_ring()}, {"buffers", r.buffers()}, {"staging", r.staging()},
    };
    for (const auto& [name, mapping] : regions) {
      napi_value ab;
      if (!Buffer(env, mapping, &ab)) {
        Napi::Error::New(env, std::string("NativeUring: could not show the ring's ") + name + " to JavaScript").ThrowAsJavaScriptException();
        return false;
      }
      self.Set(name, Napi::Value(env, ab));
    }
    const UringLayout& l = r.layout();
    Napi::Object layout = Napi::Object::New(env);
    layout.Set("sqHead", l.sq_head);
    layout.Set("sqTail", l.sq_tail);
    layout.Set("sqMask", l.sq_mask);
    layout.Set("sqEntries", l.sq_entries);
    layout.Set("sqFlags", l.sq_flags);
    layout.Set("cqHead", l.cq_head);
    layout.Set("cqTail", l.cq_tail);
    layout.Set("cqMask", l.cq_mask);
    layout.Set("cqEntries", l.cq_entries);
    layout.Set("cqes", l.cqes);
    self.Set("layout", layout);
    // User-space addresses fit a double exactly (at most 57 bits).
    self.Set("bufferBase", Napi::Number::New(env, static_cast<double>(reinterpret_cast<uintptr_t>(r.buffers()->base))));
    self.Set("stagingBase", Napi::Number::New(env, static_cast<double>(reinterpret_cast<uintptr_t>(r.staging()->base))));
    self.Set("setupFlags", Napi::Number::New(env, r.setup_flags()));
    return !env.IsExceptionPending();  // a failed Set threw N-API's error
  }

  // One wake-up: enter (submitting what JavaScript queued, running the
  // completion work), then JavaScript for each batch of CQEs, entering again
  // after it when it queued requests or more work arrived. The eventfd stays
  // quiet meanwhile (completions of our own entries need no wake-up); work
  // that came in while it was quiet is taken in the same wake-up, a few
  // rounds at most before Node's loop gets a turn (the eventfd, written,
  // brings us back).
  //
  // The SQ flags only hint that work is pending: the kernel may leave
  // IORING_SQ_TASKRUN set when entering has nothing to run, and a pump that
  // looped on them would spin here forever with Node's loop (and every
  // timer) stopped. Yet the flags may also be right about work queued after
  // an entry ran the queue while notifications were off (by the network; or
  // by that entry itself on its way out: a socket it let go of closes, its
  // peer sees the hang-up). With DEFER_TASKRUN the kernel writes the eventfd
  // only for the first piece of work queued, and not while notifications
  // are off: that work, and all queued behind it, would wait for a write
  // that never comes, every connection of the ring stalled. So when the
  // flags stay set after an entry that brought nothing, the pump enters once
  // more with notifications on before it ends the wake-up: whatever is
  // queued after that entry writes the eventfd.
  void Pump() {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    Ring& ring = h_->payload;
    int32_t* control = Control();
    int rc = ring.ResetWakeup();
    if (rc < 0) return Report(rc, "read");  // the eventfd: it would stay readable, and the loop spin
    control[kInPump] = 1;
    int rounds = 0;
    for (;;) {
      ring.SetNotifications(false);
      if (!Submitted(ring.Submit(Tail()))) break;
      const int before = rounds;
      for (; rounds < kMaxRounds && ring.CompletionsWaiting(); rounds++) {
        Report(0);
        if (h_ == nullptr) {  // destroyed by JavaScript: the ring closes with the handle
          control[kInPump] = 0;
          return;
        }
        if (ring.EntryNeeded(Tail()) && !Submitted(ring.Submit(Tail()))) break;
      }
      ring.SetNotifications(true);
      if (!ring.CompletionsPending()) break;
      if (rounds >= kMaxRounds) {
        // The eventfd, written, brings us back after Node's loop had a turn.
        if ((rc = ring.Wake()) < 0) Report(rc, "write");
        break;
      }
      // Completions or work arrived after the batches: take them in this
      // wake-up. Entering just brought nothing and only the flags say more is
      // coming: once more with notifications on, and stop if that brings nothing.
      if (rounds == before && !ring.CompletionsWaiting()) {
        if (!Submitted(ring.Submit(Tail())) || !ring.CompletionsWaiting()) break;
      }
    }
    control[kInPump] = 0;
  }

  // io_uring_enter's result in the pump: true when it went on (EBUSY: the CQ
  // is full, JavaScript reaps it); a failure is reported to JavaScript.
  bool Submitted(int rc) {
    if (rc >= 0 || rc == -EBUSY) return true;
    Report(rc, "io_uring_enter");
    return false;
  }

  // onBatch(0) for a batch of completions to reap; onBatch(-errno, what failed) for a failure.
  void Report(int status, const char* failed = nullptr) {
    napi_value argv[2];
    napi_status s = napi_create_int32(Env(), status, &argv[0]);
    if (s != napi_ok) return Uncaught(s, "napi_create_int32");
    if (failed != nullptr && (s = napi_create_string_utf8(Env(), failed, NAPI_AUTO_LENGTH, &argv[1])) != napi_ok) {
      return Uncaught(s, "napi_create_string_utf8");
    }
    Call(on_batch_.Value(), failed == nullptr ? 1 : 2, argv);
  }

  int32_t* Control() const { return reinterpret_cast<int32_t*>(control_.data()); }
  uint32_t Tail() const { return static_cast<uint32_t>(Control()[kSqTail]); }

  // submit() → SQEs submitted, or -errno. Runs pending completion work too.
  Napi::Value Submit(const Napi::CallbackInfo& info) {
    if (!Live(info, "submit")) return Napi::Value();
    return Napi::Number::New(info.Env(), h_->payload.Submit(Tail()));
  }

  SharedArea control_;  // the addon's, shown to JavaScript (shared_area.h)
  Napi::FunctionReference on_batch_;
};

// uringProbe() → { reason: "" when the backend can work here, else why not; flags: the setup flags }
Napi::Value Probe(const Napi::CallbackInfo& info) {
  uint32_t flags = 0;
  std::string reason = UringProbe(&flags);
  if (reason.empty() && !GetAddonData(info.Env())->external_buffers) {
    reason = "this runtime does not allow external ArrayBuffers, through which the ring's memory is shared";
  }
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("reason", reason);
  out.Set("flags", flags);
  return out;
}

// The kernel's ABI values JavaScript needs to write SQEs and read CQEs.
Napi::Object Constants(Napi::Env env) {
  Napi::Object c = Napi::Object::New(env);
#if defined(BOBBIN_HAVE_IO_URING)
  static_assert(sizeof(struct io_uring_sqe) == 64 && sizeof(struct io_uring_cqe) == 16 && sizeof(struct io_uring_buf) == 16,
                "the layout JavaScript writes and reads");
  const std::pair<const char*, uint32_t> values[] = {
      {"OP_RECV", IORING_OP_RECV},
      {"OP_SEND", IORING_OP_SEND},
      {"OP_ACCEPT", IORING_OP_ACCEPT},
      {"OP_POLL_ADD", IORING_OP_POLL_ADD},
      {"OP_ASYNC_CANCEL", IORING_OP_ASYNC_CANCEL},
      {"RECV_MULTISHOT", IORING_RECV_MULTISHOT},
      {"ACCEPT_MULTISHOT", IORING_ACCEPT_MULTISHOT},
      {"SQE_BUFFER_SELECT", IOSQE_BUFFER_SELECT},
      {"CQE_F_BUFFER", IORING_CQE_F_BUFFER},
      {"CQE_F_MORE", IORING_CQE_F_MORE},
      {"CQE_BUFFER_SHIFT", IORING_CQE_BUFFER_SHIFT},
      {"ASYNC_CANCEL_ALL", IORING_ASYNC_CANCEL_ALL},
      {"SETUP_SINGLE_ISSUER", IORING_SETUP_SINGLE_ISSUER},
      {"SETUP_DEFER_TASKRUN", IORING_SETUP_DEFER_TASKRUN},
      {"SETUP_COOP_TASKRUN", IORING_SETUP_COOP_TASKRUN},
      {"BUFFER_GROUP", kBufferGroup},
      {"BUFFER_RING_TAIL", kBufferRingTail},
      {"MSG_NOSIGNAL", MSG_NOSIGNAL},
      {"MSG_WAITALL", MSG_WAITALL},
      {"SOCK_NONBLOCK", SOCK_NONBLOCK},
      {"SOCK_CLOEXEC", SOCK_CLOEXEC},
      {"POLLIN", POLLIN},
      {"POLLOUT", POLLOUT},
  };
  for (const auto& [name, value] : values) c.Set(name, Napi::Number::New(env, value));
#endif
  return c;
}

}  // namespace

void DefineUring(Napi::Env env, Napi::Object exports) {
  exports.Set("NativeUring", UringWrap::Define(env));
  exports.Set("uringProbe", Napi::Function::New(env, Probe, "uringProbe"));
  exports.Set("uringConstants", Constants(env));
}

}  // namespace bobbin
