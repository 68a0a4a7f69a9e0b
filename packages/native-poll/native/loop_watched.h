// A native object that Node's loop watches through one uv_poll_t on a file
// descriptor of its own (the poller's epoll/kqueue set, the ring's eventfd),
// owned by a JavaScript object: the poller (poller_node.cc) and the io_uring
// ring (uring_node.cc) share this lifecycle, the delicate part of both.
//
// - The uv_poll_t and the payload live in one heap Handle that uv_close's
//   callback frees, after libuv stops using the descriptor; only then is the
//   payload closed (Payload::Close()).
// - The JavaScript object may die first (GC): its destructor starts the
//   close. An env cleanup hook does the same when a worker thread stops.
// - The async context outlives Close(): JavaScript may destroy the object
//   from inside the very callback that napi_make_callback is running with it.
//
// Self (CRTP) provides OnWatchedReadable(), called when the descriptor is
// readable, OnWatchFailed(status), called with libuv's negative status when
// polling it failed (the payload reports it to JavaScript), and its names,
// kNames (WatchedNames). Its JavaScript class comes from DefineWatched(),
// which adds the methods every such object has: ref(), unref(), destroy().
#ifndef BOBBIN_NATIVE_LOOP_WATCHED_H_
#define BOBBIN_NATIVE_LOOP_WATCHED_H_

#include <napi.h>
#include <uv.h>

#include <string>
#include <vector>

#include "check.h"
#include "common.h"

namespace bobbin {

// The names of a loop-watched object, for its class and its errors.
struct WatchedNames {
  const char* js_class;        // the JavaScript class: "NativePoller"
  const char* what;            // in messages: "poller.add(): the poller is destroyed"
  const char* destroyed_code;  // the code of that error
};

template <typename Self, typename Payload>
class LoopWatched : public Napi::ObjectWrap<Self> {
 public:
  explicit LoopWatched(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Self>(info) {}

  ~LoopWatched() override {
    Close();
    DestroyAsyncContext();
  }

 protected:
  using Methods = std::vector<typename Napi::ObjectWrap<Self>::PropertyDescriptor>;

  // Self's JavaScript class: its own methods and accessors, then ref(), unref() and destroy().
  static Napi::Function DefineWatched(Napi::Env env, Methods methods) {
    using Wrap = Napi::ObjectWrap<Self>;
    methods.push_back(Wrap::InstanceMethod("ref", &Self::Ref));
    methods.push_back(Wrap::InstanceMethod("unref", &Self::Unref));
    methods.push_back(Wrap::InstanceMethod("destroy", &Self::Destroy));
    return Wrap::DefineClass(env, Self::kNames.js_class, methods);
  }

  struct Handle {
    uv_poll_t poll;  // first member: the uv_handle_t* is the Handle*
    Payload payload;
    Self* wrap = nullptr;  // null once JavaScript has let go
  };

  // A Handle whose payload the caller opens next; then Watch(), or Discard() if opening failed.
  Payload& Prepare() {
    h_ = new Handle();
    h_->wrap = static_cast<Self*>(this);
    return h_->payload;
  }

  // The Handle never joined the loop: freed at once (the payload's destructor closes what was opened).
  void Discard() {
    delete h_;
    h_ = nullptr;
  }

  // Watches `fd` for readability in Node's loop. On failure: throws, lets
  // go of the Handle, and returns false.
  bool Watch(Napi::Env env, int fd, const char* resource) {
    BOBBIN_CHECK(h_ != nullptr && fd >= 0);
    uv_loop_t* loop = nullptr;
    napi_status s = napi_get_uv_event_loop(env, &loop);
    if (s != napi_ok) {
      Discard();
      return ThrowFailed(env, s, "napi_get_uv_event_loop");
    }
    int rc = uv_poll_init(loop, &h_->poll, fd);
    if (rc < 0) {
      Discard();
      ErrnoError(env, rc, "uv_poll_init").ThrowAsJavaScriptException();
      return false;
    }
    rc = uv_poll_start(&h_->poll, UV_READABLE, OnReadable);
    if (rc < 0) {
      h_->wrap = nullptr;
      uv_close(reinterpret_cast<uv_handle_t*>(&h_->poll), OnClose);
      h_ = nullptr;
      ErrnoError(env, rc, "uv_poll_start").ThrowAsJavaScriptException();
      return false;
    }
    napi_value resource_name;
    const char* failed = nullptr;
    if ((s = napi_create_string_utf8(env, resource, NAPI_AUTO_LENGTH, &resource_name)) != napi_ok) failed = "napi_create_string_utf8";
    else if ((s = napi_async_init(env, nullptr, resource_name, &async_)) != napi_ok) failed = "napi_async_init";
    else if ((s = napi_add_env_cleanup_hook(env, CleanupHook, this)) != napi_ok) failed = "napi_add_env_cleanup_hook";
    else hooked_ = true;
    if (failed != nullptr) {
      Close();
      return ThrowFailed(env, s, failed);
    }
    return true;
  }

  // Stops watching and starts closing; safe to call twice.
  void Close() {
    if (hooked_) {
      napi_remove_env_cleanup_hook(this->Env(), CleanupHook, this);
      hooked_ = false;
    }
    if (h_ == nullptr) return;
    uv_poll_stop(&h_->poll);
    h_->wrap = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&h_->poll), OnClose);
    h_ = nullptr;
  }

