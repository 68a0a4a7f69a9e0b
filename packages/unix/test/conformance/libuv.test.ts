// The backend conformance suite, through the export backend authors use, on the libuv backend.
import { conformance } from "@bobbin/unix/conformance";
import { libuv } from "../../src/index.js";

conformance("libuv", libuv, { childProcess: { module: "@bobbin/unix", export: "libuv" } });
