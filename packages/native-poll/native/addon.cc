// The addon's entry point: per-thread state and the exported surface.
//
//   NativePoller            poller_node.cc (poller.h, poller_epoll.cc | poller_kqueue.cc)
//   NativeArenaPool         arena_node.cc (arena.h)
//   syscalls, sockopts      syscalls.cc (sockaddr.h)
//   setArenaErrorFactory    syscalls.cc
//   NativeUring, uringProbe, uringConstants   uring_node.cc (uring.h; Linux)
//   constants               below
//
// The addon is context-aware: every Node thread (main or worker) that loads
// it gets its own AddonData.
#include "addon_data.h"
#include "common.h"
#include "poller.h"
#include "send_queue.h"

namespace bobbin {

AddonData* GetAddonData(Napi::Env env) { return env.GetInstanceData<AddonData>(); }

namespace {

void NoopFinalize(napi_env, void*, void*) {}

// Does this runtime accept external ArrayBuffers? (Electron with the V8
// memory cage does not: napi_no_external_buffers_allowed.) Any other failure
// of the probe is thrown (the addon does not load, naming the call).
bool ExternalBuffersAllowed(napi_env env) {
  static char probe[8];
  napi_value ab;
  napi_status s = napi_create_external_arraybuffer(env, probe, sizeof probe, NoopFinalize, nullptr, &ab);
  if (s == napi_ok) {
    if ((s = napi_detach_arraybuffer(env, ab)) != napi_ok) ThrowFailed(env, s, "napi_detach_arraybuffer");
    return true;
  }
  if (s != napi_no_external_buffers_allowed) {
    ThrowFailed(env, s, "napi_create_external_arraybuffer");
    return false;
  }
  // Refused as expected: what the refusal left pending is not an error of ours.
  bool pending = false;
  napi_value ignored;
  if (napi_is_exception_pending(env, &pending) == napi_ok && pending) napi_get_and_clear_last_exception(env, &ignored);
  return false;
}

}  // namespace

Napi::Object InitAddon(Napi::Env env, Napi::Object exports) {
  AddonData* data = new AddonData();
  env.SetInstanceData<AddonData>(data);  // deleted by node-addon-api when the env goes
  data->external_buffers = ExternalBuffersAllowed(env);
  if (env.IsExceptionPending()) return exports;

  exports.Set("NativePoller", DefinePoller(env));
  exports.Set("NativeArenaPool", DefineArenaPool(env));
  DefineSyscalls(env, exports);
#if defined(__linux__)
  DefineUring(env, exports);
#endif

  Napi::Object c = Napi::Object::New(env);
  c.Set("READABLE", Napi::Number::New(env, kReadable));
  c.Set("WRITABLE", Napi::Number::New(env, kWritable));
  c.Set("HANGUP", Napi::Number::New(env, kHangup));
  c.Set("ERROR", Napi::Number::New(env, kError));
  c.Set("EDGE", Napi::Number::New(env, kEdge));
  c.Set("LEVEL", Napi::Number::New(env, kLevel));
  c.Set("ONESHOT", Napi::Number::New(env, kOneShot));
  c.Set("EVENT_INTS", Napi::Number::New(env, kEventInts));
  c.Set("NOT_READ", Napi::Number::New(env, kNotRead));
  c.Set("NOT_SENT", Napi::Number::New(env, kNotSent));
  c.Set("SEND_INTS", Napi::Number::New(env, kSendInts));
  c.Set("SLOTS_PER_ARENA", Napi::Number::New(env, kSlotsPerArena));
  c.Set("CANARY_BYTES", Napi::Number::New(env, static_cast<double>(kCanaryBytes)));
  exports.Set("constants", c);
#if defined(__linux__)
  exports.Set("mechanism", Napi::String::New(env, "epoll"));
#else
  exports.Set("mechanism", Napi::String::New(env, "kqueue"));
#endif
  exports.Set("externalBuffers", Napi::Boolean::New(env, data->external_buffers));
  return exports;
}

}  // namespace bobbin

static Napi::Object Init(Napi::Env env, Napi::Object exports) { return bobbin::InitAddon(env, exports); }

NODE_API_MODULE(bobbin_native, Init)