  // Calls `fn` the way Node calls an I/O callback (its microtasks run after
  // it); what it throws, or N-API's failure to call it, becomes an uncaught
  // exception, as in Node.
  void Call(napi_value fn, size_t argc, const napi_value* argv) {
    napi_env env = this->Env();
    napi_value result;
    napi_status s = napi_make_callback(env, async_, this->Value(), fn, argc, argv, &result);
    if (s != napi_ok) Uncaught(s, "napi_make_callback");
  }

  // An N-API call failed where no JavaScript called us (a libuv callback): the
  // pending exception, or an error naming `call`, becomes an uncaught exception.
  void Uncaught(napi_status s, const char* call) {
    napi_env env = this->Env();
    if (s != napi_pending_exception) ThrowFailed(env, s, call);
    napi_value error;
    if (napi_get_and_clear_last_exception(env, &error) == napi_ok) napi_fatal_exception(env, error);
  }

  // True while not destroyed; otherwise throws "<what>.<fn>(): the <what> is destroyed".
  bool Live(const Napi::CallbackInfo& info, const char* fn) {
    if (h_ != nullptr) return true;
    const WatchedNames& names = Self::kNames;
    std::string msg = std::string(names.what) + "." + fn + "(): the " + names.what + " is destroyed";
    Napi::Error e = Napi::Error::New(info.Env(), msg);
    e.Set("code", Napi::String::New(info.Env(), names.destroyed_code));
    e.ThrowAsJavaScriptException();
    return false;
  }

  // ref(), unref(), destroy() (DefineWatched adds them): like a Node handle's.
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

 private:
  static void OnReadable(uv_poll_t* poll, int status, int /*events*/) {
    Handle* h = reinterpret_cast<Handle*>(poll);
    if (h->wrap == nullptr) return;  // JavaScript let go: closing
    if (status < 0) h->wrap->OnWatchFailed(status);
    else h->wrap->OnWatchedReadable();
  }

  static void OnClose(uv_handle_t* handle) {
    Handle* h = reinterpret_cast<Handle*>(handle);
    h->payload.Close();
    delete h;
  }

  static void CleanupHook(void* arg) {
    auto* w = static_cast<LoopWatched*>(arg);
    w->Close();
    w->DestroyAsyncContext();
  }

  void DestroyAsyncContext() {
    if (async_ != nullptr) {
      napi_async_destroy(this->Env(), async_);
      async_ = nullptr;
    }
  }

  napi_async_context async_ = nullptr;
  bool hooked_ = false;
};

}  // namespace bobbin

#endif  // BOBBIN_NATIVE_LOOP_WATCHED_H_
