/**
 * The default backend, on Node's own libuv (`net`, `dgram`, one timer).
 */
export { libuv, LibuvBackend, type LibuvOptions } from "./backend.js";
