// The poller in Node's loop, and its JavaScript class (NativePoller).
//
// The private set's fd is watched by one uv_poll_t (UV_READABLE). When libuv
// reports it readable, OnReadable drains up to one batch of events without
// waiting into the batch memory (the addon's, shown to JavaScript as
// `this.batch`: shared_area.h) and calls the JavaScript callback once, with
// napi_make_callback, for the whole batch (no object per event). Sends
// JavaScript queued (send_queue.h) are submitted first, in the same call.
// libuv watches the set level-triggered, so a batch left in the set (more
// than fit in the array, or level-triggered fds still ready) is reported
// again on the next loop iteration.
//
// Failures reach JavaScript: a failed epoll_wait/kevent, an error status of
// the uv_poll_t, or memory detached under a runtime-owned buffer call the
// callback with a negative errno as the count (-EFAULT for detached memory).
//
// Lifetime: loop_watched.h (the set is closed by uv_close's callback, after
// libuv stops using it).
#include <errno.h>

#include <climits>
#include <string>

#include "loop_watched.h"
#include "poller.h"
#include "send_queue.h"
#include "shared_area.h"

namespace bobbin {

namespace {

#if defined(__linux__)
constexpr const char* kWaitCall = "epoll_wait";
#else
constexpr const char* kWaitCall = "kevent";
#endif
constexpr int32_t kMaxBatchEvents = 1000000;
constexpr int32_t kMaxAreaBytes = 1 << 30;
// The highest fd the read-ahead's table may cover (far above any RLIMIT_NOFILE in use).
constexpr int32_t kMaxFds = 1 << 26;

class PollerWrap : public LoopWatched<PollerWrap, Poller> {
 public:
  static constexpr WatchedNames kNames{"NativePoller", "poller", "ERR_BOBBIN_POLLER_DESTROYED"};

  static Napi::Function Define(Napi::Env env) {
    return DefineWatched(env, {
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
                                  InstanceMethod<&PollerWrap::SetWants>("wants"),
                                  InstanceMethod<&PollerWrap::SetSendQueue>("sendQueue"),
                                  InstanceMethod<&PollerWrap::Flush>("flush"),
                                  InstanceAccessor<&PollerWrap::GetFd>("fd"),
                                  InstanceAccessor<&PollerWrap::GetRegistered>("registered"),
                              });
  }

