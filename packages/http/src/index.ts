/**
 * @bobbin/http — HTTP for Bobbin on Node's own HTTP/1.1: `serve`, a server
 * whose requests are tasks (cancelled when their client leaves or their
 * deadline passes, limited, drained on cancellation), and `fetch`, a request
 * as an operation; over any backend of `@bobbin/unix`.
 *
 * @example
 * ```ts
 * import { serve } from "@bobbin/http";
 * import { main } from "@bobbin/unix";
 *
 * main(function* () {
 *   yield* serve({ port: 8080 }, function* (req, res) {
 *     yield* res.send({ hello: req.url });
 *   });
 * });
 * ```
 * @packageDocumentation
 */

export { HttpError } from "./errors.js";
export { type FetchOptions, type FetchResponse, fetch } from "./fetch.js";
export type { ListeningAddress } from "./listen.js";
export { Request } from "./request.js";
export { Response, type SendOptions } from "./response.js";
export { type ServeOptions, serve } from "./serve.js";
export type { Handler } from "./service.js";
