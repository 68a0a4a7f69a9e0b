/**
 * The Merkle hash's parallel task. Worker domains import this module, so it
 * only defines things.
 */
import * as B from "@bobbin/core";
import { type Range, rootOf } from "./tree.js";

/** The root of one subtree, computed on a worker domain (returned as bytes). */
export const subtreeRoot = B.defineTask(import.meta.url, "subtreeRoot", function* (range: Range) {
  return new Uint8Array(rootOf(range));
});
