/**
 * The default backend, on Node's own libuv (`net`, `dgram`, one timer).
 */
export { LibuvBackend, type LibuvOptions, libuv } from "./backend.js";