  // new NativePoller(batchEvents, onBatch: (count, woken) => void): `this.batch`
  // is the batch's memory (batchEvents × EVENT_INTS int32s), the addon's.
  explicit PollerWrap(const Napi::CallbackInfo& info) : LoopWatched<PollerWrap, Poller>(info) {
    Napi::Env env = info.Env();
    int32_t events;
    if (!ArgInt(info, 0, "NativePoller", "batchEvents", 1, kMaxBatchEvents, &events)) return;
    if (!info[1].IsFunction()) {
      Napi::TypeError::New(env, "NativePoller(batchEvents, onBatch): onBatch must be a function (count, woken) => void").ThrowAsJavaScriptException();
      return;
    }
    napi_value batch;
    if (!batch_.Make(env, static_cast<size_t>(events) * kEventInts * sizeof(int32_t), &batch)) return;
    Value().Set("batch", Napi::Value(env, batch));
    if (env.IsExceptionPending()) return;
    batch_events_ = events;
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

  // libuv could not poll the set's fd: JavaScript hears it as a failed batch.
  void OnWatchFailed(int status) {
    Napi::HandleScope scope(Env());
    Batch(status, false, "uv_poll");
  }

 private:
  int32_t* batch() const { return reinterpret_cast<int32_t*>(batch_.data()); }

  // Whether every memory the addon would touch is still there (see shared_area.h).
  bool MemoryUsable() const { return batch_.Usable() && area_.Usable() && wants_.Usable() && staging_.Usable() && queue_.Usable(); }

  void Deliver() {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    if (!MemoryUsable()) return Batch(-EFAULT, false, "detached");
    bool woken = false;
    int sent = sends_.Submit();
    int n = h_->payload.Drain(0, batch(), batch_events_, &woken);
    if (n < 0) return Batch(n, false, kWaitCall);  // not 0 events: JavaScript must hear that waiting failed
    if (n == 0 && !woken && sent == 0) return;
    Batch(n, woken);
  }

  // onBatch(count, woken), or for a batch that failed onBatch(-errno, false, what failed).
  void Batch(int count, bool woken, const char* failed = nullptr) {
    napi_value argv[3];
    napi_status s = napi_create_int32(Env(), count, &argv[0]);
    if (s != napi_ok) return Uncaught(s, "napi_create_int32");
    if ((s = napi_get_boolean(Env(), woken, &argv[1])) != napi_ok) return Uncaught(s, "napi_get_boolean");
    if (failed != nullptr && (s = napi_create_string_utf8(Env(), failed, NAPI_AUTO_LENGTH, &argv[2])) != napi_ok) {
      return Uncaught(s, "napi_create_string_utf8");
    }
    Call(on_batch_.Value(), failed == nullptr ? 2 : 3, argv);
  }

  // Throws the error for a call made while the poller's memory is detached; false then.
  bool MemoryLive(const Napi::CallbackInfo& info, const char* fn) {
    if (MemoryUsable()) return true;
    Napi::Error e = Napi::Error::New(info.Env(), std::string("poller.") + fn +
                                                     "(): the memory the poller shares with JavaScript was detached (an ArrayBuffer was transferred)");
    e.Set("code", Napi::String::New(info.Env(), "ERR_BOBBIN_DETACHED"));
    e.ThrowAsJavaScriptException();
    return false;
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
    if (!Live(info, "poll") || !MemoryLive(info, "poll")) return Napi::Value();
    if (info.Length() > 0 && !ArgInt(info, 0, "poller.poll", "timeoutMs", -1, INT32_MAX, &timeout)) return Napi::Value();
    bool woken = false;
    sends_.Submit();
    return Napi::Number::New(info.Env(), h_->payload.Drain(timeout, batch(), batch_events_, &woken));
  }

  // flush() → how many queued sends were submitted (their results are in the queue).
  Napi::Value Flush(const Napi::CallbackInfo& info) {
    if (!Live(info, "flush") || !MemoryLive(info, "flush")) return Napi::Value();
    return Napi::Number::New(info.Env(), sends_.Submit());
  }

  // sendQueue(stagingBytes, entries) → [staging, queue]: the memories of the
  // queued sends (send_queue.h), the addon's; made again by a second call.
  Napi::Value SetSendQueue(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    int32_t bytes, entries;
    if (!Live(info, "sendQueue") || !ArgInt(info, 0, "poller.sendQueue", "stagingBytes", 0, kMaxAreaBytes, &bytes) ||
        !ArgInt(info, 1, "poller.sendQueue", "entries", 0, kMaxBatchEvents, &entries)) {
      return Napi::Value();
    }
    sends_.Install(nullptr, 0, nullptr, 0);  // nothing points at the old memories while new ones are made
    napi_value staging, queue;
    if (!staging_.Make(env, static_cast<size_t>(bytes), &staging) ||
        !queue_.Make(env, (1 + static_cast<size_t>(entries) * kSendInts) * sizeof(int32_t), &queue)) {
      return Napi::Value();
    }
    sends_.Install(staging_.data(), staging_.bytes(), reinterpret_cast<int32_t*>(queue_.data()), queue_.bytes() / sizeof(int32_t));
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, Napi::Value(env, staging));
    pair.Set(1u, Napi::Value(env, queue));
    return pair;
  }

  // readAhead(areaBytes) → the read-ahead's area (read_ahead.h), the addon's.
  Napi::Value SetReadAhead(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    int32_t bytes;
    if (!Live(info, "readAhead") || !ArgInt(info, 0, "poller.readAhead", "areaBytes", 0, kMaxAreaBytes, &bytes)) return Napi::Value();
    h_->payload.read_ahead().Install(nullptr, 0, nullptr, 0);
    napi_value area;
    if (!area_.Make(env, static_cast<size_t>(bytes), &area)) return Napi::Value();
    InstallReadAhead();
    return Napi::Value(env, area);
  }

  // wants(length) → a new, zeroed table of the bytes wanted per fd (read_ahead.h),
  // the addon's, replacing the last one: JavaScript copies its entries over.
  Napi::Value SetWants(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    int32_t length;
    if (!Live(info, "wants") || !ArgInt(info, 0, "poller.wants", "length", 0, kMaxFds, &length)) return Napi::Value();
    h_->payload.read_ahead().Install(nullptr, 0, nullptr, 0);
    napi_value wants;
    if (!wants_.Make(env, static_cast<size_t>(length) * sizeof(int32_t), &wants)) return Napi::Value();
    InstallReadAhead();
    return Napi::Value(env, wants);
  }

  void InstallReadAhead() {
    h_->payload.read_ahead().Install(area_.data(), area_.bytes(), reinterpret_cast<const int32_t*>(wants_.data()),
                                     wants_.bytes() / sizeof(int32_t));
  }

  Napi::Value GetFd(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), h_ == nullptr ? -1 : h_->payload.backend_fd());
  }

  Napi::Value GetRegistered(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), h_ == nullptr ? 0 : h_->payload.registered());
  }

  // The memories shared with JavaScript, the addon's (shared_area.h).
  SharedArea batch_;
  int batch_events_ = 0;
  Napi::FunctionReference on_batch_;
  SharedArea area_;   // the read-ahead's area
  SharedArea wants_;  // and its table of wanted bytes
  SendQueue sends_;
  SharedArea staging_;  // the queued sends' bytes
  SharedArea queue_;    // and their entries
};

}  // namespace

Napi::Function DefinePoller(Napi::Env env) { return PollerWrap::Define(env); }

}  // namespace bobbin
