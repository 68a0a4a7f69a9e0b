/**
 * A backend for `@bobbin/unix`: pass `myBackend` to `run(main, { backend: myBackend })`.
 *
 * It starts as `@bobbin/unix`'s own libuv backend, so that the conformance
 * suite passes from the first `npm test`: write yours in its place, one
 * method at a time, with `@bobbin/unix/backend` (the tutorial linked from
 * `@bobbin/unix`'s README, "How to write a backend", writes a whole one:
 * https://github.com/bobbin-ts/bobbin/blob/main/packages/unix/docs/writing-a-backend.md).
 */
import { defineBackend } from "@bobbin/unix";
import { LibuvBackend } from "@bobbin/unix/backend";

/** Your backend. */
export class MyBackend extends LibuvBackend {}

/**
 * Its factory, defined with `defineBackend` so that each worker domain of a
 * run makes its own (worker domains import this module: keep it free of
 * other side effects).
 */
export const myBackend = defineBackend(import.meta.url, "myBackend", () => new MyBackend());
