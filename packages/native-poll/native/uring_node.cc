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
// Lifetime: as the poller's (poller_node.cc): the uv_poll_t and the Ring live
// in one heap Handle freed by uv_close's callback, which closes the ring. The
// memory regions stay mapped while an ArrayBuffer shows them (Mapping).
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <uv.h>

#include <string>

#include "addon_data.h"
#include "common.h"
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
// Rounds of submit → JavaScript per wake-up before Node's loop gets a turn.
constexpr int kMaxRounds = 4;

void FinalizeMapping(napi_env /*env*/, void* /*data*/, void* hint) { static_cast<Mapping*>(hint)->Release(); }

uint32_t ConfigField(Napi::Object config, const char* name, uint32_t fallback) {
  Napi::Value v = config.Get(name);
  return v.IsNumber() ? v.As<Napi::Number>().Uint32Value() : fallback;
}

class UringWrap : public Napi::ObjectWrap<UringWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "NativeUring",
                       {
                           InstanceMethod<&UringWrap::Submit>("submit"),
                           InstanceMethod<&UringWrap::Ref>("ref"),
                           InstanceMethod<&UringWrap::Unref>("unref"),
                           InstanceMethod<&UringWrap::Destroy>("destroy"),
                       });
  }

  // new NativeUring(control: Int32Array, onBatch: () => void, config: { entries, buffers, bufferSize, staging, stagingSize, taskRun })
  explicit UringWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<UringWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 3 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array ||
        info[0].As<Napi::Int32Array>().ElementLength() < kControlInts || !info[1].IsFunction() || !info[2].IsObject()) {
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

    h_ = new Handle();
    h_->wrap = this;
    std::string step;
    int rc = h_->ring.Open(config, &step);
    if (rc < 0) {
      delete h_;  // ~Ring closes what was opened
      h_ = nullptr;
      ErrnoError(env, rc, step.c_str()).ThrowAsJavaScriptException();
      return;
    }
    if (!Expose(env)) {
      delete h_;
      h_ = nullptr;
      return;
    }
    uv_loop_t* loop = nullptr;
    napi_get_uv_event_loop(env, &loop);
    rc = uv_poll_init(loop, &h_->poll, h_->ring.wake_fd());
    if (rc < 0) {
      delete h_;
      h_ = nullptr;
      ErrnoError(env, rc, "uv_poll_init").ThrowAsJavaScriptException();
      return;
    }
    rc = uv_poll_start(&h_->poll, UV_READABLE, OnReadable);
    if (rc < 0) {
      h_->wrap = nullptr;
      uv_close(reinterpret_cast<uv_handle_t*>(&h_->poll), OnClose);
      h_ = nullptr;
      ErrnoError(env, rc, "uv_poll_start").ThrowAsJavaScriptException();
      return;
    }
    napi_value resource_name;
    napi_create_string_utf8(env, "bobbin:uring", NAPI_AUTO_LENGTH, &resource_name);
    napi_async_init(env, nullptr, resource_name, &async_);
    napi_add_env_cleanup_hook(env, CleanupHook, this);
    hooked_ = true;
  }

  ~UringWrap() override {
    Close();
    DestroyAsyncContext();
  }

 private:
  struct Handle {
    uv_poll_t poll;  // first member: the uv_handle_t* is the Handle*
    Ring ring;
    UringWrap* wrap = nullptr;  // null once JavaScript has let go
  };

  static void OnClose(uv_handle_t* handle) {
    Handle* h = reinterpret_cast<Handle*>(handle);
    h->ring.Close();
    delete h;
  }

  static void CleanupHook(void* arg) {
    UringWrap* w = static_cast<UringWrap*>(arg);
    w->Close();
    w->DestroyAsyncContext();
  }

  void DestroyAsyncContext() {
    if (async_ != nullptr) {
      napi_async_destroy(Env(), async_);
      async_ = nullptr;
    }
  }

  // Stops watching and starts closing; safe to call twice.
  void Close() {
    if (hooked_) {
      napi_remove_env_cleanup_hook(Env(), CleanupHook, this);
      hooked_ = false;
    }
    if (h_ == nullptr) return;
    uv_poll_stop(&h_->poll);
    h_->wrap = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&h_->poll), OnClose);
    h_ = nullptr;
  }

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
    const Ring& r = h_->ring;
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

  static void OnReadable(uv_poll_t* poll, int status, int /*events*/) {
    Handle* h = reinterpret_cast<Handle*>(poll);
    UringWrap* w = h->wrap;
    if (w == nullptr || status < 0) return;
    w->Pump();
  }

  // One wake-up: enter (submitting what JavaScript queued, running the
  // completion work), then JavaScript for each batch of CQEs, entering again
  // after it when it queued requests or more work arrived. The eventfd stays
  // quiet meanwhile (completions of our own entries need no wake-up); once
  // it is on again, anything that came in the meantime makes it readable.
  void Pump() {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    Ring& ring = h_->ring;
    ring.ResetWakeup();
    ring.SetNotifications(false);
    control_[kInPump] = 1;
    ring.Submit(Tail());  // EBUSY: the CQ is full, JavaScript reaps below
    for (int round = 0; round < kMaxRounds && ring.CompletionsWaiting(); round++) {
      napi_value result;
      napi_status s = napi_make_callback(env, async_, Value(), on_batch_.Value(), 0, nullptr, &result);
      if (s == napi_pending_exception) {
        napi_value error;
        napi_get_and_clear_last_exception(env, &error);
        napi_fatal_exception(env, error);
      }
      if (h_ == nullptr) break;  // destroyed by JavaScript: the ring closes with the handle
      if (ring.EntryNeeded(Tail())) ring.Submit(Tail());
    }
    control_[kInPump] = 0;
    if (h_ == nullptr) return;
    ring.SetNotifications(true);
    if (ring.CompletionsPending()) ring.Wake();  // the rest on the next turn of the loop
  }

  uint32_t Tail() const { return static_cast<uint32_t>(control_[kSqTail]); }

  bool Live(const Napi::CallbackInfo& info, const char* fn) {
    if (h_ != nullptr) return true;
    Napi::Error e = Napi::Error::New(info.Env(), std::string("uring.") + fn + "(): the ring is destroyed");
    e.Set("code", Napi::String::New(info.Env(), "ERR_BOBBIN_URING_DESTROYED"));
    e.ThrowAsJavaScriptException();
    return false;
  }

  // submit() → SQEs submitted, or -errno. Runs pending completion work too.
  Napi::Value Submit(const Napi::CallbackInfo& info) {
    if (!Live(info, "submit")) return Napi::Value();
    return Napi::Number::New(info.Env(), h_->ring.Submit(Tail()));
  }

  Napi::Value Ref(const Napi::CallbackInfo& info) {
    if (h_ != nullptr) uv_ref(reinterpret_cast<uv_handle_t*>(&h_->poll));
    return info.Env().Undefined();
  }

  Napi::Value Unref(const Napi::CallbackInfo& info) {
    if (h_ != nullptr) uv_unref(reinterpret_cast<uv_handle_t*>(&h_->poll));
    return info.Env().Undefined();
  }

  Napi::Value Destroy(const Napi::CallbackInfo& info) {
    Close();
    return info.Env().Undefined();
  }

  Handle* h_ = nullptr;
  int32_t* control_ = nullptr;
  Napi::ObjectReference control_ref_;  // keeps the control array (and control_) alive
  Napi::FunctionReference on_batch_;
  napi_async_context async_ = nullptr;
  bool hooked_ = false;
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
