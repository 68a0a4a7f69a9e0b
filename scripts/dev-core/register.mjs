// Loaded with `node --import` by the tests that run the built packages (see vitest.projects.ts): every
// import of @bobbin/core's published build, in this process and in the worker threads it starts (which
// inherit its options), loads core's development build instead (dist-dev/: the kernel's invariant checks on).
import { register } from "node:module";

register("./hooks.mjs", import.meta.url);
