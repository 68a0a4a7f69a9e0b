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
// control (an Int32Array JavaScript gives to the constructor):
//   [kSqTail]  JavaScript's SQ tail: what Submit() publishes
//   [kInPump]  1 while Pump() runs: JavaScript then leaves submitting to it
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

uint32_t ConfigField(Napi::Object config, const char* name, uint32_t fallback) {
  Napi::Value v = config.Get(name);
  return v.IsNumber() ? v.As<Napi::Number>().Uint32Value() : fallback;
}

class UringWrap : public LoopWatched<UringWrap, Ring> {
 public:
  static constexpr const char* kWhat = "ring";
  static constexpr const char* kDestroyedCode = "ERR_BOBBIN_URING_DESTROYED";

  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "NativeUring",
                       {
                           InstanceMethod<&UringWrap::Submit>("submit"),
                           InstanceMethod("ref", &UringWrap::Ref),
                           InstanceMethod("unref", &UringWrap::Unref),
                           InstanceMethod("destroy", &UringWrap::Destroy),
                       });
  }

  // new NativeUring(control: Int32Array, onBatch: () => void, config: { entries, buffers, bufferSize, staging, stagingSize, taskRun })
  explicit UringWrap(const Napi::CallbackInfo& info) : LoopWatched<UringWrap, Ring>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 3 || !IsTypedArrayOf(info[0], napi_int32_array) || info[0].As<Napi::Int32Array>().ElementLength() < kControlInts ||
        !info[1].IsFunction() || !info[2].IsObject()) {
      Napi::TypeError::New(env, "NativeUring(control: Int32Array(2), onBatch: function, config: object)").ThrowAsJavaScriptException();
      return;
    }
    if (!GetAddonData(env)->external_buffers) {
      Napi::Error::New(env, "NativeUring: the ring's memory is shared with JavaScript as external ArrayBuffers, which this runtime does not allow")
          .ThrowAsJavaScriptException();
      return;
    }
    Napi::Int32Array control = info[0].As<Napi::Int32Array>();
    control_ = control.Data();
    control_ref_ = Napi::Persistent(control.As<Napi::Object>());
    on_batch_ = Napi::Persistent(info[1].As<Napi::Function>());
    Napi::Object c = info[2].As<Napi::Object>();
    UringConfig config;
    config.entries = ConfigField(c, "entries", config.entries);
    config.buffers = ConfigField(c, "buffers", config.buffers);
    config.buffer_size = ConfigField(c, "bufferSize", config.buffer_size);
    config.staging = ConfigField(c, "staging", config.staging);
    config.staging_size = ConfigField(c, "stagingSize", config.staging_size);
    config.task_run = static_cast<TaskRun>(ConfigField(c, "taskRun", 0) & 3);

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
    return true;
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
  // IORING_SQ_TASKRUN set when entering has nothing to run. An entry that
  // brings no completion ends the wake-up, or the pump would spin here
  // forever with Node's loop (and every timer) stopped.
  void Pump() {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    Ring& ring = h_->payload;
    ring.ResetWakeup();
    control_[kInPump] = 1;
    int rounds = 0;
    for (;;) {
      ring.SetNotifications(false);
      ring.Submit(Tail());  // EBUSY: the CQ is full, JavaScript reaps below
      const int before = rounds;
      for (; rounds < kMaxRounds && ring.CompletionsWaiting(); rounds++) {
        Call(on_batch_.Value(), 0, nullptr);
        if (h_ == nullptr) {  // destroyed by JavaScript: the ring closes with the handle
          control_[kInPump] = 0;
          return;
        }
        if (ring.EntryNeeded(Tail())) ring.Submit(Tail());
      }
      ring.SetNotifications(true);
      if (!ring.CompletionsPending()) break;
      if (rounds >= kMaxRounds) {
        ring.Wake();
        break;
      }
      // Completions arrived after the batches: take them in this wake-up. Only
      // the flags say more is coming, and entering just brought nothing: stop.
      if (rounds == before && !ring.CompletionsWaiting()) break;
    }
    control_[kInPump] = 0;
  }

  uint32_t Tail() const { return static_cast<uint32_t>(control_[kSqTail]); }

  // submit() → SQEs submitted, or -errno. Runs pending completion work too.
  Napi::Value Submit(const Napi::CallbackInfo& info) {
    if (!Live(info, "submit")) return Napi::Value();
    return Napi::Number::New(info.Env(), h_->payload.Submit(Tail()));
  }

  int32_t* control_ = nullptr;
  Napi::ObjectReference control_ref_;  // keeps the control array (and control_) alive
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
