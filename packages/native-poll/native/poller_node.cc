// The poller in Node's loop, and its JavaScript class (NativePoller).
//
// The private set's fd is watched by one uv_poll_t (UV_READABLE). When libuv
// reports it readable, OnReadable drains up to one batch of events without
// waiting into the Int32Array that JavaScript gave to the constructor and calls
// the JavaScript callback once, with napi_make_callback, for the whole batch
// (no object per event). libuv watches the set level-triggered, so a batch
// left in the set (more than fit in the array, or level-triggered fds still
// ready) is reported again on the next loop iteration.
//
// Lifetime: the uv_poll_t and the Poller live in one heap Handle that is freed
// by uv_close's callback, after libuv stops using the fd; only then is the set
// closed. The JavaScript object may die first (GC): its finalizer starts the
// close. An env cleanup hook does the same when a worker thread stops.
#include <uv.h>

#include <string>

#include "common.h"
#include "poller.h"

namespace bobbin {

namespace {

class PollerWrap : public Napi::ObjectWrap<PollerWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "NativePoller",
                       {
                           InstanceMethod<&PollerWrap::Add>("add"),
                           InstanceMethod<&PollerWrap::Modify>("modify"),
                           InstanceMethod<&PollerWrap::Rearm>("rearm"),
                           InstanceMethod<&PollerWrap::Disarm>("disarm"),
                           InstanceMethod<&PollerWrap::Remove>("remove"),
                           InstanceMethod<&PollerWrap::CloseFd>("close"),
                           InstanceMethod<&PollerWrap::Interrupt>("interrupt"),
                           InstanceMethod<&PollerWrap::Poll>("poll"),
                           InstanceMethod<&PollerWrap::Generation>("generation"),
                           InstanceMethod<&PollerWrap::Ref>("ref"),
                           InstanceMethod<&PollerWrap::Unref>("unref"),
                           InstanceMethod<&PollerWrap::Destroy>("destroy"),
                           InstanceAccessor<&PollerWrap::GetFd>("fd"),
                           InstanceAccessor<&PollerWrap::GetRegistered>("registered"),
                       });
  }

  // new NativePoller(batch: Int32Array, onBatch: (count, woken) => void)
  explicit PollerWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<PollerWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array ||
        !info[1].IsFunction()) {
      Napi::TypeError::New(env, "NativePoller(batch: Int32Array, onBatch: function)").ThrowAsJavaScriptException();
      return;
    }
    Napi::Int32Array batch = info[0].As<Napi::Int32Array>();
    batch_events_ = static_cast<int>(batch.ElementLength() / kEventInts);
    if (batch_events_ < 1) {
      Napi::RangeError::New(env, "NativePoller: the batch array must hold at least one event (3 int32s)").ThrowAsJavaScriptException();
      return;
    }
    batch_ = batch.Data();
    batch_ref_ = Napi::Persistent(batch.As<Napi::Object>());
    on_batch_ = Napi::Persistent(info[1].As<Napi::Function>());

    h_ = new Handle();
    h_->wrap = this;
    int rc = h_->poller.Open(batch_events_);
    if (rc < 0) {
      delete h_;
      h_ = nullptr;
      ErrnoError(env, rc, "epoll_create").ThrowAsJavaScriptException();
      return;
    }
    uv_loop_t* loop = nullptr;
    napi_get_uv_event_loop(env, &loop);
    rc = uv_poll_init(loop, &h_->poll, h_->poller.backend_fd());
    if (rc < 0) {
      // The handle never joined the loop: no uv_close.
      delete h_;  // ~Poller closes the set
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
    napi_create_string_utf8(env, "bobbin:poller", NAPI_AUTO_LENGTH, &resource_name);
    napi_async_init(env, nullptr, resource_name, &async_);
    napi_add_env_cleanup_hook(env, CleanupHook, this);
    hooked_ = true;
  }

  ~PollerWrap() override {
    Close();
    DestroyAsyncContext();
  }

 private:
  struct Handle {
    uv_poll_t poll;  // first member: the uv_handle_t* is the Handle*
    Poller poller;
    PollerWrap* wrap = nullptr;  // null once JavaScript has let go
  };

  static void OnClose(uv_handle_t* handle) {
    Handle* h = reinterpret_cast<Handle*>(handle);
    h->poller.Close();
    delete h;
  }

  static void CleanupHook(void* arg) {
    PollerWrap* w = static_cast<PollerWrap*>(arg);
    w->Close();
    w->DestroyAsyncContext();
  }

  // The async context outlives Close(): destroy() may be called from inside
  // the very callback that napi_make_callback is running with it.
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

  static void OnReadable(uv_poll_t* poll, int status, int events) {
    Handle* h = reinterpret_cast<Handle*>(poll);
    PollerWrap* w = h->wrap;
    if (w == nullptr || status < 0) return;
    w->Deliver();
  }

  void Deliver() {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    bool woken = false;
    int n = h_->poller.Drain(0, batch_, batch_events_, &woken);
    if (n < 0) n = 0;  // a failed epoll_wait on our own set: nothing to report
    if (n == 0 && !woken) return;
    napi_value argv[2];
    napi_create_int32(env, n, &argv[0]);
    napi_get_boolean(env, woken, &argv[1]);
    napi_value result;
    napi_status s = napi_make_callback(env, async_, Value(), on_batch_.Value(), 2, argv, &result);
    if (s == napi_pending_exception) {
      // Nobody above us can catch it: make it an uncaught exception, as Node
      // does for a throwing I/O callback.
      napi_value error;
      napi_get_and_clear_last_exception(env, &error);
      napi_fatal_exception(env, error);
    }
  }

  bool Live(const Napi::CallbackInfo& info, const char* fn) {
    if (h_ != nullptr) return true;
    std::string msg = std::string("poller.") + fn + "(): the poller is destroyed";
    Napi::Error e = Napi::Error::New(info.Env(), msg);
    e.Set("code", Napi::String::New(info.Env(), "ERR_BOBBIN_POLLER_DESTROYED"));
    e.ThrowAsJavaScriptException();
    return false;
  }

  // add(fd, interest, mode) → generation (> 0) or -errno
  Napi::Value Add(const Napi::CallbackInfo& info) {
    int32_t fd, interest, mode;
    if (!Live(info, "add") || !ArgInt32(info, 0, "poller.add", &fd) || !ArgInt32(info, 1, "poller.add", &interest) ||
        !ArgInt32(info, 2, "poller.add", &mode)) {
      return Napi::Value();
    }
    if (mode < kEdge || mode > kOneShot || (interest & ~(kReadable | kWritable)) != 0 || interest == 0) {
      Napi::RangeError::New(info.Env(), "poller.add(fd, interest, mode): interest is READABLE|WRITABLE, mode is EDGE, LEVEL or ONESHOT")
          .ThrowAsJavaScriptException();
      return Napi::Value();
    }
    int64_t gen = h_->poller.Add(fd, static_cast<uint32_t>(interest), static_cast<Mode>(mode));
    return Napi::Number::New(info.Env(), static_cast<double>(gen));
  }

  Napi::Value Modify(const Napi::CallbackInfo& info) {
    int32_t fd, interest;
    if (!Live(info, "modify") || !ArgInt32(info, 0, "poller.modify", &fd) || !ArgInt32(info, 1, "poller.modify", &interest)) {
      return Napi::Value();
    }
    if ((interest & ~(kReadable | kWritable)) != 0 || interest == 0) {
      Napi::RangeError::New(info.Env(), "poller.modify(fd, interest): interest is READABLE, WRITABLE or both (use disarm() for none)")
          .ThrowAsJavaScriptException();
      return Napi::Value();
    }
    return Napi::Number::New(info.Env(), h_->poller.Modify(fd, static_cast<uint32_t>(interest)));
  }

  template <int (Poller::*Op)(int)>
  Napi::Value FdOp(const Napi::CallbackInfo& info, const char* name) {
    int32_t fd;
    if (!Live(info, name) || !ArgInt32(info, 0, name, &fd)) return Napi::Value();
    return Napi::Number::New(info.Env(), (h_->poller.*Op)(fd));
  }
  Napi::Value Rearm(const Napi::CallbackInfo& info) { return FdOp<&Poller::Rearm>(info, "rearm"); }
  Napi::Value Disarm(const Napi::CallbackInfo& info) { return FdOp<&Poller::Disarm>(info, "disarm"); }
  Napi::Value Remove(const Napi::CallbackInfo& info) { return FdOp<&Poller::Remove>(info, "remove"); }
  Napi::Value CloseFd(const Napi::CallbackInfo& info) { return FdOp<&Poller::CloseFd>(info, "close"); }

  Napi::Value Generation(const Napi::CallbackInfo& info) {
    int32_t fd;
    if (!Live(info, "generation") || !ArgInt32(info, 0, "poller.generation", &fd)) return Napi::Value();
    const Registration* r = h_->poller.Find(fd);
    return Napi::Number::New(info.Env(), r == nullptr ? 0 : r->gen);
  }

  Napi::Value Interrupt(const Napi::CallbackInfo& info) {
    if (!Live(info, "interrupt")) return Napi::Value();
    return Napi::Number::New(info.Env(), h_->poller.Interrupt());
  }

  // poll(timeoutMs) → count or -errno. Drains into the batch array without
  // calling onBatch; blocks the thread for up to timeoutMs.
  Napi::Value Poll(const Napi::CallbackInfo& info) {
    int32_t timeout = 0;
    if (!Live(info, "poll")) return Napi::Value();
    if (info.Length() > 0 && !ArgInt32(info, 0, "poller.poll", &timeout)) return Napi::Value();
    bool woken = false;
    return Napi::Number::New(info.Env(), h_->poller.Drain(timeout, batch_, batch_events_, &woken));
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

  Napi::Value GetFd(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), h_ == nullptr ? -1 : h_->poller.backend_fd());
  }

  Napi::Value GetRegistered(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), h_ == nullptr ? 0 : h_->poller.registered());
  }

  Handle* h_ = nullptr;
  int32_t* batch_ = nullptr;
  int batch_events_ = 0;
  Napi::ObjectReference batch_ref_;  // keeps the batch array (and batch_) alive
  Napi::FunctionReference on_batch_;
  napi_async_context async_ = nullptr;
  bool hooked_ = false;
};

}  // namespace

Napi::Function DefinePoller(Napi::Env env) { return PollerWrap::Define(env); }

}  // namespace bobbin
