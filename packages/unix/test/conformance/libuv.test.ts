import { libuv } from "../../src/index.js";
import { conformance } from "./suite.js";

conformance("libuv", libuv, {
  childBackend: { module: new URL("../../src/libuv/backend.ts", import.meta.url).href, export: "libuv" },
});
