{
  # node-gyp build of the addon. Built by scripts/build.mjs with
  # --nodedir=<prefix of process.execPath>, so no headers are downloaded.
  "targets": [
    {
      "target_name": "bobbin_native",
      "sources": [
        "native/addon.cc",
        "native/arena.cc",
        "native/arena_node.cc",
        "native/errors.cc",
        "native/poller.cc",
        "native/poller_node.cc",
        "native/read_ahead.cc",
        "native/send_queue.cc",
        "native/shared_area.cc",
        "native/sockaddr.cc",
        "native/syscalls.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags": ["-Wall", "-Wextra", "-Wno-unused-parameter", "-fvisibility=hidden"],
      "cflags_cc": ["-std=c++17", "-O2", "-fno-exceptions"],
      "cflags_cc!": ["-fno-rtti"],
      "conditions": [
        ["OS=='linux'", {
          "sources": ["native/poller_epoll.cc", "native/uring.cc", "native/uring_node.cc"]
        }],
        ["OS=='mac' or OS=='freebsd' or OS=='openbsd' or OS=='netbsd'", {
          "sources": ["native/poller_kqueue.cc"]
        }],
        ["OS=='mac'", {
          "xcode_settings": {
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "GCC_ENABLE_CPP_EXCEPTIONS": "NO",
            "MACOSX_DEPLOYMENT_TARGET": "11.0",
            "OTHER_CFLAGS": ["-Wall", "-Wextra", "-Wno-unused-parameter"]
          }
        }]
      ]
    }
  ]
}
