// The poller in Node's loop, and its JavaScript class (NativePoller).
//
// The private set's fd is watched by one uv_poll_t (UV_READABLE). When libuv
// reports it readable, OnReadable drains up to one batch of events without
// waiting into the Int32Array that JavaScript gave to the constructor and calls
// the JavaScript callback once, with napi_make_callback, for the whole batch
// (no object per event). Sends JavaScript queued (send_queue.h) are submitted
// first, in the same call. libuv watches the set level-triggered, so a batch
// left in the set (more than fit in the array, or level-triggered fds still
// ready) is reported again on the next loop iteration.
//
// Lifetime: loop_watched.h (the set is closed by uv_close's callback, after
// libuv stops using it).
#include "loop_watched.h"
#include "poller.h"
#include "send_queue.h"

namespace bobbin {

namespace {

class PollerWrap : public LoopWatched<PollerWrap, Poller> {
 public:
  static constexpr const char* kWhat = "poller";
  static constexpr const char* kDestroyedCode = "ERR_BOBBIN_POLLER_DESTROYED";

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
                           InstanceMethod<&PollerWrap::SetReadAhead>("readAhead"),
                           InstanceMethod<&PollerWrap::SetSendQueue>("sendQueue"),
                           InstanceMethod<&PollerWrap::Flush>("flush"),
                           InstanceMethod("ref", &PollerWrap::Ref),
                           InstanceMethod("unref", &PollerWrap::Unref),
                           InstanceMethod("destroy", &PollerWrap::Destroy),
                           InstanceAccessor<&PollerWrap::GetFd>("fd"),
                           InstanceAccessor<&PollerWrap::GetRegistered>("registered"),
                       });
  }

  // new NativePoller(batch: Int32Array, onBatch: (count, woken) => void)
  explicit PollerWrap(const Napi::CallbackInfo& info) : LoopWatched<PollerWrap, Poller>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !IsTypedArrayOf(info[0], napi_int32_array) || !info[1].IsFunction()) {
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

    Poller& poller = Prepare();
    int rc = poller.Open(batch_events_);
    if (rc < 0) {
      Discard();
      ErrnoError(env, rc, "epoll_create").ThrowAsJavaScriptException();
      return;
    }
    Watch(env, poller.backend_fd(), "bobbin:poller");
  }

  // The set is readable: one batch for JavaScript.
  void OnWatchedReadable() { Deliver(); }

 private:
  void Deliver() {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    bool woken = false;
    int sent = sends_.Submit();
    int n = h_->payload.Drain(0, batch_, batch_events_, &woken);
    if (n < 0) n = 0;  // a failed epoll_wait on our own set: nothing to report
    if (n == 0 && !woken && sent == 0) return;
    napi_value argv[2];
    napi_create_int32(env, n, &argv[0]);
    napi_get_boolean(env, woken, &argv[1]);
    Call(on_batch_.Value(), 2, argv);
  }

  // add(fd, interest, mode) → generation (> 0) or -errno
  Napi::Value Add(const Napi::CallbackInfo& info) {
    int32_t fd, interest, mode;
    // interest: READABLE, WRITABLE or both; mode: EDGE, LEVEL or ONESHOT.
    if (!Live(info, "add") || !ArgFd(info, 0, "poller.add", &fd) ||
        !ArgInt(info, 1, "poller.add", "interest", kReadable, kReadable | kWritable, &interest) ||
        !ArgInt(info, 2, "poller.add", "mode", kEdge, kOneShot, &mode)) {
      return Napi::Value();
    }
    int64_t gen = h_->payload.Add(fd, static_cast<uint32_t>(interest), static_cast<Mode>(mode));
    return Napi::Number::New(info.Env(), static_cast<double>(gen));
  }

  Napi::Value Modify(const Napi::CallbackInfo& info) {
    int32_t fd, interest;
    // interest: READABLE, WRITABLE or both (disarm() for none).
    if (!Live(info, "modify") || !ArgFd(info, 0, "poller.modify", &fd) ||
        !ArgInt(info, 1, "poller.modify", "interest", kReadable, kReadable | kWritable, &interest)) {
      return Napi::Value();
    }
    return Napi::Number::New(info.Env(), h_->payload.Modify(fd, static_cast<uint32_t>(interest)));
  }

  template <int (Poller::*Op)(int)>
  Napi::Value FdOp(const Napi::CallbackInfo& info, const char* name) {
    int32_t fd;
    if (!Live(info, name) || !ArgFd(info, 0, name, &fd)) return Napi::Value();
    return Napi::Number::New(info.Env(), (h_->payload.*Op)(fd));
  }
  Napi::Value Rearm(const Napi::CallbackInfo& info) { return FdOp<&Poller::Rearm>(info, "rearm"); }
  Napi::Value Disarm(const Napi::CallbackInfo& info) { return FdOp<&Poller::Disarm>(info, "disarm"); }
  Napi::Value Remove(const Napi::CallbackInfo& info) { return FdOp<&Poller::Remove>(info, "remove"); }
  Napi::Value CloseFd(const Napi::CallbackInfo& info) { return FdOp<&Poller::CloseFd>(info, "close"); }

  Napi::Value Generation(const Napi::CallbackInfo& info) {
    int32_t fd;
    if (!Live(info, "generation") || !ArgFd(info, 0, "poller.generation", &fd)) return Napi::Value();
    const Registration* r = h_->payload.Find(fd);
    return Napi::Number::New(info.Env(), r == nullptr ? 0 : r->gen);
  }

  Napi::Value Interrupt(const Napi::CallbackInfo& info) {
    if (!Live(info, "interrupt")) return Napi::Value();
    return Napi::Number::New(info.Env(), h_->payload.Interrupt());
  }

  // poll(timeoutMs) → count or -errno. Drains into the batch array without
  // calling onBatch; blocks the thread for up to timeoutMs.
  Napi::Value Poll(const Napi::CallbackInfo& info) {
    int32_t timeout = 0;
    if (!Live(info, "poll")) return Napi::Value();
    if (info.Length() > 0 && !ArgInt(info, 0, "poller.poll", "timeoutMs", -1, INT32_MAX, &timeout)) return Napi::Value();
    bool woken = false;
    sends_.Submit();
    return Napi::Number::New(info.Env(), h_->payload.Drain(timeout, batch_, batch_events_, &woken));
  }

  // flush() → how many queued sends were submitted (their results are in the queue).
  Napi::Value Flush(const Napi::CallbackInfo& info) {
    if (!Live(info, "flush")) return Napi::Value();
    return Napi::Number::New(info.Env(), sends_.Submit());
  }

  // sendQueue(staging: Uint8Array, queue: Int32Array): the memories of the
  // queued sends (send_queue.h), kept alive here.
  Napi::Value SetSendQueue(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!Live(info, "sendQueue")) return Napi::Value();
    if (info.Length() < 2 || !IsTypedArrayOf(info[0], napi_uint8_array) || !IsTypedArrayOf(info[1], napi_int32_array)) {
      Napi::TypeError::New(env, "poller.sendQueue(staging: Uint8Array, queue: Int32Array)").ThrowAsJavaScriptException();
      return Napi::Value();
    }
    Napi::Uint8Array staging = info[0].As<Napi::Uint8Array>();
    Napi::Int32Array queue = info[1].As<Napi::Int32Array>();
    staging_ref_ = Napi::Persistent(staging.As<Napi::Object>());
    queue_ref_ = Napi::Persistent(queue.As<Napi::Object>());
    sends_.Install(staging.Data(), staging.ElementLength(), queue.Data(), queue.ElementLength());
    return env.Undefined();
  }

  // readAhead(area: Uint8Array, wants: Int32Array): the memories of the
  // read-ahead (read_ahead.h), kept alive here; given again when JavaScript
  // grows `wants`.
  Napi::Value SetReadAhead(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!Live(info, "readAhead")) return Napi::Value();
    if (info.Length() < 2 || !IsTypedArrayOf(info[0], napi_uint8_array) || !IsTypedArrayOf(info[1], napi_int32_array)) {
      Napi::TypeError::New(env, "poller.readAhead(area: Uint8Array, wants: Int32Array)").ThrowAsJavaScriptException();
      return Napi::Value();
    }
    Napi::Uint8Array area = info[0].As<Napi::Uint8Array>();
    Napi::Int32Array wants = info[1].As<Napi::Int32Array>();
    area_ref_ = Napi::Persistent(area.As<Napi::Object>());
    wants_ref_ = Napi::Persistent(wants.As<Napi::Object>());
    h_->payload.read_ahead().Install(area.Data(), area.ElementLength(), wants.Data(), wants.ElementLength());
    return env.Undefined();
  }

  Napi::Value GetFd(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), h_ == nullptr ? -1 : h_->payload.backend_fd());
  }

  Napi::Value GetRegistered(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), h_ == nullptr ? 0 : h_->payload.registered());
  }

  int32_t* batch_ = nullptr;
  int batch_events_ = 0;
  Napi::ObjectReference batch_ref_;  // keeps the batch array (and batch_) alive
  Napi::FunctionReference on_batch_;
  Napi::ObjectReference area_ref_;   // keeps the read-ahead's area alive
  Napi::ObjectReference wants_ref_;  // and its table of wanted bytes
  SendQueue sends_;
  Napi::ObjectReference staging_ref_;  // keeps the queued sends' bytes alive
  Napi::ObjectReference queue_ref_;    // and their entries
};

}  // namespace

Napi::Function DefinePoller(Napi::Env env) { return PollerWrap::Define(env); }

}  // namespace bobbin
